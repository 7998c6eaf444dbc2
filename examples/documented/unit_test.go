package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/retrieval"
)

func validDraft() BacklogDraft {
	return BacklogDraft{Title: "Review Reporting CSV export", Type: "Question", Priority: "medium",
		Area: "Reporting", Summary: "an answer", Links: []string{}}
}

func TestBacklogDraftValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*BacklogDraft)
		want []string // substrings, one per expected problem
	}{
		{"valid", func(*BacklogDraft) {}, nil},
		{"valid with a link", func(d *BacklogDraft) { d.Links = []string{"https://help.example/export"} }, nil},
		{"empty title", func(d *BacklogDraft) { d.Title = " " }, []string{"title is empty"}},
		{"padded area", func(d *BacklogDraft) { d.Area = "Reporting " }, []string{"area has leading"}},
		{"long summary", func(d *BacklogDraft) { d.Summary = strings.Repeat("x", maxSummaryRunes+1) }, []string{"summary is longer"}},
		{"bad utf-8", func(d *BacklogDraft) { d.Title = "\xff" }, []string{"title is not valid UTF-8"}},
		{"unknown type", func(d *BacklogDraft) { d.Type = "question" }, []string{`type "question"`}},
		{"unknown priority", func(d *BacklogDraft) { d.Priority = "urgent" }, []string{`priority "urgent"`}},
		{"null links", func(d *BacklogDraft) { d.Links = nil }, []string{"links is null"}},
		{"relative link", func(d *BacklogDraft) { d.Links = []string{"/export"} }, []string{"links[0]"}},
		{"link with user", func(d *BacklogDraft) { d.Links = []string{"https://u:p@help.example/"} }, []string{"links[0]"}},
		{"every problem at once", func(d *BacklogDraft) { *d = BacklogDraft{} },
			[]string{"title", "area", "summary", "type", "priority", "links"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := validDraft()
			tc.edit(&d)
			errs := d.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("%d problems %v, want %d %v", len(errs), errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("problem %d %q does not mention %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestDecodeDraftIsStrict(t *testing.T) {
	if _, err := decodeDraft([]byte(wantDraft)); err != nil {
		t.Fatalf("the stored draft does not decode: %v", err)
	}
	for _, raw := range []string{
		`{"area":"Reporting","links":[],"priority":"medium","summary":"s","title":"t","type":"Question","extra":1}`,
		wantDraft + `{}`,
		`{"area":"Reporting","links":null,"priority":"medium","summary":"s","title":"t","type":"Question"}`,
		`not json`,
	} {
		if _, err := decodeDraft([]byte(raw)); err == nil {
			t.Errorf("decodeDraft(%s) accepted it", raw)
		}
	}
}

// The fixture must keep its shape: one chunk per source, the decoys on the
// query, the others orthogonal, and a policy that refuses each decoy for
// its own reason.
func TestFixture(t *testing.T) {
	corpus := builtinCorpus()
	chunks := retrieval.Chunks(corpus)
	if len(chunks) != len(corpus) {
		t.Fatalf("%d chunks for %d sources; every fixture source is one paragraph", len(chunks), len(corpus))
	}
	vs := fixtureVectors(chunks)
	for i, c := range chunks {
		near := c.Source == answerSource || slices.ContainsFunc(decoys(), func(d decoy) bool { return d.ID == c.Source })
		want := []float32{0, 1}
		if near {
			want = fixtureQuery()
		}
		if !slices.Equal(vs[i], want) {
			t.Errorf("%s at %v, want %v", c.ID, vs[i], want)
		}
	}
	if i := slices.IndexFunc(chunks, func(c retrieval.Chunk) bool { return c.ID == answerChunk }); i < 0 ||
		!strings.Contains(chunks[i].Text, answerQuote) {
		t.Fatalf("%s does not hold the quote %q", answerChunk, answerQuote)
	}
	policy := retrieval.CorpusPolicy{AsOf: asOf(), Scope: scope}
	if err := checkPolicy(corpus, policy, nil); err != nil {
		t.Fatal(err)
	}
	// What run prints about the vectors holds, and is checked: the answer's
	// chunk on the query, every other admitted chunk at (0,1) as the fixture
	// has it, every refused one on the query.
	for k, c := range chunks {
		i := slices.IndexFunc(corpus, func(s retrieval.Source) bool { return s.ID == c.Source })
		v := vs[k]
		admitted := policy.Check(corpus[i]) == retrieval.Admitted
		if admitted && c.Source != answerSource && !slices.Equal(v, []float32{0, 1}) {
			t.Errorf("admissible chunk %s at %v, want (0,1)", c.ID, v)
		}
		if !admitted && !slices.Equal(v, fixtureQuery()) {
			t.Errorf("refused chunk %s at %v, want the query (1,0)", c.ID, v)
		}
	}
	layout, err := fixtureLayout(corpus, chunks, vs, policy)
	want := "Vectors: ACME-EXPORT at (1,0) and the 2 other admissible chunks at (0,1), as in the controlled fixture of docs/examples.md; " +
		"unlike it, the 4 refused decoys are deliberately at (1,0) too, on the query, so that the policy, not the vector, keeps them out"
	if err != nil || layout != want {
		t.Fatalf("layout %q (%v), want %q", layout, err, want)
	}
	for name, edit := range map[string]func([][]float32){
		"admissible chunk on the query": func(v [][]float32) { v[slices.IndexFunc(chunks, isSource("ACME-DASHBOARDS"))] = fixtureQuery() },
		"decoy off the query":           func(v [][]float32) { v[slices.IndexFunc(chunks, isSource("ACME-EXPORT-2024"))] = []float32{0, 1} },
		"answer off the query":          func(v [][]float32) { v[slices.IndexFunc(chunks, isSource(answerSource))] = []float32{0, 1} },
	} {
		bad := slices.Clone(vs)
		edit(bad)
		if _, err := fixtureLayout(corpus, chunks, bad, policy); err == nil || !strings.Contains(err.Error(), "fixture check") {
			t.Errorf("%s: fixtureLayout = %v", name, err)
		}
	}
	// checkPolicy must notice a refused source among the hits.
	err = checkPolicy(corpus, policy, []retrieval.Hit{{ChunkID: "ACME-EXPORT-2024#0", SourceID: "ACME-EXPORT-2024"}})
	if err == nil || !strings.Contains(err.Error(), "reached the hits") {
		t.Fatalf("checkPolicy missed a refused hit: %v", err)
	}
}

func isSource(id string) func(retrieval.Chunk) bool {
	return func(c retrieval.Chunk) bool { return c.Source == id }
}

func TestCheckRowsReportsInconsistency(t *testing.T) {
	st := []approval.State{{OperationID: "op", Status: approval.StatusCompleted, ItemID: 1, Draft: []byte(wantDraft)}}
	for _, tc := range []struct {
		name string
		rows []backlogRow
	}{
		{"missing row", nil},
		{"two rows", []backlogRow{{ID: 1, OperationID: "op", ApprovalItemID: 1, Draft: []byte(wantDraft)}, {ID: 2, OperationID: "op", ApprovalItemID: 1, Draft: []byte(wantDraft)}}},
		{"other draft", []backlogRow{{ID: 1, OperationID: "op", ApprovalItemID: 1, Draft: []byte(`{}`)}}},
		{"other item", []backlogRow{{ID: 1, OperationID: "op", ApprovalItemID: 2, Draft: []byte(wantDraft)}}},
	} {
		if err := checkRows(st, tc.rows); !errors.Is(err, errInconsistent) {
			t.Errorf("%s: %v, want errInconsistent", tc.name, err)
		}
	}
	ok := []backlogRow{{ID: 1, OperationID: "op", ApprovalItemID: 1, Draft: []byte(wantDraft)}}
	if err := checkRows(st, ok); err != nil {
		t.Errorf("consistent rows refused: %v", err)
	}
	waiting := []approval.State{{OperationID: "op", Status: approval.StatusWaiting, Draft: []byte(wantDraft)}}
	if err := checkRows(waiting, ok); !errors.Is(err, errInconsistent) {
		t.Errorf("a row for a waiting operation: %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/x":         "/tmp/x",
		"/tmp/a b":       "'/tmp/a b'",
		"/tmp/it's":      `'/tmp/it'\''s'`,
		"":               "''",
		"/tmp/$(reboot)": "'/tmp/$(reboot)'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func ExampleBacklogDraft_Validate() {
	d := BacklogDraft{Title: "Review Reporting CSV export", Type: "Question", Priority: "urgent", Area: "Reporting"}
	for _, err := range d.Validate() {
		fmt.Println(err)
	}
	// Output:
	// summary is empty
	// priority "urgent" is not one of low, medium, high
	// links is null; use an empty list
}
