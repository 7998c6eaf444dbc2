package retrieval

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func gateContext() GateInput {
	return GateInput{
		Question: "Where can I export CSV in Reporting?",
		AsOf:     asOf,
		Hits: []Hit{
			{ChunkID: "ACME-EXPORT#0", SourceID: "ACME-EXPORT", Score: 1,
				Text: "In Reporting, open any report and choose Export > CSV to download its rows as a CSV file."},
			{ChunkID: "ACME-USERS#0", SourceID: "ACME-USERS", Score: 0,
				Text: "Administrators invite users from Settings > Team."},
		},
	}
}

func TestGateAccepts(t *testing.T) {
	p := Proposal{Usable: true, Evidence: []Evidence{
		{ChunkID: "ACME-EXPORT#0", Quote: "open any report and choose Export > CSV"},
		{ChunkID: "ACME-EXPORT#0", Quote: "  open any report and choose Export > CSV\n"}, // same pair once trimmed
		{ChunkID: "ACME-USERS#0", Quote: "Administrators invite users"},
	}}
	ans := AnswerGate{}.Validate(p, gateContext())
	if !ans.Accepted || ans.Err() != nil || len(ans.Rejections) != 0 {
		t.Fatalf("rejected: %v", ans.Err())
	}
	want := `"open any report and choose Export > CSV" [ACME-EXPORT#0]` + "\n" + `"Administrators invite users" [ACME-USERS#0]`
	if ans.Text != want {
		t.Fatalf("text %q, want %q", ans.Text, want)
	}
	if len(ans.Evidence) != 2 {
		t.Fatalf("evidence %+v", ans.Evidence)
	}
}

func TestGateRejections(t *testing.T) {
	good := Evidence{ChunkID: "ACME-EXPORT#0", Quote: "choose Export > CSV to download"}
	text := gateContext().Hits[0].Text
	nonHit := "Invoices are issued on the first working day of each month." // ACME-BILLING#0, not returned
	cases := []struct {
		name string
		p    Proposal
		edit func(*GateInput)
		rule Rule
		at   int
	}{
		{"invented id", Proposal{Usable: true, Evidence: []Evidence{good, {ChunkID: "INVENTED#0", Quote: "choose Export > CSV to download"}}}, nil, RuleKnownChunk, 1},
		{"19-character quote", Proposal{Usable: true, Evidence: []Evidence{{ChunkID: "ACME-EXPORT#0", Quote: "  " + text[:19] + "  "}}}, nil, RuleQuoteLength, 0},
		{"one changed character", Proposal{Usable: true, Evidence: []Evidence{{ChunkID: "ACME-EXPORT#0", Quote: "choose Export > CSV to downl0ad"}}}, nil, RuleVerbatim, 0},
		{"quote from a non-hit chunk", Proposal{Usable: true, Evidence: []Evidence{{ChunkID: "ACME-BILLING#0", Quote: nonHit}}}, nil, RuleKnownChunk, 0},
		{"quote of another hit's text", Proposal{Usable: true, Evidence: []Evidence{{ChunkID: "ACME-USERS#0", Quote: "choose Export > CSV to download"}}}, nil, RuleVerbatim, 0},
		{"unusable", Proposal{Usable: false, Evidence: []Evidence{good}}, nil, RuleUsable, -1},
		{"no evidence", Proposal{Usable: true}, nil, RuleEvidence, -1},
		{"no question", Proposal{Usable: true, Evidence: []Evidence{good}}, func(c *GateInput) { c.Question = " " }, RuleQuestion, -1},
		{"no date", Proposal{Usable: true, Evidence: []Evidence{good}}, func(c *GateInput) { c.AsOf = time.Time{} }, RuleAsOf, -1},
		{"hit expired on AsOf", Proposal{Usable: true, Evidence: []Evidence{good}}, func(c *GateInput) { c.Hits[0].ValidUntil = asOf }, RuleValidAsOf, 0},
		{"conflicting hits", Proposal{Usable: true, Evidence: []Evidence{good}}, func(c *GateInput) {
			c.Hits = append(c.Hits, Hit{ChunkID: "ACME-EXPORT#0", Text: "other text"})
		}, RuleHitsUnique, -1},
		{"invalid UTF-8 fragment", Proposal{Usable: true, Evidence: []Evidence{{ChunkID: "U#0", Quote: "abcdefghijklmnopqrst\xc3"}}}, func(c *GateInput) {
			c.Hits = []Hit{{ChunkID: "U#0", Text: "abcdefghijklmnopqrsté"}}
		}, RuleVerbatim, 0},
	}
	for _, c := range cases {
		ctx := gateContext()
		if c.edit != nil {
			c.edit(&ctx)
		}
		ans := AnswerGate{}.Validate(c.p, ctx)
		if ans.Accepted || ans.Text != "" || ans.Evidence != nil {
			t.Errorf("%s: accepted %+v", c.name, ans)
			continue
		}
		err := ans.Err()
		var re *RejectedError
		if !errors.Is(err, ErrRejected) || !errors.As(err, &re) {
			t.Errorf("%s: Err() = %v", c.name, err)
			continue
		}
		found := false
		for _, r := range re.Rejections {
			if r.Rule == c.rule && r.Evidence == c.at {
				found = true
				if c.at >= 0 && (r.ChunkID != c.p.Evidence[c.at].ChunkID || r.Quote != c.p.Evidence[c.at].Quote) {
					t.Errorf("%s: rejection does not carry the evidence: %+v", c.name, r)
				}
				if !strings.Contains(err.Error(), string(c.rule)) {
					t.Errorf("%s: message %q does not name the rule", c.name, err)
				}
			}
		}
		if !found {
			t.Errorf("%s: want rule %s at evidence %d, got %v", c.name, c.rule, c.at, err)
		}
	}
}

func TestGateMinQuoteConfigurable(t *testing.T) {
	p := Proposal{Usable: true, Evidence: []Evidence{{ChunkID: "ACME-USERS#0", Quote: "Administrators invite users"}}} // 27 runes
	if ans := (AnswerGate{MinQuoteRunes: 28}).Validate(p, gateContext()); ans.Accepted {
		t.Fatal("27-character quote accepted with a 28-character minimum")
	}
	if ans := (AnswerGate{MinQuoteRunes: 27}).Validate(p, gateContext()); !ans.Accepted {
		t.Fatalf("27-character quote refused with a 27-character minimum: %v", ans.Err())
	}
}

func FuzzAnswerGateValidate(f *testing.F) {
	text := gateContext().Hits[0].Text
	f.Add(true, "ACME-EXPORT#0", "choose Export > CSV to download", "ACME-EXPORT#0", text, "Where can I export CSV in Reporting?")
	f.Add(true, "INVENTED#0", "choose Export > CSV to download", "ACME-EXPORT#0", text, "q")
	f.Add(true, "ACME-EXPORT#0", text[:19], "ACME-EXPORT#0", text, "q")
	f.Add(false, "ACME-EXPORT#0", "choose Export > CSV to download", "ACME-EXPORT#0", text, "q")
	f.Add(true, "X#0", "  ééééééééééééééééééééé  ", "X#0", "ééééééééééééééééééééé", "q")
	f.Add(true, "X#0", "abcdefghijklmnopqrst\xc3", "X#0", "abcdefghijklmnopqrst\xc3\xa9", "q")
	f.Add(true, "", "", "", "", "")
	f.Fuzz(func(t *testing.T, usable bool, id, quote, hitID, hitText, question string) {
		c := GateInput{Question: question, AsOf: asOf, Hits: []Hit{{ChunkID: hitID, Text: hitText}}}
		p := Proposal{Usable: usable, Evidence: []Evidence{{ChunkID: id, Quote: quote}}}
		ans := AnswerGate{}.Validate(p, c)
		if again := (AnswerGate{}).Validate(p, c); !reflect.DeepEqual(ans, again) {
			t.Fatal("Validate is not deterministic")
		}
		if !ans.Accepted {
			if len(ans.Rejections) == 0 || ans.Text != "" || ans.Evidence != nil || !errors.Is(ans.Err(), ErrRejected) {
				t.Fatalf("rejection without reason or with output: %+v", ans)
			}
			return
		}
		// Accepted: every rule holds, and the text is made of the pair only.
		q := strings.TrimSpace(quote)
		switch {
		case !usable, strings.TrimSpace(question) == "", id != hitID:
			t.Fatalf("accepted against a rule: %+v", ans)
		case utf8.RuneCountInString(q) < DefaultMinQuoteRunes, !utf8.ValidString(q), !strings.Contains(hitText, q):
			t.Fatalf("accepted a quote that is not verbatim and long enough: %q in %q", q, hitText)
		case len(ans.Evidence) != 1 || ans.Evidence[0] != (Evidence{ChunkID: id, Quote: q}):
			t.Fatalf("evidence %+v", ans.Evidence)
		case ans.Text != strconv.Quote(q)+" ["+id+"]":
			t.Fatalf("text %q not rebuilt from the pair", ans.Text)
		}
	})
}
