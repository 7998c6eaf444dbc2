package mcpclient

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
)

// DefaultMaxSessions bounds a Pool unless WithMaxSessions says otherwise.
const DefaultMaxSessions = 1000

// DefaultIdleTimeout is how long a pooled session may stay unused before
// the pool ends it, unless WithIdleTimeout says otherwise.
const DefaultIdleTimeout = 5 * time.Minute

// WithMaxSessions bounds the sessions a Pool holds (n must be positive;
// default DefaultMaxSessions). Only NewPool takes it.
func WithMaxSessions(n int) Option {
	return func(o *options) {
		if n <= 0 {
			o.bad("WithMaxSessions: %d is not a positive number of sessions", n)
		}
		o.given("WithMaxSessions")
		o.maxSessions = n
	}
}

// WithIdleTimeout is how long a pooled session may go unused before the
// pool ends it with a DELETE (d must be positive; default
// DefaultIdleTimeout). Only NewPool takes it.
func WithIdleTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.bad("WithIdleTimeout: %v is not a positive duration", d)
		}
		o.given("WithIdleTimeout")
		o.idle = d
	}
}

// ToolCaller calls a tool: a *Client, or a Pool's *Caller. CallJSON, Page,
// Pages and All take either.
type ToolCaller interface {
	Call(ctx context.Context, tool string, args any) (*Result, error)
}

// Identity is the caller a pooled session belongs to.
type Identity struct {
	// Subject keys the session: calls with the same Subject share one
	// session, calls with different ones never do. It must name the
	// identity the tokens prove (for instance the verified "sub" claim of
	// the token the caller came with), never something a request claims.
	Subject string
	// Tokens gives the bearer of every request sent for the caller. A
	// refreshed token for the same Subject keeps the session.
	Tokens oauth2.TokenSource
}

// CallerOptions are the per-caller parameters of Pool.Caller; the zero
// value sets no budget.
type CallerOptions struct {
	// Budget caps what the Caller reads, whatever session it runs on: the
	// calls it makes and the response bytes of every request sent for it
	// (the initialize of a session it opens, tools/list, retries). It is
	// the budget of one agent run, not of the session, which outlives it.
	Budget Budget
}

// Pool holds MCP sessions with one server, one per caller identity, for
// a service that calls tools on behalf of many users. Sessions open on a
// subject's first call, are reused by its later calls (concurrent first
// calls open one), are ended (DELETE) after WithIdleTimeout without use,
// and are at most WithMaxSessions: when the pool is full, the least
// recently used idle session is ended to make room; when every session is
// in use, a new subject's call fails with ErrPoolFull and sends nothing.
// A session the server ended is initialized again once, as with Dial. A
// Pool is safe for concurrent use; Close it.
type Pool struct {
	endpoint *url.URL
	cfg      options
	now      func() time.Time // time.Now; tests set it to drive the idle reaper
	log      *slog.Logger     // never nil

	mu      sync.Mutex
	entries map[string]*entry
	lru     *list.List // of *entry with a session, most recently used first
	closed  bool
	timer   *time.Timer
	armed   bool
	bg      sync.WaitGroup // sessions being ended
}

// entry is the session of one subject.
type entry struct {
	subject string
	c       *Client       // nil while the session is being opened
	ready   chan struct{} // closed once c is set or opening failed
	err     error         // why opening failed
	busy    int           // calls using c
	last    time.Time     // when a call last started or ended
	elem    *list.Element
}

// NewPool returns a pool of sessions with the MCP server at endpoint. It
// sends nothing until the first call. It takes the options of Dial except
// WithTokenSource and WithAuthorizer (tokens come with each Identity) and WithBudget (budgets
// are per Caller), plus WithMaxSessions and WithIdleTimeout. Plain http is
// accepted only to a loopback address, since every request carries a
// bearer.
func NewPool(endpoint string, opts ...Option) (*Pool, error) {
	cfg, u, err := configure(endpoint, opts, "WithTokenSource", "WithAuthorizer", "WithBudget")
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" && !httpx.IsLoopback(u.Host) {
		return nil, usagef("mcpclient: refusing to send bearer tokens over plain http to %s", u.Host)
	}
	p := &Pool{endpoint: u, cfg: cfg, now: time.Now, log: cfg.logger, entries: map[string]*entry{}, lru: list.New()}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p, nil
}

// Caller returns the handle through which id's calls go, with its own
// budget. It sends nothing: the session is opened, or reused, by the first
// call. An empty Subject or a nil token source is refused.
func (p *Pool) Caller(id Identity, o CallerOptions) (*Caller, error) {
	switch {
	case id.Subject == "":
		return nil, usagef("mcpclient: Pool.Caller: empty subject")
	case id.Tokens == nil:
		return nil, usagef("mcpclient: Pool.Caller: nil token source")
	case o.Budget.MaxCalls < 0 || o.Budget.MaxBytes < 0:
		return nil, usagef("mcpclient: Pool.Caller: negative limit in %+v", o.Budget)
	}
	return &Caller{pool: p, id: id, budget: &budget{limits: o.Budget}}, nil
}

// Sessions returns the number of sessions the pool holds (open or being
// opened).
func (p *Pool) Sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// String describes the pool by its endpoint and size, never a subject, a
// token or a session id.
func (p *Pool) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("mcpclient.Pool{endpoint=%q sessions=%d closed=%t}", p.endpoint, len(p.entries), p.closed)
}

// acquire returns the live session of k's subject, opening it if there is
// none; the caller must release it.
func (p *Pool) acquire(ctx context.Context, k *Caller) (*entry, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if e := p.entries[k.id.Subject]; e != nil {
			if e.c != nil {
				e.busy++
				e.last = p.now()
				p.lru.MoveToFront(e.elem)
				p.mu.Unlock()
				return e, nil
			}
			p.mu.Unlock()
			select {
			case <-e.ready:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			if e.err != nil && !isContextErr(e.err) {
				return nil, e.err
			}
			continue // opened (look it up), or its opener gave up: try again
		}
		if len(p.entries) >= p.cfg.maxSessions && !p.evictLocked() {
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: %d sessions, all in use", ErrPoolFull, p.cfg.maxSessions)
		}
		e := &entry{subject: k.id.Subject, ready: make(chan struct{})}
		p.entries[k.id.Subject] = e
		p.mu.Unlock()

		c := newClient(p.endpoint, p.cfg)
		s, err := c.connect(k.env(ctx))

		p.mu.Lock()
		closed := p.closed
		if err != nil || closed {
			delete(p.entries, k.id.Subject)
			e.err = err
			if err == nil {
				e.err = ErrClosed
			}
		} else {
			c.sess = s
			e.c, e.busy, e.last = c, 1, p.now()
			e.elem = p.lru.PushFront(e)
		}
		p.mu.Unlock()
		close(e.ready)
		if err != nil {
			return nil, err
		}
		if closed {
			c.sess = s
			_ = c.Close()
			return nil, ErrClosed
		}
		p.log.DebugContext(ctx, "mcp pool: session opened", "sessions", p.Sessions())
		return e, nil
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// release ends a call's use of e.
func (p *Pool) release(e *entry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.busy--
	e.last = p.now()
	if e.elem != nil && p.entries[e.subject] == e {
		p.lru.MoveToFront(e.elem)
	}
	if e.busy == 0 {
		p.armLocked(p.cfg.idle)
	}
}

// evictLocked ends the least recently used idle session to make room; it
// reports false when every session is in use.
func (p *Pool) evictLocked() bool {
	for el := p.lru.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*entry)
		if e.busy == 0 {
			p.removeLocked(e)
			p.bg.Add(1)
			go func() {
				defer p.bg.Done()
				p.end(e, "evicted to make room")
			}()
			return true
		}
	}
	return false
}

func (p *Pool) removeLocked(e *entry) {
	delete(p.entries, e.subject)
	p.lru.Remove(e.elem)
}

// end closes the session of a removed entry (a DELETE with the bearer its
// subject used last).
func (p *Pool) end(e *entry, why string) {
	if err := e.c.Close(); err != nil {
		p.log.WarnContext(context.Background(), "mcp pool: ending a session", "reason", why, "error", err)
	} else {
		p.log.DebugContext(context.Background(), "mcp pool: session ended", "reason", why)
	}
}

// armLocked makes the reaper run in d, unless it is already due.
func (p *Pool) armLocked(d time.Duration) {
	if p.closed || p.armed {
		return
	}
	p.armed = true
	if p.timer == nil {
		p.timer = time.AfterFunc(d, p.reap)
		return
	}
	p.timer.Reset(d)
}

// reap ends the sessions unused for the idle timeout, and runs again when
// the next one will be.
func (p *Pool) reap() {
	p.mu.Lock()
	p.armed = false
	if p.closed {
		p.mu.Unlock()
		return
	}
	now := p.now()
	var victims []*entry
	next := time.Duration(-1)
	for el := p.lru.Back(); el != nil; {
		e := el.Value.(*entry)
		el = el.Prev()
		if e.busy > 0 {
			continue
		}
		if left := e.last.Add(p.cfg.idle).Sub(now); left <= 0 {
			p.removeLocked(e)
			victims = append(victims, e)
		} else if next < 0 || left < next {
			next = left
		}
	}
	if next >= 0 {
		p.armLocked(next)
	}
	p.bg.Add(1)
	p.mu.Unlock()
	defer p.bg.Done()
	for _, e := range victims {
		p.end(e, "idle")
	}
}

// Close ends every session (a DELETE each) and waits for the sessions
// being ended. Calls in flight fail with ErrClosed or finish; later calls
// fail with ErrClosed. It returns the errors of the DELETEs.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
	var open []*entry
	for _, e := range p.entries {
		if e.c != nil {
			open = append(open, e)
		}
	}
	p.entries = map[string]*entry{}
	p.lru.Init()
	p.mu.Unlock()
	var errs []error
	for _, e := range open {
		errs = append(errs, e.c.Close())
	}
	p.bg.Wait()
	return errors.Join(errs...)
}

// Caller makes the calls of one identity through a Pool, against its own
// budget. It is safe for concurrent use; it holds nothing to close.
type Caller struct {
	pool   *Pool
	id     Identity
	budget *budget
}

// env puts the caller's token source and budget on ctx, beside the
// headers ctx may carry.
func (k *Caller) env(ctx context.Context) context.Context {
	e := envOf(ctx)
	e.tokens, e.budget, e.subject = k.id.Tokens, k.budget, k.id.Subject
	return withEnv(ctx, e)
}

// Call calls tool on the subject's session, opening it if there is none,
// with the caller's bearer and against its budget. Its results and errors
// are those of Client.Call, plus ErrPoolFull and ErrClosed (the pool was
// closed).
func (k *Caller) Call(ctx context.Context, tool string, args any) (*Result, error) {
	ctx, o := k.pool.cfg.tel.begin(ctx, methodToolsCall, tool)
	res, err := k.call(ctx, o, tool, args)
	o.end(err)
	return res, err
}

// call is Call under the telemetry o of the operation (the opening of the
// subject's session included).
func (k *Caller) call(ctx context.Context, o *op, tool string, args any) (*Result, error) {
	e, err := k.pool.acquire(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: tool %q: %w", tool, err)
	}
	defer k.pool.release(e)
	e.c.useTokens(k.id.Tokens)
	return e.c.call(k.env(ctx), o, tool, args)
}

// ListTools is Client.ListTools on the subject's session.
func (k *Caller) ListTools(ctx context.Context, opts ListToolsOptions) (Scan[Tool], error) {
	e, err := k.pool.acquire(ctx, k)
	if err != nil {
		return Scan[Tool]{Reason: err.Error()}, fmt.Errorf("mcpclient: tools/list: %w", err)
	}
	defer k.pool.release(e)
	e.c.useTokens(k.id.Tokens)
	return e.c.ListTools(k.env(ctx), opts)
}

// AllTools is Client.AllTools on the subject's session.
func (k *Caller) AllTools(ctx context.Context, opts ListToolsOptions) iter.Seq2[Tool, error] {
	return func(yield func(Tool, error) bool) {
		e, err := k.pool.acquire(ctx, k)
		if err != nil {
			yield(Tool{}, fmt.Errorf("mcpclient: tools/list: %w", err))
			return
		}
		defer k.pool.release(e)
		e.c.useTokens(k.id.Tokens)
		for t, err := range e.c.AllTools(k.env(ctx), opts) {
			if !yield(t, err) {
				return
			}
		}
	}
}

// Server returns what the server said in the initialize of the subject's
// session, opening the session if there is none.
func (k *Caller) Server(ctx context.Context) (ServerInfo, error) {
	e, err := k.pool.acquire(ctx, k)
	if err != nil {
		return ServerInfo{}, err
	}
	defer k.pool.release(e)
	return e.c.Server(), nil
}

// Usage returns what the caller has consumed so far.
func (k *Caller) Usage() Usage {
	return Usage{Calls: int(k.budget.calls.Load()), Bytes: k.budget.bytes.Load()}
}

// String names the caller's pool endpoint, never its subject or tokens.
// GoString, Format and LogValue say the same.
func (k *Caller) String() string {
	return fmt.Sprintf("mcpclient.Caller{endpoint=%q}", k.pool.endpoint)
}

// GoString is String.
func (k *Caller) GoString() string { return k.String() }

// Format prints String() for every verb.
func (k *Caller) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// LogValue logs what String prints.
func (k *Caller) LogValue() slog.Value { return slog.StringValue(k.String()) }

// GoString is String.
func (p *Pool) GoString() string { return p.String() }

// Format prints String() for every verb.
func (p *Pool) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(p.String())) }

// LogValue logs what String prints.
func (p *Pool) LogValue() slog.Value { return slog.StringValue(p.String()) }

// String prints the subject and hides the token source (which may hold
// a token); GoString, Format and LogValue say the same.
func (id Identity) String() string {
	return fmt.Sprintf("mcpclient.Identity{subject=%q tokens=[REDACTED]}", id.Subject)
}

// GoString is String.
func (id Identity) GoString() string { return id.String() }

// Format prints String() for every verb.
func (id Identity) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(id.String())) }

// LogValue logs what String prints.
func (id Identity) LogValue() slog.Value { return slog.StringValue(id.String()) }
