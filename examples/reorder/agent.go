package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/reorder"
	"github.com/candorkit/candor/tokenexchange/mandate"
)

// msgNoMandate is logged when the person gave no mandate (or withdrew it).
const msgNoMandate = "no mandate: halting before any exchange or read"

// outcome is how one run ended.
type outcome int

const (
	outcomeProposed   outcome = iota // complete scan; a ticket when there are lines
	outcomeNoMandate                 // no mandate: nothing was exchanged or read
	outcomeIncomplete                // partial scan: shown, never a ticket
	outcomeFailed                    // could not run (mandate refused, catalog unreachable, store error)
)

// agent is one configured reorder agent: whose mandate, which catalog,
// which rule, where tickets go.
type agent struct {
	user, agentName string
	catalogURL      string
	catalogLabel    string // how the output names the catalog
	policy          reorder.Thresholds
	budget          mcpclient.Budget
	schedule        reorder.Schedule
	mandates        *mandate.Store
	approvals       *approval.Store
	log             *slog.Logger
}

// report is everything one run produced, for the table and the JSON.
type report struct {
	RunDate  string            `json:"runDate"`
	Schedule string            `json:"schedule"`
	Subject  string            `json:"subject"`
	Catalog  string            `json:"catalog"`
	Rule     rule              `json:"rule"`
	Halted   string            `json:"halted,omitempty"`
	Proposal *reorder.Proposal `json:"proposal,omitempty"`
	Ticket   *ticketReport     `json:"ticket,omitempty"`
	// NoTicket says why a proposal did not become a ticket.
	NoTicket string `json:"noTicket,omitempty"`
	Error    string `json:"error,omitempty"`

	outcome outcome
}

// rule is the reorder rule a run applied.
type rule struct {
	ReorderPoint int `json:"reorderPoint"`
	OrderUpTo    int `json:"orderUpTo"`
}

// ticketReport is the approval ticket a run registered (or found).
type ticketReport struct {
	OperationID string          `json:"operationId"`
	Status      approval.Status `json:"status"`
	// New is false when the same proposal was already registered (a re-run
	// the same day): Register changed nothing.
	New bool `json:"new"`
}

// run performs one scheduled (or immediate) run at the instant at.
func (a *agent) run(ctx context.Context, at time.Time) *report {
	runDate := at.In(a.schedule.Location()).Format(time.DateOnly)
	pol := a.policy.WithDefaults()
	rep := &report{
		RunDate: runDate, Schedule: a.schedule.String(), Subject: a.user, Catalog: a.catalogLabel,
		Rule: rule{ReorderPoint: pol.ReorderPoint, OrderUpTo: pol.OrderUpTo},
	}
	fail := func(err error) *report {
		rep.outcome, rep.Error = outcomeFailed, err.Error()
		a.log.Error("reorder run failed", slog.String("run", runDate), slog.Any("error", err))
		return rep
	}

	var client *mcpclient.Client
	defer func() {
		if client != nil {
			if err := client.Close(); err != nil {
				a.log.Warn("closing the MCP session", slog.Any("error", err))
			}
		}
	}()
	mandates := reorder.MandateFunc(func(ctx context.Context) (reorder.Mandate, error) {
		tok, err := a.mandates.Token(ctx, a.user, a.agentName)
		if err != nil {
			if errors.Is(err, mandate.ErrNoMandate) {
				return reorder.Mandate{}, fmt.Errorf("%w: %w", reorder.ErrNoMandate, err)
			}
			return reorder.Mandate{}, err
		}
		return reorder.Mandate{Subject: a.user, Token: tok.AccessToken}, nil
	})
	open := func(ctx context.Context, m reorder.Mandate) (reorder.Catalog, error) {
		ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: m.Token, TokenType: "Bearer"})
		c, err := mcpclient.Dial(ctx, a.catalogURL,
			mcpclient.WithTokenSource(ts),
			mcpclient.WithBudget(a.budget),
			mcpclient.WithClientInfo("candor-reorder", "1"),
			mcpclient.WithLogger(a.log))
		if err != nil {
			return nil, err
		}
		client = c
		return &mcpCatalog{c: c, tool: listTool}, nil
	}
	runner, err := reorder.NewRunner(mandates, open, a.policy)
	if err != nil {
		return fail(err)
	}

	prop, err := runner.Run(ctx)
	var merr *reorder.HaltedError
	if errors.As(err, &merr) {
		switch {
		case errors.Is(err, mandate.ErrRejected):
			a.log.Error("mandate rejected by the provider: halting before any read", slog.String("user", a.user), slog.Any("error", err))
			return fail(err)
		case errors.Is(err, mandate.ErrUnreadable):
			a.log.Error("mandate cannot be opened with this key: halting before any exchange or read", slog.String("user", a.user))
			return fail(err)
		case errors.Is(err, reorder.ErrNoMandate):
			a.log.Warn(msgNoMandate, slog.String("user", a.user), slog.String("agent", a.agentName))
			rep.outcome, rep.Halted = outcomeNoMandate, msgNoMandate
			return rep
		default:
			return fail(err)
		}
	}
	if client != nil {
		u := client.Usage()
		a.log.Info("catalog read", slog.Int("calls", u.Calls), slog.Int64("bytes", u.Bytes))
	}
	if err != nil && !errors.Is(err, reorder.ErrIncomplete) {
		// Not a scan at all (the catalog could not be opened): no proposal.
		return fail(err)
	}
	rep.Proposal = &prop
	if !prop.Complete {
		rep.outcome = outcomeIncomplete
		rep.NoTicket = "the scan is incomplete: a proposal covering part of the catalog cannot be approved"
		a.log.Error("incomplete catalog scan", slog.String("run", runDate), slog.Int("scanned", prop.Scanned), slog.Any("error", err))
		return rep
	}
	rep.outcome = outcomeProposed
	if len(prop.Lines) == 0 {
		rep.NoTicket = "nothing to order"
		return rep
	}
	draft := newDraft(prop, a.policy, runDate, a.schedule.Location().String(), a.user)
	id, err := operationID(draft)
	if err != nil {
		return fail(err)
	}
	_, rerr := a.approvals.Read(ctx, id)
	isNew := errors.Is(rerr, approval.ErrUnknownOperation)
	if rerr != nil && !isNew {
		return fail(rerr)
	}
	st, err := a.approvals.Register(ctx, approval.Ticket{OperationID: id, Draft: draft})
	if err != nil {
		return fail(fmt.Errorf("registering the approval ticket: %w", err))
	}
	rep.Ticket = &ticketReport{OperationID: id, Status: st.Status, New: isNew}
	a.log.Info("approval ticket", slog.String("operation", id), slog.String("status", string(st.Status)), slog.Bool("new", isNew))
	return rep
}
