package check_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/examples/availability/internal/check"
	"github.com/candorkit/candor/examples/internal/catalog"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/reply"
	"github.com/candorkit/candor/tokenexchange"
)

const (
	callerToken    = "caller-token-5d1e"
	exchangedToken = "exchanged-token-9a7c"
)

// exchanger is a stand-in for the token exchange: it counts calls and
// returns a fixed token or error. The real exchange is exercised end to end
// in package main's tests against the embedded OpenID provider.
type exchanger struct {
	calls atomic.Int64
	err   error
}

func (x *exchanger) Token(_ context.Context, subject string) (*tokenexchange.Token, error) {
	x.calls.Add(1)
	if subject != callerToken {
		return nil, errors.New("unexpected subject token")
	}
	if x.err != nil {
		return nil, x.err
	}
	return &tokenexchange.Token{Token: &oauth2.Token{AccessToken: exchangedToken, TokenType: "Bearer"}}, nil
}

// toolServer is a real mcp-go server whose get-product answers with handle,
// recording the Authorization header of every HTTP request.
type toolServer struct {
	URL   string
	calls atomic.Int64
	mu    sync.Mutex
	auth  []string
}

func (s *toolServer) authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func startTool(t *testing.T, handle func(code string) (*mcp.CallToolResult, error)) *toolServer {
	t.Helper()
	ts := &toolServer{}
	ms := server.NewMCPServer("test-catalog", "1", server.WithToolCapabilities(false))
	ms.AddTool(mcp.NewTool(check.ToolGetProduct, mcp.WithString("productCode", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ts.calls.Add(1)
			code, err := req.RequireString("productCode")
			if err != nil {
				return mcp.NewToolResultError("missing productCode"), nil
			}
			return handle(code)
		})
	h := server.NewStreamableHTTPServer(ms, server.WithSessionIdManager(&server.InsecureStatefulSessionIdManager{}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.auth = append(ts.auth, r.Header.Get("Authorization"))
		ts.mu.Unlock()
		if r.Header.Get("Authorization") == "Bearer refuse-me" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ts.URL = srv.URL + "/mcp"
	return ts
}

func product(code, name string, stock any) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultStructured(map[string]any{"productCode": code, "productName": name, "quantityInStock": stock}, "product"), nil
}

func newChecker(t *testing.T, x check.Exchanger, url string) *check.Checker {
	t.Helper()
	c, err := check.New(check.Config{Exchanger: x, MCPURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ask(c *check.Checker, text string) a2a.Outcome {
	return c.Ask(context.Background(), a2a.Question{Text: text, Token: callerToken, TaskID: "t", ContextID: "c"})
}

func TestDecidedOutcomes(t *testing.T) {
	stock := map[string]int{"S10_1949": 7305, "S24_2000": 15, "S18_0050": 50, "S18_0051": 51, "S18_0000": 0}
	names := map[string]string{"S10_1949": "1952 Alpine Renault 1300", "S24_2000": "1960 BSA Gold Star DBD34",
		"S18_0050": "Fifty", "S18_0051": "Fifty-one", "S18_0000": "Nothing left"}
	tool := startTool(t, func(code string) (*mcp.CallToolResult, error) {
		n, ok := stock[code]
		if !ok {
			return mcp.NewToolResultError(catalog.NotFoundText), nil
		}
		return product(code, names[code], n)
	})
	x := &exchanger{}
	c := newChecker(t, x, tool.URL)
	cases := []struct {
		question string
		state    a2a.State
		text     string
		escalate bool
		calls    int64 // get-product calls this question makes
	}{
		{"Peut-on promettre S10_1949 ?", a2a.Completed,
			"Yes — 1952 Alpine Renault 1300 (S10_1949) can be promised: 7305 in stock, above the reorder threshold of 50.", false, 1},
		{"Peut-on promettre S24_2000 ?", a2a.Failed,
			"Not without a check — 1960 BSA Gold Star DBD34 (S24_2000) has 15 in stock, below the reorder threshold of 50: a person must confirm before it is promised.", true, 1},
		{"S18_0050?", a2a.Failed,
			"Not without a check — Fifty (S18_0050) has 50 in stock, at the reorder threshold of 50: a person must confirm before it is promised.", true, 1},
		{"S18_0051?", a2a.Completed, "Yes — Fifty-one (S18_0051) can be promised: 51 in stock, above the reorder threshold of 50.", false, 1},
		{"S18_0000?", a2a.Failed,
			"Not without a check — Nothing left (S18_0000) has 0 in stock, below the reorder threshold of 50: a person must confirm before it is promised.", true, 1},
		{"Peut-on promettre S99_NOPE ?", a2a.Failed, "There is no product S99_NOPE in the catalog.", true, 1},
		{"Peut-on promettre la Vespa ?", a2a.Failed,
			"No product reference in the question: name the catalog code (for instance S10_1949); the agent does not guess a product from its name.", true, 0},
		{"S10_1949 ou S24_2000 ? S10_1949 !", a2a.Failed,
			"The question names 2 products (S10_1949, S24_2000): ask about one product at a time.", true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.question, func(t *testing.T) {
			before := tool.calls.Load()
			out := ask(c, tc.question)
			if out.State != tc.state || out.Text != tc.text {
				t.Fatalf("outcome = %s %q, want %s %q", out.State, out.Text, tc.state, tc.text)
			}
			if got := errors.Is(out.Err, a2a.ErrEscalated); got != tc.escalate {
				t.Fatalf("escalated = %t (err %v), want %t", got, out.Err, tc.escalate)
			}
			if tc.state == a2a.Completed && out.Err != nil {
				t.Fatalf("a completed outcome carries %v", out.Err)
			}
			if got := tool.calls.Load() - before; got != tc.calls {
				t.Fatalf("get-product calls = %d, want %d", got, tc.calls)
			}
		})
	}
	for _, a := range tool.authorizations() {
		if a != "Bearer "+exchangedToken {
			t.Fatalf("the catalog received Authorization %q, want the exchanged token", a)
		}
	}
	if x.calls.Load() != 6 {
		t.Fatalf("exchanges = %d, want one per question that named one product (6)", x.calls.Load())
	}
}

// The mapping is the facade's: the same reply through a2a.MapReply gives the
// same outcome, field for field.
func TestSameMappingAsFacade(t *testing.T) {
	tool := startTool(t, func(code string) (*mcp.CallToolResult, error) { return product(code, "Bike", 15) })
	out := ask(newChecker(t, &exchanger{}, tool.URL), "S24_2000")
	want := a2a.MapReply(reply.Reply{Answer: out.Text, Escalate: true}, nil)
	if out.State != want.State || out.Text != want.Text || errors.Is(out.Err, a2a.ErrEscalated) != errors.Is(want.Err, a2a.ErrEscalated) {
		t.Fatalf("outcome %+v differs from the facade's %+v", out, want)
	}
}

func TestNoIdentity(t *testing.T) {
	tool := startTool(t, func(code string) (*mcp.CallToolResult, error) { return product(code, "x", 100) })
	x := &exchanger{}
	c := newChecker(t, x, tool.URL)
	out := c.Ask(context.Background(), a2a.Question{Text: "Peut-on promettre S10_1949 ?"})
	if out.State != a2a.Failed || !strings.HasPrefix(out.Text, "no identity") {
		t.Fatalf("outcome = %s %q, want failed \"no identity\"", out.State, out.Text)
	}
	if !errors.Is(out.Err, check.ErrNoIdentity) || !errors.Is(out.Err, a2a.ErrNoToken) {
		t.Fatalf("cause = %v, want ErrNoIdentity and a2a.ErrNoToken", out.Err)
	}
	if x.calls.Load() != 0 || len(tool.authorizations()) != 0 {
		t.Fatalf("exchanges %d, catalog requests %d: want none", x.calls.Load(), len(tool.authorizations()))
	}
}

func oauthErr(status int, code string) error {
	return &tokenexchange.StatusError{Op: "exchange", StatusCode: status, ErrorCode: code}
}

func TestExchangeFailures(t *testing.T) {
	tool := startTool(t, func(code string) (*mcp.CallToolResult, error) { return product(code, "x", 100) })
	cases := []struct {
		name     string
		err      error
		sentinel error
		prefix   string
	}{
		{"subject token refused", oauthErr(400, "invalid_request"), check.ErrNoIdentity, "no identity: the identity provider refused the caller's token (invalid_request)"},
		{"agent not in audience", oauthErr(403, "access_denied"), check.ErrNoIdentity, "no identity: the identity provider refused the caller's token (access_denied)"},
		{"agent credentials", oauthErr(401, "invalid_client"), check.ErrExchange, "the identity provider refused the agent's own credentials (invalid_client)"},
		{"server error", oauthErr(503, ""), check.ErrExchange, "the identity provider refused the token exchange (HTTP 503 )"},
		{"bad answer", &tokenexchange.ResponseError{Op: "exchange", StatusCode: 200, Reason: "missing access_token"}, check.ErrExchange, "the identity provider's exchange answer is unusable"},
		{"unreachable", errors.New("dial tcp: connection refused"), check.ErrExchange, "the identity provider could not be reached"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := ask(newChecker(t, &exchanger{err: tc.err}, tool.URL), "S10_1949")
			if out.State != a2a.Failed || !strings.HasPrefix(out.Text, tc.prefix) {
				t.Fatalf("outcome = %s %q, want failed %q", out.State, out.Text, tc.prefix)
			}
			if !errors.Is(out.Err, tc.sentinel) || !errors.Is(out.Err, tc.err) {
				t.Fatalf("cause = %v, want %v wrapping the exchange error", out.Err, tc.sentinel)
			}
		})
	}
	if n := len(tool.authorizations()); n != 0 {
		t.Fatalf("the catalog was contacted %d times after failed exchanges", n)
	}
}

func TestCatalogFailuresNeverComplete(t *testing.T) {
	tool := startTool(t, func(code string) (*mcp.CallToolResult, error) {
		switch code {
		case "S1_TOOL":
			return mcp.NewToolResultError("HTTP call failed with status 500: upstream down"), nil
		case "S1_PROTO":
			return nil, errors.New("database on fire")
		case "S1_TEXT":
			return mcp.NewToolResultText("7305 in stock"), nil
		case "S1_OTHER":
			return product("S10_1949", "1952 Alpine Renault 1300", 7305)
		case "S1_NOSTOCK":
			return mcp.NewToolResultStructured(map[string]any{"productCode": code, "productName": "x"}, "x"), nil
		case "S1_STRSTOCK":
			return product(code, "x", "7305")
		case "S1_FRACTION":
			return product(code, "x", 7305.5)
		case "S1_NEGATIVE":
			return product(code, "x", -3)
		case "S1_NULLSTOCK":
			return product(code, "x", nil)
		case "S1_NONAME":
			return product(code, "", 100)
		}
		return mcp.NewToolResultError("unexpected " + code), nil
	})
	c := newChecker(t, &exchanger{}, tool.URL)
	cases := []struct {
		code   string
		text   string
		target any
	}{
		{"S1_TOOL", "the stock of S1_TOOL could not be read: get-product reported an error: HTTP call failed with status 500: upstream down", new(*mcpclient.ToolError)},
		{"S1_PROTO", "the stock of S1_PROTO could not be read: get-product answered JSON-RPC error", new(*mcpclient.ProtocolError)},
		{"S1_TEXT", "the stock of S1_TEXT could not be read: get-product's payload is not one JSON value", new(*mcpclient.DecodeError)},
		{"S1_OTHER", `the catalog's answer for S1_OTHER is unusable (it describes product "S10_1949")`, new(*check.ProductError)},
		{"S1_NOSTOCK", "the catalog's answer for S1_NOSTOCK is unusable (quantityInStock is missing)", new(*check.ProductError)},
		{"S1_STRSTOCK", "the catalog's answer for S1_STRSTOCK is unusable (quantityInStock is not an integer)", new(*check.ProductError)},
		{"S1_FRACTION", "the catalog's answer for S1_FRACTION is unusable (quantityInStock is not an integer)", new(*check.ProductError)},
		{"S1_NEGATIVE", "the catalog's answer for S1_NEGATIVE is unusable (quantityInStock is negative)", new(*check.ProductError)},
		{"S1_NULLSTOCK", "the catalog's answer for S1_NULLSTOCK is unusable (quantityInStock is missing)", new(*check.ProductError)},
		{"S1_NONAME", "the catalog's answer for S1_NONAME is unusable (productName is missing)", new(*check.ProductError)},
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			out := ask(c, "Peut-on promettre "+tc.code+" ?")
			if out.State != a2a.Failed || !strings.HasPrefix(out.Text, tc.text) {
				t.Fatalf("outcome = %s %q, want failed %q", out.State, out.Text, tc.text)
			}
			if errors.Is(out.Err, a2a.ErrEscalated) {
				t.Fatal("a technical failure is reported as a decided escalation")
			}
			if !errors.As(out.Err, tc.target) {
				t.Fatalf("cause %v does not hold %T", out.Err, tc.target)
			}
		})
	}
	var pe *check.ProductError
	out := ask(c, "S1_OTHER")
	if !errors.As(out.Err, &pe) || !strings.Contains(string(pe.Raw), `"productCode":"S10_1949"`) {
		t.Fatalf("the product error does not keep the raw payload: %v", out.Err)
	}
}

func TestCatalogUnreachableOrRefusing(t *testing.T) {
	tool := startTool(t, func(code string) (*mcp.CallToolResult, error) { return product(code, "x", 100) })

	refused := ask(newChecker(t, refusing{}, tool.URL), "S10_1949")
	if refused.State != a2a.Failed || refused.Text != "the stock of S10_1949 could not be read: the catalog refused the agent's token (HTTP 401)" ||
		!errors.Is(refused.Err, mcpclient.ErrUnauthorized) || !errors.Is(refused.Err, check.ErrCatalog) {
		t.Fatalf("401: %s %q %v", refused.State, refused.Text, refused.Err)
	}

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/mcp"
	dead.Close()
	out := ask(newChecker(t, &exchanger{}, deadURL), "S10_1949")
	if out.State != a2a.Failed || out.Text != "the stock of S10_1949 could not be read: the catalog could not be reached" || !errors.Is(out.Err, check.ErrCatalog) {
		t.Fatalf("unreachable: %s %q %v", out.State, out.Text, out.Err)
	}
}

// refusing hands out a token the test catalog answers 401 to.
type refusing struct{}

func (refusing) Token(context.Context, string) (*tokenexchange.Token, error) {
	return &tokenexchange.Token{Token: &oauth2.Token{AccessToken: "refuse-me", TokenType: "Bearer"}}, nil
}

func TestNotFoundRuleMatchesTheCatalog(t *testing.T) {
	// The embedded catalog's own text is recognised; another 404 wording is not
	// taken for "no such product" (it fails as a catalog error instead).
	tool := startTool(t, func(code string) (*mcp.CallToolResult, error) {
		if code == "S1_A" {
			return mcp.NewToolResultError(catalog.NotFoundText), nil
		}
		return mcp.NewToolResultError("status 404 somewhere"), nil
	})
	c := newChecker(t, &exchanger{}, tool.URL)
	if out := ask(c, "S1_A"); out.Text != "There is no product S1_A in the catalog." {
		t.Fatalf("catalog 404: %q", out.Text)
	}
	if out := ask(c, "S1_B"); out.State != a2a.Failed || errors.Is(out.Err, a2a.ErrEscalated) || !errors.Is(out.Err, check.ErrCatalog) {
		t.Fatalf("other 404 wording: %s %q %v", out.State, out.Text, out.Err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []check.Config{
		{MCPURL: "http://127.0.0.1/mcp"},
		{Exchanger: &exchanger{}},
		{Exchanger: &exchanger{}, MCPURL: "http://127.0.0.1/mcp", Threshold: -1},
	} {
		if _, err := check.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	c, err := check.New(check.Config{Exchanger: &exchanger{}, MCPURL: "http://127.0.0.1/mcp"})
	if err != nil || c.Threshold() != check.DefaultThreshold {
		t.Fatalf("default threshold: %v %v", c, err)
	}
}

func TestProductCodes(t *testing.T) {
	cases := map[string][]string{
		"Peut-on promettre S10_1949 ?":   {"S10_1949"},
		"S99_NOPE":                       {"S99_NOPE"},
		"(S700_2047-A)":                  {"S700_2047"},
		"S10_1949, S10_1949 et S24_2000": {"S10_1949", "S24_2000"},
		"la Vespa":                       nil,
		"s10_1949":                       nil, // codes are upper-case S
		"XS10_1949":                      nil, // inside a word
		"S10_":                           nil,
		"S_1949":                         nil,
		"S10_1949é":                      {"S10_1949"},
	}
	for in, want := range cases {
		got := check.ProductCodes(in)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("ProductCodes(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAgentCardStatesTheBasis(t *testing.T) {
	a := check.Agent("http://127.0.0.1:1/a2a", 0)
	d := a.Skill.Description
	for _, want := range []string{"stock on hand", "open orders are not deducted", "more than 50 units"} {
		if !strings.Contains(d, want) {
			t.Errorf("skill description lacks %q: %s", want, d)
		}
	}
	if _, err := a2a.NewServer(a, a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome { return a2a.Answer("x") }), a2a.WithUnverifiedTokens()); err != nil {
		t.Fatalf("the agent is not servable: %v", err)
	}
}
