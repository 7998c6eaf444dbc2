package approval

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRegisterLoneSurrogates: a \u escape of a lone UTF-16 surrogate is
// refused, so two drafts that differ only there can never canonicalise to
// the same bytes, and registering the second under the first's id is never
// a silent no-op.
func TestRegisterLoneSurrogates(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	first, err := s.Register(ctx, Ticket{OperationID: "op", Draft: rawDraft(`{"s":"\ud800"}`)})
	require.ErrorIs(t, err, ErrInvalidDraft, "stored %s", first.Draft)
	second, err := s.Register(ctx, Ticket{OperationID: "op", Draft: rawDraft(`{"s":"\udfff"}`)})
	require.ErrorIs(t, err, ErrInvalidDraft, "stored %s", second.Draft)
	for _, bad := range []string{`{"s":"a\udc00b"}`, `{"s":"\ud800\u0041"}`, `{"\udbff":1}`} {
		_, err := s.Register(ctx, Ticket{OperationID: "op", Draft: rawDraft(bad)})
		assert.ErrorIs(t, err, ErrInvalidDraft, bad)
	}
	_, err = s.Read(ctx, "op")
	assert.ErrorIs(t, err, ErrUnknownOperation, "a refused draft was stored")
	// A valid pair is one character.
	st, err := s.Register(ctx, Ticket{OperationID: "pair", Draft: rawDraft(`{"s":"\ud83d\ude00"}`)})
	require.NoError(t, err)
	assert.Equal(t, `{"s":"😀"}`, string(st.Draft))
}

// TestRegisterReplacementEscape: a valid \ufffd escape in raw JSON is
// U+FFFD, in either hex case; only bytes that are not UTF-8 in a Go string
// (which json.Marshal would replace) are refused.
func TestRegisterReplacementEscape(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	lower, err := s.Register(ctx, Ticket{OperationID: "op", Draft: rawDraft(`{"s":"\ufffd"}`)})
	require.NoError(t, err)
	assert.Equal(t, "{\"s\":\"\ufffd\"}", string(lower.Draft))
	upper, err := s.Register(ctx, Ticket{OperationID: "op", Draft: rawDraft(`{"s":"\uFFFD"}`)})
	require.NoError(t, err, "the same draft in the other hex case")
	assert.Equal(t, lower, upper)
	_, err = s.Register(ctx, Ticket{OperationID: "op", Draft: rawDraft(`{"s":"\ufffe"}`)})
	assert.ErrorIs(t, err, ErrOperationRebound)

	_, err = s.Register(ctx, Ticket{OperationID: "raw", Draft: embeddedRawDraft{Title: "t", Extra: json.RawMessage(`"\ufffd"`)}})
	assert.NoError(t, err, "a RawMessage holding the escape")
	_, err = s.Register(ctx, Ticket{OperationID: "bad", Draft: testDraft{Title: "x", Quantity: 1, Lines: []string{"ok", "bad \xff"}}})
	var ide *InvalidDraftError
	require.ErrorAs(t, err, &ide)
	require.Len(t, ide.Problems, 1)
	assert.Contains(t, ide.Problems[0].Error(), "draft.lines[1] holds a string that is not valid UTF-8")
}

type textKey string

func (k textKey) MarshalText() ([]byte, error) { return []byte(k), nil }

type badText struct{}

func (badText) MarshalText() ([]byte, error) { return []byte("\xfe"), nil }

type walked struct {
	Plain   string
	Hidden  string `json:"-"`
	Named   string `json:"n,omitempty"`
	Bytes   []byte
	Raw     json.RawMessage
	Any     any
	Ptr     *string
	Map     map[string]string
	TextMap map[textKey]int
	Text    badText
	private string
}

func TestInvalidString(t *testing.T) {
	bad := "\xff"
	tests := []struct {
		name string
		v    walked
		at   string // "" for none
	}{
		{"clean", walked{Plain: "é", Any: []any{"a", map[string]any{"k": "v"}}}, ""},
		{"plain", walked{Plain: bad}, "w.Plain"},
		{"json:\"-\" is not written", walked{Hidden: bad}, ""},
		{"tag name", walked{Named: bad}, "w.n"},
		{"bytes are base64", walked{Bytes: []byte(bad)}, ""},
		{"raw JSON is checked whole elsewhere", walked{Raw: json.RawMessage(`"` + bad + `"`)}, ""},
		{"inside any", walked{Any: []any{"ok", map[string]any{"k": bad}}}, `w.Any[1]["k"]`},
		{"through a pointer", walked{Ptr: &bad}, "w.Ptr"},
		{"map value", walked{Map: map[string]string{"k": bad}}, `w.Map["k"]`},
		{"map key", walked{Map: map[string]string{bad: "v"}}, `w.Map key "\xff"`},
		{"text map key", walked{TextMap: map[textKey]int{textKey(bad): 1}}, `w.TextMap key "\xff"`},
		{"unexported", walked{private: bad}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at, found := invalidString(reflect.ValueOf(stripText(tc.v)), "w", 0)
			assert.Equal(t, tc.at != "", found, "at %s", at)
			if tc.at != "" {
				assert.Equal(t, tc.at, at)
			}
		})
	}
	at, found := invalidString(reflect.ValueOf(walked{}), "w", 0)
	assert.True(t, found, "MarshalText output that is not UTF-8")
	assert.Equal(t, "w.Text", at)
}

// stripText hides the Text field, which always marshals bad bytes, from
// the cases that test the other fields.
func stripText(w walked) any {
	type noText struct {
		Plain   string
		Hidden  string `json:"-"`
		Named   string `json:"n,omitempty"`
		Bytes   []byte
		Raw     json.RawMessage
		Any     any
		Ptr     *string
		Map     map[string]string
		TextMap map[textKey]int
		private string
	}
	return noText{w.Plain, w.Hidden, w.Named, w.Bytes, w.Raw, w.Any, w.Ptr, w.Map, w.TextMap, w.private}
}
