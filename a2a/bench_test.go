package a2a_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/candorkit/candor/a2a"
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
	b.Run("facade", func(b *testing.B) {
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil)) // one log line per task otherwise
		f := startWebhookFacade(b, hook.srv.URL, a2a.WithLogger(quiet))
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
