package n8n

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/candorkit/candor/reply"
)

// Reply is the webhook contract's answer: a non-blank Answer for the person,
// and Escalate when a person must take over. It is reply.Reply: the strict
// decoding lives once, in package reply, shared with package a2a.
type Reply = reply.Reply

// ErrNoSubjectToken is returned by CallWebhook before any request when the
// subject token is empty: no identity, no call.
var ErrNoSubjectToken = errors.New("n8n: a subject token is required to call a webhook")

// SubjectTokenHeader carries the caller's subject token to the workflow.
const SubjectTokenHeader = "X-Subject-Token"

// WebhookCaller calls webhooks that answer the {"answer","escalate"} contract.
// The zero value is usable.
type WebhookCaller struct {
	// HTTPClient sends the request; nil means a client with a two-minute
	// timeout. Redirects are never followed (the token would go along).
	HTTPClient *http.Client
	// Logger receives one debug record per call (host, status, size), never
	// the token, the URL path or a body; nil discards.
	Logger *slog.Logger
}

// CallWebhook POSTs body as JSON to a workflow's webhook with subjectToken in
// the X-Subject-Token header and decodes the answer strictly (see
// WebhookCaller.Call).
func CallWebhook(ctx context.Context, webhookURL, subjectToken string, body any) (Reply, error) {
	return WebhookCaller{}.Call(ctx, webhookURL, subjectToken, body)
}

// Call POSTs body as JSON to webhookURL with subjectToken in the
// X-Subject-Token header. body is encoded with encoding/json, except []byte
// and json.RawMessage, which are sent as they are and must be JSON.
//
// The answer is a Reply only when the status is 200 and the body is exactly
// the contract. A 200 with an empty body (n8n's answer when a node fails
// before Respond to Webhook) is ErrEmptyReply; any other answer — another
// status, a body that is not the contract, a body over reply.MaxBytes — is a
// *ContractError with the status and the raw body. Transport failures are
// returned as they are.
func (w WebhookCaller) Call(ctx context.Context, webhookURL, subjectToken string, body any) (Reply, error) {
	if strings.TrimSpace(subjectToken) == "" {
		return Reply{}, ErrNoSubjectToken
	}
	u, err := url.Parse(webhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Reply{}, errors.New("n8n: webhook URL must be an absolute http(s) URL")
	}
	payload, err := encodeBody(body)
	if err != nil {
		return Reply{}, err
	}
	hc := &http.Client{Timeout: 2 * time.Minute}
	if w.HTTPClient != nil {
		copied := *w.HTTPClient
		hc = &copied
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(payload))
	if err != nil {
		return Reply{}, fmt.Errorf("n8n: webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(SubjectTokenHeader, subjectToken)
	resp, err := hc.Do(req)
	if err != nil {
		log.DebugContext(ctx, "n8n webhook call failed", "host", u.Host)
		return Reply{}, fmt.Errorf("n8n: calling webhook on %s: %w", u.Host, stripURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, reply.MaxBytes+1))
	log.DebugContext(ctx, "n8n webhook call", "host", u.Host, "status", resp.StatusCode, "bytes", len(raw))
	if err != nil {
		return Reply{}, fmt.Errorf("n8n: reading the webhook answer (status %d): %w", resp.StatusCode, err)
	}
	if len(raw) > reply.MaxBytes {
		return Reply{}, newContractError(resp.StatusCode,
			fmt.Sprintf("body exceeds %d bytes", reply.MaxBytes), raw[:reply.MaxBytes])
	}
	if resp.StatusCode != http.StatusOK {
		reason := fmt.Sprintf("status %d, want 200", resp.StatusCode)
		if m := messageOf(raw); m != "" {
			reason += ": " + clip(m, 200)
		}
		return Reply{}, newContractError(resp.StatusCode, reason, raw)
	}
	r, err := reply.Decode(raw)
	var ce *reply.ContractError
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, reply.ErrEmpty):
		return Reply{}, fmt.Errorf("n8n: webhook answered 200 with an empty body (%d bytes of white space): %w",
			len(raw), ErrEmptyReply)
	case errors.As(err, &ce):
		return Reply{}, newContractError(resp.StatusCode, ce.Reason, ce.Raw)
	default:
		return Reply{}, err
	}
}

func encodeBody(body any) ([]byte, error) {
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("n8n: encoding the webhook body: %w", err)
		}
		return b, nil
	}
	if !json.Valid(b) {
		return nil, errors.New("n8n: the webhook body is not JSON")
	}
	return b, nil
}

func messageOf(raw []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return m.Message
}

// stripURL removes the request URL (its path may be a webhook's secret id)
// from a transport error, keeping the underlying error for errors.Is/As.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
