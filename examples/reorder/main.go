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
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the schedule's zone must load on machines without a zone database

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/cli"
	"github.com/candorkit/candor/examples/internal/demo"
	"github.com/candorkit/candor/examples/internal/telemetry"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/reorder"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
)

func main() {
	// demo.Main keeps only warnings and errors from slog.Default, which
	// zitadel's OP logs through; this program's own logger is separate (-v).
	a := &app{stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv, now: time.Now, progName: progName(os.Args[0])}
	demo.Main(func(ctx context.Context) int { return a.run(ctx, os.Args[1:]) })
}

// Environment variables. Secrets are read only from the environment or a
// flag, and never printed or logged.
const (
	envState        = "CANDOR_REORDER_STATE"
	envMandateKey   = "CANDOR_MANDATE_KEY" // base64 or hex, 32 bytes; see mandate.ParseKey
	envCatalog      = "CANDOR_REORDER_CATALOG"
	envTokenURL     = "CANDOR_REORDER_TOKEN_URL"
	envClientID     = "CANDOR_REORDER_CLIENT_ID"
	envClientSecret = "CANDOR_REORDER_CLIENT_SECRET"
	envAudience     = "CANDOR_REORDER_AUDIENCE"
	envUser         = "CANDOR_REORDER_USER"
	envOfflineToken = "CANDOR_OFFLINE_TOKEN" // grant: the person's offline refresh token
)

// Files in the state directory.
const (
	approvalsFile = "approvals.db" // approval tickets and the reorders table
	mandatesFile  = "mandates.db"  // sealed offline mandates
)

// Exit codes (see docs/examples.md).
const (
	exitOK     = cli.ExitOK
	exitFail   = cli.ExitFail
	exitUsage  = cli.ExitUsage
	exitConfig = cli.ExitConfig
)

// defaultMaxBytes is the default byte budget of one run's MCP reads.
const defaultMaxBytes = 16 << 20

// app is the program without its process: tests run it on loopback.
type app struct {
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
	now            func() time.Time
	progName       string // how printed commands name this program
	// runDaily runs the daily loop; nil means reorder.Run. Tests replace it
	// to run one scheduled job without waiting for the wall clock.
	runDaily func(ctx context.Context, s reorder.Schedule, job reorder.Job, opts ...reorder.Option) error
	// started, when set, receives the embedded catalog and provider once
	// they run (tests read their counters).
	started func(*demo.World)
	// tel is the OpenTelemetry SDK Setup installed from OTEL_* once the
	// command's flags parsed; nil before.
	tel *telemetry.Telemetry
}

// progName is "go run ./examples/reorder" under go run, else the name the
// program was started with.
func progName(arg0 string) string {
	if strings.Contains(filepath.ToSlash(arg0), "/go-build") {
		return "go run ./examples/reorder"
	}
	return arg0
}

func (a *app) env(name string) string {
	v, _ := a.lookup(name)
	return strings.TrimSpace(v)
}

const usageText = `reorder proposes, every day at 06:00 Europe/Paris, purchase quantities for every catalog
reference below the reorder point (order up to 150 when on hand < 50), from a scan it says
is complete or not. It acts only on a person's offline mandate: without one it halts before
any token exchange or catalog read. A complete proposal with lines becomes an approval ticket;
a person approves or rejects it, and an approval writes one reorders row per line, once.

By default it runs an embedded MCP catalog (110 classicmodels products) and an embedded
OpenID provider on 127.0.0.1, where the demo user marie grants the agent a mandate on the
first run (reorder revoke / reorder grant change her mind).

Usage:
  reorder [-once] [-json] [flags]          run daily (or once, now) and print the proposal
  reorder approve [-by NAME] [-comment TEXT] OPERATION-ID
  reorder reject  [-by NAME] [-comment TEXT] OPERATION-ID
  reorder show    OPERATION-ID             a ticket, its decision and its reorders rows
  reorder revoke | grant                   withdraw or give the mandate (demo: marie's)
  reorder help                             this text (reorder CMD -h: the flags of CMD)

Every command takes -state DIR (env ` + envState + `; default <user config dir>/candor/reorder),
the directory holding approvals.db, mandates.db and the demo's key and consent files.
-approvals (run, approve, reject, show; env ` + envApprovals + `) and -mandates (run, revoke,
grant; env ` + envMandates + `) put the approval store (and its reorders table) and the
mandate store elsewhere: a value starting with postgres:// or postgresql:// is a PostgreSQL
DSN (schemas candor and candor_reorder, created when missing; shared by every process on that
database), anything else a SQLite file path. A malformed DSN is a usage error (exit 2; 3 from
the environment) and is never printed; an unreachable database exits 1.

Real services: -catalog URL (env ` + envCatalog + `) starts nothing embedded; then -token-url,
-client-id, -user and the client secret (env ` + envClientSecret + `) are required, and the
mandate key comes from ` + envMandateKey + ` only (32 bytes, base64 or hex). To store a mandate:
` + envOfflineToken + `=<refresh token> reorder grant -user U -client-id C. Secrets and tokens are
never printed or logged.

Deciding a ticket that is already decided: the first decision stands. The same verdict again,
by anyone, records nothing new, says who decided, and for an approval re-runs the idempotent
apply (exit 0); the other verdict is refused (exit 1). -by defaults to $USER, else the login
name, else "operator".

Exit codes: 0 done (a complete proposal, with or without a ticket; a decision recorded or
already standing); 1 the work failed or was refused (no mandate, an incomplete scan, a
rejected mandate, an unreachable catalog or provider, a refused decision, an unknown ticket);
2 usage (bad flags or arguments); 3 configuration (` + envMandateKey + ` missing or invalid with
real services, ` + envOfflineToken + ` missing for grant). A second SIGINT exits at once.
See docs/examples.md.
`

// run dispatches the subcommands and returns the exit code.
func (a *app) run(ctx context.Context, args []string) int {
	defer func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.tel.Shutdown(flush); err != nil {
			fmt.Fprintf(a.stderr, "reorder: flushing telemetry: %v\n", err)
		}
	}()
	if len(args) > 0 {
		switch args[0] {
		case "approve":
			return a.decide(ctx, approval.Approve, args[1:])
		case "reject":
			return a.decide(ctx, approval.Reject, args[1:])
		case "show":
			return a.show(ctx, args[1:])
		case "grant":
			return a.mandateCmd(ctx, "grant", args[1:])
		case "revoke":
			return a.mandateCmd(ctx, "revoke", args[1:])
		case "help":
			fmt.Fprint(a.stdout, usageText+"\n"+telemetry.Usage)
			return exitOK
		}
	}
	return a.agentCmd(ctx, args)
}

// flagSet returns the flag set of a command: "reorder" for a run,
// "reorder approve" and so on for the others.
func (a *app) flagSet(cmd string) *flag.FlagSet {
	name := "reorder"
	if cmd != "reorder" {
		name += " " + cmd
	}
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

// usageOf writes the program's usage and the flags of fs's command.
func usageOf(fs *flag.FlagSet) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprint(w, usageText+"\nFlags of "+fs.Name()+":\n")
		cli.Defaults(w, fs)
		fmt.Fprint(w, "\n"+telemetry.Usage)
	}
}

// parse parses args: -h prints the usage on stdout (exit 0), a bad flag
// prints it on stderr (exit 2).
// Once the flags parsed, it installs the OpenTelemetry SDK from OTEL_*
// (none set: nothing is exported); a bad value is exit 3.
func (a *app) parse(fs *flag.FlagSet, args []string) (int, bool) {
	if code, ok := cli.Parse(fs, args, a.stdout, a.stderr, usageOf(fs)); !ok {
		return code, false
	}
	if a.tel == nil {
		tel, err := telemetry.Setup(context.Background(), "reorder", a.lookup)
		if err != nil {
			fmt.Fprintf(a.stderr, "%s: configuration: %v\n", fs.Name(), err)
			return exitConfig, false
		}
		a.tel = tel
	}
	return 0, true
}

// usageError prints one line and the usage on stderr and returns exit 2.
func (a *app) usageError(fs *flag.FlagSet, format string, args ...any) int {
	return cli.UsageError(a.stderr, usageOf(fs), fs.Name(), format, args...)
}

// defaultStateDir is <user config dir>/candor/reorder.
func defaultStateDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return filepath.Join(".candor", "reorder")
	}
	return filepath.Join(dir, "candor", "reorder")
}

func (a *app) stateFlag(fs *flag.FlagSet) *string {
	def := a.env(envState)
	if def == "" {
		def = defaultStateDir()
	}
	return fs.String("state", def, "state directory (env "+envState+")")
}

// openState creates the state directory (mode 0700) if needed.
func openState(dir string) error {
	if dir == "" {
		return errors.New("empty -state directory")
	}
	return os.MkdirAll(dir, 0o700)
}

// stateArg is the -state argument a printed command needs ("" for the default).
func (a *app) stateArg(dir string) string {
	def := a.env(envState)
	if def == "" {
		def = defaultStateDir()
	}
	if filepath.Clean(dir) == filepath.Clean(def) {
		return ""
	}
	return " -state " + shellQuote(dir)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (a *app) logger(verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
}

// configError is a missing or invalid setting of the environment: exit 3.
type configError struct{ error }

func (e configError) Unwrap() error { return e.error }

// exitFor is the exit code of a failure before the work started.
func exitFor(err error) int {
	if errors.As(err, new(configError)) {
		return exitConfig
	}
	return exitFail
}

// mandateKey returns the key sealing mandates: CANDOR_MANDATE_KEY, or, for
// the embedded demo only, the demo key file in the state directory.
func (a *app) mandateKey(dir string, isDemo bool) ([]byte, error) {
	if v := a.env(envMandateKey); v != "" {
		k, err := mandate.ParseKey(v)
		if err != nil {
			// ParseKey's error never holds the key.
			return nil, configError{fmt.Errorf("%s: %w", envMandateKey, err)}
		}
		return k, nil
	}
	if !isDemo {
		return nil, configError{fmt.Errorf("%s is required with real services (32 bytes, base64 or hex)", envMandateKey)}
	}
	return demoKey(dir)
}

// agentOptions are the flags of a run.
type agentOptions struct {
	state, at, zone                              string
	approvals, mandates                          string // -approvals, -mandates: empty means a file in state
	once, asJSON, verbose                        bool
	catalogURL, tokenURL, clientID, clientSecret string
	audience, user                               string
	policy                                       reorder.Thresholds
	maxBytes                                     int64
}

// agentCmd runs the agent: once, or on its daily schedule until ctx ends.
func (a *app) agentCmd(ctx context.Context, args []string) int {
	var o agentOptions
	fs := a.flagSet("reorder")
	state := a.stateFlag(fs)
	fs.BoolVar(&o.once, "once", false, "run now and exit (default: run daily at -at in -zone until SIGINT/SIGTERM)")
	fs.BoolVar(&o.asJSON, "json", false, "print the run as JSON instead of a table")
	fs.BoolVar(&o.verbose, "v", false, "log the run's steps on stderr (never a token)")
	fs.StringVar(&o.at, "at", "06:00", "daily run time, HH:MM wall clock in -zone")
	fs.StringVar(&o.zone, "zone", "Europe/Paris", "IANA time zone of the schedule (and of the run date)")
	fs.StringVar(&o.catalogURL, "catalog", a.env(envCatalog), "MCP endpoint of a real catalog (env "+envCatalog+"); default: the embedded one")
	fs.StringVar(&o.tokenURL, "token-url", a.env(envTokenURL), "token endpoint of the real OpenID provider (env "+envTokenURL+")")
	fs.StringVar(&o.clientID, "client-id", a.env(envClientID), "the agent's client id at the provider (env "+envClientID+")")
	fs.StringVar(&o.clientSecret, "client-secret", "", "the agent's client secret (prefer env "+envClientSecret+": a flag shows in ps)")
	fs.StringVar(&o.audience, "audience", a.env(envAudience), "audience of the exchanged catalog token (env "+envAudience+"; none sent if empty)")
	fs.StringVar(&o.user, "user", a.env(envUser), "the person whose mandate the agent uses (env "+envUser+")")
	fs.IntVar(&o.policy.ReorderPoint, "reorder-point", reorder.DefaultReorderPoint, "propose a purchase when on hand is below this")
	fs.IntVar(&o.policy.OrderUpTo, "order-up-to", reorder.DefaultOrderUpTo, "a purchase restores stock to this level")
	fs.IntVar(&o.policy.PageSize, "page-size", reorder.DefaultPageSize, "products asked per list-products page")
	fs.IntVar(&o.policy.MaxPages, "max-pages", reorder.DefaultMaxPages, "page cap of one scan (a scan stopped by it is incomplete)")
	fs.IntVar(&o.policy.MaxItems, "max-items", reorder.DefaultMaxItems, "item cap of one scan (a scan stopped by it is incomplete)")
	fs.Int64Var(&o.maxBytes, "max-bytes", defaultMaxBytes, "byte budget of one run's MCP responses")
	fs.StringVar(&o.approvals, "approvals", a.env(envApprovals), "approval store and reorders table: a SQLite file path, or a postgres:// (postgresql://) DSN (env "+envApprovals+"; default "+approvalsFile+" in -state)")
	fs.StringVar(&o.mandates, "mandates", a.env(envMandates), "mandate store: a SQLite file path, or a postgres:// (postgresql://) DSN (env "+envMandates+"; default "+mandatesFile+" in -state)")
	if code, ok := a.parse(fs, args); !ok {
		return code
	}
	o.state = *state
	if fs.NArg() > 0 {
		return a.usageError(fs, "unknown command %q", fs.Arg(0))
	}
	if o.clientSecret == "" {
		o.clientSecret = a.env(envClientSecret)
	}
	if msg := o.check(); msg != "" {
		return a.usageError(fs, "%s", msg)
	}
	if err := o.policy.Validate(); err != nil {
		return a.usageError(fs, "%v", err)
	}
	if o.maxBytes <= 0 {
		return a.usageError(fs, "-max-bytes must be positive")
	}
	for _, st := range []struct{ name, env, value string }{{"approvals", envApprovals, o.approvals}, {"mandates", envMandates, o.mandates}} {
		if code, ok := a.checkStore(fs, st.name, st.env, st.value); !ok {
			return code
		}
	}
	sched, err := parseSchedule(o.at, o.zone)
	if err != nil {
		return a.usageError(fs, "%v", err)
	}
	if err := openState(o.state); err != nil {
		fmt.Fprintln(a.stderr, "reorder:", err)
		return exitFail
	}
	log := a.logger(o.verbose)
	ag, cleanup, err := a.setup(ctx, &o, sched, log)
	if err != nil {
		fmt.Fprintln(a.stderr, "reorder:", err)
		return exitFor(err)
	}
	defer cleanup()

	emit := func(rep *report) {
		if err := a.printReport(rep, o.asJSON, o.state, o.approvals); err != nil {
			log.Error("printing the report", slog.Any("error", err))
		}
	}
	if o.once {
		rep := ag.run(ctx, a.now())
		emit(rep)
		if rep.outcome == outcomeProposed {
			return exitOK
		}
		return exitFail
	}

	fmt.Fprintf(a.stderr, "reorder: daily at %s; next run %s\n", sched, sched.Next(a.now()).Format("2006-01-02 15:04 MST"))
	runDaily := a.runDaily
	if runDaily == nil {
		runDaily = reorder.Run
	}
	err = runDaily(ctx, sched, func(ctx context.Context, at time.Time) error {
		rep := ag.run(ctx, at)
		emit(rep)
		switch rep.outcome {
		case outcomeIncomplete:
			return errors.New("incomplete catalog scan: no ticket")
		case outcomeNoMandate:
			return errors.New(msgNoMandate)
		case outcomeFailed:
			return errors.New(rep.Error)
		}
		return nil
	}, reorder.WithLogger(log))
	if errors.Is(err, context.Canceled) {
		return exitOK // SIGINT or SIGTERM
	}
	fmt.Fprintln(a.stderr, "reorder:", err)
	return exitFail
}

// check names what a run with real services lacks ("" when nothing).
func (o *agentOptions) check() string {
	if o.catalogURL == "" {
		if o.tokenURL != "" || o.clientID != "" || o.clientSecret != "" || o.user != "" || o.audience != "" {
			return "-token-url, -client-id, -client-secret, -audience and -user name real services: give -catalog too"
		}
		return ""
	}
	var miss []string
	if o.tokenURL == "" {
		miss = append(miss, "-token-url ("+envTokenURL+")")
	}
	if o.clientID == "" {
		miss = append(miss, "-client-id ("+envClientID+")")
	}
	if o.clientSecret == "" {
		miss = append(miss, envClientSecret)
	}
	if o.user == "" {
		miss = append(miss, "-user ("+envUser+")")
	}
	if len(miss) > 0 {
		return "with -catalog, these are required too: " + strings.Join(miss, ", ")
	}
	return ""
}

// parseSchedule reads "HH:MM" in zone.
func parseSchedule(at, zone string) (reorder.Schedule, error) {
	h, m, ok := strings.Cut(at, ":")
	hour, err1 := strconv.Atoi(h)
	minute, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 {
		return reorder.Schedule{}, fmt.Errorf("-at %q: want HH:MM", at)
	}
	return reorder.NewSchedule(hour, minute, zone)
}

// setup opens the stores, starts the embedded services when no real
// catalog is named, and returns the agent.
func (a *app) setup(ctx context.Context, o *agentOptions, sched reorder.Schedule, log *slog.Logger) (_ *agent, _ func(), err error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	isDemo := o.catalogURL == ""
	key, err := a.mandateKey(o.state, isDemo)
	if err != nil {
		return nil, nil, err
	}
	approvals, err := openApprovals(ctx, o.state, o.approvals, log)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { _ = approvals.Close() })

	ag := &agent{
		policy:    o.policy,
		budget:    mcpclient.Budget{MaxCalls: o.policy.WithDefaults().MaxPages, MaxBytes: o.maxBytes},
		schedule:  sched,
		approvals: approvals.Store,
		log:       log,
	}
	var agentCfg *tokenexchange.Config
	var emb *demo.World
	if isDemo {
		emb, err = startEmbedded(ctx, log)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, emb.Close)
		if a.started != nil {
			a.started(emb)
		}
		ag.user, ag.agentName, ag.catalogURL = demoUser, demoAgent, emb.MCPURL
		ag.catalogLabel = "embedded classicmodels catalog at " + emb.MCPURL
		agentCfg = emb.AgentConfig()
	} else {
		ag.user, ag.agentName, ag.catalogURL, ag.catalogLabel = o.user, o.clientID, o.catalogURL, o.catalogURL
		agentCfg = &tokenexchange.Config{TokenURL: o.tokenURL, ClientID: o.clientID, ClientSecret: o.clientSecret}
		if o.audience != "" {
			agentCfg.Audience = []string{o.audience}
		}
	}
	agentCfg.Logger = log
	mandates, err := openMandates(ctx, o.state, o.mandates,
		mandate.WithKey(key), mandate.WithAgent(ag.agentName, agentCfg), mandate.WithLogger(log))
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { _ = mandates.Close() })
	ag.mandates = mandates.Store
	if isDemo {
		if err := grantDemoMandate(ctx, emb, mandates.Store, o.state, log); err != nil {
			return nil, nil, err
		}
	}
	return ag, closeAll, nil
}
