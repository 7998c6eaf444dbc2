package a2atest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/a2atest"
)

// exampleT stands in for the *testing.T a test passes (an Example has
// none): it runs the cleanups when the Example ends and panics on a
// failure.
type exampleT struct {
	testing.TB // nil: only the methods below are called
	cleanups   []func()
}

func newExampleT() *exampleT                          { return &exampleT{} }
func (e *exampleT) Helper()                           {}
func (e *exampleT) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleT) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleT) finish() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// A webhook facade in front of a scripted webhook, asked through an a2a-go
// client: the answer comes back as a completed task, and the webhook saw
// the caller's token in X-Subject-Token.
func Example() {
	t := newExampleT()
	defer t.finish()

	hook := a2atest.NewWebhook(t, a2atest.Answer("7305 in stock"))
	// Stands in for a2a/jwtauth: any token but "bad…" is a caller.
	verifier := a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
		if strings.HasPrefix(token, "bad") {
			return a2a.Caller{}, a2a.ErrInvalidToken
		}
		return a2a.Caller{Subject: "alice", Issuer: "https://op.test"}, nil
	})
	srv := a2atest.Serve(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewAdapter(a2a.Config{
			Agent: a2a.Agent{Name: "Stock agent", Description: "Answers stock questions", URL: endpoint,
				Skill: a2a.Skill{ID: "stock-level", Name: "Stock level", Description: "Units in stock"}},
			WebhookURL: hook.URL,
		}, a2a.WithVerifier(verifier))
	})

	task := a2atest.Ask(t, srv.URL, "alice-token", "How many S10_1949?")
	fmt.Println(a2atest.State(task), "-", a2atest.Text(task))
	fmt.Println("token at the webhook:", hook.SubjectTokens())
	fmt.Println("question at the webhook:", hook.Requests()[0].Text)
	// Output:
	// completed - 7305 in stock
	// token at the webhook: [alice-token]
	// question at the webhook: How many S10_1949?
}
