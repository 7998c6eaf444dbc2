package overseer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/candorkit/candor/n8n"
)

// Verdict is an overseer's decision on one workflow.
type Verdict struct {
	Pass   bool
	Reason string // one sentence
	// By names the overseer: "rules" or "command: <command line>".
	By string
	// NotPerformed lists review checks this overseer did not perform.
	NotPerformed []string
}

// String renders "PASS: reason" or "FAIL: reason".
func (v Verdict) String() string {
	if v.Pass {
		return "PASS: " + v.Reason
	}
	return "FAIL: " + v.Reason
}

// Review is what an overseer is shown.
type Review struct {
	AutomationID int64
	Name         string
	Spec         string
	Workflow     json.RawMessage
	// Credentials are the credential names available in the sandbox.
	Credentials []string
}

// Overseer reviews a generated workflow. An error means no verdict was reached;
// the caller treats it as a failure, never as a PASS.
type Overseer interface {
	Review(ctx context.Context, r Review) (Verdict, error)
}

// Sentinel errors; see the package documentation.
var (
	ErrNotWired        = errors.New("overseer: rules overseer has no structure check (use NewRules)")
	ErrAlreadyReviewed = errors.New("overseer: the command already reviewed this automation; it is not run for retries")
)

// CheckLogicNotPerformed is recorded by the rules overseer in every verdict.
const CheckLogicNotPerformed = "check 4: the logic matches the spec (not performed by the rules overseer)"

// StructureFunc is check 1, the shape the rules overseer needs from package
// n8n: the problems (one sentence each) that make workflow JSON an invalid
// n8n workflow, none when it is valid.
type StructureFunc func(workflow json.RawMessage) []string

// Rules is the default overseer. It runs the review checks 1–3 of
// docs/builder-playbook.md (rule 6)
// mechanically: 1 structure (Structure; NewRules wires it to
// n8n.ValidateJSON), 2 credentials (every credential a node references is one
// of Review.Credentials, by exact name), 3 no stubs (no NoOp or disabled node,
// no placeholder text such as TODO, FIXME, YOUR_…, <api key> or example.com in
// parameters). It never performs check 4.
type Rules struct {
	Structure StructureFunc
}

// NewRules returns the rules overseer with check 1 done by n8n.ValidateJSON.
func NewRules() Rules { return Rules{Structure: N8NStructure} }

// N8NStructure is check 1 by package n8n: every problem n8n.ValidateJSON
// reports, as "path: message".
func N8NStructure(workflow json.RawMessage) []string {
	problems := n8n.ValidateJSON(workflow)
	out := make([]string, 0, len(problems))
	for _, p := range problems {
		out = append(out, p.String())
	}
	return out
}

// Review implements Overseer.
func (r Rules) Review(ctx context.Context, rv Review) (Verdict, error) {
	if r.Structure == nil {
		return Verdict{}, ErrNotWired
	}
	if err := ctx.Err(); err != nil {
		return Verdict{}, err
	}
	v := Verdict{By: "rules", NotPerformed: []string{CheckLogicNotPerformed}}
	if problems := r.Structure(rv.Workflow); len(problems) > 0 {
		v.Reason = sentence(fmt.Sprintf("Check 1 (structure) failed: %s", problems[0]))
		if len(problems) > 1 {
			v.Reason = sentence(fmt.Sprintf("Check 1 (structure) failed: %s (and %d more problem(s))", problems[0], len(problems)-1))
		}
		return v, nil
	}
	if p := credentialProblem(rv); p != "" {
		v.Reason = sentence("Check 2 (credentials) failed: " + p)
		return v, nil
	}
	if p := stubProblem(rv.Workflow); p != "" {
		v.Reason = sentence("Check 3 (no stubs) failed: " + p)
		return v, nil
	}
	v.Pass = true
	v.Reason = "Checks 1-3 (structure, credentials, no stubs) passed mechanically; check 4, the logic against the spec, was not performed."
	return v, nil
}

type ruleNode struct {
	Name        string                     `json:"name"`
	Type        string                     `json:"type"`
	Disabled    bool                       `json:"disabled"`
	Parameters  json.RawMessage            `json:"parameters"`
	Credentials map[string]json.RawMessage `json:"credentials"`
}

func ruleNodes(wf json.RawMessage) ([]ruleNode, error) {
	var doc struct {
		Nodes []ruleNode `json:"nodes"`
	}
	if err := json.Unmarshal(wf, &doc); err != nil {
		return nil, err
	}
	return doc.Nodes, nil
}

func credentialProblem(rv Review) string {
	nodes, err := ruleNodes(rv.Workflow)
	if err != nil {
		return "the nodes cannot be read: " + err.Error()
	}
	avail := map[string]bool{}
	for _, c := range rv.Credentials {
		avail[c] = true
	}
	for _, n := range nodes {
		types := make([]string, 0, len(n.Credentials))
		for t := range n.Credentials {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, t := range types {
			var ref struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(n.Credentials[t], &ref) != nil || strings.TrimSpace(ref.Name) == "" {
				return fmt.Sprintf("node %q references a %s credential without a name.", n.Name, t)
			}
			if !avail[ref.Name] {
				return fmt.Sprintf("node %q references credential %q, which is not one of the available credentials.", n.Name, ref.Name)
			}
		}
	}
	return ""
}

var placeholderRE = regexp.MustCompile(`\b(TODO|FIXME|TBD)\b|(?i:\blorem ipsum\b|\bYOUR_[A-Z0-9_]+\b|\bexample\.(com|org|net)\b)|<[a-z]+(?:[_ ][a-z]+)+>`)

func stubProblem(wf json.RawMessage) string {
	nodes, err := ruleNodes(wf)
	if err != nil {
		return "the nodes cannot be read: " + err.Error()
	}
	for _, n := range nodes {
		switch {
		case strings.HasSuffix(strings.ToLower(n.Type), ".noop"):
			return fmt.Sprintf("node %q is a No Operation node.", n.Name)
		case n.Disabled:
			return fmt.Sprintf("node %q is disabled.", n.Name)
		}
		if m := placeholderRE.Find(n.Parameters); m != nil {
			return fmt.Sprintf("node %q has placeholder text %q in its parameters.", n.Name, m)
		}
	}
	return ""
}

// Bounds of the command overseer.
const (
	MaxPromptTokens = 500
	SpecChars       = 200
	MaxOutput       = 64 << 10
	DefaultTimeout  = 5 * time.Minute
)

// CommandError is a command that did not produce a usable answer.
type CommandError struct {
	Command  string
	ExitCode int    // -1 when it did not exit normally
	Stderr   string // last lines, bounded
	Err      error
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("overseer: command %q", e.Command)
	if e.ExitCode >= 0 {
		msg += fmt.Sprintf(" exited %d", e.ExitCode)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *CommandError) Unwrap() error { return e.Err }

// OutputError is output that does not start with PASS or FAIL.
type OutputError struct {
	Command string
	Output  string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("overseer: command %q answered neither PASS nor FAIL: %q", e.Command, firstLine(e.Output, 120))
}

// Command runs an external reviewer once per automation. Create it with
// NewCommand; it is safe for concurrent use.
type Command struct {
	line    string
	timeout time.Duration

	mu       sync.Mutex
	reviewed map[int64]bool
}

// NewCommand returns an overseer running cmdline through /bin/sh -c, with the
// prompt on stdin. timeout <= 0 uses DefaultTimeout.
func NewCommand(cmdline string, timeout time.Duration) (*Command, error) {
	if strings.TrimSpace(cmdline) == "" {
		return nil, errors.New("overseer: empty -overseer-cmd")
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Command{line: cmdline, timeout: timeout, reviewed: map[int64]bool{}}, nil
}

// Review implements Overseer. It runs the command at most once per automation id.
func (c *Command) Review(ctx context.Context, rv Review) (Verdict, error) {
	prompt, err := CommandPrompt(rv)
	if err != nil {
		return Verdict{}, err
	}
	c.mu.Lock()
	if c.reviewed[rv.AutomationID] {
		c.mu.Unlock()
		return Verdict{}, fmt.Errorf("%w (automation %d)", ErrAlreadyReviewed, rv.AutomationID)
	}
	c.reviewed[rv.AutomationID] = true
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.line)
	cmd.Stdin = strings.NewReader(prompt)
	stdout := &capBuffer{max: MaxOutput}
	stderr := &capBuffer{max: 8 << 10, keepTail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The command runs in its own process group, and the whole group is
	// killed on timeout, so a reviewer's children cannot outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return Verdict{}, &CommandError{Command: c.line, ExitCode: -1, Stderr: lastLines(stderr.String(), 5), Err: ctx.Err()}
	}
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return Verdict{}, &CommandError{Command: c.line, ExitCode: code, Stderr: lastLines(stderr.String(), 5), Err: err}
	}
	if stdout.overflow {
		return Verdict{}, &CommandError{Command: c.line, ExitCode: 0, Err: fmt.Errorf("output larger than %d bytes", MaxOutput)}
	}
	v, ok := ParseVerdict(stdout.String())
	if !ok {
		return Verdict{}, &OutputError{Command: c.line, Output: stdout.String()}
	}
	v.By = "command: " + c.line
	return v, nil
}

// ParseVerdict reads PASS or FAIL at the start of the first non-blank line
// (Markdown emphasis and heading marks around it are ignored) and the sentence
// after it, or on the next non-blank line.
func ParseVerdict(out string) (Verdict, bool) {
	lines := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return Verdict{}, false
	}
	first := strings.TrimLeft(strings.TrimSpace(lines[i]), "*#>`_ ")
	var v Verdict
	switch upper := strings.ToUpper(first); {
	case strings.HasPrefix(upper, "PASS"):
		v.Pass = true
	case strings.HasPrefix(upper, "FAIL"):
	default:
		return Verdict{}, false
	}
	rest := first[4:]
	if rest != "" {
		if r, _ := utf8.DecodeRuneInString(rest); r != ':' && r != '-' && r != '—' && r != '–' && r != '.' && r != ' ' && r != '*' && r != '`' && r != '_' && r != ',' {
			return Verdict{}, false // "PASSED", "FAILURE" and the like are not the contract
		}
	}
	reason := strings.TrimSpace(strings.TrimLeft(rest, ":-—–., *`_"))
	for j := i + 1; reason == "" && j < len(lines); j++ {
		reason = strings.TrimSpace(lines[j])
	}
	if reason == "" {
		reason = "(no reason given)"
	}
	v.Reason = sentence(reason)
	return v, true
}

// CommandPrompt is the prompt the command receives: under MaxPromptTokens by
// EstimateTokens, with the spec cut to SpecChars characters.
func CommandPrompt(rv Review) (string, error) {
	var wf struct {
		Nodes []struct {
			Name        string                     `json:"name"`
			Type        string                     `json:"type"`
			Credentials map[string]json.RawMessage `json:"credentials"`
		} `json:"nodes"`
		Connections map[string]json.RawMessage `json:"connections"`
	}
	if err := json.Unmarshal(rv.Workflow, &wf); err != nil || wf.Nodes == nil {
		return "", fmt.Errorf("overseer: the workflow is not JSON with a nodes array: %v", err)
	}
	spec := strings.Join(strings.Fields(rv.Spec), " ")
	if r := []rune(spec); len(r) > SpecChars {
		spec = string(r[:SpecChars]) + "…"
	}
	head := fmt.Sprintf("Review an n8n workflow generated for an automation. Answer PASS or FAIL on the first line, then one sentence why. FAIL if the logic does not match the spec, if a node is a stub or placeholder, or if it uses a credential not listed.\n"+
		"Automation: %s\nSpec: %s\nAvailable credentials: %s\n",
		clip(strings.Join(strings.Fields(rv.Name), " "), 80), spec, clip(strings.Join(rv.Credentials, ", "), 200))
	tail := fmt.Sprintf("Connections from %d node(s).\n", len(wf.Connections))

	var nodes []string
	for _, n := range wf.Nodes {
		var creds []string
		for typ, ref := range n.Credentials {
			var named struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(ref, &named)
			creds = append(creds, clip(named.Name, 40)+" ("+clip(typ, 40)+")")
		}
		sort.Strings(creds)
		s := clip(n.Name, 40) + " [" + clip(strings.TrimPrefix(n.Type, "n8n-nodes-base."), 40) + "]"
		if len(creds) > 0 {
			s += " uses " + strings.Join(creds, ", ")
		}
		nodes = append(nodes, s)
	}
	// Fit the node list into the token budget, dropping from the end.
	for keep := len(nodes); keep >= 0; keep-- {
		list := strings.Join(nodes[:keep], "; ")
		if keep < len(nodes) {
			list += fmt.Sprintf("; … and %d more node(s)", len(nodes)-keep)
		}
		prompt := head + fmt.Sprintf("Nodes in order (%d): %s\n", len(nodes), list) + tail
		if EstimateTokens(prompt) < MaxPromptTokens {
			return prompt, nil
		}
	}
	return "", errors.New("overseer: the prompt does not fit in 500 tokens even without nodes")
}

// EstimateTokens is a conservative token count: one per three bytes, which
// over-counts English prose and JSON-ish text for common tokenizers.
func EstimateTokens(s string) int { return (len(s) + 2) / 3 }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// sentence reduces text to its first line, at most 300 characters.
func sentence(s string) string { return firstLine(strings.TrimSpace(s), 300) }

func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(strings.TrimSpace(s), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// capBuffer keeps at most max bytes: the head, or the tail when keepTail.
type capBuffer struct {
	buf      bytes.Buffer
	max      int
	keepTail bool
	overflow bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.buf.Write(p)
	if b.buf.Len() > b.max {
		b.overflow = true
		if b.keepTail {
			tail := bytes.Clone(b.buf.Bytes()[b.buf.Len()-b.max:])
			b.buf.Reset()
			b.buf.Write(tail)
		} else {
			b.buf.Truncate(b.max)
		}
	}
	return len(p), nil
}

func (b *capBuffer) String() string { return b.buf.String() }
