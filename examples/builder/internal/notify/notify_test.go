package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/candorkit/candor/internal/secret"
)

func TestPatterns(t *testing.T) {
	cases := map[string]Message{
		"[N8N Builder] Building Order relay (id=12)":                                        Building("Order relay", 12),
		"[N8N Builder] FAIL — Overseer rejected Order relay: uses a stub node.":             OverseerRejected("Order relay", "uses a stub node."),
		"[N8N Builder] FAIL — Order relay failed N8N import: HTTP 400 is read-only":         ImportFailed("Order relay", errors.New("HTTP 400\nis read-only")),
		"[N8N Builder] BLOCKED — Order relay needs credentials: Slack, Shop DB":             Blocked("Order relay", []string{"Slack", "Shop DB"}),
		"[N8N Builder] FAIL — Order relay failed Level 3: execution error: boom":            LevelFailed("Order relay", 3, errors.New("execution error: boom")),
		"[N8N Builder] READY — Order relay passed all tests, awaiting your approval":        Ready("Order relay"),
		"[N8N Builder] ERROR — Order relay: context deadline exceeded":                      Errored("Order relay", context.DeadlineExceeded),
		"[N8N Builder] SKIPPED — Order relay (id=12) is already claimed by another builder": Skipped("Order relay", 12),
	}
	for want, m := range cases {
		if m.Body != want {
			t.Errorf("body %q; want %q", m.Body, want)
		}
		if m.Title != "[N8N Builder] "+string(m.Kind) {
			t.Errorf("title %q for kind %s", m.Title, m.Kind)
		}
	}
}

// fakeNtfy answers as ntfy's publish API documents: 200 with the message
// event as JSON, or an error object {"code","http","error","link"}.
type fakeNtfy struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
	status   int
	answer   string
}

func (f *fakeNtfy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r)
	f.bodies = append(f.bodies, string(body))
	status, answer := f.status, f.answer
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
		io.WriteString(w, answer)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, `{"code":40501,"http":405,"error":"method not allowed"}`)
		return
	}
	ev, _ := json.Marshal(map[string]any{"id": "sPs71M8A2T", "time": 1643935928, "expires": 1643979128, "event": "message",
		"topic": strings.TrimPrefix(r.URL.Path, "/"), "title": r.Header.Get("Title"), "message": string(body)})
	w.Write(append(ev, '\n'))
}

func TestNtfyPublishes(t *testing.T) {
	f := &fakeNtfy{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	n := Ntfy{Server: srv.URL + "/", Topic: "candor-builder", Token: secret.New("tk_secrettoken123")}
	m := LevelFailed("Order relay", 2, errors.New("credential link broken"))
	if err := n.Notify(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	r := f.requests[0]
	if r.Method != http.MethodPost || r.URL.Path != "/candor-builder" || r.Header.Get("Title") != "[N8N Builder] FAIL" ||
		f.bodies[0] != m.Body || r.Header.Get("Authorization") != "Bearer tk_secrettoken123" || r.Header.Get("Priority") != "high" {
		t.Fatalf("request %s %s title=%q priority=%q body=%q", r.Method, r.URL.Path, r.Header.Get("Title"), r.Header.Get("Priority"), f.bodies[0])
	}
	long := Errored("x", errors.New(strings.Repeat("é", 5000)))
	if err := n.Notify(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	if b := f.bodies[1]; len(b) > MaxBody || !strings.HasSuffix(b, "…") || !strings.HasPrefix(b, "[N8N Builder] ERROR — x: ") {
		t.Fatalf("long body not cut to %d bytes: %d bytes", MaxBody, len(b))
	}
}

func TestNtfyFailuresAreReportedNotHidden(t *testing.T) {
	cases := []struct {
		name   string
		status int
		answer string
		check  func(*DeliveryError) bool
	}{
		{"forbidden", 403, `{"code":40301,"http":403,"error":"forbidden","link":"https://ntfy.sh/docs/publish/#authentication"}`,
			func(e *DeliveryError) bool { return e.Status == 403 && e.Code == 40301 && e.Message == "forbidden" }},
		{"rate limited", 429, `{"code":42901,"http":429,"error":"limit reached: too many requests"}`,
			func(e *DeliveryError) bool { return e.Status == 429 && e.Code == 42901 }},
		{"200 that is not a message event", 200, `<html>captive portal</html>`,
			func(e *DeliveryError) bool { return e.Status == 200 && e.Body == "<html>captive portal</html>" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakeNtfy{status: c.status, answer: c.answer})
			defer srv.Close()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			n := Ntfy{Server: srv.URL, Topic: "t", Token: secret.New("tk_secrettoken123")}
			err := Deliver(context.Background(), n, logger, Ready("Order relay"))
			var de *DeliveryError
			if !errors.As(err, &de) || !c.check(de) {
				t.Fatalf("err = %#v", err)
			}
			if !strings.Contains(logs.String(), "notification not delivered") || !strings.Contains(logs.String(), "READY") {
				t.Fatalf("failure not logged: %s", logs.String())
			}
			if strings.Contains(logs.String()+err.Error()+fmt.Sprintf("%+v", n), "tk_secrettoken123") {
				t.Fatal("the ntfy token leaked into logs or errors")
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := srv.URL
		srv.Close()
		err := Deliver(context.Background(), Ntfy{Server: addr, Topic: "t"}, nil, Ready("x"))
		var de *DeliveryError
		if !errors.As(err, &de) || de.Err == nil {
			t.Fatalf("err = %v", err)
		}
	})
	for _, bad := range []Ntfy{{Server: "ntfy.sh", Topic: "t"}, {Server: "https://ntfy.sh", Topic: "a/b"}, {Server: "https://ntfy.sh", Topic: ""}} {
		if err := bad.Notify(context.Background(), Ready("x")); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v: %v; want ErrInvalid", bad, err)
		}
	}
}

func TestLogNotifier(t *testing.T) {
	var logs bytes.Buffer
	if err := (Log{Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Notify(context.Background(), Building("x", 1)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "[N8N Builder] Building x (id=1)") {
		t.Fatalf("log: %s", logs.String())
	}
	if err := (Log{}).Notify(context.Background(), Building("x", 1)); err == nil {
		t.Fatal("a Log notifier without a logger reported success")
	}
}
