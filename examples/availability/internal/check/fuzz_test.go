package check_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/candorkit/candor/examples/availability/internal/check"
)

// FuzzProductCodes checks the rule's invariants on any text: every code it
// returns has the code shape, appears in the text, and appears once.
func FuzzProductCodes(f *testing.F) {
	for _, s := range []string{
		"Peut-on promettre S10_1949 ?", "Peut-on promettre la Vespa ?", "S99_NOPE", "S10_1949 S10_1949 S24_2000",
		"XS10_1949", "S10_", "_S1_2", "S1_2é", "S١٢_3", "",
	} {
		f.Add(s)
	}
	shape := regexp.MustCompile(`^S[0-9]+_[0-9A-Za-z_]+$`)
	f.Fuzz(func(t *testing.T, text string) {
		codes := check.ProductCodes(text)
		for i, c := range codes {
			if !shape.MatchString(c) {
				t.Fatalf("code %q does not have the code shape", c)
			}
			if !strings.Contains(text, c) {
				t.Fatalf("code %q is not in the text", c)
			}
			if slices.Contains(codes[:i], c) {
				t.Fatalf("code %q returned twice", c)
			}
		}
	})
}
