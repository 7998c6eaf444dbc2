package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbes checks /healthz and /readyz: ready only while the webhook's
// host accepts connections and the task store answers, and never a call
// to the webhook itself.
func TestProbes(t *testing.T) {
	calls := 0
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ }))
	t.Cleanup(hook.Close)
	up, _ := url.Parse(hook.URL + "/webhook/secret-probe-path")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down, _ := url.Parse("http://" + ln.Addr().String() + "/webhook/secret-probe-path")
	require.NoError(t, ln.Close())

	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	storeOK := func(context.Context) error { return nil }
	storeDown := func(context.Context) error { return errors.New("connection refused") }
	get := func(h http.Handler, method, path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	cases := []struct {
		name, method, path string
		hook               *url.URL
		store              func(context.Context) error
		code               int
		body               string
	}{
		{"healthy", "GET", "/healthz", down, storeDown, 200, "ok\n"},
		{"ready", "GET", "/readyz", up, storeOK, 200, "ok\n"},
		{"ready HEAD", "HEAD", "/readyz", up, storeOK, 200, ""},
		{"webhook unreachable", "GET", "/readyz", down, storeOK, 503, "webhook unreachable\n"},
		{"task store unavailable", "GET", "/readyz", up, storeDown, 503, "task store unavailable\n"},
		{"POST refused", "POST", "/readyz", up, storeOK, 405, "GET or HEAD only\n"},
		{"the agent's paths", "POST", "/a2a", up, storeOK, 418, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := get(withProbes(next, c.hook, c.store), c.method, c.path)
			assert.Equal(t, c.code, code)
			if c.method != "HEAD" {
				assert.Equal(t, c.body, body)
			}
			assert.NotContains(t, body, "secret-probe-path")
		})
	}
	assert.Zero(t, calls, "no probe calls the webhook")
}
