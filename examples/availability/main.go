package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/candorkit/candor/a2a/jwtauth"
	"github.com/candorkit/candor/examples/availability/internal/check"
	"github.com/candorkit/candor/examples/internal/cli"
	"github.com/candorkit/candor/examples/internal/demo"
	"github.com/candorkit/candor/examples/internal/telemetry"
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
	envAgentAud     = "AVAILABILITY_AGENT_AUDIENCE"
)

// options are the parsed flags and environment.
type options struct {
	ask       string
	serve     bool
	verbose   bool
	listen    string
	tokenFile string // -serve on the embedded provider: where to write the demo token
	tokenless bool   // answer a message without a token with a "no identity" task
	tasks     string // -tasks: a PostgreSQL DSN for the A2A task store; empty: in memory

	mcpURL, issuer, tokenURL, clientID, clientSecret, audience string
	agentAudience                                              string // the audience a caller's token must carry
	userToken                                                  string
}

// real reports whether any real service is named (an audience or a
// caller's token included, which the embedded demo would ignore): then
// nothing embedded runs.
func (o *options) real() bool {
	return o.mcpURL != "" || o.issuer != "" || o.tokenURL != "" || o.clientID != "" || o.clientSecret != "" ||
		o.audience != "" || o.agentAudience != "" || o.userToken != ""
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
	if o.issuer == "" {
		m = append(m, "-issuer ("+envIssuer+"; its published keys verify every caller's token)")
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

const usageText = `availability answers "can this product be promised?" as an A2A agent: it verifies the
caller's bearer token (a JWT signed with the issuer's published keys, for the agent's
audience, not expired), reads the product code in the question with a rule, exchanges the
caller's token for the catalog's audience (RFC 8693), calls the catalog's get-product tool
over MCP, and answers from the stock on hand (open-order commitments are not deducted).
Only a product above the reorder threshold (50) completes; anything else fails the task and
escalates to a person.

With no flags it starts an embedded catalog, OpenID provider and agent on 127.0.0.1,
asks three questions through an A2A 1.0 client and prints each task.

Usage:
  availability [-ask "question"] [-serve [-token-file PATH]] [-listen addr] [-tokenless-tasks] [-v]
               [-mcp URL -issuer URL [-token-url URL] -client-id ID [-audience AUD] [-agent-audience AUD]]

Every request to the agent must carry "Authorization: Bearer <token>": a missing, forged,
expired or other-audience token is answered HTTP 401 with WWW-Authenticate before any task
is made or any service is called. With the embedded provider the token is checked against
its keys for audience ` + agentClient + `; with real services against -issuer's keys for
-agent-audience (default: -client-id). -tokenless-tasks is the explicit opt-in to answer a
message sent without any token with a task that fails "no identity" (nothing is read)
instead of the 401; a token that is present is still verified.

-tasks DSN keeps the A2A tasks in PostgreSQL (a postgres:// or postgresql:// DSN; schema
candor_a2a, created when missing), so that replicas of -serve on one database answer for each
other's tasks; without it, tasks live in this process's memory. A malformed DSN is a usage
error (the DSN is never printed); an unreachable database exits 1.

-serve prints the card URL and serves until SIGINT/SIGTERM. With the embedded provider
it writes a fresh token of the demo user (valid an hour) to a 0600 file and prints its
path, never the token: -token-file PATH says where (replaced atomically at startup,
removed on exit; for scripts and conformance kits). -token-file is refused with real
services: the agent never mints a token at a real issuer.

Naming any real service (-mcp, -issuer, -token-url, -client-id, -client-secret, -audience,
-agent-audience, or a caller's token in ` + envUserToken + `) starts nothing embedded: then
-mcp, -issuer, -client-id and the client secret are required (preferably from
` + envClientSecret + `); -token-url replaces the discovery of the token endpoint; asking
needs the caller's access token in ` + envUserToken + `. The catalog and the provider must
be https URLs (plain http only on loopback). Secrets and tokens are never printed or logged.

Environment (read when the matching flag is not given): ` + envMCPURL + `, ` + envIssuer + `,
` + envTokenURL + `, ` + envClientID + `, ` + envClientSecret + `, ` + envAudience + `,
` + envAgentAud + `, ` + envUserToken + `, ` + envListen + `.

Exit codes:
  0  -ask: the task completed. The demo (no -ask): every question reached the state the
     agent decided, completed or escalated to a person (two of the three escalate by
     design). -serve: stopped by SIGINT/SIGTERM.
  1  -ask: the task failed or was escalated, or got no task. The demo: a question failed
     for a technical reason (backend, no identity, no reply, any failure but an
     escalation) or got no task (a refused token included). A service could not start
     or stopped.
  2  usage (bad flags or arguments).
  3  configuration (the -tasks schema belongs to another program or a newer version).
A second SIGINT exits at once. See docs/examples.md.

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
	usage := func(w io.Writer) {
		fmt.Fprint(w, usageText)
		cli.Defaults(w, fs)
		fmt.Fprint(w, "\n"+telemetry.Usage)
	}
	usageError := func(format string, a ...any) int {
		return cli.UsageError(stderr, usage, "availability", format, a...)
	}
	fs.StringVar(&o.ask, "ask", "", "ask this one question instead of the three demo questions")
	fs.BoolVar(&o.serve, "serve", false, "only serve the agent: print its card URL and serve until SIGINT or SIGTERM")
	fs.StringVar(&o.listen, "listen", env(envListen), "address the agent listens on (default 127.0.0.1 on a free port; env "+envListen+")")
	fs.BoolVar(&o.verbose, "v", false, "log the agent's work (never a token) on stderr")
	fs.StringVar(&o.mcpURL, "mcp", env(envMCPURL), "catalog MCP endpoint (streamable HTTP); env "+envMCPURL)
	fs.StringVar(&o.issuer, "issuer", env(envIssuer), "OpenID issuer URL: its published keys verify every caller's token, its discovery document gives the token URL; env "+envIssuer)
	fs.StringVar(&o.tokenURL, "token-url", env(envTokenURL), "token endpoint (instead of discovery from -issuer); env "+envTokenURL)
	fs.StringVar(&o.clientID, "client-id", env(envClientID), "the agent's client id at the provider; env "+envClientID)
	fs.StringVar(&o.clientSecret, "client-secret", "", "the agent's client secret (prefer env "+envClientSecret+": a flag shows in ps)")
	fs.StringVar(&o.audience, "audience", env(envAudience), "audience requested for the catalog token (none sent if empty); env "+envAudience)
	fs.StringVar(&o.agentAudience, "agent-audience", env(envAgentAud), "audience a caller's token must carry to reach the agent (default: -client-id); env "+envAgentAud)
	fs.StringVar(&o.tokenFile, "token-file", "", "with -serve and the embedded provider: write the demo user's fresh token to this file (0600, removed on exit)")
	fs.StringVar(&o.tasks, "tasks", "", "A2A task store: a postgres:// (postgresql://) DSN, shared by every replica on that database (default: in memory)")
	fs.BoolVar(&o.tokenless, "tokenless-tasks", false, "answer a message sent without a token with a task that fails \"no identity\" instead of HTTP 401")
	if code, ok := cli.Parse(fs, args, stdout, stderr, usage); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("takes no arguments (got %q); put the question in -ask", fs.Args())
	}
	if o.clientSecret == "" {
		o.clientSecret = env(envClientSecret)
	}
	o.userToken = env(envUserToken)
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	if o.serve && o.ask != "" {
		return usageError("-serve and -ask exclude each other")
	}
	if o.tokenFile != "" && !o.serve {
		return usageError("-token-file needs -serve")
	}
	if err := checkTasks(o.tasks); err != nil {
		return usageError("%v", err)
	}
	if o.real() {
		if o.tokenFile != "" {
			return usageError("-token-file only works with the embedded provider: the agent never mints a token at a real issuer")
		}
		if m := o.missing(); len(m) > 0 {
			return usageError("with a real service named, these are required too: %s", strings.Join(m, "; "))
		}
		if err := o.checkURLs(); err != nil {
			return usageError("%v", err)
		}
	}

	level := slog.LevelError
	if o.verbose || o.serve {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// OTEL_EXPORTER_OTLP_ENDPOINT set: every package exports through the
	// global providers; none set: nothing is exported.
	tel, err := telemetry.Setup(ctx, "availability", lookup)
	if err != nil {
		fmt.Fprintf(stderr, "availability: configuration: %v\n", err)
		return cli.ExitConfig
	}
	defer func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(flush); err != nil {
			log.Warn("flushing telemetry", "error", err)
		}
	}()

	st, err := start(ctx, &o, log)
	if err != nil {
		fmt.Fprintf(stderr, "availability: %v\n", err)
		if errors.As(err, new(*taskStoreError)) {
			return cli.ExitConfig
		}
		return cli.ExitFail
	}
	defer st.Close()

	if o.serve {
		return serve(ctx, st, o.tokenFile, stdout, stderr)
	}
	questions := demoQuestions()
	if o.ask != "" {
		questions = []string{o.ask}
	}
	st.printHeader(stdout)
	answers, err := askAgent(ctx, st.agent.Base, st.userToken, questions)
	if err != nil {
		fmt.Fprintf(stderr, "availability: %v\n", err)
		return cli.ExitFail
	}
	printAnswers(stdout, answers)
	st.printSummary(stdout)
	if o.ask != "" {
		return askExitCode(answers[0], stderr)
	}
	return demoExitCode(answers, stdout, stderr)
}

// askExitCode is the exit code of -ask, one question a script asked: 0 only
// when its task completed, else 1 with a line on stderr. A failed or
// escalated task is work that was not done, and never exits as a success.
func askExitCode(a answer, stderr io.Writer) int {
	if a.Err == nil && a.State == "completed" {
		return cli.ExitOK
	}
	fmt.Fprintf(stderr, "availability: the question did not complete (%s)\n", a.status())
	return cli.ExitFail
}

// demoExitCode is the exit code of the demo's showcase questions: 0 when
// each reached a state the agent decided (completed, or escalated to a
// person, which two of them do by design), else 1 with a line on stderr
// naming how many failed for a technical reason or got no task.
func demoExitCode(answers []answer, stdout, stderr io.Writer) int {
	completed, escalated := 0, 0
	var broken []string
	for _, a := range answers {
		switch {
		case a.completed():
			completed++
		case a.escalated():
			escalated++
		default:
			broken = append(broken, a.status())
		}
	}
	if len(broken) == 0 {
		fmt.Fprintf(stdout, "\ndemo: every question reached the agent's decision: %d completed, %d escalated to a person\n", completed, escalated)
		return cli.ExitOK
	}
	fmt.Fprintf(stderr, "availability: %d of %d demo question(s) failed for a technical reason (%s)\n",
		len(broken), len(answers), strings.Join(broken, ", "))
	return cli.ExitFail
}

// stack is everything one run started.
type stack struct {
	emb       *demo.World // nil with real services
	agent     *agentServer
	checker   *check.Checker
	tokens    *tokenexchange.Cache // the agent's exchanged tokens, by caller token
	userToken string               // the caller's token the demo client sends ("" with -serve on real services)
	tokenDir  string               // -serve on the embedded provider: the temporary directory of the demo token file
	tokenFile string               // -serve on the embedded provider: the demo token file, removed on Close
	tasksDB   *sql.DB              // -tasks: the task store's pool, closed after the agent
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
	var verifier *jwtauth.Verifier
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
		agentAudience := o.agentAudience
		if agentAudience == "" {
			agentAudience = o.clientID
		}
		// Every caller's token is checked against the issuer's published
		// keys, for the agent's audience, with the default clock leeway.
		if verifier, err = jwtauth.New(o.issuer, agentAudience); err != nil {
			return nil, err
		}
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
		// The demo user's tokens name the agent's client as their audience.
		// The provider runs in this process, on this clock: no leeway, so a
		// token is refused from the second it expires.
		if verifier, err = jwtauth.New(st.emb.OP.Issuer(), agentClient, jwtauth.WithLeeway(0)); err != nil {
			return nil, err
		}
	}
	if st.tokens, err = tokenexchange.NewCache(&exchange); err != nil {
		return nil, err
	}
	st.checker, err = check.New(check.Config{
		Exchanger: st.tokens,
		MCPURL:    mcpURL,
		Threshold: check.DefaultThreshold,
		Logger:    log,
	})
	if err != nil {
		return nil, err
	}
	taskOpts, tasksDB, err := openTasks(ctx, o.tasks)
	if err != nil {
		return nil, err
	}
	st.tasksDB = tasksDB
	if st.agent, err = startAgent(o.listen, st.checker, st.checker.Threshold(), verifier, o.tokenless, log, taskOpts...); err != nil {
		return nil, err
	}
	return st, nil
}

// Close stops what start started, the agent first.
func (st *stack) Close() {
	if st.agent != nil {
		_ = st.agent.Close()
	}
	if st.tasksDB != nil {
		_ = st.tasksDB.Close()
	}
	if st.checker != nil {
		_ = st.checker.Close() // ends the catalog sessions, before the catalog stops
	}
	if st.emb != nil {
		st.emb.Close()
	}
	if st.tokenFile != "" {
		_ = os.Remove(st.tokenFile)
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
	fmt.Fprintf(w, "  caller      %s, token issued at %s for %s; the agent verifies it, then exchanges it for audience %s\n\n", demoUser, webClient, agentClient, mcpAudience)
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

// serve prints where the agent is and serves until ctx ends (exit 0), or
// until the agent stops by itself (exit 1). With the embedded provider it
// first writes the demo user's token to tokenFile, or to a file in a new
// temporary directory when tokenFile is empty.
func serve(ctx context.Context, st *stack, tokenFile string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "agent card: %s\n", st.agent.CardURL())
	fmt.Fprintf(stdout, "JSON-RPC:   %s (A2A-Version: 1.0, or 0.3 without the header; Authorization: Bearer <token>)\n", st.agent.Endpoint)
	if st.emb != nil {
		file := tokenFile
		if file == "" {
			dir, err := os.MkdirTemp("", "availability-")
			if err != nil {
				fmt.Fprintf(stderr, "availability: %v\n", err)
				return 1
			}
			st.tokenDir = dir
			file = filepath.Join(dir, "token")
		}
		if err := writeTokenFile(file, st.userToken); err != nil {
			fmt.Fprintf(stderr, "availability: writing the demo token: %v\n", err)
			return 1
		}
		st.tokenFile = file
		fmt.Fprintf(stdout, "demo token: %s (user %s, audience %s, valid %s, removed on exit)\n", file, demoUser, agentClient, demoTokenLifetime)
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

// writeTokenFile writes token to path with mode 0600, atomically: a reader
// that polls for the file never sees it partly written, and a file left by
// an earlier run is replaced, never appended to or left with its old mode.
func writeTokenFile(path, token string) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err == nil {
		_, err = f.WriteString(token)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
