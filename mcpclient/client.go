package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/oauth2"
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
	// MaxCalls is the number of Call invocations (a retry after session
	// expiry is part of the same call).
	MaxCalls int
	// MaxBytes is the number of response-body bytes read over HTTP, for
	// every request of the client (initialize and retries included).
	MaxBytes int64
}

// Usage is what a Client has consumed so far.
type Usage struct {
	Calls int   // Call invocations admitted
	Bytes int64 // response-body bytes read
}

// Option configures Dial.
type Option func(*config)

type config struct {
	tokens      oauth2.TokenSource
	version     string
	skipInitNot bool
	budget      *Budget
	maxBody     int64
	httpClient  *http.Client
	logger      *slog.Logger
	name, ver   string
}

// WithTokenSource sends "Authorization: <type> <token>" (Bearer for OAuth2
// access tokens) on every request: initialize, notifications, calls,
// re-initialization and the DELETE of Close. The token is taken from ts for
// each request, so wrap it in oauth2.ReuseTokenSource to cache it.
func WithTokenSource(ts oauth2.TokenSource) Option { return func(c *config) { c.tokens = ts } }

// WithProtocolVersion asks for another protocol version than
// DefaultProtocolVersion. Only versions with an initialize handshake
// (2025-11-25, 2025-06-18, 2025-03-26) are accepted.
func WithProtocolVersion(v string) Option { return func(c *config) { c.version = v } }

// WithoutInitializedNotification skips notifications/initialized after
// initialize, for servers that expect only initialize and tools/call.
func WithoutInitializedNotification() Option { return func(c *config) { c.skipInitNot = true } }

// WithBudget caps the calls and bytes of the client; going over returns
// ErrBudgetExceeded.
func WithBudget(b Budget) Option { return func(c *config) { c.budget = &b } }

// WithMaxResponseBytes bounds every response body (default
// DefaultMaxResponseBytes); a larger 2xx body fails with
// ErrResponseTooLarge. Of a non-2xx body at most this many bytes (and never
// more than 64 KiB) are kept in the *StatusError, whose status stays the
// error reported.
func WithMaxResponseBytes(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithHTTPClient uses hc's Transport and Timeout. Its redirect policy is
// replaced: the client follows no redirect.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.httpClient = hc } }

// WithLogger receives the client's and mcp-go's logs (default: discarded).
// Tokens are never logged.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithClientInfo sets the clientInfo sent in initialize.
func WithClientInfo(name, version string) Option {
	return func(c *config) { c.name, c.ver = name, version }
}

// Client calls the tools of one MCP server over streamable HTTP. It is safe
// for concurrent use.
type Client struct {
	endpoint *url.URL
	cfg      config
	budget   *budget
	log      *slog.Logger
	nextID   atomic.Int64

	mu     sync.Mutex
	sess   *session
	closed bool
	bg     sync.WaitGroup // notifications/cancelled in flight
}

// cancelNotifyTimeout bounds the notifications/cancelled sent after a call
// whose context ended.
const cancelNotifyTimeout = 5 * time.Second

// session is one initialized MCP session and its transport.
type session struct {
	tr      *transport.StreamableHTTP
	wire    *wire
	id      string
	version string
	server  string
}

// Dial initializes an MCP session with the server at endpoint (an http or
// https URL) and returns a Client for it.
func Dial(ctx context.Context, endpoint string, opts ...Option) (*Client, error) {
	cfg := config{version: DefaultProtocolVersion, maxBody: DefaultMaxResponseBytes, name: "candor-mcpclient", ver: "1"}
	for _, o := range opts {
		o(&cfg)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: endpoint: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcpclient: endpoint %q is not an absolute http(s) URL", endpoint)
	}
	if cfg.tokens != nil && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("mcpclient: refusing to send a bearer token over plain http to %s", u.Host)
	}
	if !supportedVersion(cfg.version) {
		return nil, fmt.Errorf("mcpclient: protocol version %q not supported (want 2025-11-25, 2025-06-18 or 2025-03-26)", cfg.version)
	}
	c := &Client{endpoint: u, cfg: cfg, log: cfg.logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.budget = &budget{} // zero limits: usage is counted, nothing is capped
	if cfg.budget != nil {
		c.budget.limits = *cfg.budget
	}
	s, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.sess = s
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// connect builds a fresh transport and runs the initialize handshake.
func (c *Client) connect(ctx context.Context) (*session, error) {
	base := http.DefaultTransport
	hc := &http.Client{CheckRedirect: noRedirect}
	if c.cfg.httpClient != nil {
		if c.cfg.httpClient.Transport != nil {
			base = c.cfg.httpClient.Transport
		}
		hc.Timeout = c.cfg.httpClient.Timeout
	}
	w := &wire{base: base, tokens: c.cfg.tokens, origin: c.endpoint, maxBody: c.cfg.maxBody, budget: c.budget}
	hc.Transport = w
	tr, err := transport.NewStreamableHTTP(c.endpoint.String(),
		transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(c.log))
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	if err := tr.Start(ctx); err != nil {
		return nil, fmt.Errorf("mcpclient: start transport: %w", err)
	}
	s := &session{tr: tr, wire: w}
	params := map[string]any{
		"protocolVersion": c.cfg.version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": c.cfg.name, "version": c.cfg.ver},
	}
	raw, err := c.send(ctx, s, methodInitialize, "", params)
	if err != nil {
		_ = tr.Close()
		return nil, err
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(raw, &init); err != nil {
		_ = tr.Close()
		return nil, &DecodeError{Raw: raw, Err: fmt.Errorf("initialize result: %w", err)}
	}
	if !supportedVersion(init.ProtocolVersion) {
		_ = tr.Close()
		return nil, &DecodeError{Raw: raw, Err: fmt.Errorf("initialize: server chose unsupported protocol version %q", init.ProtocolVersion)}
	}
	tr.SetProtocolVersion(init.ProtocolVersion)
	s.id, s.version, s.server = tr.GetSessionId(), init.ProtocolVersion, init.ServerInfo.Name
	if !c.cfg.skipInitNot {
		if err := c.notify(ctx, s, "notifications/initialized", nil); err != nil {
			_ = tr.Close()
			return nil, err
		}
	}
	c.log.DebugContext(ctx, "mcp session initialized", "server", s.server, "protocol", s.version, "session", s.id != "")
	return s, nil
}

func (c *Client) notify(ctx context.Context, s *session, method string, params map[string]any) error {
	ex := &exchange{}
	err := s.tr.SendNotification(withExchange(ctx, ex), mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	})
	if err != nil {
		return c.wireError(ctx, ex, s, method, err)
	}
	return nil
}

// send makes one JSON-RPC request on session s and returns its result.
func (c *Client) send(ctx context.Context, s *session, method, tool string, params any) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	ex := &exchange{}
	id := mcp.NewRequestId(c.nextID.Add(1))
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
		return nil, c.wireError(ctx, ex, s, method, err)
	}
	status, body, cut := ex.snapshot()
	if cut != nil {
		return nil, cut
	}
	if status < 200 || status > 299 {
		// mcp-go hands back a JSON error body of a non-2xx answer as if it
		// were a response; the status decides.
		return nil, c.statusError(s, method, status, body)
	}
	if resp == nil {
		return nil, fmt.Errorf("mcpclient: %s: no response", method)
	}
	if resp.ID.String() != id.String() {
		return nil, fmt.Errorf("%w: sent %s, received %s", ErrIDMismatch, id.String(), resp.ID.String())
	}
	if resp.Error != nil {
		return nil, &ProtocolError{Method: method, Tool: tool, Code: resp.Error.Code, Message: resp.Error.Message, Data: rawData(resp.Error.Data)}
	}
	if len(resp.Result) == 0 || isNull(resp.Result) {
		return nil, fmt.Errorf("mcpclient: %s: response has neither result nor error", method)
	}
	return resp.Result, nil
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
			c.log.DebugContext(nctx, "mcp: notifications/cancelled not delivered", "err", err)
		}
	}()
}

// wireError turns a failed exchange into the most precise error: the
// context's, a cap, then the HTTP status, then mcp-go's error.
func (c *Client) wireError(ctx context.Context, ex *exchange, s *session, method string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	status, body, cut := ex.snapshot()
	if cut != nil {
		return cut
	}
	if status != 0 && (status < 200 || status > 299) {
		return c.statusError(s, method, status, body)
	}
	if status == 0 && s.id != "" && errors.Is(err, transport.ErrSessionTerminated) {
		// Nothing was sent: mcp-go refuses every request on a transport
		// whose session the server ended (a 404 seen by another call, or a
		// re-initialization that failed). The session is as gone as on a 404.
		return fmt.Errorf("%w: %s: the server ended this session (not sent)", ErrSessionExpired, method)
	}
	return fmt.Errorf("mcpclient: %s: %w", method, err)
}

func (c *Client) statusError(s *session, method string, status int, body []byte) error {
	return &StatusError{
		Method: method, StatusCode: status, Body: body,
		expired: s.id != "" && method != methodInitialize && sessionGone(status, body),
	}
}

func rawData(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if r, ok := v.(json.RawMessage); ok {
		return r
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// Call calls tool with args (any value that marshals to a JSON object; nil
// is sent as {}). It returns a *Result only when the call succeeded and the
// result decoded with isError absent or false. Otherwise the error is one of
// *ToolError, *ProtocolError, *MalformedResultError, *StatusError, or wraps
// ErrBudgetExceeded, ErrResponseTooLarge, ErrNoToken, ErrIDMismatch, a
// context error or a transport error (with the tool name).
func (c *Client) Call(ctx context.Context, tool string, args any) (*Result, error) {
	raw, err := c.callRaw(ctx, tool, args)
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
	return res, nil
}

func (c *Client) callRaw(ctx context.Context, tool string, args any) (json.RawMessage, error) {
	arguments, err := encodeArgs(args)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: tool %q: %w", tool, err)
	}
	s, err := c.current()
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("mcpclient: tool %q: %w", tool, context.Cause(ctx))
	}
	if err := c.budget.takeCall(); err != nil {
		return nil, fmt.Errorf("mcpclient: tool %q: %w", tool, err)
	}
	params := map[string]any{"name": tool, "arguments": arguments}
	raw, err := c.send(ctx, s, methodToolsCall, tool, params)
	if errors.Is(err, ErrSessionExpired) {
		c.log.InfoContext(ctx, "mcp session expired; re-initializing once", "tool", tool)
		s, rerr := c.reconnect(ctx, s)
		if rerr != nil {
			return nil, fmt.Errorf("mcpclient: tool %q: re-initialize after session expiry: %w", tool, rerr)
		}
		raw, err = c.send(ctx, s, methodToolsCall, tool, params)
	}
	if err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("mcpclient: tool %q: %w", tool, err)
	}
	return raw, nil
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
// another call did so already.
func (c *Client) reconnect(ctx context.Context, old *session) (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.sess != old {
		return c.sess, nil
	}
	s, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.sess = s
	// The old transport is dropped without Close: the server no longer knows
	// its session, so a DELETE would be pointless (and mcp-go runs no
	// background work for it).
	return s, nil
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
	return c.sess.version
}

// String describes the client by its endpoint, protocol version and
// whether it holds a session. GoString, Format and LogValue say the same: no
// rendering of a Client shows its token source, its configuration or the
// session id (which, like a token, lets its holder use the session).
func (c *Client) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("mcpclient.Client{endpoint=%q protocol=%q session=%t closed=%t}", c.endpoint, c.sess.version, c.sess.id != "", c.closed)
}

// GoString is String.
func (c *Client) GoString() string { return c.String() }

// Format prints String() for every verb.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// LogValue logs what String prints.
func (c *Client) LogValue() slog.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slog.GroupValue(slog.String("endpoint", c.endpoint.String()), slog.String("protocol", c.sess.version),
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
// are not errors. Calls after Close return ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	s := c.sess
	c.mu.Unlock()
	c.bg.Wait()

	_ = s.tr.Close() // mcp-go logs and swallows DELETE failures; wire records them
	w := s.wire
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.delErr != nil {
		return fmt.Errorf("mcpclient: close session: %w", w.delErr)
	}
	switch st := w.delStatus; {
	case st == 0, st >= 200 && st <= 299, st == http.StatusNotFound, st == http.StatusMethodNotAllowed:
		return nil
	default:
		return &StatusError{Method: http.MethodDelete, StatusCode: st, Body: w.delBody}
	}
}
