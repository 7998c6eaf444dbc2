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
	"time"

	"github.com/candorkit/candor/examples/internal/cli"
	"github.com/candorkit/candor/examples/internal/decision"
	"github.com/candorkit/candor/examples/internal/pgdsn"
	"github.com/candorkit/candor/examples/internal/telemetry"
	"github.com/candorkit/candor/retrieval/ollama"
)

// Exit codes (see docs/examples.md).
const (
	exitOK      = cli.ExitOK
	exitFailure = cli.ExitFail   // the command ran and failed; the message says why
	exitUsage   = cli.ExitUsage  // the command line is wrong
	exitConfig  = cli.ExitConfig // the environment lacks what the command needs
)

// Environment variables the agent reads (flags override them).
const (
	envOllamaURL   = "CANDOR_OLLAMA_URL"
	envOllamaModel = "CANDOR_OLLAMA_MODEL"
	envDir         = "CANDOR_DOCUMENTED_DIR"
)

// defaultOllamaModel is the embedding model -live asks for unless told
// otherwise.
const defaultOllamaModel = "nomic-embed-text"

// errUsage marks a command-line error (exit status 2).
var errUsage = errors.New("usage")

// errConfig marks a setting of the environment the command needs and
// lacks (exit status 3).
var errConfig = errors.New("configuration")

func main() {
	cli.Main(func(ctx context.Context) int {
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	})
}

const usage = `Usage:
  documented run    [-dir DIR] [-approvals STORE] [-invalid-evidence] [-live [-ollama-url URL] [-ollama-model MODEL]]
  documented resume [-dir DIR] [-approvals STORE] [-by NAME] [-comment TEXT] approve|reject
  documented show   [-dir DIR] [-approvals STORE]
  documented help

run proposes a backlog item backed by an exact quote and stops, waiting for a
person; resume records that person's decision in a new process and applies an
approval once; show prints what is stored. Run "documented CMD -h" for flags.

-approvals is the approval store and its ApprovedBacklogItems table: a value
starting with postgres:// or postgresql:// is a PostgreSQL DSN (schemas candor
and candor_documented, created when missing), anything else a SQLite file
path (default approvals.db in DIR). A malformed DSN is a usage error and is
never printed; an unreachable database exits 1.

Deciding again: the first decision stands. The same verdict again, by anyone,
records nothing new and says who decided (exit 0; an approval's apply runs
again, harmlessly); the other verdict is refused (exit 1). -by defaults to
$USER, else the login name, else "operator".

Environment: ` + envDir + ` (the data directory, default ` + defaultDirHelp + `),
` + envOllamaURL + `, ` + envOllamaModel + ` (for -live).

Exit codes: 0 done; 1 the command failed or was refused (the gate refused the
evidence, a proposal is still waiting, a contradicting decision, ...); 2 usage
(bad flags or arguments); 3 configuration (no -dir and no user cache
directory). A second SIGINT exits at once. See docs/examples.md.
`

// invocation is the flag set of the command being run, for its usage.
type invocation struct {
	fs     *flag.FlagSet
	getenv func(string) string
	tel    *telemetry.Telemetry // installed from OTEL_* once the flags parsed
}

// usageOf writes the usage and, when a command's flags are known, its flags.
func (inv *invocation) usageOf(w io.Writer) {
	fmt.Fprint(w, usage)
	if inv.fs != nil {
		fmt.Fprintf(w, "\nFlags of %s:\n", inv.fs.Name())
		cli.Defaults(w, inv.fs)
	}
	fmt.Fprint(w, "\n"+telemetry.Usage)
}

// run executes one command and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	inv := &invocation{getenv: getenv}
	defer func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := inv.tel.Shutdown(flush); err != nil {
			fmt.Fprintf(stderr, "documented: flushing telemetry: %v\n", err)
		}
	}()
	var err error
	if len(args) == 0 {
		err = fmt.Errorf("%w: missing command", errUsage)
	} else {
		switch cmd, rest := args[0], args[1:]; cmd {
		case "run":
			err = runCommand(ctx, inv, rest, stdout, stderr, getenv)
		case "resume":
			err = resumeCommand(ctx, inv, rest, stdout, stderr, getenv)
		case "show":
			err = showCommand(ctx, inv, rest, stdout, stderr, getenv)
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, usage+"\n"+telemetry.Usage)
			return exitOK
		default:
			err = fmt.Errorf("%w: unknown command %q", errUsage, cmd)
		}
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		inv.usageOf(stdout)
		return exitOK
	case errors.Is(err, errUsage):
		name := "documented"
		if inv.fs != nil {
			name = inv.fs.Name()
		}
		return cli.UsageError(stderr, inv.usageOf, name, "%s", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	case errors.Is(err, errConfig):
		fmt.Fprintf(stderr, "documented: %v\n", err)
		return exitConfig
	default:
		fmt.Fprintf(stderr, "documented: %v\n", err)
		return exitFailure
	}
}

// common holds the flags every command takes.
type common struct {
	Dir       string
	Approvals string // -approvals: a SQLite file or a PostgreSQL DSN; empty: approvals.db in Dir
	Verbose   bool
}

func (c *common) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.Dir, "dir", getenv(envDir), "data directory (default $"+envDir+", else "+defaultDirHelp+")")
	fs.StringVar(&c.Approvals, "approvals", "", "approval store and ApprovedBacklogItems table: a SQLite file path, or a postgres:// (postgresql://) DSN (default approvals.db in -dir)")
	fs.BoolVar(&c.Verbose, "v", false, "log the stores' operations to stderr")
}

const defaultDirHelp = "<user cache dir>/candor/documented"

// resolve fills in the default directory, installs the OpenTelemetry SDK
// from OTEL_* (none set: nothing is exported; a bad value is errConfig)
// and returns the logger.
func (c *common) resolve(inv *invocation, stderr io.Writer) (*slog.Logger, error) {
	if pgdsn.IsDSN(c.Approvals) {
		if err := pgdsn.Check("-approvals", c.Approvals); err != nil {
			return nil, fmt.Errorf("%w: %w", errUsage, err)
		}
	}
	if inv.tel == nil {
		lookup := func(k string) (string, bool) { v := inv.getenv(k); return v, v != "" }
		tel, err := telemetry.Setup(context.Background(), "documented", lookup)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errConfig, err)
		}
		inv.tel = tel
	}
	if c.Dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("%w: no -dir given and no user cache directory: %w", errConfig, err)
		}
		c.Dir = filepath.Join(cache, "candor", "documented")
	}
	level := slog.LevelWarn
	if c.Verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})), nil
}

// parse parses flags that may come before and after positional arguments
// ("resume approve -dir X" as well as "resume -dir X approve") and returns
// the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlagSet(inv *invocation, name string) *flag.FlagSet {
	inv.fs = flag.NewFlagSet("documented "+name, flag.ContinueOnError)
	return inv.fs
}

// runConfig is what run is told.
type runConfig struct {
	common
	InvalidEvidence bool
	Live            bool
	OllamaURL       string
	OllamaModel     string
	OllamaTimeout   time.Duration
}

func runCommand(ctx context.Context, inv *invocation, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var cfg runConfig
	fs := newFlagSet(inv, "run")
	cfg.common.register(fs, getenv)
	fs.BoolVar(&cfg.InvalidEvidence, "invalid-evidence", false, "cite chunk "+inventedChunk+" instead of the real one (the gate must refuse it)")
	fs.BoolVar(&cfg.Live, "live", false, "embed the corpus and the question with Ollama instead of the controlled vectors")
	fs.StringVar(&cfg.OllamaURL, "ollama-url", orDefault(getenv(envOllamaURL), ollama.DefaultURL), "Ollama base URL for -live (default $"+envOllamaURL+")")
	fs.StringVar(&cfg.OllamaModel, "ollama-model", orDefault(getenv(envOllamaModel), defaultOllamaModel), "Ollama embedding model for -live (default $"+envOllamaModel+")")
	fs.DurationVar(&cfg.OllamaTimeout, "ollama-timeout", ollama.DefaultTimeout, "bound on each Ollama call")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: takes no arguments, got %q", errUsage, pos)
	}
	log, err := cfg.resolve(inv, stderr)
	if err != nil {
		return err
	}
	return proposeRun(ctx, cfg, stdout, log)
}

// resumeConfig is what resume is told.
type resumeConfig struct {
	common
	Verdict   string
	DecidedBy string
	Comment   string
}

func resumeCommand(ctx context.Context, inv *invocation, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var cfg resumeConfig
	fs := newFlagSet(inv, "resume")
	cfg.common.register(fs, getenv)
	fs.StringVar(&cfg.DecidedBy, "by", decision.DefaultDecider(func(k string) (string, bool) { return getenv(k), true }),
		`who decides (default $USER, else the login name, else "operator")`)
	fs.StringVar(&cfg.Comment, "comment", "", "a comment stored with the decision")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "approve" && pos[0] != "reject") {
		return fmt.Errorf("%w: needs exactly one verdict, approve or reject; got %q", errUsage, pos)
	}
	cfg.Verdict = pos[0]
	log, err := cfg.resolve(inv, stderr)
	if err != nil {
		return err
	}
	return resumeRun(ctx, cfg, stdout, log)
}

func showCommand(ctx context.Context, inv *invocation, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var cfg common
	fs := newFlagSet(inv, "show")
	cfg.register(fs, getenv)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: takes no arguments, got %q", errUsage, pos)
	}
	log, err := cfg.resolve(inv, stderr)
	if err != nil {
		return err
	}
	return show(ctx, cfg, stdout, log)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
