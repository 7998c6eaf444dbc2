package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/examples/availability/internal/check"
)

// endpointPath is where the agent serves A2A JSON-RPC.
const endpointPath = "/a2a"

// agentServer is the availability agent listening on a loopback (or given)
// address.
type agentServer struct {
	// Base is http://host:port; the card is at Base + a2a.CardPath and the
	// JSON-RPC endpoint at Endpoint.
	Base     string
	Endpoint string
	Server   *a2a.Server

	hs       *http.Server
	done     chan struct{} // closed when Serve returned
	serveErr error         // what Serve returned; read after done
	stop     func() error
}

// CardURL is where the Agent Card is served.
func (a *agentServer) CardURL() string { return a.Base + a2a.CardPath }

// startAgent listens on addr and serves the agent answering with backend.
// Every bearer token is checked with verifier before anything is done for
// the request: a missing or refused token is answered HTTP 401 with
// WWW-Authenticate, and no task is made. With tokenless, a message sent
// without any token is instead answered with a task that fails "no
// identity" (the backend, hence the provider and the catalog, is never
// asked).
func startAgent(addr string, backend a2a.Backend, threshold int, verifier a2a.Verifier, tokenless bool, log *slog.Logger, extra ...a2a.Option) (*agentServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1" // a card needs an address callers can dial
	}
	base := "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port))
	// The backend's token exchange proves the token at the provider a second
	// time, and catches what a signature cannot (a token revoked since).
	opts := []a2a.Option{a2a.WithLogger(log), a2a.WithVerifier(verifier)}
	if tokenless {
		opts = append(opts, a2a.WithNoIdentityTasks())
	}
	opts = append(opts, extra...)
	srv, err := a2a.NewServer(check.Agent(base+endpointPath, threshold), backend, opts...)
	if err != nil {
		ln.Close()
		return nil, err
	}
	a := &agentServer{Base: base, Endpoint: base + endpointPath, Server: srv, done: make(chan struct{})}
	a.hs = &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      a2a.DefaultAnswerTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(a.done)
		a.serveErr = a.hs.Serve(ln)
	}()
	a.stop = sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := a.hs.Shutdown(ctx) // lets blocking answers in flight finish
		<-a.done
		// Shutdown does not wait for questions sent with returnImmediately:
		// Drain does, within the same grace period.
		err = errors.Join(err, a.Server.Drain(ctx))
		if !errors.Is(a.serveErr, http.ErrServerClosed) && err == nil {
			err = a.serveErr
		}
		return err
	})
	return a, nil
}

// Done is closed when the server stopped serving; Err then says why.
func (a *agentServer) Done() <-chan struct{} { return a.done }

// Err is the serve error once Done is closed (http.ErrServerClosed after Close).
func (a *agentServer) Err() error {
	<-a.done
	return a.serveErr
}

// Close shuts the server down gracefully.
func (a *agentServer) Close() error { return a.stop() }
