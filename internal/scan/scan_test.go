package scan_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/candorkit/candor/internal/scan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listing serves n items in pages of size, with cursors "p1", "p2", …, and
// counts the fetches.
type listing struct {
	n, size int
	total   int // reported total; scan.UnknownTotal for none
	fetches int
	next    func(page int, next string) string // rewrites the next cursor
}

func (l *listing) fetch(_ context.Context, cursor string) (scan.Page[int], error) {
	l.fetches++
	page := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor[1:])
		if err != nil {
			return scan.Page[int]{}, fmt.Errorf("bad cursor %q", cursor)
		}
		page = n
	}
	var items []int
	for i := page * l.size; i < min((page+1)*l.size, l.n); i++ {
		items = append(items, i)
	}
	next := ""
	if (page+1)*l.size < l.n {
		next = "p" + strconv.Itoa(page+1)
	}
	if l.next != nil {
		next = l.next(page, next)
	}
	return scan.Page[int]{Items: items, Next: next, Total: l.total}, nil
}

func seq(n int) []int {
	out := []int{}
	for i := range n {
		out = append(out, i)
	}
	return out
}

func incomplete(t *testing.T, err error, reason scan.Reason) *scan.IncompleteError {
	t.Helper()
	var ie *scan.IncompleteError
	require.ErrorAs(t, err, &ie)
	assert.ErrorIs(t, err, scan.ErrIncomplete)
	assert.Equal(t, reason, ie.Reason)
	return ie
}

func TestScanComplete(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name         string
		n, size      int
		total        int
		lim          scan.Limits
		wantFetches  int
		wantNonEmpty bool
	}{
		{"several pages, no total", 25, 10, scan.UnknownTotal, scan.Limits{}, 3, true},
		{"total matches", 25, 10, 25, scan.Limits{}, 3, true},
		{"exact page multiple", 20, 10, 20, scan.Limits{}, 2, true},
		{"empty listing with total 0", 0, 10, 0, scan.Limits{}, 1, false},
		{"page cap exactly reached at the end", 25, 10, 25, scan.Limits{MaxPages: 3}, 3, true},
		{"item cap exactly reached at the end", 25, 10, 25, scan.Limits{MaxItems: 25}, 3, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &listing{n: c.n, size: c.size, total: c.total}
			got, err := scan.Scan(ctx, l.fetch, c.lim)
			require.NoError(t, err)
			if c.wantNonEmpty {
				assert.Equal(t, seq(c.n), got)
			} else {
				assert.Empty(t, got)
			}
			assert.Equal(t, c.wantFetches, l.fetches)
		})
	}
}

func TestScanCursorRepeat(t *testing.T) {
	ctx := context.Background()
	t.Run("same cursor again", func(t *testing.T) {
		l := &listing{n: 100, size: 10, total: scan.UnknownTotal, next: func(page int, next string) string {
			if page == 1 {
				return "p1"
			}
			return next
		}}
		got, err := scan.Scan(ctx, l.fetch, scan.Limits{})
		ie := incomplete(t, err, scan.ReasonCursorRepeat)
		assert.ErrorIs(t, err, scan.ErrCursorRepeat)
		assert.NotErrorIs(t, err, scan.ErrPageCap)
		assert.Equal(t, "p1", ie.Cursor)
		assert.Equal(t, 2, ie.Pages)
		assert.Equal(t, 20, ie.Items)
		assert.Equal(t, seq(20), got, "partial items come with the error")
		assert.Equal(t, 2, l.fetches)
		assert.Contains(t, err.Error(), `repeated cursor "p1"`)
	})
	t.Run("an earlier cursor", func(t *testing.T) {
		l := &listing{n: 100, size: 10, total: scan.UnknownTotal, next: func(page int, next string) string {
			if page == 3 {
				return "p1"
			}
			return next
		}}
		_, err := scan.Scan(ctx, l.fetch, scan.Limits{})
		ie := incomplete(t, err, scan.ReasonCursorRepeat)
		assert.Equal(t, 4, ie.Pages)
	})
	t.Run("long cursor is cut in the message", func(t *testing.T) {
		long := string(make([]byte, 500))
		fetch := func(context.Context, string) (scan.Page[int], error) {
			return scan.Page[int]{Items: []int{1}, Next: long, Total: scan.UnknownTotal}, nil
		}
		_, err := scan.Scan(ctx, fetch, scan.Limits{})
		incomplete(t, err, scan.ReasonCursorRepeat)
		assert.Less(t, len(err.Error()), 400)
	})
}

func TestScanPageCap(t *testing.T) {
	l := &listing{n: 100, size: 10, total: scan.UnknownTotal}
	got, err := scan.Scan(context.Background(), l.fetch, scan.Limits{MaxPages: 3})
	ie := incomplete(t, err, scan.ReasonPageCap)
	assert.ErrorIs(t, err, scan.ErrPageCap)
	assert.Equal(t, 3, ie.Pages)
	assert.Equal(t, 30, ie.Items)
	assert.Equal(t, "p3", ie.Cursor, "the cursor not fetched")
	assert.Len(t, got, 30)
	assert.Equal(t, 3, l.fetches, "no fetch past the cap")
}

// A server that invents a fresh cursor for ever is bounded by the default
// page cap.
func TestScanDefaultPageCap(t *testing.T) {
	n := 0
	var fetch scan.Fetch[int] = func(context.Context, string) (scan.Page[int], error) {
		n++
		return scan.Page[int]{Next: "c" + strconv.Itoa(n), Total: scan.UnknownTotal}, nil
	}
	_, err := scan.Scan(context.Background(), fetch, scan.Limits{})
	incomplete(t, err, scan.ReasonPageCap)
	assert.Equal(t, scan.DefaultMaxPages, n)
}

func TestScanItemCap(t *testing.T) {
	ctx := context.Background()
	t.Run("cap on a page boundary with more pages", func(t *testing.T) {
		l := &listing{n: 100, size: 10, total: scan.UnknownTotal}
		got, err := scan.Scan(ctx, l.fetch, scan.Limits{MaxItems: 20})
		ie := incomplete(t, err, scan.ReasonItemCap)
		assert.ErrorIs(t, err, scan.ErrItemCap)
		assert.Equal(t, 20, ie.Items)
		assert.Len(t, got, 20)
		assert.Equal(t, 2, l.fetches)
	})
	t.Run("page overshoots the cap", func(t *testing.T) {
		l := &listing{n: 25, size: 10, total: 25}
		got, err := scan.Scan(ctx, l.fetch, scan.Limits{MaxItems: 15})
		ie := incomplete(t, err, scan.ReasonItemCap)
		assert.Equal(t, 15, ie.Items)
		assert.Equal(t, seq(15), got)
		assert.Equal(t, 2, l.fetches)
	})
	t.Run("last page overshoots the cap", func(t *testing.T) {
		l := &listing{n: 12, size: 12, total: scan.UnknownTotal}
		_, err := scan.Scan(ctx, l.fetch, scan.Limits{MaxItems: 10})
		incomplete(t, err, scan.ReasonItemCap)
	})
}

func TestScanTotalMismatch(t *testing.T) {
	for _, total := range []int{24, 26, 0} {
		t.Run(strconv.Itoa(total), func(t *testing.T) {
			l := &listing{n: 25, size: 10, total: total}
			got, err := scan.Scan(context.Background(), l.fetch, scan.Limits{})
			ie := incomplete(t, err, scan.ReasonTotalMismatch)
			assert.ErrorIs(t, err, scan.ErrTotalMismatch)
			assert.Equal(t, total, ie.Total)
			assert.Equal(t, 25, ie.Items)
			assert.Len(t, got, 25)
			assert.Contains(t, err.Error(), fmt.Sprintf("total of %d", total))
		})
	}
	// The last reported total counts: a total dropped on a later page is
	// not forgotten.
	pages := []scan.Page[int]{{Items: []int{1}, Next: "a", Total: 3}, {Items: []int{2}, Total: scan.UnknownTotal}}
	fetch := func(_ context.Context, c string) (scan.Page[int], error) {
		if c == "" {
			return pages[0], nil
		}
		return pages[1], nil
	}
	_, err := scan.Scan(context.Background(), fetch, scan.Limits{})
	incomplete(t, err, scan.ReasonTotalMismatch)
}

type peerError struct{ status int }

func (e *peerError) Error() string { return "peer said " + strconv.Itoa(e.status) }

func TestScanFetchError(t *testing.T) {
	l := &listing{n: 30, size: 10, total: scan.UnknownTotal}
	fetch := func(ctx context.Context, c string) (scan.Page[int], error) {
		if c == "p2" {
			return scan.Page[int]{}, &peerError{502}
		}
		return l.fetch(ctx, c)
	}
	got, err := scan.Scan(context.Background(), fetch, scan.Limits{})
	ie := incomplete(t, err, scan.ReasonFetch)
	var pe *peerError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 502, pe.status)
	assert.Same(t, pe, ie.Err)
	assert.Equal(t, "p2", ie.Cursor)
	assert.Equal(t, 3, ie.Pages)
	assert.Equal(t, 20, ie.Items)
	assert.Len(t, got, 20)
	assert.Contains(t, err.Error(), `cursor "p2": peer said 502`)
}

func TestScanCanceled(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	boom := errors.New("shutting down")
	cancel(boom)
	l := &listing{n: 30, size: 10, total: scan.UnknownTotal}
	_, err := scan.Scan(ctx, l.fetch, scan.Limits{})
	incomplete(t, err, scan.ReasonCanceled)
	assert.ErrorIs(t, err, boom)
	assert.Zero(t, l.fetches)

	ctx, cancel = context.WithCancelCause(context.Background())
	fetch := func(ctx context.Context, c string) (scan.Page[int], error) {
		if c == "p1" {
			cancel(boom)
			return scan.Page[int]{}, context.Cause(ctx)
		}
		return l.fetch(ctx, c)
	}
	got, err := scan.Scan(ctx, fetch, scan.Limits{})
	ie := incomplete(t, err, scan.ReasonCanceled)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 10, ie.Items)
	assert.Len(t, got, 10)
}

func TestScanBadArguments(t *testing.T) {
	l := &listing{n: 3, size: 1, total: scan.UnknownTotal}
	for _, lim := range []scan.Limits{{MaxPages: -1}, {MaxItems: -1}} {
		_, err := scan.Scan(context.Background(), l.fetch, lim)
		require.Error(t, err)
		assert.NotErrorIs(t, err, scan.ErrIncomplete)
	}
	assert.Zero(t, l.fetches)
	_, err := scan.Scan[int](context.Background(), nil, scan.Limits{})
	assert.Error(t, err)
}

func TestSeq(t *testing.T) {
	ctx := context.Background()
	t.Run("complete", func(t *testing.T) {
		l := &listing{n: 25, size: 10, total: 25}
		var got []int
		for v, err := range scan.Seq(ctx, l.fetch, scan.Limits{}) {
			require.NoError(t, err)
			got = append(got, v)
		}
		assert.Equal(t, seq(25), got)
	})
	t.Run("ends with an error", func(t *testing.T) {
		l := &listing{n: 100, size: 10, total: scan.UnknownTotal}
		var got []int
		var last error
		for v, err := range scan.Seq(ctx, l.fetch, scan.Limits{MaxPages: 2}) {
			if err != nil {
				last = err
				break
			}
			got = append(got, v)
		}
		incomplete(t, last, scan.ReasonPageCap)
		assert.Equal(t, seq(20), got)
	})
	t.Run("total mismatch after the items", func(t *testing.T) {
		l := &listing{n: 5, size: 10, total: 6}
		n, errs := 0, 0
		for _, err := range scan.Seq(ctx, l.fetch, scan.Limits{}) {
			if err != nil {
				errs++
				incomplete(t, err, scan.ReasonTotalMismatch)
				continue
			}
			n++
		}
		assert.Equal(t, 5, n)
		assert.Equal(t, 1, errs)
	})
	t.Run("break stops fetching", func(t *testing.T) {
		l := &listing{n: 100, size: 10, total: scan.UnknownTotal}
		for v, err := range scan.Seq(ctx, l.fetch, scan.Limits{}) {
			require.NoError(t, err)
			if v == 12 {
				break
			}
		}
		assert.Equal(t, 2, l.fetches)
	})
	t.Run("bad limits", func(t *testing.T) {
		var errs []error
		for _, err := range scan.Seq(ctx, (&listing{n: 1, size: 1}).fetch, scan.Limits{MaxPages: -2}) {
			errs = append(errs, err)
		}
		require.Len(t, errs, 1)
		assert.Error(t, errs[0])
	})
}
