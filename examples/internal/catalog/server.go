package catalog

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool names and fixed texts of the catalog server.
const (
	ToolListProducts = "list-products"
	ToolGetProduct   = "get-product"
	// NotFoundText is the isError text of get-product for an unknown code,
	// the way the real catalog reports it.
	NotFoundText = `HTTP call failed with status 404: {"detail":"Not found."}`

	// DefaultPageSize is the page size of list-products without a limit.
	DefaultPageSize = 50
	// DefaultMaxPageSize is the largest page list-products serves; a larger
	// limit is served as this many items (nextCursor still tells the rest).
	DefaultMaxPageSize = 200
	// MaxRequestBytes bounds the body of an HTTP request to the server.
	MaxRequestBytes = 1 << 20
	// EndpointPath is where Start serves MCP.
	EndpointPath = "/mcp"
)

// Option configures New.
type Option func(*config)

type config struct {
	products    []Product
	productsSet bool
	check       func(ctx context.Context, token string) error
	logger      *slog.Logger
	maxPage     int
}

// WithProducts serves products instead of the embedded catalog (the slice is
// copied). Codes must be non-empty and unique.
func WithProducts(products []Product) Option {
	return func(c *config) {
		c.products = append([]Product(nil), products...)
		c.productsSet = true
	}
}

// WithBearerCheck requires "Authorization: Bearer <token>" on every HTTP
// request. A request without one is answered 401 without calling check;
// otherwise check decides, and an error is answered 401. The check sees
// every request (initialize, tool calls, DELETE), so a test or an example
// can record the tokens it was sent. Neither the token nor check's error is
// logged or echoed.
func WithBearerCheck(check func(ctx context.Context, token string) error) Option {
	return func(c *config) { c.check = check }
}

// WithLogger sets the logger of the server and of mcp-go's transport
// (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithMaxPageSize sets the largest page list-products serves (default 200).
// Values below 1 are ignored.
func WithMaxPageSize(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.maxPage = n
		}
	}
}

// Server is the embedded MCP catalog: an http.Handler speaking MCP over
// streamable HTTP with a stateful session manager (an unknown or
// terminated session id gets a real 404), built on mark3labs/mcp-go.
type Server struct {
	products []Product
	byCode   map[string]int
	cfg      config
	mcp      *server.MCPServer
	http     *server.StreamableHTTPServer

	listCalls, getCalls atomic.Int64
	requests, rejected  atomic.Int64
}

// New builds a Server over the embedded catalog (or WithProducts).
func New(opts ...Option) (*Server, error) {
	cfg := config{logger: slog.New(slog.DiscardHandler), maxPage: DefaultMaxPageSize}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	products := cfg.products
	if !cfg.productsSet {
		var err error
		if products, err = Products(); err != nil {
			return nil, err
		}
	}
	s := &Server{products: products, byCode: make(map[string]int, len(products)), cfg: cfg}
	for i, p := range products {
		if p.Code == "" {
			return nil, fmt.Errorf("catalog: product %d has no code", i)
		}
		if _, dup := s.byCode[p.Code]; dup {
			return nil, fmt.Errorf("catalog: product code %s repeated", p.Code)
		}
		s.byCode[p.Code] = i
	}

	s.mcp = server.NewMCPServer("candor-catalog", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithLogger(cfg.logger),
		server.WithRecovery(),
	)
	readOnly := []mcp.ToolOption{
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}
	s.mcp.AddTool(mcp.NewTool(ToolListProducts, append([]mcp.ToolOption{
		mcp.WithDescription("Lists catalog products one page at a time. Returns {items, nextCursor, total}; nextCursor is null on the last page."),
		mcp.WithInteger("limit", mcp.Description(fmt.Sprintf("Page size, 1 to %d (default %d).", cfg.maxPage, min(DefaultPageSize, cfg.maxPage))), mcp.Min(1)),
		mcp.WithString("cursor", mcp.Description("nextCursor of the previous page; omit for the first page.")),
	}, readOnly...)...), s.listProducts)
	s.mcp.AddTool(mcp.NewTool(ToolGetProduct, append([]mcp.ToolOption{
		mcp.WithDescription("Returns one product by its code."),
		mcp.WithString("productCode", mcp.Required(), mcp.Description("Product code, for instance S10_1949.")),
	}, readOnly...)...), s.getProduct)

	s.http = server.NewStreamableHTTPServer(s.mcp,
		server.WithSessionIdManager(&server.InsecureStatefulSessionIdManager{}),
		server.WithStreamableHTTPLogger(cfg.logger),
	)
	return s, nil
}

// ServeHTTP serves MCP on any path it is mounted at. Request bodies are
// bounded by MaxRequestBytes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if s.cfg.check != nil {
		tok, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			s.reject(w, r, `Bearer realm="catalog"`, "missing bearer token")
			return
		}
		if err := s.cfg.check(r.Context(), tok); err != nil {
			s.reject(w, r, `Bearer realm="catalog", error="invalid_token"`, "bearer token refused")
			return
		}
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	}
	s.http.ServeHTTP(w, r)
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, challenge, why string) {
	s.rejected.Add(1)
	s.cfg.logger.WarnContext(r.Context(), "catalog: request refused", slog.String("reason", why), slog.String("method", r.Method))
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
}

func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// Calls returns how many times tool's handler ran (0 for an unknown name).
func (s *Server) Calls(tool string) int64 {
	switch tool {
	case ToolListProducts:
		return s.listCalls.Load()
	case ToolGetProduct:
		return s.getCalls.Load()
	}
	return 0
}

// ToolCalls returns the number of tool calls of every tool together.
func (s *Server) ToolCalls() int64 { return s.listCalls.Load() + s.getCalls.Load() }

// Requests returns how many HTTP requests reached the server, refused ones
// included: 0 means the server was never contacted.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Rejected returns how many HTTP requests were refused with 401.
func (s *Server) Rejected() int64 { return s.rejected.Load() }

// Len returns the number of products served.
func (s *Server) Len() int { return len(s.products) }

// Start serves the catalog on a fresh 127.0.0.1 port at EndpointPath and
// returns its URL (http://127.0.0.1:PORT/mcp). stop closes the MCP sessions
// and the listener and waits for the serving goroutine; it is idempotent and
// also runs when ctx ends. Start a Server once.
func (s *Server) Start(ctx context.Context) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("catalog: listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, s)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.logger.Error("catalog: serve", slog.Any("error", err))
		}
	}()
	stopOnce := sync.OnceFunc(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.http.CloseSessions(sctx) // ends long-lived GET streams
		if err := hs.Shutdown(sctx); err != nil {
			_ = hs.Close() // a stream outlived the grace period
		}
		<-served
	})
	unregister := context.AfterFunc(ctx, stopOnce)
	stop = func() {
		unregister() // a stop by hand releases ctx's hold on the server
		stopOnce()
	}
	return "http://" + ln.Addr().String() + EndpointPath, stop, nil
}

// listPage is the list-products result, per the paging convention:
// nextCursor is always present, null on the last page.
type listPage struct {
	Items      []Product `json:"items"`
	NextCursor *string   `json:"nextCursor"`
	Total      int       `json:"total"`
}

const cursorPrefix = "offset:"

func encodeCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(off)))
}

func (s *Server) decodeCursor(c string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(raw), cursorPrefix) {
		return 0, errors.New("malformed cursor")
	}
	off, err := strconv.Atoi(strings.TrimPrefix(string(raw), cursorPrefix))
	if err != nil || off <= 0 || off >= len(s.products) {
		return 0, errors.New("cursor out of range")
	}
	return off, nil
}

func (s *Server) listProducts(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.listCalls.Add(1)
	args := req.GetArguments()
	limit := min(DefaultPageSize, s.cfg.maxPage)
	if v, ok := args["limit"]; ok && v != nil {
		f, isNum := v.(float64)
		if !isNum || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
			return mcp.NewToolResultError(fmt.Sprintf("invalid limit %v: want an integer of at least 1", v)), nil
		}
		limit = min(int(f), s.cfg.maxPage)
	}
	off := 0
	if v, ok := args["cursor"]; ok && v != nil {
		c, isStr := v.(string)
		if !isStr {
			return mcp.NewToolResultError("invalid cursor: want a string"), nil
		}
		if c != "" {
			var err error
			if off, err = s.decodeCursor(c); err != nil {
				return mcp.NewToolResultError("invalid cursor: " + err.Error()), nil
			}
		}
	}
	end := min(off+limit, len(s.products))
	page := listPage{Items: append([]Product{}, s.products[off:end]...), Total: len(s.products)}
	if end < len(s.products) {
		next := encodeCursor(end)
		page.NextCursor = &next
	}
	return structured(page)
}

func (s *Server) getProduct(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.getCalls.Add(1)
	code, err := req.RequireString("productCode")
	if err != nil {
		return mcp.NewToolResultError("missing or invalid argument productCode: want a string"), nil
	}
	i, ok := s.byCode[code]
	if !ok {
		return mcp.NewToolResultError(NotFoundText), nil
	}
	return structured(s.products[i])
}

// structured answers v as structuredContent and as the same JSON in a text
// content, for clients that read only text.
func structured(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("catalog: encoding result: %w", err)
	}
	return mcp.NewToolResultStructured(json.RawMessage(b), string(b)), nil
}
