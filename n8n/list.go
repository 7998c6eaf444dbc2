package n8n

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/candorkit/candor/internal/scan"
)

// clampLimit maps a requested page size to n8n's accepted 1..250; 0 means
// n8n's default of 100. n8n answers limit=0 with a cursor that points to its
// own page, so 0 is never sent.
func clampLimit(n int) int {
	switch {
	case n == 0:
		return 100
	case n < 1:
		return 1
	case n > 250:
		return 250
	}
	return n
}

// page is n8n's paged list shape.
type page[T any] struct {
	Data       *[]T    `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

// listSeq follows nextCursor until it is null, one page at a time, with
// the module's complete-scan rules (internal/scan): a repeated cursor or a
// page cap ends the scan with ErrIncompleteList; a request that fails ends
// it with the request's own error.
func listSeq[T any](ctx context.Context, c *Client, path string, q url.Values, pageSize int) iter.Seq2[T, error] {
	size := strconv.Itoa(clampLimit(pageSize))
	fetch := func(ctx context.Context, cursor string) (scan.Page[T], error) {
		qq := url.Values{}
		for k, v := range q {
			qq[k] = v
		}
		qq.Set("limit", size)
		if cursor != "" {
			qq.Set("cursor", cursor)
		}
		var p page[T]
		if err := c.do(ctx, call{method: http.MethodGet, path: path, query: qq, out: &p}); err != nil {
			return scan.Page[T]{}, err
		}
		if p.Data == nil {
			return scan.Page[T]{}, fmt.Errorf("%w: %w", ErrIncompleteList, &DecodeError{Method: http.MethodGet, Path: path,
				StatusCode: 200, Err: errors.New(`list response has no "data" array`)})
		}
		next := ""
		if p.NextCursor != nil {
			next = *p.NextCursor
		}
		return scan.Page[T]{Items: *p.Data, Next: next, Total: scan.UnknownTotal}, nil
	}
	return func(yield func(T, error) bool) {
		for v, err := range scan.Seq(ctx, fetch, scan.Limits{}) {
			if err != nil {
				var ie *scan.IncompleteError
				if errors.As(err, &ie) && ie.Reason == scan.ReasonFetch {
					err = ie.Err // the request's own error, as it was
				} else {
					err = fmt.Errorf("n8n: GET %s: %w: %w", path, ErrIncompleteList, err)
				}
			}
			if !yield(v, err) {
				return
			}
		}
	}
}

// collect reads seq to its end, or to max items when max > 0. A listing
// that ends with an error returns no items.
func collect[T any](seq iter.Seq2[T, error], max int) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if max > 0 && len(out) >= max {
			break
		}
	}
	return out, nil
}
