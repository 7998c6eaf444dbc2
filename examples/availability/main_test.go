package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/examples/availability/internal/check"
	"github.com/candorkit/candor/examples/internal/clitest"
	"github.com/candorkit/candor/examples/internal/demo"
	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/tokenexchange"
)

var discard = slog.New(slog.DiscardHandler)

func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// startStack starts the embedded demo: catalog, provider and agent.
func startStack(t *testing.T) *stack {
	t.Helper()
	st, err := start(t.Context(), &options{listen: "127.0.0.1:0"}, discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// outcome is what a client saw, comparable across wire versions.
type outcome struct {
	State, Failure, Text string
}

// send03 posts a raw A2A 0.3 message/send (no A2A-Version header) and
// returns the task's outcome, or the JSON-RPC error code.
func send03(t *testing.T, endpoint, token, text string) (outcome, int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": "q-1", "method": "message/send",
		"params": map[string]any{"message": map[string]any{
			"kind": "message", "messageId": "m-1", "role": "user",
			"parts": []any{map[string]any{"kind": "text", "text": text}},
		}},
	})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		ID     string `json:"id"`
		Result *struct {
			Kind   string `json:"kind"`
			Status struct {
				State   string `json:"state"`
				Message struct {
					Parts []struct {
						Kind string `json:"kind"`
						Text string `json:"text"`
					} `json:"parts"`
					Metadata map[string]any `json:"metadata"`
				} `json:"message"`
			} `json:"status"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.ID != "q-1" {
		t.Fatalf("not a JSON-RPC answer to q-1: %v: %s", err, raw)
	}
	if env.Error != nil {
		return outcome{}, env.Error.Code
	}
	r := env.Result
	if r == nil || r.Kind != "task" || len(r.Status.Message.Parts) == 0 || r.Status.Message.Parts[0].Kind != "text" {
		t.Fatalf("0.3 result is not a task with a text status message: %s", raw)
	}
	o := outcome{State: r.Status.State, Text: r.Status.Message.Parts[0].Text}
	if f, ok := r.Status.Message.Metadata["failure"].(string); ok {
		o.Failure = f
	}
	return o, 0
}

const (
	yesText      = "Yes — 1952 Alpine Renault 1300 (S10_1949) can be promised: 7305 in stock, above the reorder threshold of 50."
	vespaText    = "No product reference in the question: name the catalog code (for instance S10_1949); the agent does not guess a product from its name."
	nopeText     = "There is no product S99_NOPE in the catalog."
	belowText    = "Not without a check — 1960 BSA Gold Star DBD34 (S24_2000) has 15 in stock, below the reorder threshold of 50: a person must confirm before it is promised."
	thresholdQ   = "Peut-on promettre S24_2000 ?"
	noIdentityRe = "no identity: "
)

func expected() map[string]outcome {
	return map[string]outcome{
		"Peut-on promettre S10_1949 ?": {"completed", "", yesText},
		"Peut-on promettre la Vespa ?": {"failed", "escalated", vespaText},
		"Peut-on promettre S99_NOPE ?": {"failed", "escalated", nopeText},
		thresholdQ:                     {"failed", "escalated", belowText},
	}
}

// TestEndToEnd asks the three questions and the threshold case with an
// a2a-go 1.0 client and with raw 0.3 JSON-RPC, and checks what the catalog
// was sent.
func TestEndToEnd(t *testing.T) {
	st := startStack(t)
	ctx := t.Context()
	questions := append(demoQuestions(), thresholdQ)
	want := expected()

	answers, err := askAgent(ctx, st.agent.Base, st.userToken, questions)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range answers {
		got := outcome{a.State, a.Failure, a.Text}
		if a.Err != nil || got != want[a.Question] {
			t.Errorf("1.0 %q: %+v (err %v), want %+v", a.Question, got, a.Err, want[a.Question])
		}
		if a.TaskID == "" {
			t.Errorf("1.0 %q: no task id", a.Question)
		}
	}
	for _, q := range questions {
		got, code := send03(t, st.agent.Endpoint, st.userToken, q)
		if code != 0 || got != want[q] {
			t.Errorf("0.3 %q: %+v (JSON-RPC error %d), want %+v", q, got, code, want[q])
		}
	}

	// S10_1949, S99_NOPE and S24_2000 reach the catalog, once per client;
	// the Vespa question never does.
	if n := st.emb.Catalog.Calls(check.ToolGetProduct); n != 6 {
		t.Errorf("get-product calls = %d, want 6", n)
	}
	if n := st.emb.Catalog.ToolCalls(); n != 6 {
		t.Errorf("tool calls = %d, want 6 (get-product only)", n)
	}

	// One exchange for the caller, cached for every later question.
	exchanges := func() int {
		n := 0
		for _, r := range st.emb.OP.Requests() {
			if r.GrantType == tokenexchange.GrantTypeTokenExchange {
				n++
				if r.ClientID != agentClient || r.Status != http.StatusOK {
					t.Errorf("exchange request %+v, want the agent's, answered 200", r)
				}
			}
		}
		return n
	}
	if n := exchanges(); n != 1 {
		t.Errorf("token exchanges = %d, want 1", n)
	}
	exchanged, err := st.tokens.Token(ctx, st.userToken) // the agent's cached token
	if err != nil {
		t.Fatal(err)
	}
	if n := exchanges(); n != 1 {
		t.Fatalf("reading the cached token exchanged again (%d)", n)
	}

	// Every request the catalog received carried exactly the exchanged
	// token, verified at the provider for the catalog's audience.
	calls := st.emb.Calls()
	if len(calls) == 0 {
		t.Fatal("the catalog recorded no request")
	}
	for i, c := range calls {
		if c.Token != exchanged.AccessToken {
			t.Fatalf("catalog request %d: Authorization is not the exchanged token", i)
		}
		if c.Token == st.userToken {
			t.Fatalf("catalog request %d carried the caller's own token", i)
		}
		if c.Err != nil || c.Claims.Subject != demoUser || c.Claims.AuthorizedParty != agentClient || !slices.Contains(c.Claims.Audience, mcpAudience) {
			t.Fatalf("catalog request %d: claims %+v, err %v", i, c.Claims, c.Err)
		}
	}
	if st.emb.Catalog.Rejected() != 0 {
		t.Fatalf("the catalog refused %d requests", st.emb.Catalog.Rejected())
	}

	// The caller's own token is not good for the catalog: the bearer check
	// verifies the audience.
	_, err = mcpclient.Dial(ctx, st.emb.MCPURL, mcpclient.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: st.userToken})))
	if !errors.Is(err, mcpclient.ErrUnauthorized) {
		t.Fatalf("dialling the catalog with the caller's token: %v, want 401", err)
	}
}

// TestExchangeRefusal: a token the facade verified but the provider
// refuses in the exchange (revoked since it was issued) fails the task "no
// identity"; the catalog is never contacted.
func TestExchangeRefusal(t *testing.T) {
	st := startStack(t)
	ctx := t.Context()
	revoked, err := st.emb.UserToken(ctx)
	require.NoError(t, err)
	revokeAccessToken(t, st.emb.OP, st.emb.AgentSecret, revoked)

	wantText := "no identity: the identity provider refused the caller's token (invalid_request), so nothing was read"
	got, rpcCode := send03(t, st.agent.Endpoint, revoked, "Peut-on promettre S10_1949 ?")
	assert.Equal(t, 0, rpcCode)
	// a2a's failure kinds name only a missing token "no_identity"; a token
	// refused downstream is labelled "backend": a technical failure either
	// way, never an escalation or an answer.
	assert.Equal(t, outcome{"failed", "backend", wantText}, got)
	ans, err := askAgent(ctx, st.agent.Base, revoked, []string{"Peut-on promettre S10_1949 ?"})
	require.NoError(t, err)
	assert.Equal(t, got, outcome{ans[0].State, ans[0].Failure, ans[0].Text}, "err %v", ans[0].Err)
	assert.Zero(t, st.emb.Catalog.Requests(), "the catalog was called without an identity")
	for _, r := range st.emb.OP.Requests() {
		assert.NotEqual(t, http.StatusOK, r.Status, "the provider issued a token: %+v", r)
	}
}

// TestRunDefault: the demo's three questions reach the agent's decisions
// (one completed, two escalated by design): exit 0, nothing on stderr.
func TestRunDefault(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(t.Context(), nil, noEnv, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	checkDefaultOutput(t, out.String())
	assert.Empty(t, errOut.String())
}

// ports hides the loopback ports, which change on every run.
var ports = regexp.MustCompile(`127\.0\.0\.1:\d+`)

const defaultOutput = `Availability agent demo: embedded catalog (110 products), OpenID provider and agent on 127.0.0.1
  agent card  http://127.0.0.1:PORT/.well-known/agent-card.json
  catalog     http://127.0.0.1:PORT/mcp (MCP; verifies every bearer token for audience catalog-mcp)
  provider    http://127.0.0.1:PORT
  caller      marie, token issued at availability-web for availability-agent; the agent verifies it, then exchanges it for audience catalog-mcp

> Peut-on promettre S10_1949 ?
  completed: Yes — 1952 Alpine Renault 1300 (S10_1949) can be promised: 7305 in stock, above the reorder threshold of 50.

> Peut-on promettre la Vespa ?
  failed (escalated): No product reference in the question: name the catalog code (for instance S10_1949); the agent does not guess a product from its name.

> Peut-on promettre S99_NOPE ?
  failed (escalated): There is no product S99_NOPE in the catalog.

catalog: 2 get-product calls in 4 HTTP requests, 4 with the token exchanged for catalog-mcp (sub marie, azp availability-agent), 0 refused
provider: 1 token exchange of the caller's token

demo: every question reached the agent's decision: 1 completed, 2 escalated to a person
`

func checkDefaultOutput(t *testing.T, out string) {
	t.Helper()
	if got := ports.ReplaceAllString(out, "127.0.0.1:PORT"); got != defaultOutput {
		t.Fatalf("output:\n%s\nwant:\n%s", got, defaultOutput)
	}
}

// TestBinary builds the command and runs it with no flags, as a user would.
func TestBinary(t *testing.T) {
	bin := testproc.Build(t, ".")
	cmd := exec.CommandContext(t.Context(), bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AVAILABILITY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// The README's command: two escalations by design are the demo's
	// decisions, not a failure of the demo: exit 0.
	require.NoError(t, cmd.Run(), errOut.String())
	checkDefaultOutput(t, out.String())
	// zitadel's "registered route" lines (slog.Default at Info) are silenced.
	assert.Empty(t, errOut.String())

	// -serve stops cleanly on SIGTERM.
	srv := exec.CommandContext(t.Context(), bin, "-serve")
	srv.Env = cmd.Env
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var srvErr testproc.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "serving until SIGINT or SIGTERM" {
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	if err := srv.Wait(); err != nil || last != "stopped" {
		t.Fatalf("-serve after SIGTERM: %v, last line %q, stderr %s", err, last, srvErr.String())
	}
}

func TestRunAskThreshold(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"-ask", thresholdQ}, noEnv, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1 (an escalation): %s", code, errOut.String())
	}
	assert.Equal(t, "availability: the question did not complete (failed (escalated))\n", errOut.String())
	if !strings.Contains(out.String(), "> "+thresholdQ+"\n  failed (escalated): "+belowText+"\n") {
		t.Fatalf("output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "catalog: 1 get-product call in ") {
		t.Fatalf("summary:\n%s", out.String())
	}
}

// TestRunRealServices points the command at services it did not start: it
// must start nothing embedded, discover the token URL, and never print the
// secret or a token.
func TestRunRealServices(t *testing.T) {
	emb, err := startEmbedded(t.Context(), discard, demo.WithCallLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	userToken, err := emb.UserToken(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{envClientSecret: emb.AgentSecret, envUserToken: userToken}
	base := []string{"-v", "-mcp", emb.MCPURL, "-client-id", agentClient, "-audience", mcpAudience, "-ask", "Peut-on promettre S10_1949 ?"}
	for i, extra := range [][]string{{"-issuer", emb.OP.Issuer()}, {"-issuer", emb.OP.Issuer(), "-token-url", emb.OP.TokenURL()}} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), append(slices.Clone(base), extra...), envOf(env), &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut.String())
		}
		if !strings.Contains(out.String(), "(catalog and OpenID provider as configured)") ||
			!strings.Contains(out.String(), "  completed: "+yesText+"\n") || strings.Contains(out.String(), "embedded") {
			t.Fatalf("%v: output:\n%s", extra, out.String())
		}
		if n := emb.Catalog.Calls(check.ToolGetProduct); n != int64(i+1) {
			t.Fatalf("%v: the given catalog served %d calls, want %d", extra, n, i+1)
		}
		all := out.String() + errOut.String()
		if !strings.Contains(errOut.String(), "availability answered") {
			t.Fatalf("-v logged nothing: %s", errOut.String())
		}
		for _, secret := range []string{emb.AgentSecret, userToken} {
			if strings.Contains(all, secret) {
				t.Fatalf("%v: a secret was printed:\n%s", extra, all)
			}
		}
	}
	calls := emb.Calls()
	if len(calls) == 0 {
		t.Fatal("the given catalog recorded no request")
	}
	for _, c := range calls {
		if c.Err != nil || c.Token == userToken {
			t.Fatal("the given catalog was sent a token other than the exchanged one")
		}
	}

	// Discovery failure is reported, and nothing is served.
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"-mcp", emb.MCPURL, "-client-id", agentClient, "-issuer", emb.MCPURL}, envOf(env), &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "discovery at") {
		t.Fatalf("bad issuer: exit %d, %s", code, errOut.String())
	}
}

// A discovery document that names a plain-http token endpoint on another
// host is refused: the agent's client secret would travel in clear.
func TestDiscoveryRefusesPlainHTTPTokenEndpoint(t *testing.T) {
	var issuer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "token_endpoint": "http://id.example/token"})
	}))
	t.Cleanup(srv.Close)
	issuer = srv.URL
	_, err := discoverTokenURL(t.Context(), issuer)
	if err == nil || !strings.Contains(err.Error(), `token_endpoint "http://id.example/token" must be an absolute https URL`) {
		t.Fatalf("discovery of a plain-http token endpoint: %v", err)
	}
}

func TestFlagErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"partial real services", []string{"-mcp", "http://127.0.0.1:1/mcp"}, nil, 2, "-client-id (AVAILABILITY_CLIENT_ID)"},
		{"secret only from env", nil, map[string]string{envClientSecret: "s3cr3t-value"}, 2, "-mcp (AVAILABILITY_MCP_URL)"},
		{"serve and ask", []string{"-serve", "-ask", "x"}, nil, 2, "exclude each other"},
		{"argument", []string{"S10_1949"}, nil, 2, "takes no arguments"},
		{"unknown flag", []string{"-nope"}, nil, 2, "flag provided but not defined"},
		// An audience or a caller's token names real services too: the
		// embedded demo would silently ignore them.
		{"audience only", []string{"-audience", "catalog-mcp"}, nil, 2, "-mcp (AVAILABILITY_MCP_URL)"},
		{"user token only", nil, map[string]string{envUserToken: "s3cr3t-value"}, 2, "-client-id (AVAILABILITY_CLIENT_ID)"},
		// A token or a client secret never goes over plain http to
		// another host: refused before anything starts.
		{"plain http catalog", []string{"-mcp", "http://catalog.example/mcp", "-issuer", "https://id.example", "-client-id", "a"},
			map[string]string{envClientSecret: "s3cr3t-value", envUserToken: "t"}, 2, "-mcp \"http://catalog.example/mcp\" must be an absolute https URL"},
		{"plain http token URL", []string{"-mcp", "https://catalog.example/mcp", "-issuer", "https://id.example", "-token-url", "http://id.example/token", "-client-id", "a"},
			map[string]string{envClientSecret: "s3cr3t-value", envUserToken: "t"}, 2, "-token-url \"http://id.example/token\" must be an absolute https URL"},
		{"plain http issuer", []string{"-mcp", "https://catalog.example/mcp", "-issuer", "http://id.example", "-client-id", "a"},
			map[string]string{envClientSecret: "s3cr3t-value", envUserToken: "t"}, 2, "-issuer \"http://id.example\" must be an absolute https URL"},
		// The caller's tokens are verified against the issuer's keys: a
		// token URL alone cannot verify them.
		{"token URL without issuer", []string{"-mcp", "https://catalog.example/mcp", "-token-url", "https://id.example/token", "-client-id", "a"},
			map[string]string{envClientSecret: "s3cr3t-value", envUserToken: "t"}, 2, "-issuer (AVAILABILITY_ISSUER"},
		{"agent audience names real services", nil, map[string]string{envAgentAud: "availability-agent"}, 2, "-mcp (AVAILABILITY_MCP_URL)"},
		{"token file without serve", []string{"-token-file", "/tmp/x"}, nil, 2, "-token-file needs -serve"},
		// The agent never mints a token at a real issuer.
		{"token file with real services", []string{"-serve", "-token-file", "/tmp/x", "-mcp", "https://catalog.example/mcp", "-issuer", "https://id.example", "-client-id", "a"},
			map[string]string{envClientSecret: "s3cr3t-value"}, 2, "-token-file only works with the embedded provider"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(t.Context(), tc.args, envOf(tc.env), &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut.String(), tc.code, tc.want)
			}
			if strings.Contains(out.String()+errOut.String(), "s3cr3t-value") {
				t.Fatal("the secret was printed")
			}
		})
	}
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"-h"}, noEnv, &out, &errOut); code != 0 || !strings.Contains(out.String(), "-client-secret") || !strings.Contains(out.String(), envUserToken) {
		t.Fatalf("-h: exit %d\n%s", code, out.String())
	}
}

// TestServe runs -serve, asks through the printed endpoint with the demo
// token file, then stops it as SIGINT would.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var errOut testproc.Buffer
	exit := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-serve"}, noEnv, pw, &errOut)
		pw.Close()
		exit <- code
	}()
	lines := bufio.NewScanner(pr)
	var endpoint, tokenFile string
	for lines.Scan() {
		line := lines.Text()
		if v, ok := strings.CutPrefix(line, "JSON-RPC:   "); ok {
			endpoint, _, _ = strings.Cut(v, " ")
		}
		if v, ok := strings.CutPrefix(line, "demo token: "); ok {
			tokenFile, _, _ = strings.Cut(v, " ")
		}
		if line == "serving until SIGINT or SIGTERM" {
			break
		}
	}
	if endpoint == "" || tokenFile == "" {
		t.Fatalf("-serve did not print its endpoint and token file (stderr %s)", errOut.String())
	}
	info, err := os.Stat(tokenFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v, want mode 0600", tokenFile, info, err)
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	got, code := send03(t, endpoint, string(token), "Peut-on promettre S10_1949 ?")
	if code != 0 || got != (outcome{"completed", "", yesText}) {
		t.Fatalf("asking the served agent: %+v (%d)", got, code)
	}
	cancel()
	rest, _ := io.ReadAll(pr)
	if c := <-exit; c != 0 || !strings.Contains(string(rest), "stopped") {
		t.Fatalf("exit %d, output %q, stderr %s", c, rest, errOut.String())
	}
	if _, err := os.Stat(tokenFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the token file outlived the server: %v", err)
	}
	if strings.Contains(errOut.String(), string(token)) {
		t.Fatal("the token was logged")
	}
}

// TestServeKeepsNoCallLog: a serving agent keeps counts of what its
// embedded catalog verified, not a log of every token it was sent, which
// would grow for as long as it serves.
func TestServeKeepsNoCallLog(t *testing.T) {
	st, err := start(t.Context(), &options{serve: true, listen: "127.0.0.1:0"}, discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	for range 3 {
		if got, code := send03(t, st.agent.Endpoint, st.userToken, "Peut-on promettre S10_1949 ?"); code != 0 || got != (outcome{"completed", "", yesText}) {
			t.Fatalf("asking the served agent: %+v (%d)", got, code)
		}
	}
	if ok, refused := st.emb.Verified(); ok == 0 || refused != 0 {
		t.Fatalf("catalog bearer checks: %d verified, %d refused", ok, refused)
	}
	if n := len(st.emb.Calls()); n != 0 {
		t.Fatalf("the serving agent's catalog logged %d calls with their tokens", n)
	}
}

// TestCLIConvention runs the built program: -h on stdout with exit 0; a
// usage error on stderr with the usage once and exit 2, found before any
// network check.
func TestCLIConvention(t *testing.T) {
	bin := testproc.Build(t, ".")
	clitest.Help(t, bin, []string{"-h"}, "Usage:", "-serve", "-ask", envUserToken, "Exit codes:", "docs/examples.md",
		"-token-file", "-tokenless-tasks", "-agent-audience", envAgentAud, "WWW-Authenticate", "escalated to a person")
	for _, tc := range []struct {
		args   []string
		prefix string
	}{
		{[]string{"-nope"}, "availability: flag provided but not defined: -nope"},
		{[]string{"question"}, "availability: takes no arguments"},
		{[]string{"-serve", "-ask", "q"}, "availability: -serve and -ask exclude each other"},
		{[]string{"-mcp", "https://catalog.invalid/mcp"}, "availability: with a real service named, these are required too"},
		{[]string{"-mcp", "http://catalog.invalid/mcp", "-token-url", "https://id.invalid/token", "-client-id", "c", "-client-secret", "s", "-serve"}, "availability: "},
	} {
		clitest.UsageError(t, bin, nil, tc.args, tc.prefix, "Usage:")
	}
}
