package a2a_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/reply"
)

// BenchmarkSendMessage compares one SendMessage through the facade (a2a-go
// client, JSON-RPC 1.0, loopback) with one POST straight to the webhook, in
// the same run. The ratio facade/direct is the facade's cost.
func BenchmarkSendMessage(b *testing.B) {
	hook := newHook(b, false)
	b.Run("direct", func(b *testing.B) {
		body := []byte(`{"text":"How many?","taskId":"t","contextId":"c"}`)
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodPost, hook.srv.URL, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Subject-Token", testToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatal(resp.StatusCode)
			}
		}
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil)) // one log line per task otherwise
	facade := func(b *testing.B, f *facade) {
		c := newClient(b, f.URL, testToken)
		ctx := context.Background()
		for b.Loop() {
			res, err := c.SendMessage(ctx, userMessage("How many?"))
			if err != nil {
				b.Fatal(err)
			}
			if res.(*a2apb.Task).Status.State != a2apb.TaskStateCompleted {
				b.Fatal("not completed")
			}
		}
	}
	// No provider: the global no-op providers, as for a program that
	// installed no SDK.
	b.Run("facade", func(b *testing.B) { facade(b, startWebhookFacade(b, hook.srv.URL, a2a.WithLogger(quiet))) })
	// The SDK recording every span and metric (request, task, webhook call)
	// to memory.
	b.Run("facade-otel", func(b *testing.B) {
		rec := oteltest.New(b)
		facade(b, startFacade(b, func(endpoint string) (*a2a.Server, error) {
			hc, err := reply.NewClient(hook.srv.URL, reply.WithTracerProvider(rec.TracerProvider()), reply.WithMeterProvider(rec.MeterProvider()))
			if err != nil {
				return nil, err
			}
			return a2a.NewServer(testAgent(endpoint), a2a.WebhookBackend(hc), a2a.WithVerifier(testVerifier), a2a.WithLogger(quiet),
				a2a.WithTracerProvider(rec.TracerProvider()), a2a.WithMeterProvider(rec.MeterProvider()))
		}))
	})
}

// BenchmarkTaskStore is one task's life in the store, create, final update
// and get, on PostgreSQL (a throwaway cluster on loopback, fsync off) and
// in memory, in the same run.
func BenchmarkTaskStore(b *testing.B) {
	cluster := pgtest.Start(b)
	db := openPool(b, cluster.NewDatabase(b))
	pg, err := pgstore.OpenDB(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	mem, err := a2a.NewMemoryStore(a2a.DefaultMaxTasks, a2a.DefaultTaskTTL)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []struct {
		name  string
		store a2a.TaskStore
	}{{"memory", mem}, {"postgres", pg}} {
		b.Run(s.name, func(b *testing.B) {
			ctx := asCaller("alice")
			for b.Loop() {
				tk := &a2apb.Task{ID: a2apb.NewTaskID(), ContextID: "c", Status: a2apb.TaskStatus{State: a2apb.TaskStateWorking},
					History: []*a2apb.Message{a2apb.NewMessage(a2apb.MessageRoleUser, a2apb.NewTextPart("How many?"))}}
				v, err := s.store.Create(ctx, tk)
				if err != nil {
					b.Fatal(err)
				}
				tk.Status.State = a2apb.TaskStateCompleted
				tk.Artifacts = []*a2apb.Artifact{{ID: "a", Parts: a2apb.ContentParts{a2apb.NewTextPart("7305")}}}
				if _, err := s.store.Update(ctx, &taskstore.UpdateRequest{Task: tk, PrevVersion: v}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.store.Get(ctx, tk.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSendMessageStore is one SendMessage through the webhook facade
// (a2a-go client, JSON-RPC 1.0, loopback) with the PostgreSQL store and
// with the memory store, in the same run.
func BenchmarkSendMessageStore(b *testing.B) {
	hook := newHook(b, false)
	cluster := pgtest.Start(b)
	db := openPool(b, cluster.NewDatabase(b))
	pg, err := pgstore.OpenDB(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	mem, err := a2a.NewMemoryStore(a2a.DefaultMaxTasks, a2a.DefaultTaskTTL)
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, s := range []struct {
		name  string
		store a2a.TaskStore
	}{{"memory", mem}, {"postgres", pg}} {
		b.Run(s.name, func(b *testing.B) {
			f := startWebhookFacade(b, hook.srv.URL, a2a.WithLogger(quiet), a2a.WithTaskStore(s.store))
			c := newClient(b, f.URL, testToken)
			ctx := context.Background()
			for b.Loop() {
				res, err := c.SendMessage(ctx, userMessage("How many?"))
				if err != nil {
					b.Fatal(err)
				}
				if res.(*a2apb.Task).Status.State != a2apb.TaskStateCompleted {
					b.Fatal("not completed")
				}
			}
		})
	}
}
