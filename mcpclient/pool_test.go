package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient/mcptest"
)

// userTokens is the token source of one user: "<user>.<n>", where n goes
// up every `every` tokens, as a refreshed token would.
type userTokens struct {
	user  string
	every int
	n     atomic.Int64
}

func (u *userTokens) Token() (*oauth2.Token, error) {
	n := u.n.Add(1)
	return &oauth2.Token{AccessToken: fmt.Sprintf("%s.%d", u.user, n/int64(u.every)), TokenType: "Bearer"}, nil
}

// userOf is the user a token of userTokens belongs to.
func userOf(token string) string {
	u, _, _ := strings.Cut(token, ".")
	return u
}

// usersOnly accepts the tokens of userTokens only.
func usersOnly(token string) bool {
	return strings.HasPrefix(token, "user-") && strings.Contains(token, ".")
}

func newPool(t *testing.T, endpoint string, opts ...Option) *Pool {
	t.Helper()
	p, err := NewPool(endpoint, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func caller(t *testing.T, p *Pool, subject string, ts oauth2.TokenSource, b Budget) *Caller {
	t.Helper()
	k, err := p.Caller(Identity{Subject: subject, Tokens: ts}, CallerOptions{Budget: b})
	require.NoError(t, err)
	return k
}

// sessionsByUser maps each session id the server saw to the users whose
// tokens came with its requests.
func sessionsByUser(srv *mcptest.Server) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, r := range srv.Requests() {
		if r.SessionID == "" {
			continue
		}
		if out[r.SessionID] == nil {
			out[r.SessionID] = map[string]bool{}
		}
		out[r.SessionID][userOf(mcptest.BearerOf(r.Authorization))] = true
	}
	return out
}

// 10 users asking 10 questions each, all at once: one session per user,
// every request of a session carrying its user's token (refreshed along
// the way), one budget per question.
func TestPoolTenUsersTenQuestions(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearerCheck(usersOnly))
		p := newPool(t, srv.URL)
		users := make([]*userTokens, 10)
		for i := range users {
			users[i] = &userTokens{user: fmt.Sprintf("user-%d", i), every: 3}
		}
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for q := range 10 {
			for _, u := range users {
				wg.Go(func() {
					k, err := p.Caller(Identity{Subject: u.user, Tokens: u}, CallerOptions{Budget: Budget{MaxCalls: 1}})
					if err != nil {
						errs <- err
						return
					}
					got, err := CallJSON[map[string]any](t.Context(), k, mcptest.ToolEcho, map[string]any{"user": u.user, "q": q})
					switch {
					case err != nil:
						errs <- err
					case got["user"] != u.user:
						errs <- fmt.Errorf("user %s got the answer of %v", u.user, got["user"])
					case k.Usage().Calls != 1:
						errs <- fmt.Errorf("usage %+v, want one call", k.Usage())
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		assert.Len(t, srv.Calls("initialize"), 10, "sessions = users")
		assert.Len(t, srv.Calls("tools/call"), 100)
		assert.Equal(t, 10, p.Sessions())
		byUser := sessionsByUser(srv)
		assert.Len(t, byUser, 10)
		for id, who := range byUser {
			assert.Len(t, who, 1, "session %s carried the tokens of %v", id, who)
		}
		tokens := map[string]bool{}
		for _, r := range srv.Calls("tools/call") {
			tokens[mcptest.BearerOf(r.Authorization)] = true
		}
		assert.Greater(t, len(tokens), 10, "tokens were refreshed, and the sessions kept")
		require.NoError(t, p.Close())
		assert.Len(t, callsOf(srv, http.MethodDelete), 10, "Close ends every session")
	})
}

func callsOf(srv *mcptest.Server, httpMethod string) []mcptest.Request {
	var out []mcptest.Request
	for _, r := range srv.Requests() {
		if r.HTTPMethod == httpMethod {
			out = append(out, r)
		}
	}
	return out
}

func TestPoolConcurrentFirstCallsOpenOneSession(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearerCheck(usersOnly))
		p := newPool(t, srv.URL)
		u := &userTokens{user: "user-a", every: 1}
		start := make(chan struct{})
		var wg sync.WaitGroup
		var failed atomic.Int32
		for range 20 {
			wg.Go(func() {
				k := caller(t, p, u.user, u, Budget{})
				<-start
				if _, err := k.Call(t.Context(), mcptest.ToolEcho, nil); err != nil {
					failed.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		assert.Zero(t, failed.Load())
		assert.Len(t, srv.Calls("initialize"), 1)
		assert.Len(t, srv.Calls("tools/call"), 20)
	})
}

// A session the server ends in the middle of a run is initialized again
// once, for that user only; the others keep theirs.
func TestPoolSessionKilledMidRun(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearerCheck(usersOnly))
		p := newPool(t, srv.URL)
		a, b := &userTokens{user: "user-a", every: 1}, &userTokens{user: "user-b", every: 1}
		ka, kb := caller(t, p, a.user, a, Budget{}), caller(t, p, b.user, b, Budget{})
		for _, k := range []*Caller{ka, kb} {
			_, err := k.Call(t.Context(), mcptest.ToolEcho, nil)
			require.NoError(t, err)
		}
		killed := srv.Calls("tools/call")[0].SessionID
		require.NoError(t, srv.Terminate(killed))

		for range 3 {
			for _, k := range []*Caller{ka, kb} {
				_, err := k.Call(t.Context(), mcptest.ToolEcho, nil)
				require.NoError(t, err)
			}
		}
		assert.Len(t, srv.Calls("initialize"), 3, "two users, one re-initialization")
		calls := srv.Calls("tools/call")
		assert.Len(t, calls, 9, "8 calls, one of them sent twice after its 404")
		for id, who := range sessionsByUser(srv) {
			assert.Len(t, who, 1, "session %s carried the tokens of %v", id, who)
		}
		assert.Equal(t, 2, p.Sessions())
	})
}

// fakeClock is the time the idle reaper reads in tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Sessions unused for the idle timeout are ended with a DELETE carrying
// their user's token; a later call opens a new one.
func TestPoolIdleSessionsAreEnded(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearerCheck(usersOnly))
		p := newPool(t, srv.URL, WithIdleTimeout(time.Hour))
		clock := &fakeClock{now: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
		p.now = clock.Now
		a, b := &userTokens{user: "user-a", every: 1}, &userTokens{user: "user-b", every: 1}
		ka, kb := caller(t, p, a.user, a, Budget{}), caller(t, p, b.user, b, Budget{})
		_, err := ka.Call(t.Context(), mcptest.ToolEcho, nil)
		require.NoError(t, err)
		clock.Add(40 * time.Minute)
		_, err = kb.Call(t.Context(), mcptest.ToolEcho, nil)
		require.NoError(t, err)

		clock.Add(30 * time.Minute) // a: 70 min idle, b: 30 min
		p.reap()
		assert.Equal(t, 1, p.Sessions())
		dels := callsOf(srv, http.MethodDelete)
		require.Len(t, dels, 1)
		assert.Equal(t, srv.Calls("initialize")[0].Header.Get("Mcp-Session-Id"), "", "initialize carries no session")
		assert.Equal(t, "user-a", userOf(mcptest.BearerOf(dels[0].Authorization)), "the DELETE carries the session's own user's token")
		assert.Equal(t, srv.Calls("tools/call")[0].SessionID, dels[0].SessionID)

		_, err = ka.Call(t.Context(), mcptest.ToolEcho, nil)
		require.NoError(t, err)
		assert.Len(t, srv.Calls("initialize"), 3, "a's next call opens a new session")

		clock.Add(2 * time.Hour)
		p.reap()
		assert.Zero(t, p.Sessions())
		assert.Len(t, callsOf(srv, http.MethodDelete), 3)
	})
}

// A full pool ends its least recently used idle session to make room;
// when every session is in use, a new subject's call fails with
// ErrPoolFull and sends nothing.
func TestPoolFull(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearerCheck(usersOnly))
		p := newPool(t, srv.URL, WithMaxSessions(2))
		tok := map[string]*userTokens{}
		k := map[string]*Caller{}
		for _, u := range []string{"user-a", "user-b", "user-c", "user-d"} {
			tok[u] = &userTokens{user: u, every: 1}
			k[u] = caller(t, p, u, tok[u], Budget{})
		}
		for _, u := range []string{"user-a", "user-b", "user-a", "user-c"} {
			_, err := k[u].Call(t.Context(), mcptest.ToolEcho, nil)
			require.NoError(t, err)
		}
		assert.Equal(t, 2, p.Sessions())

		// a and c hold their sessions with calls in flight.
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for _, u := range []string{"user-a", "user-c"} {
			wg.Go(func() { _, _ = k[u].Call(ctx, mcptest.ToolBlock, nil) })
		}
		<-srv.Entered()
		<-srv.Entered()
		_, err := k["user-d"].Call(t.Context(), mcptest.ToolEcho, nil)
		assert.ErrorIs(t, err, ErrPoolFull)
		assert.Equal(t, KindPoolFull, Classify(err))
		cancel()
		wg.Wait()
		require.NoError(t, p.Close())

		for _, r := range srv.Requests() {
			assert.NotEqual(t, "user-d", userOf(mcptest.BearerOf(r.Authorization)), "nothing was sent for d")
		}
		dels := callsOf(srv, http.MethodDelete)
		require.Len(t, dels, 3, "b evicted for c, then a and c at Close")
		assert.Equal(t, "user-b", userOf(mcptest.BearerOf(dels[0].Authorization)), "b was the least recently used")
		for id, who := range sessionsByUser(srv) {
			assert.Len(t, who, 1, "session %s carried the tokens of %v", id, who)
		}
	})
}

// Budgets belong to the Caller (one agent run), not to the session, which
// the next run of the same subject reuses.
func TestPoolBudgetsArePerCaller(t *testing.T) {
	srv := mcptest.New(t, mcptest.GoSDK, mcptest.WithBearerCheck(usersOnly))
	p := newPool(t, srv.URL)
	u := &userTokens{user: "user-a", every: 1}
	run1 := caller(t, p, u.user, u, Budget{MaxCalls: 1})
	_, err := run1.Call(t.Context(), mcptest.ToolEcho, nil)
	require.NoError(t, err)
	_, err = run1.Call(t.Context(), mcptest.ToolEcho, nil)
	assert.ErrorIs(t, err, ErrBudgetExceeded)
	assert.Positive(t, run1.Usage().Bytes, "the initialize and the call were read for run 1")

	run2 := caller(t, p, u.user, u, Budget{MaxCalls: 1, MaxBytes: 1})
	_, err = run2.Call(t.Context(), mcptest.ToolEcho, nil)
	assert.ErrorIs(t, err, ErrBudgetExceeded, "a one-byte budget cuts the answer off")
	assert.Len(t, srv.Calls("initialize"), 1, "run 2 reuses the session")
	assert.Len(t, srv.Calls("tools/call"), 2)
}

func TestPoolRefusesBadArguments(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"})
	for _, o := range []Option{WithTokenSource(ts), WithBudget(Budget{MaxCalls: 1}), WithMaxSessions(0), WithIdleTimeout(-time.Second)} {
		_, err := NewPool(srv.URL, o)
		assert.Equal(t, KindInvalidArgument, Classify(err), "%v", err)
	}
	for _, o := range []Option{WithMaxSessions(3), WithIdleTimeout(time.Second)} {
		_, err := Dial(t.Context(), srv.URL, o)
		assert.ErrorContains(t, err, "does not apply")
	}
	_, err := NewPool("http://mcp.example/mcp")
	assert.ErrorContains(t, err, "plain http")

	p := newPool(t, srv.URL)
	assert.Equal(t, DefaultMaxSessions, p.cfg.maxSessions)
	assert.Equal(t, DefaultIdleTimeout, p.cfg.idle)
	var _ ToolCaller = (*Caller)(nil)
	var _ ToolCaller = (*Client)(nil)
	for _, id := range []Identity{{Subject: "", Tokens: ts}, {Subject: "a"}} {
		_, err := p.Caller(id, CallerOptions{})
		assert.Equal(t, KindInvalidArgument, Classify(err))
	}
	_, err = p.Caller(Identity{Subject: "a", Tokens: ts}, CallerOptions{Budget: Budget{MaxCalls: -1}})
	assert.Error(t, err)
	assert.Empty(t, srv.Requests())

	require.NoError(t, p.Close())
	k := caller(t, p, "a", ts, Budget{})
	_, err = k.Call(t.Context(), mcptest.ToolEcho, nil)
	assert.ErrorIs(t, err, ErrClosed)
}

func TestPoolPrintsNoSecret(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	p := newPool(t, srv.URL)
	id := Identity{Subject: "alice", Tokens: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok-secret-42"})}
	k, err := p.Caller(id, CallerOptions{})
	require.NoError(t, err)
	for _, v := range []any{p, k, id} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			assert.NotContains(t, fmt.Sprintf(verb, v), "tok-secret-42")
		}
	}
	assert.NotContains(t, fmt.Sprintf("%+v", k), "alice")
}

// The tool list and the schemas belong to the subject's session.
func TestPoolListToolsAndSchemas(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithTools(order), mcptest.WithBearerCheck(usersOnly))
		p := newPool(t, srv.URL, WithToolSchemas())
		u := &userTokens{user: "user-a", every: 1}
		k := caller(t, p, u.user, u, Budget{})
		info, err := k.Server(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "mcptest-"+string(kind), info.Name)
		sc, err := k.ListTools(t.Context(), ListToolsOptions{})
		require.NoError(t, err)
		assert.Contains(t, toolNames(sc.Items), "order")
		n := 0
		for _, err := range k.AllTools(t.Context(), ListToolsOptions{}) {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, len(sc.Items), n)
		_, err = k.Call(t.Context(), "order", map[string]any{"code": "S1"})
		assert.ErrorAs(t, err, new(*SchemaError))
		assert.Empty(t, srv.Calls("tools/call"))
		assert.Len(t, srv.Calls("tools/list"), 2, "the explicit listings; the call used the session's list")
	})
}
