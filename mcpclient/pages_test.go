package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/mcpclient/mcptest"
)

func TestPagesComplete(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		for _, tc := range []struct {
			name      string
			opts      PageOptions
			wantPages int
		}{
			{"cursor", PageOptions{Size: 10}, 3},
			{"cursor-exact", PageOptions{Size: 25}, 1},
			{"cursor-default-size", PageOptions{}, (25 + DefaultPageSize - 1) / DefaultPageSize},
			{"offset", PageOptions{Size: 10, Offset: true}, 3},
		} {
			var scan Scan[mcptest.Item]
			scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, tc.opts)
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
		scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, PageOptions{Size: 10})
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
			pageOpts  PageOptions
			wantPages int
			kind      Kind
			reason    string
		}{
			{"missing-nextCursor", map[string]any{"fault": "missing-next"}, nil, PageOptions{Size: 10}, 1, KindDecode, "nextCursor"},
			{"repeated-cursor", map[string]any{"fault": "repeat-cursor"}, nil, PageOptions{Size: 10}, 2, KindIncomplete, "repeated cursor"},
			{"total-mismatch", map[string]any{"fault": "short-total"}, nil, PageOptions{Size: 10}, 3, KindIncomplete, "total of 26"},
			{"offset-total-mismatch", map[string]any{"fault": "short-total"}, nil, PageOptions{Size: 10, Offset: true}, 3, KindDecode, "empty page"},
			{"tool-error", nil, nil, PageOptions{Size: 500}, 0, KindToolError, "limit must be"},
			{"page-cap", nil, nil, PageOptions{Size: 10, MaxPages: 2}, 2, KindIncomplete, "page cap"},
			{"item-cap", nil, nil, PageOptions{Size: 10, MaxItems: 15}, 2, KindIncomplete, "item cap"},
			{"budget", nil, []Option{WithBudget(Budget{MaxCalls: 2})}, PageOptions{Size: 10}, 2, KindBudgetExceeded, "budget"},
		} {
			c := dial(t, srv.URL, tc.opts...)
			scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, tc.args, tc.pageOpts)
			if scan.Complete || err == nil || Classify(err) != tc.kind {
				t.Fatalf("%s: scan = %+v, err = %v (%s), want kind %s", tc.name, scan, err, Classify(err), tc.kind)
			}
			if tc.kind == KindDecode {
				var de *DecodeError
				if !errors.As(err, &de) || len(de.Raw) == 0 {
					t.Fatalf("%s: %v is not a *DecodeError with the page", tc.name, err)
				}
			}
			wantItems := min(tc.wantPages*10, 25)
			if tc.pageOpts.MaxItems > 0 {
				wantItems = min(wantItems, tc.pageOpts.MaxItems)
			}
			if scan.Pages != tc.wantPages || len(scan.Items) != wantItems || !strings.Contains(scan.Reason, tc.reason) || scan.Reason != err.Error() {
				t.Fatalf("%s: pages %d items %d reason %q", tc.name, scan.Pages, len(scan.Items), scan.Reason)
			}
		}
	})
}

func TestPagesItemNotT(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		scan, err := Pages[string](t.Context(), c, mcptest.ToolList, nil, PageOptions{Size: 10})
		var de *DecodeError
		if scan.Complete || scan.Pages != 0 || len(scan.Items) != 0 || !errors.As(err, &de) {
			t.Fatalf("scan = %+v, err = %v", scan, err)
		}
		raw, err := Pages[json.RawMessage](t.Context(), c, mcptest.ToolList, nil, PageOptions{Size: 10})
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
		scan, err := Pages[mcptest.Item](ctx, c, mcptest.ToolList, nil, PageOptions{Size: 10})
		if scan.Complete || !errors.Is(err, context.Canceled) || scan.Reason == "" || Classify(err) != KindCanceled {
			t.Fatalf("scan = %+v, err = %v", scan, err)
		}
	})
}

func TestPagesRejectsReservedArgs(t *testing.T) {
	c := dial(t, mcptest.New(t, mcptest.MCPGo).URL)
	for _, args := range []map[string]any{{"limit": 5}, {"cursor": "x"}} {
		scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, args, PageOptions{Size: 10})
		if err == nil || scan.Complete || Classify(err) != KindInvalidArgument {
			t.Fatalf("args %v accepted", args)
		}
	}
	for _, o := range []PageOptions{{Size: -1}, {MaxPages: -1}, {MaxItems: -1}} {
		if _, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, o); Classify(err) != KindInvalidArgument {
			t.Fatalf("%+v accepted: %v", o, err)
		}
	}
}

// walk reads a list with Page from cursor "" to the last page.
func walk(t *testing.T, c *Client, opts PageOptions) []PageResult[mcptest.Item] {
	t.Helper()
	var pages []PageResult[mcptest.Item]
	cursor := ""
	for range 10 {
		p, err := Page[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, cursor, opts)
		if err != nil {
			t.Fatalf("page %d (cursor %q): %v", len(pages)+1, cursor, err)
		}
		pages = append(pages, p)
		if p.Last {
			return pages
		}
		cursor = p.NextCursor
	}
	t.Fatal("no last page after 10 pages")
	return nil
}

func TestPageWalk(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		for _, tc := range []struct {
			name  string
			opts  PageOptions
			nexts []string // NextCursor of each page, "" for any non-empty cursor
		}{
			{"cursor", PageOptions{Size: 10}, nil},
			{"offset", PageOptions{Size: 10, Offset: true}, []string{"10", "20", ""}},
		} {
			pages := walk(t, c, tc.opts)
			if len(pages) != 3 {
				t.Fatalf("%s: %d pages, want 3", tc.name, len(pages))
			}
			var items []mcptest.Item
			for i, p := range pages {
				items = append(items, p.Items...)
				last := i == len(pages)-1
				if p.Last != last || (p.NextCursor == "") != last || !p.HasTotal || p.Total != 25 {
					t.Fatalf("%s: page %d = last %t next %q total %d/%t", tc.name, i+1, p.Last, p.NextCursor, p.Total, p.HasTotal)
				}
				if tc.nexts != nil && p.NextCursor != tc.nexts[i] {
					t.Fatalf("%s: page %d next %q, want %q", tc.name, i+1, p.NextCursor, tc.nexts[i])
				}
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(p.Raw, &obj); err != nil || obj["items"] == nil {
					t.Fatalf("%s: page %d Raw is not the page: %s", tc.name, i+1, p.Raw)
				}
			}
			if len(items) != 25 {
				t.Fatalf("%s: %d items", tc.name, len(items))
			}
			for i, it := range items {
				if it != srv.Items()[i] {
					t.Fatalf("%s: item %d = %+v, want %+v", tc.name, i, it, srv.Items()[i])
				}
			}
		}

		// An empty list is one last page with an empty, non-nil Items.
		empty := dial(t, mcptest.New(t, kind, mcptest.WithItems(0)).URL)
		for _, opts := range []PageOptions{{}, {Offset: true}} {
			p, err := Page[mcptest.Item](t.Context(), empty, mcptest.ToolList, nil, "", opts)
			if err != nil || !p.Last || p.NextCursor != "" || p.Items == nil || len(p.Items) != 0 || p.Total != 0 || !p.HasTotal {
				t.Fatalf("empty list %v: %+v, %v", opts, p, err)
			}
		}
	})
}

// The echo tool answers with its arguments (plus the "limit" Page adds) as
// structuredContent, so it serves any page object a test needs.
func TestPageMalformed(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		first, err := Page[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, "", PageOptions{Size: 10})
		if err != nil || first.Last {
			t.Fatalf("first page: %+v, %v", first, err)
		}
		offset := PageOptions{Size: 10, Offset: true}
		cur := PageOptions{Size: 10}
		for _, tc := range []struct {
			name   string
			tool   string
			args   map[string]any
			cursor string
			opts   PageOptions
			reason string
		}{
			{"no-items", mcptest.ToolEcho, map[string]any{"nextCursor": nil}, "", cur, `no "items"`},
			{"null-items", mcptest.ToolEcho, map[string]any{"items": nil, "nextCursor": nil}, "", cur, "not an array"},
			{"object-items", mcptest.ToolEcho, map[string]any{"items": map[string]any{}, "nextCursor": nil}, "", cur, "not an array"},
			{"no-nextCursor", mcptest.ToolEcho, map[string]any{"items": []any{}}, "", cur, `no "nextCursor"`},
			{"numeric-cursor", mcptest.ToolEcho, map[string]any{"items": []any{}, "nextCursor": 3}, "", cur, "neither a string nor null"},
			{"string-total", mcptest.ToolEcho, map[string]any{"items": []any{}, "nextCursor": nil, "total": "25"}, "", cur, "total"},
			{"negative-total", mcptest.ToolEcho, map[string]any{"items": []any{}, "nextCursor": nil, "total": -1}, "", cur, "total"},
			{"fraction-total", mcptest.ToolEcho, map[string]any{"items": []any{}, "nextCursor": nil, "total": 1.5}, "", cur, "total"},
			{"item-not-T", mcptest.ToolEcho, map[string]any{"items": []any{map[string]any{"id": 1}, "two"}, "nextCursor": nil}, "", cur, "item 1"},
			{"missing-next-from-server", mcptest.ToolList, map[string]any{"fault": "missing-next"}, first.NextCursor, cur, `no "nextCursor"`},
			{"offset-no-total", mcptest.ToolEcho, map[string]any{"items": []any{}}, "", offset, "needs an integer total"},
			{"offset-over-total", mcptest.ToolEcho, map[string]any{"items": []any{map[string]any{"id": 1}}, "total": 0}, "", offset, "more than total 0"},
			{"offset-empty-before-total", mcptest.ToolList, map[string]any{"fault": "short-total"}, "25", offset, "empty page at offset 25 before total 26"},
		} {
			p, err := Page[mcptest.Item](t.Context(), c, tc.tool, tc.args, tc.cursor, tc.opts)
			var de *DecodeError
			if !errors.As(err, &de) || de.Tool != tc.tool || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("%s: err = %v, want a *DecodeError about %q", tc.name, err, tc.reason)
			}
			if p.Items != nil || p.Raw != nil || p.Last || p.NextCursor != "" || p.HasTotal {
				t.Fatalf("%s: result %+v returned with the error", tc.name, p)
			}
			// Raw is the page as the server sent it.
			var got map[string]any
			if err := json.Unmarshal(de.Raw, &got); err != nil {
				t.Fatalf("%s: Raw %q: %v", tc.name, de.Raw, err)
			}
			if tc.tool == mcptest.ToolEcho {
				want := map[string]any{"limit": 10}
				if tc.opts.Offset {
					want["offset"] = 0
				}
				for k, v := range tc.args {
					want[k] = v
				}
				wantJSON, _ := json.Marshal(want)
				gotJSON, _ := json.Marshal(got)
				if string(gotJSON) != string(wantJSON) {
					t.Fatalf("%s: Raw = %s, want %s", tc.name, gotJSON, wantJSON)
				}
			} else if _, ok := got["items"]; !ok {
				t.Fatalf("%s: Raw = %s, not the page", tc.name, de.Raw)
			}
		}

		// A payload that is not JSON keeps its text.
		_, err = Page[mcptest.Item](t.Context(), c, mcptest.ToolText, nil, "", PageOptions{Size: 10})
		var de *DecodeError
		if !errors.As(err, &de) || string(de.Raw) != mcptest.NonJSONText || !strings.Contains(err.Error(), "not a JSON object") {
			t.Fatalf("text payload: %v", err)
		}
		// The same page decodes as raw JSON: the failure above is about T.
		raw, err := Page[json.RawMessage](t.Context(), c, mcptest.ToolEcho, map[string]any{"items": []any{"two"}, "nextCursor": ""}, "", PageOptions{Size: 10})
		if err != nil || !raw.Last || len(raw.Items) != 1 || string(raw.Items[0]) != `"two"` {
			t.Fatalf("raw items: %+v, %v", raw, err)
		}
	})
}

func TestPageCallFailures(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		// The list tool refuses a limit over 100 with isError.
		p, err := Page[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, "", PageOptions{Size: 500})
		var te *ToolError
		if !errors.As(err, &te) || !errors.Is(err, ErrToolFailed) || !strings.Contains(te.Text, "limit must be") || p.Items != nil || p.Last {
			t.Fatalf("tool error: %+v, %v", p, err)
		}
		// It refuses a cursor it never gave the same way.
		if _, err := Page[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, "not-a-cursor", PageOptions{Size: 10}); !errors.As(err, &te) || !strings.Contains(te.Text, "invalid cursor") {
			t.Fatalf("bad cursor: %v", err)
		}
		_, err = Page[mcptest.Item](t.Context(), c, mcptest.ToolGoError, nil, "", PageOptions{Size: 10})
		var pe *ProtocolError
		if (kind == mcptest.MCPGo && !errors.As(err, &pe)) || (kind == mcptest.GoSDK && !errors.As(err, &te)) {
			t.Fatalf("Go error in handler: %v", err)
		}

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := Page[mcptest.Item](ctx, c, mcptest.ToolList, nil, "", PageOptions{Size: 10}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled: %v", err)
		}

		budget := dial(t, srv.URL, WithBudget(Budget{MaxCalls: 1}))
		if _, err := Page[mcptest.Item](t.Context(), budget, mcptest.ToolList, nil, "", PageOptions{Size: 10}); err != nil {
			t.Fatal(err)
		}
		if p, err := Page[mcptest.Item](t.Context(), budget, mcptest.ToolList, nil, "", PageOptions{Size: 10}); !errors.Is(err, ErrBudgetExceeded) || p.Items != nil {
			t.Fatalf("budget: %+v, %v", p, err)
		}
	})
}

func TestPageRejectsBadRequests(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	c := dial(t, srv.URL)
	before := len(srv.Calls("tools/call"))
	for _, tc := range []struct {
		args   map[string]any
		cursor string
		opts   PageOptions
	}{
		{map[string]any{"limit": 5}, "", PageOptions{}},
		{map[string]any{"cursor": "x"}, "", PageOptions{}},
		{map[string]any{"offset": 0}, "", PageOptions{Offset: true}},
		{nil, "", PageOptions{Size: -1}},
		{nil, "abc", PageOptions{Offset: true}},
		{nil, "-10", PageOptions{Offset: true}},
	} {
		p, err := Page[mcptest.Item](t.Context(), c, mcptest.ToolList, tc.args, tc.cursor, tc.opts)
		if err == nil || p.Items != nil || p.Last || Classify(err) != KindInvalidArgument {
			t.Fatalf("%+v accepted: %+v", tc, p)
		}
	}
	if n := len(srv.Calls("tools/call")) - before; n != 0 {
		t.Fatalf("%d tools/call sent for refused requests", n)
	}
}

func TestPageRefusesItemsWithNoFieldOfT(t *testing.T) {
	c := dial(t, mcptest.New(t, mcptest.MCPGo).URL)
	p, err := Page[mcptest.Item](t.Context(), c, mcptest.ToolEcho,
		map[string]any{"items": []any{map[string]any{"id": 1}, map[string]any{"error": "backend down"}}, "nextCursor": nil}, "", PageOptions{})
	var de *DecodeError
	if !errors.As(err, &de) || p.Items != nil || !strings.Contains(err.Error(), "item 1") {
		t.Fatalf("item without any field of T: %+v, %v", p, err)
	}
}

// The zero PageOptions stops a scan after DefaultMaxPages pages.
func TestPagesDefaultPageCap(t *testing.T) {
	c := dial(t, mcptest.New(t, mcptest.MCPGo, mcptest.WithItems(DefaultMaxPages+1)).URL)
	scan, err := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, PageOptions{Size: 1})
	require.Error(t, err)
	assert.Equal(t, KindIncomplete, Classify(err))
	assert.Equal(t, DefaultMaxPages, scan.Pages)
	assert.Len(t, scan.Items, DefaultMaxPages)
	assert.False(t, scan.Complete)
}

// All yields every item of a complete scan, and a final error for one
// that stops; breaking out of the loop sends no further call.
func TestAll(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		var got []mcptest.Item
		for it, err := range All[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, PageOptions{Size: 10}) {
			require.NoError(t, err)
			got = append(got, it)
		}
		assert.Equal(t, srv.Items(), got)

		var errs []error
		n := 0
		for _, err := range All[mcptest.Item](t.Context(), c, mcptest.ToolList, map[string]any{"fault": "short-total"}, PageOptions{Size: 10}) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
		assert.Equal(t, 25, n)
		require.Len(t, errs, 1)
		assert.Equal(t, KindIncomplete, Classify(errs[0]))

		before := len(srv.Calls("tools/call"))
		for range All[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, PageOptions{Size: 10}) {
			break
		}
		assert.Equal(t, 1, len(srv.Calls("tools/call"))-before)

		for _, err := range All[mcptest.Item](t.Context(), c, mcptest.ToolList, map[string]any{"limit": 1}, PageOptions{}) {
			assert.Equal(t, KindInvalidArgument, Classify(err))
		}
	})
}
