package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/candorkit/candor/examples/builder/internal/queue"
)

// CaptureServer serves the queue's capture endpoint (/capture/{name}) over
// HTTP, so the workflows under test can call it and level 4 can see that
// they did. n8n must be able to reach it: on one machine, listen on
// 127.0.0.1.
type CaptureServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// StartCaptureServer listens on addr (e.g. 127.0.0.1:0 for a free port) and
// serves store's capture handler until Close.
func StartCaptureServer(store *queue.Store, addr string, logger *slog.Logger) (*CaptureServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pipeline: capture endpoint: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		ln.Close()
		return nil, fmt.Errorf("pipeline: capture endpoint %s: listen on a concrete address n8n can call (e.g. 127.0.0.1:0)", addr)
	}
	c := &CaptureServer{
		srv:  &http.Server{Handler: store.CaptureHandler(logger), ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { c.done <- c.srv.Serve(ln) }()
	return c, nil
}

// Base is the endpoint's base URL, e.g. http://127.0.0.1:40123.
func (c *CaptureServer) Base() string { return "http://" + c.ln.Addr().String() }

// Close stops the server, waiting up to 5 s for requests in flight.
func (c *CaptureServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.srv.Shutdown(ctx)
	if serr := <-c.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
