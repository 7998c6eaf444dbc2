package retrieval

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestChunkerParagraphs(t *testing.T) {
	s := Source{ID: "DOC", Text: "  First paragraph,\r\nsecond line.  \r\n \r\n\tSecond paragraph.\n\n\n\nThird."}
	got := Chunker{MaxRunes: 40}.Chunk(s)
	want := []Chunk{
		{ID: "DOC#0", Source: "DOC", N: 0, Text: "First paragraph,\nsecond line."},
		{ID: "DOC#1", Source: "DOC", N: 1, Text: "Second paragraph.\n\nThird."},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("chunks:\n got %+v\nwant %+v", got, want)
	}
	// The default limit packs all three paragraphs into one chunk.
	if got := (Chunker{}).Chunk(s); len(got) != 1 || got[0].Text != "First paragraph,\nsecond line.\n\nSecond paragraph.\n\nThird." {
		t.Fatalf("default chunker: %+v", got)
	}
}

func TestChunkerLongParagraph(t *testing.T) {
	words := strings.Repeat("alpha beta gamma delta ", 20) // 460 runes
	long := strings.Repeat("x", 25)                        // no white space at all
	s := Source{ID: "L", Text: words + "\n\n" + long + "\n\nÄÖÜ äöü"}
	c := Chunker{MaxRunes: 10}
	chunks := c.Chunk(s)
	var rebuilt []string
	for i, ch := range chunks {
		if n := utf8.RuneCountInString(ch.Text); n > 10 || n == 0 {
			t.Fatalf("chunk %d has %d runes: %q", i, n, ch.Text)
		}
		if ch.ID != ChunkID("L", i) || ch.N != i {
			t.Fatalf("chunk %d numbered %q/%d", i, ch.ID, ch.N)
		}
		rebuilt = append(rebuilt, strings.Fields(ch.Text)...)
	}
	// Cutting loses no word except where a word itself exceeds the limit.
	wantWords := strings.Fields(words)
	if !slices.Equal(rebuilt[:len(wantWords)], wantWords) {
		t.Fatalf("words lost or reordered: %q", rebuilt[:len(wantWords)])
	}
	if strings.Join(rebuilt[len(wantWords):len(wantWords)+3], "") != long {
		t.Fatalf("hard cut of a word longer than the limit: %q", rebuilt[len(wantWords):])
	}
	if !slices.Equal(c.Chunk(s), chunks) {
		t.Fatal("chunking is not deterministic")
	}
}

func TestChunkerEmpty(t *testing.T) {
	if got := (Chunker{}).Chunk(Source{ID: "E", Text: " \n\n\t\n"}); len(got) != 0 {
		t.Fatalf("blank text gave chunks %+v", got)
	}
	err := validateSource(Source{ID: "E", Text: "\n"}, Chunker{})
	if err == nil || !strings.Contains(err.Error(), "no paragraph") {
		t.Fatalf("blank source accepted: %v", err)
	}
}

func TestCorpusDigest(t *testing.T) {
	a := Source{ID: "A", Title: "a", Scopes: []string{"x", "y"}, Admissible: true, Text: "alpha"}
	b := Source{ID: "B", Title: "b", Scopes: []string{"x"}, Admissible: true, Text: "beta"}
	d := CorpusDigest([]Source{a, b})
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		t.Fatalf("digest format: %q", d)
	}
	if CorpusDigest([]Source{b, a}) != d {
		t.Fatal("digest depends on corpus order")
	}
	a2 := a
	a2.Scopes = []string{"y", "x"}
	if CorpusDigest([]Source{a2, b}) != d {
		t.Fatal("digest depends on scope order")
	}
	for name, change := range map[string]func(*Source){
		"title":      func(s *Source) { s.Title = "A" },
		"scope":      func(s *Source) { s.Scopes = []string{"x"} },
		"admissible": func(s *Source) { s.Admissible = false },
		"from":       func(s *Source) { s.ValidFrom = time.Unix(1, 0) },
		"until":      func(s *Source) { s.ValidUntil = time.Unix(1, 0) },
		"text":       func(s *Source) { s.Text = "alpha." },
	} {
		c := a
		change(&c)
		if CorpusDigest([]Source{c, b}) == d {
			t.Errorf("changing %s does not change the digest", name)
		}
	}
	// Same text, other chunking: other chunks, other digest.
	long := Source{ID: "L", Text: "one\n\ntwo", Admissible: true}
	if (Chunker{MaxRunes: 3}).Digest([]Source{long}) == (Chunker{}).Digest([]Source{long}) {
		t.Error("chunking rule is not part of the digest")
	}
}

func TestPolicyCheck(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	p := CorpusPolicy{AsOf: day(10), Scope: "support"}
	base := Source{ID: "S", Scopes: []string{"support"}, Admissible: true, ValidFrom: day(1), ValidUntil: day(20)}
	cases := []struct {
		name string
		edit func(*Source)
		want Exclusion
	}{
		{"admitted", func(*Source) {}, Admitted},
		{"open window", func(s *Source) { s.ValidFrom, s.ValidUntil = time.Time{}, time.Time{} }, Admitted},
		{"valid from AsOf exactly", func(s *Source) { s.ValidFrom = day(10) }, Admitted},
		{"inadmissible", func(s *Source) { s.Admissible = false }, NotAdmissible},
		{"future", func(s *Source) { s.ValidFrom = day(11) }, NotYetValid},
		{"expired", func(s *Source) { s.ValidUntil = day(9) }, Expired},
		{"expires at AsOf (exclusive end)", func(s *Source) { s.ValidUntil = day(10) }, Expired},
		{"other scope", func(s *Source) { s.Scopes = []string{"sales"} }, OutOfScope},
		{"no scope", func(s *Source) { s.Scopes = nil }, OutOfScope},
	}
	for _, c := range cases {
		s := base
		c.edit(&s)
		if got := p.Check(s); got != c.want {
			t.Errorf("%s: Check = %q, want %q", c.name, got, c.want)
		}
	}
	for _, bad := range []CorpusPolicy{{Scope: "support"}, {AsOf: day(1)}, {AsOf: day(1), Scope: " "}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("policy %+v validated", bad)
		}
		if got := bad.Check(base); got != PolicyInvalid {
			t.Errorf("invalid policy %+v: Check = %q", bad, got)
		}
	}
}
