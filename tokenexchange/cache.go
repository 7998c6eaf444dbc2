package tokenexchange

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/secret"
)

// maxIdleEntries is the cache size above which stale entries are dropped on
// insertion.
const maxIdleEntries = 1024

// Cache exchanges subject tokens with one Config and keeps each result until
// Config.ExpiryMargin before it expires. Concurrent callers for the same
// subject token share one in-flight exchange (single flight); different
// subjects never wait for each other. A token without any known expiry
// (no expires_in, no exp claim) is not cached. Failures are not cached.
//
// Entries are keyed by the SHA-256 of the subject token. A Cache is safe for
// concurrent use; its zero value is not usable, call NewCache. Printing or
// logging it shows the client ID only.
type Cache struct {
	cl *client

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*cacheEntry
}

type cacheEntry struct {
	tok    *Token
	flight *flight
}

// flight is one exchange shared by every caller waiting for it. It runs on a
// context detached from any single caller and is cancelled when the last
// waiter gives up.
type flight struct {
	done    chan struct{}
	tok     *Token
	err     error
	waiters int
	cancel  context.CancelFunc
}

// NewCache validates cfg (see Config.Validate) and returns a cache for it.
// cfg is read once: later changes to it have no effect.
func NewCache(cfg *Config) (*Cache, error) {
	cl, err := cfg.prepare()
	if err != nil {
		return nil, err
	}
	return &Cache{cl: cl, entries: map[[sha256.Size]byte]*cacheEntry{}}, nil
}

func (c *Cache) fresh(t *Token) bool {
	return t != nil && t.Token != nil && !t.Expiry.IsZero() && time.Now().Add(c.cl.margin).Before(t.Expiry)
}

// Token returns a cached token for subjectToken or exchanges it. The
// returned Token is the caller's own copy.
func (c *Cache) Token(ctx context.Context, subjectToken string) (*Token, error) {
	if subjectToken == "" {
		return nil, ErrNoSubjectToken
	}
	key := sha256.Sum256([]byte(subjectToken))

	c.mu.Lock()
	e := c.entries[key]
	if e != nil && c.fresh(e.tok) {
		tok := e.tok.clone()
		c.mu.Unlock()
		return tok, nil
	}
	if e == nil {
		if len(c.entries) >= maxIdleEntries {
			c.pruneLocked()
		}
		e = &cacheEntry{}
		c.entries[key] = e
	}
	f := e.flight
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		e.flight = f
		go c.run(fctx, key, e, f, subjectToken)
	} else if c.cl.log != nil {
		c.cl.log.LogAttrs(ctx, slog.LevelDebug, "joining in-flight token exchange", slog.String("client_id", c.cl.clientID))
	}
	f.waiters++
	c.mu.Unlock()

	select {
	case <-f.done:
		if f.err != nil {
			return nil, f.err
		}
		return f.tok.clone(), nil
	case <-ctx.Done():
		c.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			f.cancel()
			if e.flight == f {
				e.flight = nil // later callers start afresh
			}
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (c *Cache) run(ctx context.Context, key [sha256.Size]byte, e *cacheEntry, f *flight, subjectToken string) {
	tok, err := c.cl.exchange(ctx, subjectToken)
	f.cancel()
	c.mu.Lock()
	f.tok, f.err = tok, err
	if e.flight == f {
		e.flight = nil
	}
	if err == nil && c.fresh(tok) {
		e.tok = tok
	} else {
		e.tok = nil
	}
	if e.tok == nil && e.flight == nil && c.entries[key] == e {
		delete(c.entries, key)
	}
	c.mu.Unlock()
	close(f.done)
}

func (c *Cache) pruneLocked() {
	for k, e := range c.entries {
		if e.flight == nil && !c.fresh(e.tok) {
			delete(c.entries, k)
		}
	}
}

// Len reports how many subjects currently have a cached token or an
// exchange in flight.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// TokenSource returns an oauth2.TokenSource for subjectToken backed by the
// cache; every exchange uses ctx. Like oauth2.ReuseTokenSource, the source
// returns the same *oauth2.Token to every Token call until ExpiryMargin
// before its expiry: a hit takes a lock and reads the clock, nothing else.
func (c *Cache) TokenSource(ctx context.Context, subjectToken string) oauth2.TokenSource {
	return &subjectSource{cache: c, ctx: ctx, subject: secret.New(subjectToken)}
}

// TokenSource returns an oauth2.TokenSource that exchanges subjectToken with
// this Config, caches the result until ExpiryMargin before expiry, and lets
// concurrent Token calls share one in-flight exchange. The Config is
// validated once, here; an invalid one makes every Token call return the
// ErrConfig error. To share tokens across sources (one per incoming
// request, say), use one Cache.
func (c *Config) TokenSource(ctx context.Context, subjectToken string) oauth2.TokenSource {
	cache, err := NewCache(c)
	if err != nil {
		return &subjectSource{err: err}
	}
	return cache.TokenSource(ctx, subjectToken)
}

type subjectSource struct {
	cache   *Cache
	err     error // the Config could not be used
	ctx     context.Context
	subject secret.Secret

	mu      sync.Mutex
	tok     *oauth2.Token
	renewAt time.Time // ExpiryMargin before tok's expiry
}

func (s *subjectSource) Token() (*oauth2.Token, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.mu.Lock()
	if s.tok != nil && time.Now().Before(s.renewAt) {
		t := s.tok
		s.mu.Unlock()
		return t, nil
	}
	s.mu.Unlock()
	t, err := s.cache.Token(s.ctx, s.subject.Reveal())
	if err != nil {
		return nil, err
	}
	if !t.Expiry.IsZero() {
		s.mu.Lock()
		s.tok, s.renewAt = t.Token, t.Expiry.Add(-s.cache.cl.margin)
		s.mu.Unlock()
	}
	return t.Token, nil
}

// Format prints the client ID only: the source holds the subject token and
// a context whose values it must not print.
func (s *subjectSource) Format(f fmt.State, _ rune) {
	_, _ = fmt.Fprintf(f, "tokenexchange.TokenSource{client_id=%q}", s.clientID())
}

// LogValue logs the client ID only.
func (s *subjectSource) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", s.clientID()))
}

func (s *subjectSource) clientID() string { return s.cache.clientID() }

// Format prints the client ID only, for every verb. (fmt prints unexported
// fields without calling their methods, so the client secret the Cache
// holds needs its owner to print it.)
func (c *Cache) Format(f fmt.State, _ rune) {
	_, _ = fmt.Fprintf(f, "tokenexchange.Cache{client_id=%q}", c.clientID())
}

// LogValue logs the client ID only.
func (c *Cache) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", c.clientID()))
}

func (c *Cache) clientID() string {
	if c == nil || c.cl == nil {
		return ""
	}
	return c.cl.clientID
}
