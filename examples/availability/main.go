package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/candorkit/candor/examples/availability/internal/check"
	"github.com/candorkit/candor/examples/internal/demo"
	"github.com/candorkit/candor/tokenexchange"
)

func main() {
	// demo.Main keeps only warnings and errors from slog.Default, which
	// zitadel's OP logs through; this program's own logger is separate (-v).
	demo.Main(func(ctx context.Context) int {
		return run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	})
}

// Environment variables read when the matching flag is not given.
const (
	envMCPURL       = "AVAILABILITY_MCP_URL"
	envIssuer       = "AVAILABILITY_ISSUER"
	envTokenURL     = "AVAILABILITY_TOKEN_URL"
	envClientID     = "AVAILABILITY_CLIENT_ID"
	envClientSecret = "AVAILABILITY_CLIENT_SECRET"
	envAudience     = "AVAILABILITY_AUDIENCE"
	envUserToken    = "AVAILABILITY_USER_TOKEN"
	envListen       = "AVAILABILITY_LISTEN"
)

// options are the parsed flags and environment.
type options struct {
	ask     string
	serve   bool
	verbose bool
	listen  string

	mcpURL, issuer, tokenURL, clientID, clientSecret, audience string
	userToken                                                  string
}

// real reports whether any real service is named (an audience or a
// caller's token included, which the embedded demo would ignore): then
// nothing embedded runs.
func (o *options) real() bool {
	return o.mcpURL != "" || o.issuer != "" || o.tokenURL != "" || o.clientID != "" || o.clientSecret != "" ||
		o.audience != "" || o.userToken != ""
}

// checkURLs refuses, before anything starts, a catalog or provider URL that
// the exchanged token or the client secret would reach in clear (the
// libraries refuse them too, but only at the first question).
func (o *options) checkURLs() error {
	for _, u := range []struct{ name, value string }{{"-mcp", o.mcpURL}, {"-issuer", o.issuer}, {"-token-url", o.tokenURL}} {
		if u.value == "" {
			continue
		}
		if err := checkSecureURL(u.name, u.value); err != nil {
			return err
		}
	}
	return nil
}

// missing names what a real-services run lacks.
func (o *options) missing() []string {
	var m []string
	if o.mcpURL == "" {
		m = append(m, "-mcp ("+envMCPURL+")")
	}
	if o.issuer == "" && o.tokenURL == "" {
		m = append(m, "-issuer ("+envIssuer+") or -token-url ("+envTokenURL+")")
	}
	if o.clientID == "" {
		m = append(m, "-client-id ("+envClientID+")")
	}
	if o.clientSecret == "" {
		m = append(m, envClientSecret+" (or -client-secret)")
	}
	if !o.serve && o.userToken == "" {
		m = append(m, envUserToken+" (the caller's access token, needed to ask; not needed with -serve)")
	}
	return m
}

const usageText = `availability answers "can this product be promised?" as an A2A agent: it reads the
product code in the question with a rule, exchanges the caller's token for the catalog's
audience (RFC 8693), calls the catalog's get-product tool over MCP, and answers from the
stock on hand (open-order commitments are not deducted). Only a product above the reorder
threshold (50) completes; anything else fails the task and escalates to a person.

With no flags it starts an embedded catalog, OpenID provider and agent on 127.0.0.1,
asks three questions through an A2A 1.0 client and prints each task.

Usage:
  availability [-ask "question"] [-serve] [-listen addr] [-v]
               [-mcp URL -issuer URL|-token-url URL -client-id ID [-audience AUD]]

Naming any real service (-mcp, -issuer, -token-url, -client-id, -client-secret, -audience,
or a caller's token in ` + envUserToken + `) starts nothing embedded: then all of them are
required (-audience excepted), the client secret preferably from ` + envClientSecret + `,
and asking needs the caller's access token in ` + envUserToken + `. The catalog and the
provider must be https URLs (plain http only on loopback). Secrets and tokens are never
printed or logged.

Flags:
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	env := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	var o options
	fs := flag.NewFlagSet("availability", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stdout, usageText)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.StringVar(&o.ask, "ask", "", "ask this one question instead of the three demo questions")
	fs.BoolVar(&o.serve, "serve", false, "only serve the agent: print its card URL and serve until SIGINT or SIGTERM")
	fs.StringVar(&o.listen, "listen", env(envListen), "address the agent listens on (default 127.0.0.1 on a free port; env "+envListen+")")
	fs.BoolVar(&o.verbose, "v", false, "log the agent's work (never a token) on stderr")
	fs.StringVar(&o.mcpURL, "mcp", env(envMCPURL), "catalog MCP endpoint (streamable HTTP); env "+envMCPURL)
	fs.StringVar(&o.issuer, "issuer", env(envIssuer), "OpenID issuer URL; its discovery document gives the token URL; env "+envIssuer)
	fs.StringVar(&o.tokenURL, "token-url", env(envTokenURL), "token endpoint (instead of discovery from -issuer); env "+envTokenURL)
	fs.StringVar(&o.clientID, "client-id", env(envClientID), "the agent's client id at the provider; env "+envClientID)
	fs.StringVar(&o.clientSecret, "client-secret", "", "the agent's client secret (prefer env "+envClientSecret+": a flag shows in ps)")
	fs.StringVar(&o.audience, "audience", env(envAudience), "audience requested for the catalog token (none sent if empty); env "+envAudience)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "availability takes no arguments (got %q); put the question in -ask, see -h\n", fs.Args())
		return 2
	}
	if o.clientSecret == "" {
		o.clientSecret = env(envClientSecret)
	}
	o.userToken = env(envUserToken)
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	if o.serve && o.ask != "" {
		fmt.Fprintln(stderr, "-serve and -ask exclude each other")
		return 2
	}
	if o.real() {
		if m := o.missing(); len(m) > 0 {
			fmt.Fprintf(stderr, "with a real service named, these are required too: %s\n", strings.Join(m, "; "))
			return 2
		}
		if err := o.checkURLs(); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}

	level := slog.LevelError
	if o.verbose || o.serve {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	st, err := start(ctx, &o, log)
	if err != nil {
		fmt.Fprintf(stderr, "availability: %v\n", err)
		return 1
	}
	defer st.Close()

	if o.serve {
		return serve(ctx, st, stdout, stderr)
	}
	questions := demoQuestions()
	if o.ask != "" {
		questions = []string{o.ask}
	}
	st.printHeader(stdout)
	answers, err := askAgent(ctx, st.agent.Base, st.userToken, questions)
	if err != nil {
		fmt.Fprintf(stderr, "availability: %v\n", err)
		return 1
	}
	printAnswers(stdout, answers)
	st.printSummary(stdout)
	for _, a := range answers {
		if a.Err != nil {
			return 1
		}
	}
	return 0
}

// stack is everything one run started.
type stack struct {
	emb       *demo.World // nil with real services
	agent     *agentServer
	checker   *check.Checker
	tokens    *tokenexchange.Cache // the agent's exchanged tokens, by caller token
	userToken string               // the caller's token the demo client sends ("" with -serve on real services)
	tokenDir  string               // -serve on the embedded provider: where the demo token file is
}

// start starts the embedded parts (unless real services are named) and the agent.
func start(ctx context.Context, o *options, log *slog.Logger) (_ *stack, err error) {
	st := &stack{}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	exchange := tokenexchange.Config{ClientID: o.clientID, ClientSecret: o.clientSecret, TokenURL: o.tokenURL, Logger: log}
	mcpURL := o.mcpURL
	if o.audience != "" {
		exchange.Audience = []string{o.audience}
	}
	if o.real() {
		if exchange.TokenURL == "" {
			if exchange.TokenURL, err = discoverTokenURL(ctx, o.issuer); err != nil {
				return nil, err
			}
		}
		st.userToken = o.userToken
	} else {
		// The demo prints which token each catalog request carried; a
		// server (-serve) keeps only the counts, not a log that grows with
		// every request.
		var extra []demo.Option
		if !o.serve {
			extra = append(extra, demo.WithCallLog())
		}
		if st.emb, err = startEmbedded(ctx, log, extra...); err != nil {
			return nil, fmt.Errorf("starting the embedded services: %w", err)
		}
		exchange = *st.emb.AgentConfig()
		exchange.Logger = log
		mcpURL = st.emb.MCPURL
		if st.userToken, err = st.emb.UserToken(ctx); err != nil {
			return nil, err
		}
	}
	st.tokens = tokenexchange.NewCache(&exchange)
	st.checker, err = check.New(check.Config{
		Exchanger: st.tokens,
		MCPURL:    mcpURL,
		Threshold: check.DefaultThreshold,
		Logger:    log,
	})
	if err != nil {
		return nil, err
	}
	if st.agent, err = startAgent(o.listen, st.checker, st.checker.Threshold(), log); err != nil {
		return nil, err
	}
	return st, nil
}

// Close stops what start started, the agent first.
func (st *stack) Close() {
	if st.agent != nil {
		_ = st.agent.Close()
	}
	if st.emb != nil {
		st.emb.Close()
	}
	if st.tokenDir != "" {
		_ = os.RemoveAll(st.tokenDir)
	}
}

func (st *stack) printHeader(w io.Writer) {
	if st.emb == nil {
		fmt.Fprintf(w, "Availability agent at %s (catalog and OpenID provider as configured)\n\n", st.agent.CardURL())
		return
	}
	fmt.Fprintf(w, "Availability agent demo: embedded catalog (%d products), OpenID provider and agent on 127.0.0.1\n", st.emb.Catalog.Len())
	fmt.Fprintf(w, "  agent card  %s\n", st.agent.CardURL())
	fmt.Fprintf(w, "  catalog     %s (MCP; verifies every bearer token for audience %s)\n", st.emb.MCPURL, mcpAudience)
	fmt.Fprintf(w, "  provider    %s\n", st.emb.OP.Issuer())
	fmt.Fprintf(w, "  caller      %s, token issued at %s; the agent exchanges it for audience %s\n\n", demoUser, webClient, mcpAudience)
}

// printSummary says, for the embedded demo, what the catalog and the provider saw.
func (st *stack) printSummary(w io.Writer) {
	if st.emb == nil {
		return
	}
	calls := st.emb.Calls()
	exchanged, refused := 0, 0
	for _, c := range calls {
		switch {
		case c.Err != nil:
			refused++
		case c.Claims.Subject == demoUser && c.Claims.AuthorizedParty == agentClient:
			exchanged++
		}
	}
	exchanges := 0
	for _, r := range st.emb.OP.Requests() {
		if r.GrantType == tokenexchange.GrantTypeTokenExchange && r.Status == 200 {
			exchanges++
		}
	}
	fmt.Fprintf(w, "\ncatalog: %s in %s, %d with the token exchanged for %s (sub %s, azp %s), %d refused\n",
		plural(int(st.emb.Catalog.Calls(check.ToolGetProduct)), "get-product call"), plural(len(calls), "HTTP request"),
		exchanged, mcpAudience, demoUser, agentClient, refused)
	fmt.Fprintf(w, "provider: %s of the caller's token\n", plural(exchanges, "token exchange"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// serve prints where the agent is and serves until ctx ends.
func serve(ctx context.Context, st *stack, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "agent card: %s\n", st.agent.CardURL())
	fmt.Fprintf(stdout, "JSON-RPC:   %s (A2A-Version: 1.0, or 0.3 without the header; Authorization: Bearer <token>)\n", st.agent.Endpoint)
	if st.emb != nil {
		dir, err := os.MkdirTemp("", "availability-")
		if err != nil {
			fmt.Fprintf(stderr, "availability: %v\n", err)
			return 1
		}
		st.tokenDir = dir
		file := filepath.Join(dir, "token")
		if err := os.WriteFile(file, []byte(st.userToken), 0o600); err != nil {
			fmt.Fprintf(stderr, "availability: writing the demo token: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "demo token: %s (user %s, valid %s, removed on exit)\n", file, demoUser, demoTokenLifetime)
		fmt.Fprintf(stdout, "try:        curl -s %s -H \"Authorization: Bearer $(cat %s)\" -H 'Content-Type: application/json' "+
			`-d '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Peut-on promettre S10_1949 ?"}]}}}'`+"\n",
			st.agent.Endpoint, file)
	}
	fmt.Fprintln(stdout, "serving until SIGINT or SIGTERM")
	select {
	case <-ctx.Done():
	case <-st.agent.Done():
		fmt.Fprintf(stderr, "availability: serving stopped: %v\n", st.agent.Err())
		return 1
	}
	if err := st.agent.Close(); err != nil {
		fmt.Fprintf(stderr, "availability: shutdown: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "stopped")
	return 0
}
