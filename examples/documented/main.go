package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"syscall"
	"time"

	"github.com/candorkit/candor/retrieval"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed; the message says why
	exitUsage   = 2 // the command line is wrong
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

const usage = `usage:
  documented run    [-dir DIR] [-invalid-evidence] [-live [-ollama-url URL] [-ollama-model MODEL]]
  documented resume [-dir DIR] [-by NAME] [-comment TEXT] approve|reject
  documented show   [-dir DIR]

run proposes a backlog item backed by an exact quote and stops, waiting for a
person; resume records that person's decision in a new process and applies an
approval once; show prints what is stored. Run "documented CMD -h" for flags.
`

// run executes one command and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "run":
		err = runCommand(ctx, rest, stdout, stderr, getenv)
	case "resume":
		err = resumeCommand(ctx, rest, stdout, stderr, getenv)
	case "show":
		err = showCommand(ctx, rest, stdout, stderr, getenv)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, cmd)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "documented: %v\n\n%s", err, usage)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "documented: %v\n", err)
		return exitFailure
	}
}

// common holds the flags every command takes.
type common struct {
	Dir     string
	Verbose bool
}

func (c *common) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.Dir, "dir", getenv(envDir), "data directory (default $"+envDir+", else "+defaultDirHelp+")")
	fs.BoolVar(&c.Verbose, "v", false, "log the stores' operations to stderr")
}

const defaultDirHelp = "<user cache dir>/candor/documented"

// resolve fills in the default directory and returns the logger.
func (c *common) resolve(stderr io.Writer) (*slog.Logger, error) {
	if c.Dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no -dir given and no user cache directory: %w", err)
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

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("documented "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
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

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var cfg runConfig
	fs := newFlagSet("run", stderr)
	cfg.common.register(fs, getenv)
	fs.BoolVar(&cfg.InvalidEvidence, "invalid-evidence", false, "cite chunk "+inventedChunk+" instead of the real one (the gate must refuse it)")
	fs.BoolVar(&cfg.Live, "live", false, "embed the corpus and the question with Ollama instead of the controlled vectors")
	fs.StringVar(&cfg.OllamaURL, "ollama-url", orDefault(getenv(envOllamaURL), retrieval.DefaultOllamaURL), "Ollama base URL for -live (default $"+envOllamaURL+")")
	fs.StringVar(&cfg.OllamaModel, "ollama-model", orDefault(getenv(envOllamaModel), defaultOllamaModel), "Ollama embedding model for -live (default $"+envOllamaModel+")")
	fs.DurationVar(&cfg.OllamaTimeout, "ollama-timeout", retrieval.DefaultOllamaTimeout, "bound on each Ollama call")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: run takes no arguments, got %q", errUsage, pos)
	}
	log, err := cfg.resolve(stderr)
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

func resumeCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var cfg resumeConfig
	fs := newFlagSet("resume", stderr)
	cfg.common.register(fs, getenv)
	fs.StringVar(&cfg.DecidedBy, "by", defaultDecider(getenv), "who decides (default: the login name)")
	fs.StringVar(&cfg.Comment, "comment", "", "a comment stored with the decision")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "approve" && pos[0] != "reject") {
		return fmt.Errorf("%w: resume needs exactly one verdict, approve or reject; got %q", errUsage, pos)
	}
	cfg.Verdict = pos[0]
	log, err := cfg.resolve(stderr)
	if err != nil {
		return err
	}
	return resumeRun(ctx, cfg, stdout, log)
}

func showCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var cfg common
	fs := newFlagSet("show", stderr)
	cfg.register(fs, getenv)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: show takes no arguments, got %q", errUsage, pos)
	}
	log, err := cfg.resolve(stderr)
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

// defaultDecider names the person deciding: the login name, else $USER,
// else "operator".
func defaultDecider(getenv func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return orDefault(getenv("USER"), "operator")
}
