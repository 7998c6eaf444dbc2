package check

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/candorkit/candor/reply"
)

// DefaultThreshold is the reorder threshold of the demo catalog: a product is
// promised only with more units than this on hand.
const DefaultThreshold = 50

// codePattern is the rule that reads a product code: an upper-case S, digits,
// an underscore, then any word characters. It is loose after the underscore on
// purpose, so that a code that looks valid but does not exist (S99_NOPE)
// reaches the catalog, which is the only authority on what exists.
var codePattern = regexp.MustCompile(`\bS\d+_\w+`)

// ProductCodes returns the distinct product codes in text, in order of first
// appearance. It is a rule, not a model: no name, no fuzzy match, no guess.
func ProductCodes(text string) []string {
	var codes []string
	for _, c := range codePattern.FindAllString(text, -1) {
		if !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	return codes
}

// Product is what the agent needs from the catalog's product object.
type Product struct {
	Code            string
	Name            string
	QuantityInStock int
}

// Decide is the promise rule, on stock on hand only (quantities committed on
// open orders are not deducted): more than threshold units in stock is a
// promise; at or below the threshold the answer says so and escalates to a
// person.
func Decide(p Product, threshold int) reply.Reply {
	switch {
	case p.QuantityInStock > threshold:
		return reply.Reply{Answer: fmt.Sprintf(
			"Yes — %s (%s) can be promised: %d in stock, above the reorder threshold of %d.",
			p.Name, p.Code, p.QuantityInStock, threshold)}
	case p.QuantityInStock == threshold:
		return reply.Reply{Escalate: true, Answer: fmt.Sprintf(
			"Not without a check — %s (%s) has %d in stock, at the reorder threshold of %d: a person must confirm before it is promised.",
			p.Name, p.Code, p.QuantityInStock, threshold)}
	default:
		return reply.Reply{Escalate: true, Answer: fmt.Sprintf(
			"Not without a check — %s (%s) has %d in stock, below the reorder threshold of %d: a person must confirm before it is promised.",
			p.Name, p.Code, p.QuantityInStock, threshold)}
	}
}

// Texts of the decided escalations.
const (
	noReferenceText = "No product reference in the question: name the catalog code (for instance S10_1949); the agent does not guess a product from its name."
	notFoundFormat  = "There is no product %s in the catalog."
	severalFormat   = "The question names %d products (%s): ask about one product at a time."
)
