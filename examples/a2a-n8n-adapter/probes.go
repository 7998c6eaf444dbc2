package main

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"time"
)

// probeTimeout bounds each readiness check.
const probeTimeout = 2 * time.Second

// withProbes serves GET /healthz (the process is up) and GET /readyz (the
// webhook's host accepts a TCP connection and the task store answers) in
// front of next. Neither probe calls the webhook itself, so no workflow
// runs, and neither names the webhook's path.
func withProbes(next http.Handler, hook *url.URL, storeReady func(context.Context) error) http.Handler {
	addr := hook.Host
	if hook.Port() == "" {
		port := "80"
		if hook.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(hook.Hostname(), port)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			probeAnswer(w, r, "")
		case "/readyz":
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				probeAnswer(w, r, "") // 405
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
			defer cancel()
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				probeAnswer(w, r, "webhook unreachable")
				return
			}
			_ = conn.Close()
			if storeReady(ctx) != nil {
				probeAnswer(w, r, "task store unavailable")
				return
			}
			probeAnswer(w, r, "")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// probeAnswer writes "ok" (200) or the failure (503); only GET and HEAD.
func probeAnswer(w http.ResponseWriter, r *http.Request, failure string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "GET or HEAD only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if failure != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(failure + "\n"))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}
