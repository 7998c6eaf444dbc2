package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/candorkit/candor/internal/mcptest"
)

func TestPagesComplete(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		for _, tc := range []struct {
			name      string
			opts      []PageOption
			pageSize  int
			wantPages int
		}{
			{"cursor", nil, 10, 3},
			{"cursor-exact", nil, 25, 1},
			{"offset", []PageOption{WithOffsetPaging()}, 10, 3},
		} {
			scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, tc.pageSize, tc.opts...)
			if err != nil || !scan.Complete || scan.Reason != "" {
				t.Fatalf("%s: scan = %+v, err = %v", tc.name, scan, err)
			}
			if scan.Pages != tc.wantPages || len(scan.Items) != 25 {
				t.Fatalf("%s: %d pages, %d items", tc.name, scan.Pages, len(scan.Items))
			}
			for i, it := range scan.Items {
				if it != srv.Items()[i] {
					t.Fatalf("%s: item %d = %+v, want %+v", tc.name, i, it, srv.Items()[i])
				}
			}
		}
	})
}

func TestPagesEmptyList(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind, mcptest.WithItems(0)).URL)
		scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, 10)
		if err != nil || !scan.Complete || scan.Pages != 1 || len(scan.Items) != 0 {
			t.Fatalf("scan = %+v, %v", scan, err)
		}
	})
}

func TestPagesIncomplete(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		for _, tc := range []struct {
			name      string
			args      map[string]any
			opts      []Option
			pageOpts  []PageOption
			pageSize  int
			wantPages int
			wantErr   func(error) bool
			reason    string
		}{
			{"missing-nextCursor", map[string]any{"fault": "missing-next"}, nil, nil, 10, 1,
				func(err error) bool { var de *DecodeError; return errors.As(err, &de) && len(de.Raw) > 0 }, "nextCursor"},
			{"repeated-cursor", map[string]any{"fault": "repeat-cursor"}, nil, nil, 10, 2,
				func(err error) bool { return err != nil }, "repeats cursor"},
			{"total-mismatch", map[string]any{"fault": "short-total"}, nil, nil, 10, 3,
				func(err error) bool { return err != nil }, "total says 26"},
			{"offset-total-mismatch", map[string]any{"fault": "short-total"}, nil, []PageOption{WithOffsetPaging()}, 10, 4,
				func(err error) bool { return err != nil }, "empty page"},
			{"tool-error", nil, nil, nil, 500, 0,
				func(err error) bool { return errors.Is(err, ErrToolFailed) }, "limit must be"},
			{"page-cap", nil, nil, []PageOption{WithMaxPages(2)}, 10, 2,
				func(err error) bool { return err != nil }, "page cap 2"},
			{"budget", nil, []Option{WithBudget(Budget{MaxCalls: 2})}, nil, 10, 2,
				func(err error) bool { return errors.Is(err, ErrBudgetExceeded) }, "budget"},
		} {
			c := dial(t, srv.URL, tc.opts...)
			scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, tc.args, tc.pageSize, tc.pageOpts...)
			if scan.Complete || err == nil || !tc.wantErr(err) {
				t.Fatalf("%s: scan = %+v, err = %v", tc.name, scan, err)
			}
			if scan.Pages != tc.wantPages || len(scan.Items) != min(tc.wantPages*10, 25) || !strings.Contains(scan.Reason, tc.reason) || scan.Reason != err.Error() {
				t.Fatalf("%s: pages %d items %d reason %q", tc.name, scan.Pages, len(scan.Items), scan.Reason)
			}
		}
	})
}

func TestPagesItemNotT(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		scan, err := Pages[string](t.Context(), c, mcptest.ToolList, nil, 10)
		var de *DecodeError
		if scan.Complete || scan.Pages != 0 || len(scan.Items) != 0 || !errors.As(err, &de) {
			t.Fatalf("scan = %+v, err = %v", scan, err)
		}
		raw, err := Pages[json.RawMessage](t.Context(), c, mcptest.ToolList, nil, 10)
		if err != nil || !raw.Complete || len(raw.Items) != 25 {
			t.Fatalf("raw scan = %d items, %v", len(raw.Items), err)
		}
	})
}

func TestPagesCancelled(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		scan, err := Pages[mcptest.Item](ctx, c, mcptest.ToolList, nil, 10)
		if scan.Complete || !errors.Is(err, context.Canceled) || scan.Reason == "" {
			t.Fatalf("scan = %+v, err = %v", scan, err)
		}
	})
}

func TestPagesRejectsReservedArgs(t *testing.T) {
	c := dial(t, mcptest.New(t, mcptest.MCPGo).URL)
	for _, args := range []map[string]any{{"limit": 5}, {"cursor": "x"}} {
		scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, args, 10)
		if err == nil || scan.Complete {
			t.Fatalf("args %v accepted", args)
		}
	}
	if _, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, 0); err == nil {
		t.Fatal("page size 0 accepted")
	}
}
