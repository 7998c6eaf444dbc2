package a2a_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/candorkit/candor/a2a"
)

func question() a2a.Question {
	return a2a.Question{Text: "How many?", Token: testToken, TaskID: "t-1", ContextID: "c-1"}
}

func TestWebhookBounds(t *testing.T) {
	t.Run("reply too large", func(t *testing.T) {
		hook := newHook(t, false)
		hook.set(200, `{"answer":"`+strings.Repeat("x", 100)+`","escalate":false}`)
		w, err := a2a.NewWebhook(hook.srv.URL, a2a.WithMaxReplyBytes(64))
		if err != nil {
			t.Fatal(err)
		}
		out := w.Ask(context.Background(), question())
		var re *a2a.ReplyError
		if out.State != a2a.Failed || !errors.Is(out.Err, a2a.ErrTooLarge) || !errors.As(out.Err, &re) || len(re.Body) != 64 {
			t.Fatalf("outcome = %+v, want failed with ErrTooLarge and the first 64 bytes", out)
		}
	})
	t.Run("reply exactly at the bound", func(t *testing.T) {
		hook := newHook(t, false)
		body := `{"answer":"ok","escalate":false}`
		hook.set(200, body)
		w, _ := a2a.NewWebhook(hook.srv.URL, a2a.WithMaxReplyBytes(int64(len(body))))
		if out := w.Ask(context.Background(), question()); out.State != a2a.Completed {
			t.Fatalf("outcome = %+v, want completed", out)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		defer srv.Close()
		defer close(release)
		w, _ := a2a.NewWebhook(srv.URL, a2a.WithTimeout(50*time.Millisecond))
		out := w.Ask(context.Background(), question())
		var we *a2a.WebhookError
		if out.State != a2a.Failed || !errors.As(out.Err, &we) || !errors.Is(out.Err, context.DeadlineExceeded) ||
			!strings.Contains(out.Text, "did not answer within 50ms") {
			t.Fatalf("outcome = %+v (%v), want failed on the deadline", out, out.Err)
		}
	})
	t.Run("redirect not followed", func(t *testing.T) {
		elsewhere := newHook(t, false)
		redirect := httptest.NewServer(http.RedirectHandler(elsewhere.srv.URL, http.StatusTemporaryRedirect))
		defer redirect.Close()
		w, _ := a2a.NewWebhook(redirect.URL)
		out := w.Ask(context.Background(), question())
		var re *a2a.ReplyError
		if out.State != a2a.Failed || !errors.As(out.Err, &re) || re.Status != http.StatusTemporaryRedirect {
			t.Fatalf("outcome = %+v, want failed on the 307", out)
		}
		if n := len(elsewhere.recorded()); n != 0 {
			t.Fatalf("the redirect target received the token %d times", n)
		}
	})
	t.Run("no token, no call", func(t *testing.T) {
		hook := newHook(t, false)
		w, _ := a2a.NewWebhook(hook.srv.URL)
		q := question()
		q.Token = ""
		if out := w.Ask(context.Background(), q); out.State != a2a.Failed || !errors.Is(out.Err, a2a.ErrNoToken) {
			t.Fatalf("outcome = %+v", out)
		}
		if len(hook.recorded()) != 0 {
			t.Fatal("the webhook was called without a token")
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		w, _ := a2a.NewWebhook(url)
		out := w.Ask(context.Background(), question())
		var we *a2a.WebhookError
		if out.State != a2a.Failed || !errors.As(out.Err, &we) || out.Text != "the workflow could not be reached" {
			t.Fatalf("outcome = %+v", out)
		}
	})
	for _, bad := range []string{"", "webhook", "/webhook", "ftp://h/x", "http://"} {
		if _, err := a2a.NewWebhook(bad); err == nil {
			t.Errorf("NewWebhook(%q) accepted", bad)
		}
	}
}

func TestQuestionRedactsToken(t *testing.T) {
	q := question()
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "q", q)
	for _, s := range []string{fmt.Sprint(q), fmt.Sprintf("%+v", q), fmt.Sprintf("%#v", q), fmt.Sprintf("%v", &q), logged.String()} {
		if strings.Contains(s, testToken) {
			t.Fatalf("the token leaks: %s", s)
		}
	}
}

// writeCA writes the TLS webhook's certificate as a PEM bundle.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(file, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func envFor(hookURL, publicURL, caBundle string) func(string) (string, bool) {
	env := map[string]string{
		"ADAPTER_AGENT_NAME":        "Stock agent",
		"ADAPTER_AGENT_DESCRIPTION": "Answers stock questions",
		"ADAPTER_SKILL_ID":          "stock-level",
		"ADAPTER_SKILL_NAME":        "Stock level",
		"ADAPTER_SKILL_DESCRIPTION": "How many units are in stock",
		"ADAPTER_SKILL_EXAMPLES":    "How many S10_1949?\n\n  Is S18_2795 in stock?  \n",
		"ADAPTER_WEBHOOK_URL":       hookURL,
		"ADAPTER_PUBLIC_URL":        publicURL,
	}
	if caBundle != "" {
		env["ADAPTER_CA_BUNDLE"] = caBundle
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestTLSWebhook: a webhook behind TLS works with ADAPTER_CA_BUNDLE and fails without.
func TestTLSWebhook(t *testing.T) {
	hook := newHook(t, true)
	ca := writeCA(t, hook.srv)
	for _, withCA := range []bool{true, false} {
		t.Run(fmt.Sprintf("bundle=%v", withCA), func(t *testing.T) {
			bundle := ""
			if withCA {
				bundle = ca
			}
			f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
				cfg, err := a2a.ConfigFromEnv(envFor(hook.srv.URL+"/webhook/stock", endpoint, bundle))
				if err != nil {
					return nil, err
				}
				return a2a.NewAdapter(cfg)
			})
			c := newClient(t, f.URL, testToken)
			res, err := c.SendMessage(context.Background(), userMessage("How many?"))
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task := res.(*a2apb.Task)
			if withCA {
				if task.Status.State != a2apb.TaskStateCompleted {
					t.Fatalf("with the bundle: state %s, message %+v", task.Status.State, task.Status.Message)
				}
				return
			}
			if task.Status.State != a2apb.TaskStateFailed || task.Status.Message.Metadata["failure"] != "unreachable" {
				t.Fatalf("without the bundle: state %s, message %+v", task.Status.State, task.Status.Message)
			}
		})
	}
	// The cause without the bundle is certificate verification, not something else.
	cfg, err := a2a.ConfigFromEnv(envFor(hook.srv.URL, "http://127.0.0.1:1/a2a", ""))
	if err != nil {
		t.Fatal(err)
	}
	w, err := a2a.NewWebhook(cfg.WebhookURL)
	if err != nil {
		t.Fatal(err)
	}
	out := w.Ask(context.Background(), question())
	var unknownCA x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	if !errors.As(out.Err, &unknownCA) && !errors.As(out.Err, &verify) {
		t.Fatalf("cause = %v, want a certificate verification error", out.Err)
	}
	if len(hook.recorded()) != 1 {
		t.Fatalf("webhook calls = %d, want only the one with the bundle", len(hook.recorded()))
	}
}
