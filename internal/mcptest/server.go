package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/candorkit/candor/internal/httpstatus"
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
	items        int
	session400   bool
	maxBodyBytes int64
}

// WithBearer makes the server require "Authorization: Bearer <token>" on
// every request (POST, GET and DELETE); other requests get 401 with a
// WWW-Authenticate header and reach no MCP code.
func WithBearer(token string) Option { return func(c *config) { c.bearer = token } }

// WithItems sets the size of the data set ToolList pages over (default 25).
func WithItems(n int) Option { return func(c *config) { c.items = n } }

// WithUnknownSession400 makes a request on a session ended by
// Server.Terminate answer 400 with the JSON-RPC error body
// "Bad Request: No valid session ID provided", as TypeScript SDK servers do,
// instead of the library's own 404.
func WithUnknownSession400() Option { return func(c *config) { c.session400 = true } }

// Request is what the server recorded about one HTTP request.
type Request struct {
	HTTPMethod      string // POST, GET or DELETE
	RPCMethod       string // JSON-RPC method of a POST body ("" if none)
	Authorization   string // the Authorization header as received
	SessionID       string // the Mcp-Session-Id header
	ProtocolVersion string // the MCP-Protocol-Version header
	Status          int    // the status the server answered with (0 while in flight)
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

	mu         sync.Mutex
	requests   []Request
	terminated map[string]bool
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
	s := &Server{
		Kind:       kind,
		cfg:        cfg,
		entered:    make(chan string, 16),
		done:       make(chan struct{}),
		terminated: map[string]bool{},
	}
	s.tools = &tools{items: makeItems(cfg.items), entered: s.entered, done: s.done}

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
	if err := s.terminate(sessionID); err != nil {
		return err
	}
	s.mu.Lock()
	s.terminated[sessionID] = true
	s.mu.Unlock()
	return nil
}

func (s *Server) mcpGoHandler() http.Handler {
	srv := mcpgoserver.NewMCPServer("mcptest-mcp-go", "1.0.0", mcpgoserver.WithToolCapabilities(false))
	for _, name := range toolNames() {
		srv.AddTool(mcpgo.NewTool(name, mcpgo.WithDescription("mcptest tool "+name)),
			func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				args := req.Params.RawArguments
				if args == nil {
					var err error
					if args, err = json.Marshal(req.Params.Arguments); err != nil {
						return nil, err
					}
				}
				o := s.tools.call(ctx, name, args)
				if o.goErr != nil {
					return nil, o.goErr
				}
				res := &mcpgo.CallToolResult{
					Content: []mcpgo.Content{mcpgo.NewTextContent(o.text)},
					IsError: o.isError,
				}
				if o.structured != nil {
					res.StructuredContent = o.structured
				}
				return res, nil
			})
	}
	mgr := &mcpgoserver.InsecureStatefulSessionIdManager{}
	s.terminate = func(id string) error {
		_, err := mgr.Terminate(id)
		return err
	}
	return mcpgoserver.NewStreamableHTTPServer(srv, mcpgoserver.WithSessionIdManager(mgr))
}

func (s *Server) goSDKHandler() http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mcptest-go-sdk", Version: "1.0.0"}, nil)
	schema := json.RawMessage(`{"type":"object"}`)
	for _, name := range toolNames() {
		tool := &sdk.Tool{Name: name, Description: "mcptest tool " + name, InputSchema: schema}
		if name == ToolGoError {
			// The typed form, so go-sdk's own handling of a Go error applies.
			sdk.AddTool(srv, tool, func(ctx context.Context, _ *sdk.CallToolRequest, in map[string]any) (*sdk.CallToolResult, any, error) {
				return nil, nil, s.tools.call(ctx, name, nil).goErr
			})
			continue
		}
		srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			o := s.tools.call(ctx, name, req.Params.Arguments)
			if o.goErr != nil {
				return nil, o.goErr
			}
			res := &sdk.CallToolResult{
				Content: []sdk.Content{&sdk.TextContent{Text: o.text}},
				IsError: o.isError,
			}
			if o.structured != nil {
				res.StructuredContent = o.structured
			}
			return res, nil
		})
	}
	s.terminate = func(id string) error {
		for ss := range srv.Sessions() {
			if ss.ID() == id {
				return ss.Close()
			}
		}
		return fmt.Errorf("mcptest: no go-sdk session %q", id)
	}
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
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
		}
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.maxBodyBytes))
			if err != nil {
				http.Error(w, "read body", http.StatusBadRequest)
				return
			}
			var msg struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &msg)
			rec.RPCMethod = msg.Method
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		// Recorded in arrival order; the status is filled in when the
		// handler returns (0 while it is still running).
		s.mu.Lock()
		idx := len(s.requests)
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		sw := &httpstatus.Recorder{ResponseWriter: w}
		defer func() {
			status := sw.Status
			if status == 0 {
				status = http.StatusOK
			}
			s.mu.Lock()
			s.requests[idx].Status = status
			s.mu.Unlock()
		}()

		if s.cfg.bearer != "" && rec.Authorization != "Bearer "+s.cfg.bearer {
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
