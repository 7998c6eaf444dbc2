package retrieval

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Evidence is one passage an answer rests on: the ID of a chunk the search
// returned and a verbatim quote from it.
type Evidence struct {
	ChunkID string
	Quote   string
}

// Proposal is what a model proposes to answer: whether it found a usable
// answer, and the evidence for it. Any free text the model wrote is not part
// of a Proposal: the accepted answer is rebuilt from the evidence alone.
type Proposal struct {
	Usable   bool
	Evidence []Evidence
}

// GateInput is what the gate checks a proposal against: the question, the
// date the answer is for, and the hits the search returned for it.
type GateInput struct {
	Question string
	AsOf     time.Time
	Hits     []Hit
}

// Rule names one rule of AnswerGate.
type Rule string

// The rules of AnswerGate, in the order they are checked.
const (
	RuleQuestion    Rule = "question-required" // GateInput.Question is blank
	RuleAsOf        Rule = "as-of-required"    // GateInput.AsOf is zero
	RuleHitsUnique  Rule = "hit-ids-unique"    // two hits share a chunk ID with different text
	RuleUsable      Rule = "proposal-usable"   // Proposal.Usable is false
	RuleEvidence    Rule = "evidence-required" // no evidence at all
	RuleKnownChunk  Rule = "chunk-among-hits"  // evidence names a chunk the search did not return
	RuleValidAsOf   Rule = "hit-valid-as-of"   // the hit's source is not valid on GateInput.AsOf
	RuleQuoteLength Rule = "quote-min-length"  // trimmed quote shorter than the minimum
	RuleVerbatim    Rule = "quote-verbatim"    // trimmed quote does not occur in the chunk's text
)

// Rejection says which rule failed, and for which evidence.
type Rejection struct {
	Rule     Rule
	Evidence int    // index in Proposal.Evidence; -1 for a rule about the whole proposal or context
	ChunkID  string // the evidence's chunk ID, if any
	Quote    string // the evidence's quote as proposed, if any
	Detail   string
}

func (r Rejection) String() string {
	if r.Evidence < 0 {
		return fmt.Sprintf("%s: %s", r.Rule, r.Detail)
	}
	return fmt.Sprintf("%s: evidence %d (chunk %q, quote %q): %s", r.Rule, r.Evidence, r.ChunkID, r.Quote, r.Detail)
}

// Answer is the gate's verdict. When Accepted, Text is rebuilt from the
// (chunk ID, quote) pairs only, one line per distinct pair in proposal
// order: the Go-quoted trimmed quote, a space, and the chunk ID in
// brackets, e.g. "Reports can be exported as CSV." [HELP#0]. When not, Text
// is empty and Rejections lists every rule that failed.
type Answer struct {
	Accepted   bool
	Question   string
	Text       string
	Evidence   []Evidence // accepted pairs, quotes trimmed, duplicates removed
	Rejections []Rejection
}

// Err returns nil for an accepted answer and a *RejectedError otherwise.
func (a Answer) Err() error {
	if a.Accepted {
		return nil
	}
	return &RejectedError{Rejections: a.Rejections}
}

// RejectedError carries the rejections of a refused proposal. It matches
// ErrRejected.
type RejectedError struct{ Rejections []Rejection }

func (e *RejectedError) Error() string {
	parts := make([]string, len(e.Rejections))
	for i, r := range e.Rejections {
		parts[i] = r.String()
	}
	return "retrieval: answer rejected: " + strings.Join(parts, "; ")
}

// Unwrap returns ErrRejected.
func (e *RejectedError) Unwrap() error { return ErrRejected }

// DefaultMinQuoteRunes is the minimum quote length when
// AnswerGate.MinQuoteRunes is zero.
const DefaultMinQuoteRunes = 20

// AnswerGate accepts an answer only when it is backed by exact quotes from
// passages the search returned. It holds no state; the zero value applies
// DefaultMinQuoteRunes.
type AnswerGate struct {
	MinQuoteRunes int // characters (runes) a quote needs after trimming; 0 means DefaultMinQuoteRunes
}

// Validate checks p against c. A proposal is accepted only if the context
// names a question and a date, the proposal is usable and holds at least
// one piece of evidence, and every piece names a chunk among c.Hits whose
// source is valid on c.AsOf and quotes, after trimming white space, at
// least MinQuoteRunes characters that occur verbatim (byte for byte) in
// that chunk's text. Validate never panics and its result depends only on
// its arguments.
func (g AnswerGate) Validate(p Proposal, c GateInput) Answer {
	minRunes := g.MinQuoteRunes
	if minRunes <= 0 {
		minRunes = DefaultMinQuoteRunes
	}
	ans := Answer{Question: c.Question}
	reject := func(r Rejection) { ans.Rejections = append(ans.Rejections, r) }

	if strings.TrimSpace(c.Question) == "" {
		reject(Rejection{Rule: RuleQuestion, Evidence: -1, Detail: "the context has no question"})
	}
	if c.AsOf.IsZero() {
		reject(Rejection{Rule: RuleAsOf, Evidence: -1, Detail: "the context has no as-of date"})
	}
	hits := make(map[string]Hit, len(c.Hits))
	for _, h := range c.Hits {
		if prev, ok := hits[h.ChunkID]; ok && prev.Text != h.Text {
			reject(Rejection{Rule: RuleHitsUnique, Evidence: -1, ChunkID: h.ChunkID, Detail: "two hits with this chunk ID differ in text"})
			continue
		}
		hits[h.ChunkID] = h
	}
	if !p.Usable {
		reject(Rejection{Rule: RuleUsable, Evidence: -1, Detail: "the proposal is marked not usable"})
	}
	if len(p.Evidence) == 0 {
		reject(Rejection{Rule: RuleEvidence, Evidence: -1, Detail: "the proposal cites no evidence"})
	}
	seen := map[Evidence]bool{}
	var lines []string
	for i, ev := range p.Evidence {
		rj := func(rule Rule, detail string) {
			reject(Rejection{Rule: rule, Evidence: i, ChunkID: ev.ChunkID, Quote: ev.Quote, Detail: detail})
		}
		h, ok := hits[ev.ChunkID]
		if !ok {
			rj(RuleKnownChunk, "no hit has this chunk ID")
			continue
		}
		if !c.AsOf.IsZero() && !validAt(h, c.AsOf) {
			rj(RuleValidAsOf, fmt.Sprintf("source valid from %s until %s, answer is as of %s",
				timeOrOpen(h.ValidFrom), timeOrOpen(h.ValidUntil), c.AsOf.Format(time.RFC3339)))
		}
		q := strings.TrimSpace(ev.Quote)
		if n := utf8.RuneCountInString(q); n < minRunes {
			rj(RuleQuoteLength, "trimmed quote has "+strconv.Itoa(n)+" characters, at least "+strconv.Itoa(minRunes)+" required")
			continue
		}
		if !utf8.ValidString(q) {
			rj(RuleVerbatim, "quote is not valid UTF-8")
			continue
		}
		if !strings.Contains(h.Text, q) {
			rj(RuleVerbatim, "quote does not occur verbatim in the chunk's text")
			continue
		}
		pair := Evidence{ChunkID: ev.ChunkID, Quote: q}
		if !seen[pair] {
			seen[pair] = true
			ans.Evidence = append(ans.Evidence, pair)
			lines = append(lines, strconv.Quote(q)+" ["+ev.ChunkID+"]")
		}
	}
	if len(ans.Rejections) > 0 {
		ans.Evidence = nil
		return ans
	}
	ans.Accepted = true
	ans.Text = strings.Join(lines, "\n")
	return ans
}

func validAt(h Hit, t time.Time) bool {
	return (h.ValidFrom.IsZero() || !t.Before(h.ValidFrom)) && (h.ValidUntil.IsZero() || t.Before(h.ValidUntil))
}

func timeOrOpen(t time.Time) string {
	if t.IsZero() {
		return "(open)"
	}
	return t.Format(time.RFC3339)
}
