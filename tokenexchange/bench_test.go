package tokenexchange_test

import (
	"context"
	"testing"
	"time"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
	"golang.org/x/oauth2"
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
	cache, err := tokenexchange.NewCache(f.config())
	if err != nil {
		b.Fatal(err)
	}
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

// BenchmarkTokenSourceHit is a Token call on a TokenSource whose token is
// cached, against the baseline oauth2.ReuseTokenSource holding a valid
// token, in the same run.
func BenchmarkTokenSourceHit(b *testing.B) {
	f := newFixture(b, oidctest.Options{}, 5*time.Minute)
	ts := f.config().TokenSource(context.Background(), f.userToken())
	tok, err := ts.Token()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tokenexchange", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ts.Token(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("oauth2.ReuseTokenSource", func(b *testing.B) {
		reuse := oauth2.ReuseTokenSource(nil, oauth2.StaticTokenSource(tok))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := reuse.Token(); err != nil {
				b.Fatal(err)
			}
		}
	})
	if n := f.tokenRequests(); n != 1 {
		b.Fatalf("%d exchanges, want 1", n)
	}
}
