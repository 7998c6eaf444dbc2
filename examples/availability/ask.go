package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/a2a"
)

// demoQuestions are the questions the demo asks when -ask is not given.
func demoQuestions() []string {
	return []string{
		"Peut-on promettre S10_1949 ?",
		"Peut-on promettre la Vespa ?",
		"Peut-on promettre S99_NOPE ?",
	}
}

// askTimeout bounds one question, card resolution included.
const askTimeout = a2a.DefaultAnswerTimeout + 10*time.Second

// answer is what the A2A client got for one question.
type answer struct {
	Question string
	TaskID   string
	State    string // "completed", "failed", ... (the 1.0 state without its prefix)
	Failure  string // the status message's "failure" metadata for a failed task
	Text     string // the status message's text parts
	Err      error  // the call itself failed (no task)
}

// askAgent resolves the agent's card at base and sends each question with an
// a2a-go v2 client speaking A2A 1.0 JSON-RPC, as the caller holding token.
func askAgent(ctx context.Context, base, token string, questions []string) ([]answer, error) {
	rctx, cancel := context.WithTimeout(ctx, askTimeout)
	resolver := &agentcard.Resolver{Client: &http.Client{Timeout: 30 * time.Second}, CardParser: a2a.ParseCard}
	card, err := resolver.Resolve(rctx, base)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("resolving the agent card at %s: %w", base, err)
	}
	// The caller's token goes on every request of the A2A client; with no
	// token no Authorization header is sent.
	hc := &http.Client{}
	if token != "" {
		hc.Transport = &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"})}
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		return nil, fmt.Errorf("A2A client: %w", err)
	}
	defer func() { _ = client.Destroy() }()

	out := make([]answer, 0, len(questions))
	for _, q := range questions {
		qctx, cancel := context.WithTimeout(ctx, askTimeout)
		res, err := client.SendMessage(qctx, &a2apb.SendMessageRequest{
			Message: a2apb.NewMessage(a2apb.MessageRoleUser, a2apb.NewTextPart(q)),
		})
		cancel()
		out = append(out, answerOf(q, res, err))
	}
	return out, nil
}

// completed reports whether the question's task completed.
func (a answer) completed() bool { return a.Err == nil && a.State == "completed" }

// escalated reports whether the agent decided to hand the question to a
// person: a failed task whose failure is "escalated".
func (a answer) escalated() bool {
	return a.Err == nil && a.State == "failed" && a.Failure == string(a2a.KindEscalated)
}

// status names the answer's end in a few words: "completed", "failed
// (backend)", "no task".
func (a answer) status() string {
	switch {
	case a.Err != nil:
		return "no task"
	case a.Failure != "":
		return a.State + " (" + a.Failure + ")"
	case a.State == "":
		return "no state"
	}
	return a.State
}

func answerOf(q string, res a2apb.SendMessageResult, err error) answer {
	a := answer{Question: q, Err: err}
	switch r := res.(type) {
	case nil:
		if err == nil {
			a.Err = fmt.Errorf("the agent sent no result")
		}
	case *a2apb.Task:
		a.TaskID = string(r.ID)
		a.State = stateName(r.Status.State)
		if m := r.Status.Message; m != nil {
			a.Text = messageText(m)
			if f, ok := m.Metadata[a2a.FailureKey].(string); ok {
				a.Failure = f
			}
		}
	case *a2apb.Message:
		a.State = "message"
		a.Text = messageText(r)
	default:
		a.Err = fmt.Errorf("unexpected result %T", res)
	}
	return a
}

func stateName(s a2apb.TaskState) string {
	return strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_"))
}

func messageText(m *a2apb.Message) string {
	var texts []string
	for _, p := range m.Parts {
		if p != nil {
			if t := p.Text(); t != "" {
				texts = append(texts, t)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// printAnswers writes each question and its task readably:
//
//	> Peut-on promettre S10_1949 ?
//	  completed: Yes — ...
func printAnswers(w io.Writer, answers []answer) {
	for i, a := range answers {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "> %s\n", a.Question)
		switch {
		case a.Err != nil:
			fmt.Fprintf(w, "  error (no task): %v\n", a.Err)
		case a.Failure != "":
			fmt.Fprintf(w, "  %s (%s): %s\n", a.State, a.Failure, indent(a.Text))
		default:
			fmt.Fprintf(w, "  %s: %s\n", a.State, indent(a.Text))
		}
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }
