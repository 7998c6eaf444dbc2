package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/candorkit/candor/internal/httpstatus"
	"github.com/candorkit/candor/internal/httpx"
)

// Kind names a server implementation.
type Kind string

// The two server implementations a test can start.
const (
	// MCPGo is github.com/mark3labs/mcp-go v1.2.1 over streamable HTTP with
	// server.InsecureStatefulSessionIdManager (real 404s for ended sessions).
	// It answers with application/json bodies.
	MCPGo Kind = "mcp-go"
	// GoSDK is github.com/modelcontextprotocol/go-sdk v1.8.0 over streamable
	// HTTP (stateful). It answers with text/event-stream bodies.
	GoSDK Kind = "go-sdk"
)

// Kinds returns every server implementation, for table-driven tests that
// must pass against all of them.
func Kinds() []Kind { return []Kind{MCPGo, GoSDK} }

// Option configures a test server.
type Option func(*config)

type config struct {
	bearer       string
	bearerOK     func(token string) bool
	pageSize     int
	items        int
	session400   bool
	eventStore   bool
	maxBodyBytes int64
	tools        []Tool
	errs         []error
}

// WithBearer makes the server require "Authorization: Bearer <token>" on
// every request (POST, GET and DELETE); other requests get 401 with a
// WWW-Authenticate header and reach no MCP code.
func WithBearer(token string) Option { return func(c *config) { c.bearer = token } }

// WithBearerCheck makes the server require a bearer token that ok accepts
// on every request, as WithBearer does for one token; it is for tests with
// many callers (tokens per user, refreshed tokens). ok must be safe for
// concurrent use.
func WithBearerCheck(ok func(token string) bool) Option {
	return func(c *config) {
		if ok == nil {
			c.errs = append(c.errs, errors.New("WithBearerCheck: nil function"))
		}
		c.bearerOK = ok
	}
}

// WithToolsPageSize makes tools/list answer at most n tools a page (with a
// nextCursor for the rest); n must be positive.
func WithToolsPageSize(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.errs = append(c.errs, fmt.Errorf("WithToolsPageSize: %d is not positive", n))
		}
		c.pageSize = n
	}
}

// WithItems sets the size of the data set ToolList pages over (default 25).
func WithItems(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithItems: negative size %d", n))
		}
		c.items = n
	}
}

// WithTools adds the caller's tools to the server, beside the built-in
// ones; a tool named like a built-in one replaces it. Each needs a name
// and a Handle function.
func WithTools(tools ...Tool) Option {
	return func(c *config) {
		for _, t := range tools {
			if err := checkTool(t); err != nil {
				c.errs = append(c.errs, fmt.Errorf("WithTools: %w", err))
			}
		}
		c.tools = append(c.tools, tools...)
	}
}

// WithUnknownSession400 makes a request on a session ended by
// Server.Terminate answer 400 with the JSON-RPC error body
// "Bad Request: No valid session ID provided", as TypeScript SDK servers do,
// instead of the library's own 404.
func WithUnknownSession400() Option { return func(c *config) { c.session400 = true } }

// WithEventStore gives the server an in-memory event store, as a server
// whose streams can be resumed has: its SSE events carry ids and a client
// may resume a broken stream with Last-Event-ID. The mcp-go server then
// also writes every notification queued while a request runs (such as
// the notifications/tools/list_changed of a tool that changes the list)
// on that request's stream before its result, which without an event
// store it may drop.
func WithEventStore() Option { return func(c *config) { c.eventStore = true } }

// Request is what the server recorded about one HTTP request.
type Request struct {
	HTTPMethod      string // POST, GET or DELETE
	RPCMethod       string // JSON-RPC method of a POST body ("" if none)
	Authorization   string // the Authorization header as received
	SessionID       string // the Mcp-Session-Id header
	ProtocolVersion string // the MCP-Protocol-Version header
	Status          int    // the status the server answered with (0 until the answer starts)
	// Header is every header of the request as received (Authorization
	// included: the server is a test double).
	Header http.Header
	// Body is the body of a POST as received.
	Body []byte
	// Traceparent and Tracestate are the W3C trace-context headers of the
	// request ("" when absent).
	Traceparent, Tracestate string
	// Meta is the params._meta object of a POST's JSON-RPC message,
	// exactly as received (nil when absent), and MetaTraceparent its
	// "traceparent" member ("" when absent or not a string): the trace
	// context the MCP conventions carry in the message itself.
	Meta            json.RawMessage
	MetaTraceparent string
}

// TraceID returns the trace id (32 hex digits) of a W3C traceparent value
// ("version-traceid-parentid-flags"), or "" when tp is not one.
func TraceID(tp string) string {
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[0]) != 2 || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return ""
	}
	return parts[1]
}

// Server is a real MCP server listening on 127.0.0.1.
type Server struct {
	// URL is the streamable HTTP endpoint, for example http://127.0.0.1:PORT/mcp.
	URL  string
	Kind Kind

	cfg     config
	tools   *tools
	entered chan string
	done    chan struct{}
	httpSrv *http.Server
	ln      net.Listener
	serveWG sync.WaitGroup

	terminate func(sessionID string) error
	elicitOn  func(ctx context.Context, sessionID string) (string, error)
	add       func(name string) // registers a tool with the running server
	names     []string          // the tools offered, in registration order

	mu         sync.Mutex
	requests   []Request
	issued     map[string]bool // session ids the server handed out
	terminated map[string]bool
	listening  map[string]chan struct{} // closed once a session's standalone GET stream is open
	closeOnce  sync.Once
}

// New starts a server of the given kind and stops it when the test ends.
func New(t testing.TB, kind Kind, opts ...Option) *Server {
	t.Helper()
	s, err := Start(kind, opts...)
	if err != nil {
		t.Fatalf("mcptest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a server of the given kind on 127.0.0.1. The caller must
// call Close.
func Start(kind Kind, opts ...Option) (*Server, error) {
	cfg := config{items: 25, maxBodyBytes: 1 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.errs) > 0 {
		return nil, errors.Join(cfg.errs...)
	}
	s := &Server{
		Kind:       kind,
		cfg:        cfg,
		entered:    make(chan string, 16),
		done:       make(chan struct{}),
		issued:     map[string]bool{},
		terminated: map[string]bool{},
		listening:  map[string]chan struct{}{},
	}
	s.tools = &tools{items: makeItems(cfg.items), entered: s.entered, done: s.done, custom: map[string]Tool{}}
	var order []string
	for _, t := range cfg.tools {
		if _, dup := s.tools.custom[t.Name]; !dup {
			order = append(order, t.Name)
		}
		s.tools.custom[t.Name] = t
	}
	s.names = s.tools.names(order)

	var mcpHandler http.Handler
	switch kind {
	case MCPGo:
		mcpHandler = s.mcpGoHandler()
	case GoSDK:
		mcpHandler = s.goSDKHandler()
	default:
		return nil, fmt.Errorf("unknown server kind %q", kind)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.middleware(mcpHandler))
	s.ln = ln
	s.URL = "http://" + ln.Addr().String() + "/mcp"
	s.httpSrv = &http.Server{Handler: mux}
	s.serveWG.Add(1)
	go func() {
		defer s.serveWG.Done()
		_ = s.httpSrv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server: blocked tools return, connections close.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		_ = s.httpSrv.Close()
		s.serveWG.Wait()
	})
}

// Items returns the data set ToolList pages over.
func (s *Server) Items() []Item { return append([]Item(nil), s.tools.items...) }

// Entered receives the tool name each time ToolBlock starts waiting.
func (s *Server) Entered() <-chan string { return s.entered }

// Requests returns a copy of every request recorded so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls returns the recorded requests whose JSON-RPC method is rpcMethod.
func (s *Server) Calls(rpcMethod string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.RPCMethod == rpcMethod {
			out = append(out, r)
		}
	}
	return out
}

// Terminate ends a session on the server side, as an expiry or a restart
// would: the next request carrying its id gets 404 (or 400 with
// WithUnknownSession400).
func (s *Server) Terminate(sessionID string) error {
	if sessionID == "" {
		return errors.New("mcptest: empty session id")
	}
	s.mu.Lock()
	known := s.issued[sessionID]
	s.mu.Unlock()
	if !known {
		return fmt.Errorf("mcptest: the server issued no session %q", sessionID)
	}
	if err := s.terminate(sessionID); err != nil {
		return err
	}
	s.mu.Lock()
	s.terminated[sessionID] = true
	s.mu.Unlock()
	return nil
}

// AddTools adds tools to the running server, or replaces those of the
// same name, as a server whose tool list changes does; both servers then
// send notifications/tools/list_changed to the sessions they can reach.
// Called from a Tool's Handle, mcp-go sends it on the call's event stream,
// before the result only with WithEventStore (without one, it may drop
// it); go-sdk sends it only on the standalone stream, in no order with
// calls.
func (s *Server) AddTools(tools ...Tool) error {
	for _, t := range tools {
		if err := checkTool(t); err != nil {
			return fmt.Errorf("mcptest: AddTools: %w", err)
		}
	}
	for _, t := range tools {
		s.tools.put(t)
		s.add(t.Name)
	}
	return nil
}

// Elicit sends elicitation/create to the client of a session outside any
// call, so that it travels on the session's standalone GET stream, and
// returns the action the client answered. It waits until the client has
// opened that stream (or ctx ends).
func (s *Server) Elicit(ctx context.Context, sessionID string) (string, error) {
	select {
	case <-s.listeningOn(sessionID):
	case <-ctx.Done():
		return "", fmt.Errorf("mcptest: no standalone stream for the session: %w", ctx.Err())
	}
	return s.elicitOn(ctx, sessionID)
}

func (s *Server) listeningOn(sessionID string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.listening[sessionID]
	if ch == nil {
		ch = make(chan struct{})
		s.listening[sessionID] = ch
	}
	return ch
}

var elicitSchema = map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}

func (s *Server) mcpGoHandler() http.Handler {
	var sessions sync.Map // id -> mcpgoserver.ClientSession, registered when its GET stream opens
	hooks := &mcpgoserver.Hooks{}
	hooks.AddOnRegisterSession(func(_ context.Context, cs mcpgoserver.ClientSession) { sessions.Store(cs.SessionID(), cs) })
	hooks.AddOnUnregisterSession(func(_ context.Context, cs mcpgoserver.ClientSession) { sessions.Delete(cs.SessionID()) })
	opts := []mcpgoserver.ServerOption{mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithHooks(hooks)}
	if s.cfg.pageSize > 0 {
		opts = append(opts, mcpgoserver.WithPaginationLimit(s.cfg.pageSize))
	}
	srv := mcpgoserver.NewMCPServer("mcptest-mcp-go", "1.0.0", opts...)
	s.tools.elicit = func(ctx context.Context) (string, error) {
		res, err := srv.RequestElicitation(ctx, mcpgo.ElicitationRequest{Params: mcpgo.ElicitationParams{
			Message: "Confirm the order?", RequestedSchema: elicitSchema,
		}})
		if err != nil {
			return "", err
		}
		return string(res.Action), nil
	}
	s.elicitOn = func(ctx context.Context, id string) (string, error) {
		cs, ok := sessions.Load(id)
		if !ok {
			return "", fmt.Errorf("mcptest: no mcp-go session %q with a standalone stream", id)
		}
		return s.tools.elicit(srv.WithContext(ctx, cs.(mcpgoserver.ClientSession)))
	}
	s.add = func(name string) {
		in, out := s.tools.schemas(name)
		tool := mcpgo.NewToolWithRawSchema(name, s.tools.description(name), in)
		tool.RawOutputSchema = out
		srv.AddTool(tool,
			func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				args := req.Params.RawArguments
				if args == nil && req.Params.Arguments != nil {
					var err error
					if args, err = json.Marshal(req.Params.Arguments); err != nil {
						return nil, err
					}
				}
				o, err := s.tools.call(ctx, name, args)
				if err != nil {
					return nil, err
				}
				res := &mcpgo.CallToolResult{
					Content: []mcpgo.Content{mcpgo.NewTextContent(o.Text)},
					IsError: o.IsError,
				}
				if o.Structured != nil {
					res.StructuredContent = o.Structured
				}
				return res, nil
			})
	}
	for _, name := range s.names {
		s.add(name)
	}
	mgr := &mcpgoserver.InsecureStatefulSessionIdManager{}
	s.terminate = func(id string) error {
		_, err := mgr.Terminate(id)
		return err
	}
	hopts := []mcpgoserver.StreamableHTTPOption{mcpgoserver.WithSessionIdManager(mgr),
		mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler))}
	if s.cfg.eventStore {
		hopts = append(hopts, mcpgoserver.WithEventStore(mcpgoserver.NewInMemoryEventStore()))
	}
	return mcpgoserver.NewStreamableHTTPServer(srv, hopts...)
}

// sdkSessionKey carries the go-sdk session of a call to the tools.
type sdkSessionKey struct{}

func (s *Server) goSDKHandler() http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mcptest-go-sdk", Version: "1.0.0"}, &sdk.ServerOptions{PageSize: s.cfg.pageSize})
	s.tools.elicit = func(ctx context.Context) (string, error) {
		ss, _ := ctx.Value(sdkSessionKey{}).(*sdk.ServerSession)
		if ss == nil {
			return "", errors.New("no session")
		}
		res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "Confirm the order?", RequestedSchema: elicitSchema})
		if err != nil {
			return "", err
		}
		return res.Action, nil
	}
	s.elicitOn = func(ctx context.Context, id string) (string, error) {
		for ss := range srv.Sessions() {
			if ss.ID() == id {
				return s.tools.elicit(context.WithValue(ctx, sdkSessionKey{}, ss))
			}
		}
		return "", fmt.Errorf("mcptest: no go-sdk session %q", id)
	}
	s.add = func(name string) {
		in, out := s.tools.schemas(name)
		tool := &sdk.Tool{Name: name, Description: s.tools.description(name), InputSchema: in}
		if out != nil {
			tool.OutputSchema = out
		}
		if _, custom := s.tools.get(name); name == ToolGoError && !custom {
			// The typed form, so go-sdk's own handling of a Go error applies.
			sdk.AddTool(srv, tool, func(ctx context.Context, _ *sdk.CallToolRequest, in map[string]any) (*sdk.CallToolResult, any, error) {
				_, err := s.tools.call(ctx, name, nil)
				return nil, nil, err
			})
			return
		}
		srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			ctx = context.WithValue(ctx, sdkSessionKey{}, req.Session)
			o, err := s.tools.call(ctx, name, req.Params.Arguments)
			if err != nil {
				// What go-sdk's typed handlers make of a Go error.
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}, IsError: true}, nil
			}
			res := &sdk.CallToolResult{
				Content: []sdk.Content{&sdk.TextContent{Text: o.Text}},
				IsError: o.IsError,
			}
			if o.Structured != nil {
				res.StructuredContent = o.Structured
			}
			return res, nil
		})
	}
	for _, name := range s.names {
		s.add(name)
	}
	s.terminate = func(id string) error {
		for ss := range srv.Sessions() {
			if ss.ID() == id {
				return ss.Close()
			}
		}
		return fmt.Errorf("mcptest: no go-sdk session %q", id)
	}
	var hopts *sdk.StreamableHTTPOptions
	if s.cfg.eventStore {
		hopts = &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)}
	}
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, hopts)
}

// middleware records each request, enforces the bearer and reproduces the
// TypeScript SDK's 400 for unknown sessions when asked to.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Request{
			HTTPMethod:      r.Method,
			Authorization:   r.Header.Get("Authorization"),
			SessionID:       r.Header.Get("Mcp-Session-Id"),
			ProtocolVersion: r.Header.Get("Mcp-Protocol-Version"),
			Header:          r.Header.Clone(),
			Traceparent:     r.Header.Get("Traceparent"),
			Tracestate:      r.Header.Get("Tracestate"),
		}
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := httpx.ReadAll(r.Body, s.cfg.maxBodyBytes)
			if errors.Is(err, httpx.ErrTooLarge) {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			if err != nil {
				http.Error(w, "read body", http.StatusBadRequest)
				return
			}
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Meta json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &msg)
			rec.RPCMethod = msg.Method
			if len(msg.Params.Meta) > 0 && string(msg.Params.Meta) != "null" {
				rec.Meta = msg.Params.Meta
				var meta struct {
					Traceparent string `json:"traceparent"`
				}
				_ = json.Unmarshal(msg.Params.Meta, &meta)
				rec.MetaTraceparent = meta.Traceparent
			}
			rec.Body = body
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		// Recorded in arrival order; the status is filled in when the
		// handler returns (0 while it is still running).
		s.mu.Lock()
		idx := len(s.requests)
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		sw := &issuing{Recorder: &httpstatus.Recorder{ResponseWriter: w}, s: s, idx: idx}
		defer func() {
			if sw.Status == 0 { // nothing written: net/http sends 200
				sw.note(http.StatusOK)
			}
		}()

		if s.cfg.bearer != "" && rec.Authorization != "Bearer "+s.cfg.bearer ||
			s.cfg.bearerOK != nil && !s.cfg.bearerOK(BearerOf(rec.Authorization)) {
			sw.Header().Set("WWW-Authenticate", `Bearer realm="mcptest"`)
			http.Error(sw, "unauthorized", http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		gone := s.terminated[rec.SessionID]
		s.mu.Unlock()
		if gone && s.cfg.session400 {
			sw.Header().Set("Content-Type", "application/json")
			sw.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(sw, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// BearerOf returns the token of an Authorization header ("" if it is not a
// bearer credential).
func BearerOf(authorization string) string {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		return ""
	}
	return tok
}

// issuing records, as the response starts and so before the client can
// read it, its status in the request log and the session id it hands out.
type issuing struct {
	*httpstatus.Recorder
	s    *Server
	idx  int
	done bool
}

func (w *issuing) note(status int) {
	if w.done {
		return
	}
	w.done = true
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.requests[w.idx].Status = status
	if id := w.Header().Get("Mcp-Session-Id"); id != "" {
		w.s.issued[id] = true
	}
	if r := w.s.requests[w.idx]; r.HTTPMethod == http.MethodGet && status == http.StatusOK && r.Header.Get("Last-Event-ID") == "" && r.SessionID != "" {
		ch := w.s.listening[r.SessionID]
		if ch == nil {
			ch = make(chan struct{})
			w.s.listening[r.SessionID] = ch
		}
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

func (w *issuing) WriteHeader(code int) {
	w.note(code)
	w.Recorder.WriteHeader(code)
}

func (w *issuing) Write(p []byte) (int, error) {
	w.note(http.StatusOK)
	return w.Recorder.Write(p)
}
