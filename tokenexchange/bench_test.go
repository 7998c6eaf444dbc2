package tokenexchange_test

import (
	"context"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/oidctest"
	"github.com/candorkit/candor/tokenexchange"
)

// BenchmarkExchange is one RFC 8693 exchange (one POST) against the
// in-process OP on loopback.
func BenchmarkExchange(b *testing.B) {
	f := newFixture(b, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	cfg := f.config()
	ctx := context.Background()
	for b.Loop() {
		if _, err := cfg.Exchange(ctx, subject); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheHit is a Cache.Token call answered from the cache.
func BenchmarkCacheHit(b *testing.B) {
	f := newFixture(b, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	cache := tokenexchange.NewCache(f.config())
	ctx := context.Background()
	if _, err := cache.Token(ctx, subject); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := cache.Token(ctx, subject); err != nil {
			b.Fatal(err)
		}
	}
	if n := f.tokenRequests(); n != 1 {
		b.Fatalf("%d exchanges, want 1", n)
	}
}
