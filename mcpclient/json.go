package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// CallJSON calls tool and decodes its payload into T: structuredContent when
// the result has one, else its single text content item. A payload that is
// missing, not JSON, null, followed by other data, or not a T returns a
// *DecodeError carrying the raw payload; T's zero value never comes back
// with a nil error. Failures of the call itself are those of Client.Call.
func CallJSON[T any](ctx context.Context, c *Client, tool string, args any) (T, error) {
	var zero T
	res, err := c.Call(ctx, tool, args)
	if err != nil {
		return zero, err
	}
	payload, err := payloadOf(res)
	if err != nil {
		return zero, &DecodeError{Tool: tool, Raw: payload, Err: err}
	}
	v, err := decodeStrict[T](payload)
	if err != nil {
		return zero, &DecodeError{Tool: tool, Raw: payload, Err: err}
	}
	return v, nil
}

// payloadOf picks the JSON payload of a result.
func payloadOf(res *Result) ([]byte, error) {
	if res.Structured != nil {
		return res.Structured, nil
	}
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	switch len(texts) {
	case 0:
		return nil, errors.New("result has neither structuredContent nor text content")
	case 1:
		return []byte(texts[0]), nil
	default:
		return []byte(res.Text()), fmt.Errorf("result has %d text items and no structuredContent; expected one", len(texts))
	}
}

// decodeStrict decodes exactly one non-null JSON value into T.
func decodeStrict[T any](payload []byte) (T, error) {
	var v T
	trimmed := bytes.TrimSpace(payload)
	if len(trimmed) == 0 {
		return v, errors.New("payload is empty")
	}
	if string(trimmed) == "null" {
		return v, errors.New("payload is null")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("payload is not a valid %T: %w", v, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, errors.New("payload has data after the JSON value")
	}
	return v, nil
}
