package check

import (
	"fmt"

	"github.com/candorkit/candor/a2a"
)

// Agent describes the availability agent on its A2A card, served at url (the
// JSON-RPC endpoint). The skill description states the basis of every
// answer: stock on hand, without deducting open-order commitments.
func Agent(url string, threshold int) a2a.Agent {
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	return a2a.Agent{
		Name:        "Availability agent",
		Description: "Says whether a catalog product can be promised to a customer, for the person whose token comes with the question.",
		URL:         url,
		Skill: a2a.Skill{
			ID:   "check-availability",
			Name: "Check availability",
			Description: fmt.Sprintf("Answers whether a product can be promised, from the catalog's stock on hand: "+
				"yes only with more than %d units in stock (the reorder threshold); at or below it, or for an "+
				"unknown or missing product code, the task fails and escalates to a person. Basis: quantity in "+
				"stock only; quantities committed on open orders are not deducted. Name the product by its "+
				"catalog code (for instance S10_1949).", threshold),
			Tags:     []string{"availability", "stock", "catalog"},
			Examples: []string{"Peut-on promettre S10_1949 ?", "Can we promise S24_2000?"},
		},
	}
}
