package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/decision"
	"github.com/candorkit/candor/tokenexchange/mandate"
)

// decide records a person's verdict on a ticket and, on approval, applies
// it: one reorders row per line, in approval.Apply's transaction, at most
// once. The policy for a ticket already decided is package decision's:
// approving again (by anyone) records nothing and re-runs only the
// idempotent Apply, which also finishes an approval whose apply was
// interrupted; rejecting again records nothing; a reject after an approve,
// or an approve after a reject, is refused and changes nothing.
func (a *app) decide(ctx context.Context, verdict approval.Verdict, args []string) int {
	name := string(verdict)
	fs := a.flagSet(name)
	state := a.stateFlag(fs)
	where := a.storeFlag(fs, "approvals", envApprovals, approvalsFile, "approval store")
	by := fs.String("by", decision.DefaultDecider(a.lookup), "who decides (default $USER, else the login name, else \"operator\")")
	comment := fs.String("comment", "", "a comment kept with the decision")
	verbose := fs.Bool("v", false, "log the store's steps on stderr")
	if code, ok := a.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return a.usageError(fs, "want exactly one operation id, got %d argument(s)", fs.NArg())
	}
	id := fs.Arg(0)
	if strings.TrimSpace(*by) == "" {
		return a.usageError(fs, "say who decides with -by NAME")
	}
	if code, ok := a.checkStore(fs, "approvals", envApprovals, *where); !ok {
		return code
	}
	if err := openState(*state); err != nil {
		fmt.Fprintf(a.stderr, "reorder %s: %v\n", name, err)
		return exitFail
	}
	store, err := openApprovals(ctx, *state, *where, a.logger(*verbose))
	if err != nil {
		fmt.Fprintf(a.stderr, "reorder %s: %v\n", name, err)
		return exitFail
	}
	defer store.Close()

	out, err := decision.Record(ctx, store.Store, approval.Decision{OperationID: id, Verdict: verdict, Comment: *comment, DecidedBy: *by})
	var lost *approval.AlreadyDecidedError
	switch {
	case errors.Is(err, approval.ErrUnknownOperation):
		fmt.Fprintf(a.stderr, "reorder %s: no ticket %q in %s\n", name, id, store.place)
		return exitFail
	case errors.As(err, &lost):
		fmt.Fprintf(a.stderr, "reorder %s: %s is already decided: %s by %s (status %s); nothing changes\n",
			name, id, pastTense(lost.Standing.Verdict), lost.Standing.DecidedBy, lost.Status)
		return exitFail
	case err != nil:
		fmt.Fprintf(a.stderr, "reorder %s: %v\n", name, err)
		return exitFail
	case verdict == approval.Reject:
		fmt.Fprintf(a.stdout, "%s %s: nothing will be ordered\n", id, out)
		return exitOK
	case out.Repeated:
		fmt.Fprintf(a.stdout, "%s %s; applying it again is harmless (at most once)\n", id, out)
	default:
		fmt.Fprintf(a.stdout, "%s %s\n", id, out)
	}

	written := 0
	st, err := store.Apply(ctx, id, writeReorders(a.now, &written, store.postgres()))
	if err != nil {
		fmt.Fprintf(a.stderr, "reorder approve: applying %s: %v\n", id, err)
		if errors.Is(err, approval.ErrEffectFailed) {
			fmt.Fprintln(a.stderr, "nothing was written; the ticket stays approved and approving it again retries")
		}
		return exitFail
	}
	if written > 0 {
		fmt.Fprintf(a.stdout, "applied: %d reorders row(s) written (approval item %d)\n", written, st.ItemID)
	} else {
		fmt.Fprintf(a.stdout, "already applied (approval item %d): no row written now\n", st.ItemID)
	}
	rows, err := store.readReorders(ctx, id)
	if err != nil {
		fmt.Fprintf(a.stderr, "reorder approve: reading the reorders rows: %v\n", err)
		return exitFail
	}
	printRows(a.stdout, rows)
	return exitOK
}

func pastTense(v approval.Verdict) string {
	switch v {
	case approval.Approve:
		return "approved"
	case approval.Reject:
		return "rejected"
	}
	return string(v)
}

// show prints one ticket, its decision and its reorders rows.
func (a *app) show(ctx context.Context, args []string) int {
	fs := a.flagSet("show")
	state := a.stateFlag(fs)
	where := a.storeFlag(fs, "approvals", envApprovals, approvalsFile, "approval store")
	asJSON := fs.Bool("json", false, "print as JSON")
	if code, ok := a.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return a.usageError(fs, "want exactly one operation id, got %d argument(s)", fs.NArg())
	}
	id := fs.Arg(0)
	if code, ok := a.checkStore(fs, "approvals", envApprovals, *where); !ok {
		return code
	}
	if err := openState(*state); err != nil {
		fmt.Fprintln(a.stderr, "reorder show:", err)
		return exitFail
	}
	store, err := openApprovals(ctx, *state, *where, a.logger(false))
	if err != nil {
		fmt.Fprintln(a.stderr, "reorder show:", err)
		return exitFail
	}
	defer store.Close()
	st, err := store.Read(ctx, id)
	if err != nil {
		fmt.Fprintln(a.stderr, "reorder show:", err)
		return exitFail
	}
	rows, err := store.readReorders(ctx, id)
	if err != nil {
		fmt.Fprintln(a.stderr, "reorder show:", err)
		return exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Ticket   approval.State `json:"ticket"`
			Reorders []reorderRow   `json:"reorders"`
		}{st, append([]reorderRow{}, rows...)}); err != nil {
			return exitFail
		}
		return exitOK
	}
	fmt.Fprintf(a.stdout, "%s: %s (created %s)\n", st.OperationID, st.Status, st.CreatedAt.Format("2006-01-02 15:04:05Z07:00"))
	if d, err := decodeDraft(st.Draft); err == nil {
		fmt.Fprintf(a.stdout, "proposal of %s for %s: scanned %d of %d, complete %t\n", d.RunDate, d.Subject, d.Scanned, d.Total, d.Complete)
		lines := make([]lineView, 0, len(d.Lines))
		for _, l := range d.Lines {
			lines = append(lines, lineView(l))
		}
		printLines(a.stdout, lines)
	} else {
		fmt.Fprintf(a.stdout, "draft (not a reorder proposal: %v): %s\n", err, st.Draft)
	}
	if st.Decision != nil {
		fmt.Fprintf(a.stdout, "decision: %s by %s at %s", st.Decision.Verdict, st.Decision.DecidedBy, st.DecidedAt.Format("2006-01-02 15:04:05Z07:00"))
		if st.Decision.Comment != "" {
			fmt.Fprintf(a.stdout, " (%q)", st.Decision.Comment)
		}
		fmt.Fprintln(a.stdout)
	}
	printRows(a.stdout, rows)
	return exitOK
}

// mandateCmd gives or withdraws a mandate. For the embedded demo (the
// default user and agent) it records marie's choice, which the next run
// applies at its provider; revoke also erases the stored mandate at once.
// With CANDOR_OFFLINE_TOKEN set, grant stores that refresh token, sealed, as
// the mandate of -user for -client-id (a real provider's offline token).
func (a *app) mandateCmd(ctx context.Context, cmd string, args []string) int {
	fs := a.flagSet(cmd)
	state := a.stateFlag(fs)
	where := a.storeFlag(fs, "mandates", envMandates, mandatesFile, "mandate store")
	user := fs.String("user", a.env(envUser), "the person (env "+envUser+"; default the demo's "+demoUser+")")
	agentName := fs.String("client-id", a.env(envClientID), "the agent (env "+envClientID+"; default the demo's "+demoAgent+")")
	if code, ok := a.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return a.usageError(fs, "takes no arguments, got %q", fs.Args())
	}
	if code, ok := a.checkStore(fs, "mandates", envMandates, *where); !ok {
		return code
	}
	if *user == "" {
		*user = demoUser
	}
	if *agentName == "" {
		*agentName = demoAgent
	}
	isDemo := *user == demoUser && *agentName == demoAgent
	offline := a.env(envOfflineToken)
	if cmd == "grant" && offline == "" && !isDemo {
		fmt.Fprintf(a.stderr, "reorder grant: put %s's offline refresh token in %s\n", *user, envOfflineToken)
		return exitConfig
	}
	if err := openState(*state); err != nil {
		fmt.Fprintf(a.stderr, "reorder %s: %v\n", cmd, err)
		return exitFail
	}
	key, err := a.mandateKey(*state, isDemo)
	if err != nil {
		fmt.Fprintf(a.stderr, "reorder %s: %v\n", cmd, err)
		return exitFor(err)
	}
	store, err := openMandates(ctx, *state, *where, mandate.WithKey(key))
	if err != nil {
		fmt.Fprintf(a.stderr, "reorder %s: %v\n", cmd, err)
		return exitFail
	}
	defer store.Close()

	switch {
	case cmd == "grant" && offline != "":
		if err := store.Grant(ctx, *user, *agentName, offline); err != nil {
			fmt.Fprintln(a.stderr, "reorder grant:", err)
			return exitFail
		}
		fmt.Fprintf(a.stdout, "mandate of %s for %s stored (sealed)\n", *user, *agentName)
	case cmd == "grant":
		if err := writeConsent(*state, consentGranted); err != nil {
			fmt.Fprintln(a.stderr, "reorder grant:", err)
			return exitFail
		}
		fmt.Fprintf(a.stdout, "demo: %s grants %s a mandate again; the next run uses it\n", *user, *agentName)
	default:
		err := store.Revoke(ctx, *user, *agentName)
		if err != nil && !(isDemo && errors.Is(err, mandate.ErrNoMandate)) {
			fmt.Fprintln(a.stderr, "reorder revoke:", err)
			return exitFail
		}
		if isDemo {
			if err := writeConsent(*state, consentRevoked); err != nil {
				fmt.Fprintln(a.stderr, "reorder revoke:", err)
				return exitFail
			}
		}
		fmt.Fprintf(a.stdout, "mandate of %s for %s revoked: the agent halts before any exchange or read\n", *user, *agentName)
	}
	return exitOK
}

// lineView is a proposal line as printed.
type lineView struct {
	Code     string
	Name     string
	Vendor   string
	OnHand   int
	Quantity int
}

// printLines prints proposal lines as an aligned table.
func printLines(w io.Writer, lines []lineView) {
	rows := [][]string{{"CODE", "PRODUCT", "VENDOR", "ON HAND", "PROPOSE"}}
	for _, l := range lines {
		rows = append(rows, []string{l.Code, l.Name, l.Vendor, fmt.Sprint(l.OnHand), fmt.Sprint(l.Quantity)})
	}
	printTable(w, rows, 3, 4)
}

// printRows prints reorders rows.
func printRows(w io.Writer, rows []reorderRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "reorders rows: none")
		return
	}
	fmt.Fprintf(w, "reorders rows (%d):\n", len(rows))
	t := [][]string{{"LINE", "CODE", "PRODUCT", "QUANTITY", "APPROVED BY"}}
	for _, r := range rows {
		t = append(t, []string{fmt.Sprint(r.Line), r.Code, r.Name, fmt.Sprint(r.Quantity), r.ApprovedBy})
	}
	printTable(w, t, 0, 3)
}

// printTable prints rows with columns padded to their widest cell; the
// columns listed in right are right-aligned.
func printTable(w io.Writer, rows [][]string, right ...int) {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	isRight := map[int]bool{}
	for _, i := range right {
		isRight[i] = true
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if isRight[i] {
				b.WriteString(pad + c)
			} else if i < len(r)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// printReport prints one run as a table or as JSON.
func (a *app) printReport(rep *report, asJSON bool, state, approvals string) error {
	w := a.stdout
	approveCmd := func(verb string) string {
		return a.progName + " " + verb + a.stateArg(state) + a.storeArg("approvals", envApprovals, approvals) + " " + rep.Ticket.OperationID
	}
	if asJSON {
		out := struct {
			*report
			Approve string `json:"approveCommand,omitempty"`
			Reject  string `json:"rejectCommand,omitempty"`
		}{report: rep}
		if rep.Ticket != nil && rep.Ticket.Status == approval.StatusWaiting {
			out.Approve, out.Reject = approveCmd("approve"), approveCmd("reject")
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(w, "reorder run of %s (daily at %s) for %s\n", rep.RunDate, rep.Schedule, rep.Subject)
	fmt.Fprintf(w, "catalog: %s\n", rep.Catalog)
	if rep.Halted != "" {
		fmt.Fprintf(w, "%s: nothing was read, no proposal\n", rep.Halted)
		return nil
	}
	if p := rep.Proposal; p != nil {
		fmt.Fprintf(w, "rule: order up to %d every reference with less than %d on hand\n", rep.Rule.OrderUpTo, rep.Rule.ReorderPoint)
		of := fmt.Sprintf(" of %d", p.Total)
		if p.Total == 0 {
			of = " (total not reported by the catalog)"
		}
		if p.Complete {
			fmt.Fprintf(w, "scanned %d%s, complete\n", p.Scanned, of)
		} else {
			fmt.Fprintf(w, "scanned %d%s, INCOMPLETE: this proposal covers part of the catalog only\n", p.Scanned, of)
		}
		if len(p.Lines) == 0 {
			fmt.Fprintln(w, "no line proposed")
		} else {
			lines := make([]lineView, 0, len(p.Lines))
			for _, l := range p.Lines {
				lines = append(lines, lineView(l))
			}
			fmt.Fprintf(w, "%d line(s) proposed:\n", len(p.Lines))
			printLines(w, lines)
		}
		fmt.Fprintf(w, "escalate: %t\n", p.Escalate)
		for _, r := range p.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
	if t := rep.Ticket; t != nil {
		state := string(t.Status) + ", new"
		if !t.New {
			state = string(t.Status) + ", already registered by an earlier run of the same proposal"
		}
		fmt.Fprintf(w, "approval ticket: %s (%s)\n", t.OperationID, state)
		if t.Status == approval.StatusWaiting {
			fmt.Fprintf(w, "  approve: %s\n", approveCmd("approve"))
			fmt.Fprintf(w, "  reject:  %s\n", approveCmd("reject"))
		}
	}
	if rep.NoTicket != "" {
		fmt.Fprintf(w, "no approval ticket: %s\n", rep.NoTicket)
	}
	if rep.Error != "" {
		// A failure goes to stderr (the JSON form carries it in "error").
		fmt.Fprintf(a.stderr, "reorder: run failed: %s\n", rep.Error)
	}
	return nil
}
