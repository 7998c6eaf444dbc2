package mandate_test

import (
	"context"
	"testing"

	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// BenchmarkRedeem is one Token call (refresh with rotation, persist, then
// exchange: two POSTs to the in-process OP on loopback) under the
// cross-process lease ("lease") and, as the baseline in the same run
// against the same OP, under the in-process lock alone ("in-process"), on
// each backend.
func BenchmarkRedeem(b *testing.B) {
	for _, be := range []struct {
		name  string
		start func(b *testing.B) backend
	}{
		{"sqlite", func(*testing.B) backend { return backend{name: "sqlite"} }},
		{"postgres", func(b *testing.B) backend { return backend{name: "postgres", cluster: pgtest.Start(b)} }},
	} {
		b.Run(be.name, func(b *testing.B) {
			bk := be.start(b)
			f := newFixture(b, oidctest.Options{})
			for _, mode := range []string{"in-process", "lease"} {
				b.Run(mode, func(b *testing.B) {
					ctx := context.Background()
					s := bk.open(b, bk.newDSN(b), mandate.WithKey(newKey(b)), mandate.WithAgent(agentClient, f.config()))
					if mode == "in-process" {
						s.InProcessLockOnly()
					}
					if err := s.Grant(ctx, alice, agentClient, f.offlineToken(alice)); err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						if _, err := s.Token(ctx, alice, agentClient); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
