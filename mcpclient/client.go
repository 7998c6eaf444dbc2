package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
)

// DefaultProtocolVersion is the MCP protocol version Dial asks for unless
// WithProtocolVersion says otherwise.
const DefaultProtocolVersion = "2025-11-25"

// DefaultMaxResponseBytes bounds each response body unless
// WithMaxResponseBytes says otherwise.
const DefaultMaxResponseBytes int64 = 4 << 20

const (
	methodInitialize = "initialize"
	methodToolsCall  = "tools/call"
)

// supportedVersion reports whether v is a protocol version with an
// initialize handshake and sessions, which this client speaks.
func supportedVersion(v string) bool {
	switch v {
	case "2025-11-25", "2025-06-18", "2025-03-26":
		return true
	}
	return false
}

// Budget caps what an autonomous agent may read through one Client. A zero
// field means no limit on that dimension.
type Budget struct {
	// MaxCalls is the number of requests that may run a tool: Call
	// invocations (the one re-sending after session expiry is part of the
	// same call) and resumptions of a call's event stream (each a GET that
	// counts even when its body is empty).
	MaxCalls int
	// MaxBytes is the number of response-body bytes read over HTTP, for
	// every request of the client (initialize and retries included).
	MaxBytes int64
}

// Usage is what a Client has consumed so far.
type Usage struct {
	Calls int   // Call invocations and stream resumptions admitted
	Bytes int64 // response-body bytes read
}

// Option configures Dial. Options compose in any order; one whose value
// is invalid makes Dial return an error naming it.
type Option func(*options)

type options struct {
	tokens      oauth2.TokenSource
	auth        Authorizer
	version     string
	skipInitNot bool
	budget      *Budget
	maxBody     int64
	httpClient  *http.Client
	logger      *slog.Logger
	name, ver   string
	toolSchemas bool
	handlers    map[string]handler // by method

	tp            trace.TracerProvider
	mp            metric.MeterProvider
	sessionIDAttr bool
	tel           *telemetry // built by configure from tp, mp and the endpoint

	// Pool only.
	maxSessions int
	idle        time.Duration

	set  map[string]bool // names of the options given, for those one constructor refuses
	errs []error
}

func (o *options) given(name string) {
	if o.set == nil {
		o.set = map[string]bool{}
	}
	o.set[name] = true
}

func (o *options) bad(format string, a ...any) { o.errs = append(o.errs, fmt.Errorf(format, a...)) }

// WithTokenSource sends "Authorization: <type> <token>" (Bearer for OAuth2
// access tokens) on every request: initialize, notifications, calls,
// stream resumptions, re-initialization and the DELETE of Close. The token
// is taken from ts for each request, so wrap it in oauth2.ReuseTokenSource
// to cache it.
func WithTokenSource(ts oauth2.TokenSource) Option {
	return func(o *options) {
		if ts == nil {
			o.bad("WithTokenSource: nil token source")
		}
		o.given("WithTokenSource")
		o.tokens = ts
	}
}

// WithAuthorizer makes a answer the server's authorization challenges and
// supply the bearer of every request, in place of WithTokenSource (the two
// exclude each other; a Pool takes neither). A request answered 401 or 403
// is handed to a.Authorize with the answer's header and sent again once a
// returns nil, at most MaxAuthorizeRetries times per request: a 401 or 403
// means the server refused the request before acting on it, so sending it
// again cannot repeat an effect. When a returns an error the request fails
// with an *AuthorizationError that keeps both the refusal and that error.
// Package mcpclient/mcpauth provides the MCP authorization flows.
func WithAuthorizer(a Authorizer) Option {
	return func(o *options) {
		if a == nil {
			o.bad("WithAuthorizer: nil Authorizer")
		}
		o.given("WithAuthorizer")
		o.auth = a
	}
}

// WithProtocolVersion asks for another protocol version than
// DefaultProtocolVersion. Only versions with an initialize handshake
// (2025-11-25, 2025-06-18, 2025-03-26) are accepted.
func WithProtocolVersion(v string) Option {
	return func(o *options) {
		if !supportedVersion(v) {
			o.bad("WithProtocolVersion: protocol version %q not supported (want 2025-11-25, 2025-06-18 or 2025-03-26)", v)
		}
		o.version = v
	}
}

// WithoutInitializedNotification skips notifications/initialized after
// initialize, for servers that expect only initialize and tools/call.
func WithoutInitializedNotification() Option { return func(o *options) { o.skipInitNot = true } }

// WithBudget caps the calls and bytes of the client; going over returns
// ErrBudgetExceeded.
func WithBudget(b Budget) Option {
	return func(o *options) {
		if b.MaxCalls < 0 || b.MaxBytes < 0 {
			o.bad("WithBudget: negative limit in %+v", b)
		}
		o.given("WithBudget")
		o.budget = &b
	}
}

// WithMaxResponseBytes bounds every response body exactly (default
// DefaultMaxResponseBytes; n must be positive); a larger 2xx body fails
// with ErrResponseTooLarge. An event stream and its resumptions count as
// one response. Of a non-2xx body at most this many bytes (and never more
// than 64 KiB) are kept in the *StatusError, whose status stays the error
// reported.
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			o.bad("WithMaxResponseBytes: %d is not a positive number of bytes", n)
		}
		o.maxBody = n
	}
}

// WithHTTPClient uses hc's Transport and Timeout for every request. Its
// redirect policy is replaced: the client follows no redirect.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) {
		if hc == nil {
			o.bad("WithHTTPClient: nil client")
		}
		o.httpClient = hc
	}
}

// WithLogger receives the client's logs and mcp-go's (the latter at debug
// level). Nil or absent, nothing is logged. Tokens and session ids are
// never logged; errors are logged under the key "error".
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithToolSchemas makes the client check every call against the tool's
// declared schemas: before the first call of a session it lists the tools
// (tools/list, every page) and keeps their schemas for the session; then
// arguments that do not match a tool's inputSchema are refused with a
// *SchemaError before any request, a structuredContent that does not match
// its outputSchema is a *MalformedResultError (never data), and a tool not
// in the list is ErrUnknownTool. The list is read again after a
// notifications/tools/list_changed, when a call names a tool the list
// lacks (once), on a new session, and on each ListTools. Without this
// option the same checks apply once ListTools has read a complete list on
// the session.
func WithToolSchemas() Option { return func(o *options) { o.toolSchemas = true } }

// WithClientInfo sets the clientInfo sent in initialize.
func WithClientInfo(name, version string) Option {
	return func(o *options) {
		if name == "" {
			o.bad("WithClientInfo: empty name")
		}
		o.name, o.ver = name, version
	}
}

// Client calls the tools of one MCP server over streamable HTTP. It is safe
// for concurrent use.
type Client struct {
	endpoint *url.URL
	cfg      options
	budget   *budget
	log      *slog.Logger // never nil: discards when no logger was given
	mcpLog   *slog.Logger // mcp-go's, at debug level
	nextID   atomic.Int64

	mu      sync.Mutex // never held across a round trip
	sess    *session
	pending *reconnecting // the re-initialization in flight, if any
	closed  bool
	bg      sync.WaitGroup // notifications/cancelled in flight
}

// reconnecting is a re-initialization in flight; calls that find their
// session expired meanwhile wait for it instead of starting another.
type reconnecting struct {
	done   chan struct{}
	cancel context.CancelCauseFunc
}

// cancelNotifyTimeout bounds the notifications/cancelled sent after a call
// whose context ended.
const cancelNotifyTimeout = 5 * time.Second

// session is one initialized MCP session and its transport.
type session struct {
	tr    *transport.StreamableHTTP
	wire  *wire
	id    string
	info  ServerInfo
	tools toolState
	stop  context.CancelFunc // ends the standalone stream, if any
}

// Dial initializes an MCP session with the server at endpoint (an http or
// https URL; plain http carries a token only to a loopback address) and
// returns a Client for it, to Close.
func Dial(ctx context.Context, endpoint string, opts ...Option) (*Client, error) {
	cfg, u, err := configure(endpoint, opts, "WithMaxSessions", "WithIdleTimeout")
	if err != nil {
		return nil, err
	}
	if cfg.tokens != nil && cfg.auth != nil {
		return nil, usagef("mcpclient: WithTokenSource and WithAuthorizer exclude each other")
	}
	if (cfg.tokens != nil || cfg.auth != nil) && u.Scheme == "http" && !httpx.IsLoopback(u.Host) {
		return nil, usagef("mcpclient: refusing to send a bearer token over plain http to %s", u.Host)
	}
	c := newClient(u, cfg)
	s, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.sess = s
	return c, nil
}

// configure applies opts and checks the endpoint; refused names the
// options the constructor does not take.
func configure(endpoint string, opts []Option, refused ...string) (options, *url.URL, error) {
	cfg := options{version: DefaultProtocolVersion, maxBody: DefaultMaxResponseBytes, name: "candor-mcpclient", ver: "1",
		maxSessions: DefaultMaxSessions, idle: DefaultIdleTimeout}
	for _, o := range opts {
		if o == nil {
			return cfg, nil, usagef("mcpclient: nil Option")
		}
		o(&cfg)
	}
	for _, name := range refused {
		if cfg.set[name] {
			cfg.errs = append(cfg.errs, fmt.Errorf("%s does not apply here", name))
		}
	}
	if len(cfg.errs) > 0 {
		return cfg, nil, usagef("mcpclient: %v", errors.Join(cfg.errs...))
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return cfg, nil, usagef("mcpclient: endpoint: %v", httpx.StripURL(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, nil, usagef("mcpclient: endpoint is not an absolute http(s) URL")
	}
	cfg.tel = newTelemetry(&cfg, u)
	return cfg, u, nil
}

// newClient builds a client without a session.
func newClient(u *url.URL, cfg options) *Client {
	c := &Client{endpoint: u, cfg: cfg, log: cfg.logger, mcpLog: slog.New(slog.DiscardHandler)}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	} else {
		c.mcpLog = slog.New(debugHandler{cfg.logger.Handler()})
	}
	c.budget = &budget{} // zero limits: usage is counted, nothing is capped
	if cfg.budget != nil {
		c.budget.limits = *cfg.budget
	}
	return c
}

// connect builds a fresh transport and runs the initialize handshake.
func (c *Client) connect(ctx context.Context) (*session, error) {
	hc := httpx.NoRedirectClient(c.cfg.httpClient)
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	w := &wire{base: base, origin: c.endpoint, maxBody: c.cfg.maxBody, budget: c.budget, resume: defaultResumePolicy, auth: c.cfg.auth}
	if ts := c.cfg.tokens; ts != nil {
		w.setTokens(ts)
	} else if ts := envOf(ctx).tokens; ts != nil {
		w.setTokens(ts) // a pooled session: its subject's, until the next call
	}
	hc.Transport = w
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(c.mcpLog)}
	if len(c.cfg.handlers) > 0 {
		// With a handler, the standalone GET stream is opened once the
		// session is initialized, so that requests belonging to no call
		// reach the handler.
		w.listen = true
		//lint:ignore SA1019 the client speaks 2025-11-25 and older, which have the standalone stream
		topts = append(topts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(c.endpoint.String(), topts...)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	// The standalone stream lives as long as the session, not as the
	// context of the call that opened it; it carries no caller's values
	// but the subject of a pooled session.
	lctx, stop := context.WithCancel(context.Background())
	if sub := envOf(ctx).subject; sub != "" {
		lctx = withEnv(lctx, callEnv{subject: sub})
	}
	if err := tr.Start(lctx); err != nil {
		stop()
		return nil, fmt.Errorf("mcpclient: start transport: %w", err)
	}
	s := &session{tr: tr, wire: w, stop: stop}
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			s.tools.markStale()
		}
	})
	tr.SetRequestHandler(c.serve)
	ictx, o := c.cfg.tel.begin(ctx, methodInitialize, "")
	fail := func(err error) (*session, error) {
		o.end(err)
		stop()
		_ = tr.Close()
		return nil, err
	}
	params := map[string]any{
		"protocolVersion": c.cfg.version,
		"capabilities":    c.cfg.capabilities(),
		"clientInfo":      map[string]string{"name": c.cfg.name, "version": c.cfg.ver},
	}
	raw, err := c.send(ictx, o, s, methodInitialize, "", params)
	if err != nil {
		return fail(err)
	}
	info, err := parseInitialize(raw)
	if err != nil {
		return fail(&DecodeError{Raw: raw, Err: err})
	}
	if !supportedVersion(info.ProtocolVersion) {
		return fail(&DecodeError{Raw: raw, Err: fmt.Errorf("initialize: server chose unsupported protocol version %q", httpx.Excerpt([]byte(info.ProtocolVersion), 64))})
	}
	tr.SetProtocolVersion(info.ProtocolVersion)
	s.id, s.info = tr.GetSessionId(), info
	o.agreed(info.ProtocolVersion, s.id)
	o.end(nil)
	o = nil // a failed notification below fails Dial, not the initialize span
	if !c.cfg.skipInitNot {
		if err := c.notify(ctx, s, "notifications/initialized", nil); err != nil {
			return fail(err)
		}
	}
	c.log.DebugContext(ctx, "mcp session initialized", "server", s.info.Name, "protocol", s.info.ProtocolVersion, "session", s.id != "")
	return s, nil
}

func (c *Client) notify(ctx context.Context, s *session, method string, params map[string]any) error {
	ex := &exchange{}
	err := s.tr.SendNotification(withExchange(ctx, ex), mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	})
	if err != nil {
		return c.wireError(ctx, ex, s, method, "", err)
	}
	return nil
}

// send makes one JSON-RPC request on session s and returns its result,
// read from the bytes received (not from mcp-go's decoding of them). o is
// the request's telemetry (nil: none); the trace context of ctx goes in
// params._meta.
func (c *Client) send(ctx context.Context, o *op, s *session, method, tool string, params any) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	ex := &exchange{}
	n := c.nextID.Add(1)
	id := mcp.NewRequestId(n)
	o.sent(s, n)
	injectMeta(ctx, params)
	resp, err := s.tr.SendRequest(withExchange(ctx, ex), transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      id,
		Method:  method,
		Params:  params,
	})
	if err != nil {
		if ctx.Err() != nil && method == methodToolsCall {
			c.cancelled(ctx, s, id)
		}
		return nil, c.wireError(ctx, ex, s, method, tool, err)
	}
	snap := ex.snapshot()
	if snap.cut != nil {
		return nil, withTool(snap.cut, tool)
	}
	if snap.status < 200 || snap.status > 299 {
		// mcp-go hands back a JSON error body of a non-2xx answer as if it
		// were a response; the status decides.
		return nil, c.statusError(s, method, tool, snap)
	}
	if resp == nil || !snap.hasRaw {
		return nil, c.unknown(method, tool, "the server accepted the request but no response was read", nil)
	}
	env, reason := parseEnvelope(snap.raw)
	if reason != "" {
		return nil, c.malformed(method, tool, snap.raw, reason)
	}
	if got := string(bytes.TrimSpace(env.id)); got != strconv.FormatInt(n, 10) {
		return nil, fmt.Errorf("%w: sent %d, received %s", ErrIDMismatch, n, httpx.Excerpt(env.id, 64))
	}
	if env.hasError {
		code, msg, data, ok := rpcError(env.errObj)
		if !ok {
			return nil, c.malformed(method, tool, snap.raw, "error member is not a JSON-RPC error object")
		}
		return nil, &ProtocolError{Method: method, Tool: tool, Code: code, Message: msg, Data: data}
	}
	return env.result, nil
}

func (c *Client) malformed(method, tool string, raw []byte, reason string) error {
	if method == methodToolsCall {
		return &MalformedResultError{Tool: tool, Raw: raw, Reason: reason}
	}
	return &DecodeError{Raw: raw, Err: errors.New(reason)}
}

func (c *Client) unknown(method, tool, reason string, cause error) error {
	if method != methodToolsCall {
		if cause != nil {
			return fmt.Errorf("mcpclient: %s: %s: %w", method, reason, cause)
		}
		return fmt.Errorf("mcpclient: %s: %s", method, reason)
	}
	return &OutcomeUnknownError{Tool: tool, Reason: reason, Err: cause}
}

// withTool names the tool in an *OutcomeUnknownError made below the
// client (in the wire, which does not know it).
func withTool(err error, tool string) error {
	if oe, ok := errors.AsType[*OutcomeUnknownError](err); ok && oe.Tool == "" {
		oe.Tool = tool
	}
	return err
}

// cancelled tells the server, in the background, that the caller gave up
// on request id, so that it can stop the tool (notifications/cancelled).
// Close waits for these notifications.
func (c *Client) cancelled(ctx context.Context, s *session, id mcp.RequestId) {
	reason := context.Cause(ctx).Error()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.bg.Add(1) // under mu, so that it happens before Close's Wait
	go func() {
		defer c.bg.Done()
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
		defer cancel()
		err := c.notify(nctx, s, "notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
		if err != nil {
			c.log.DebugContext(nctx, "mcp: notifications/cancelled not delivered", "error", err)
		}
	}()
}

// wireError turns a failed exchange into the most precise error: the
// context's, a cap or failure recorded on the wire, then the HTTP status of
// the POST, then, when the POST was accepted, an unknown outcome, then
// mcp-go's error.
func (c *Client) wireError(ctx context.Context, ex *exchange, s *session, method, tool string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	snap := ex.snapshot()
	if snap.cut != nil {
		return withTool(snap.cut, tool)
	}
	if snap.status != 0 && (snap.status < 200 || snap.status > 299) {
		return c.statusError(s, method, tool, snap)
	}
	if snap.status != 0 {
		// The POST was answered 2xx: the server took the request, and
		// what failed after that says nothing about whether it ran.
		return c.unknown(method, tool, "the server accepted the request but its response could not be read", httpx.StripURL(err))
	}
	if s.id != "" && errors.Is(err, transport.ErrSessionTerminated) {
		// Nothing was sent: mcp-go refuses every request on a transport
		// whose session the server ended (a 404 seen by another call, or a
		// re-initialization that failed). The session is as gone as on a 404.
		return fmt.Errorf("%w: %s: the server ended this session (not sent)", ErrSessionExpired, method)
	}
	return fmt.Errorf("mcpclient: %s: %w", method, httpx.StripURL(unwrapURL(err)))
}

// unwrapURL finds a *url.Error in mcp-go's wrapping, so that StripURL can
// drop the URL it carries.
func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue
	}
	return err
}

func (c *Client) statusError(s *session, method, tool string, snap snapshot) error {
	return &StatusError{
		StatusCode: snap.status, Header: snap.header, Body: snap.errBody,
		method: method, tool: tool,
		expired: s.id != "" && method != methodInitialize && sessionGone(snap.status, snap.errBody),
	}
}

// Call calls tool with args (any value that marshals to a JSON object; nil
// is sent as {}). It returns a *Result only when the call succeeded and the
// result decoded with isError absent or false. Otherwise the error is one of
// *ToolError, *ProtocolError, *MalformedResultError, *StatusError,
// *OutcomeUnknownError, or wraps ErrBudgetExceeded, ErrResponseTooLarge,
// ErrNoToken, ErrIDMismatch, ErrSessionExpired, ErrClosed, a context error or
// a transport error (with the tool name); Classify names its Kind.
//
// When the session checks schemas (WithToolSchemas, or after a complete
// ListTools), arguments that do not match the tool's inputSchema are a
// *SchemaError before any request, and a structuredContent that does not
// match its outputSchema is a *MalformedResultError.
func (c *Client) Call(ctx context.Context, tool string, args any) (*Result, error) {
	ctx, o := c.cfg.tel.begin(ctx, methodToolsCall, tool)
	res, err := c.call(ctx, o, tool, args)
	o.end(err)
	return res, err
}

// call is Call under the telemetry o of the operation.
func (c *Client) call(ctx context.Context, o *op, tool string, args any) (*Result, error) {
	raw, ts, err := c.callRaw(ctx, o, tool, args)
	if err != nil {
		return nil, err
	}
	res, bad := decodeResult(raw)
	if bad != nil {
		return nil, &MalformedResultError{Tool: tool, Raw: raw, IsError: bad.isError, Reason: bad.reason}
	}
	if res.IsError {
		return nil, &ToolError{Tool: tool, Text: res.Text(), Result: res}
	}
	if err := ts.checkResult(res); err != nil {
		return nil, err
	}
	return res, nil
}

// budgetFor returns the budget a call counts against: its caller's (a
// Pool's Caller), or the client's.
func (c *Client) budgetFor(ctx context.Context) *budget {
	if b := envOf(ctx).budget; b != nil {
		return b
	}
	return c.budget
}

func (c *Client) callRaw(ctx context.Context, o *op, tool string, args any) (json.RawMessage, *toolSchemas, error) {
	arguments, err := encodeArgs(args)
	if err != nil {
		return nil, nil, usagef("mcpclient: tool %q: %v", tool, err)
	}
	if err := checkHeader(ctx); err != nil {
		return nil, nil, err
	}
	s, err := c.current()
	if err != nil {
		return nil, nil, err
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("mcpclient: tool %q: %w", tool, context.Cause(ctx))
	}
	var ts *toolSchemas
	if c.checksSchemas(s) {
		if ts, err = c.schemasFor(ctx, s, tool); err != nil {
			return nil, nil, err
		}
		if err := ts.checkArgs(arguments); err != nil {
			return nil, nil, err
		}
		if s, err = c.current(); err != nil { // listing may have re-initialized
			return nil, nil, err
		}
	}
	if err := c.budgetFor(ctx).takeCall(); err != nil {
		return nil, nil, fmt.Errorf("mcpclient: tool %q: %w", tool, err)
	}
	params := map[string]any{"name": tool, "arguments": arguments}
	raw, err := c.send(ctx, o, s, methodToolsCall, tool, params)
	if errors.Is(err, ErrSessionExpired) {
		// Only the answer to the call's own POST (404, or a 400 about the
		// session) says the call was not processed; only then is it sent
		// again, once, on a new session.
		c.log.InfoContext(ctx, "mcp session expired; re-initializing once", "tool", tool)
		s, rerr := c.reconnect(ctx, s)
		if rerr != nil {
			return nil, nil, fmt.Errorf("mcpclient: tool %q: re-initialize after session expiry: %w", tool, rerr)
		}
		raw, err = c.send(ctx, o, s, methodToolsCall, tool, params)
	}
	if err != nil {
		return nil, nil, callError(tool, err)
	}
	return raw, ts, nil
}

// callError names the tool in err unless its type already does.
func callError(tool string, err error) error {
	switch err.(type) {
	case *ProtocolError, *StatusError, *OutcomeUnknownError, *MalformedResultError:
		return err
	}
	return fmt.Errorf("mcpclient: tool %q: %w", tool, err)
}

func encodeArgs(args any) (json.RawMessage, error) {
	if args == nil {
		return json.RawMessage(`{}`), nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("arguments must encode to a JSON object, got %.32s", b)
	}
	return b, nil
}

func (c *Client) current() (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	return c.sess, nil
}

// reconnect replaces the expired session old with a new one, unless
// another call did so already or is doing so (then it waits for that one).
// The client mutex is not held during the handshake, so that Close,
// SessionID and String never wait for it; Close cancels it.
func (c *Client) reconnect(ctx context.Context, old *session) (*session, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if c.sess != old {
			s := c.sess
			c.mu.Unlock()
			return s, nil
		}
		if p := c.pending; p != nil {
			c.mu.Unlock()
			select {
			case <-p.done:
				continue // replaced, failed or closed: look again
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		rctx, cancel := context.WithCancelCause(ctx)
		p := &reconnecting{done: make(chan struct{}), cancel: cancel}
		c.pending = p
		c.mu.Unlock()

		s, err := c.connect(rctx)

		c.mu.Lock()
		c.pending = nil
		closed := c.closed
		if err == nil && !closed {
			// The old transport is dropped without Close: the server no
			// longer knows its session, so a DELETE would be pointless.
			// Its standalone stream, if any, is stopped.
			old.stop()
			c.sess = s
		}
		c.mu.Unlock()
		close(p.done)
		cancel(nil)
		switch {
		case closed:
			if err == nil {
				_ = s.tr.Close() // ends the session the handshake made
				s.stop()
			}
			return nil, ErrClosed
		case err != nil:
			return nil, err
		}
		return s, nil
	}
}

// useTokens makes ts the token source of the requests of the current
// session that carry no caller's (the DELETE that ends it).
func (c *Client) useTokens(ts oauth2.TokenSource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sess.wire.setTokens(ts)
}

// SessionID returns the Mcp-Session-Id of the current session ("" if the
// server assigned none).
func (c *Client) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.id
}

// ProtocolVersion returns the protocol version the server agreed to.
func (c *Client) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.info.ProtocolVersion
}

// Server returns what the server said about itself in initialize (its
// serverInfo, the protocol version it agreed to, its capabilities and
// instructions), for the current session.
func (c *Client) Server() ServerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.info
}

// String describes the client by its endpoint, protocol version and
// whether it holds a session. GoString, Format and LogValue say the same: no
// rendering of a Client shows its token source, its configuration or the
// session id (which, like a token, lets its holder use the session).
func (c *Client) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("mcpclient.Client{endpoint=%q protocol=%q session=%t closed=%t}", c.endpoint, c.sess.info.ProtocolVersion, c.sess.id != "", c.closed)
}

// GoString is String.
func (c *Client) GoString() string { return c.String() }

// Format prints String() for every verb.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// LogValue logs what String prints.
func (c *Client) LogValue() slog.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slog.GroupValue(slog.String("endpoint", c.endpoint.String()), slog.String("protocol", c.sess.info.ProtocolVersion),
		slog.Bool("session", c.sess.id != ""), slog.Bool("closed", c.closed))
}

// Usage returns what the client has consumed so far, with or without a
// budget.
func (c *Client) Usage() Usage {
	return Usage{Calls: int(c.budget.calls.Load()), Bytes: c.budget.bytes.Load()}
}

// Close ends the session with an HTTP DELETE carrying the bearer. It
// returns an error when the DELETE could not be sent or was refused (401,
// 403, 5xx); 404 and 405 (session already gone, termination not offered)
// are not errors. A re-initialization in flight is cancelled. Calls after
// Close return ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	s, p := c.sess, c.pending
	c.mu.Unlock()
	if p != nil {
		p.cancel(ErrClosed)
	}
	c.bg.Wait()

	_ = s.tr.Close() // mcp-go logs and swallows DELETE failures; wire records them
	s.stop()
	w := s.wire
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.delErr != nil {
		return fmt.Errorf("mcpclient: close session: %w", httpx.StripURL(unwrapURL(w.delErr)))
	}
	switch st := w.delStatus; {
	case st == 0, st >= 200 && st <= 299, st == http.StatusNotFound, st == http.StatusMethodNotAllowed:
		return nil
	default:
		return &StatusError{StatusCode: st, Header: w.delHeader.Clone(), Body: w.delBody, method: http.MethodDelete}
	}
}

// debugHandler passes mcp-go's log records to the caller's handler at
// debug level (they are the transport's diagnostics, and the client
// reports their failures itself), with mcp-go's "err" key renamed "error".
type debugHandler struct{ h slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(renameErr(a))
		return true
	})
	return d.h.Handle(ctx, nr)
}

func (d debugHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = renameErr(a)
	}
	return debugHandler{d.h.WithAttrs(out)}
}

func (d debugHandler) WithGroup(name string) slog.Handler { return debugHandler{d.h.WithGroup(name)} }

func renameErr(a slog.Attr) slog.Attr {
	if a.Key == "err" {
		a.Key = "error"
	}
	return a
}
