package a2a

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/reply"
)

// Option configures NewServer and NewAdapter. An option that does not apply
// to a constructor makes it return an error.
type Option func(*options)

type options struct {
	logger        *slog.Logger
	store         TaskStore
	maxRequest    int64
	answerTimeout time.Duration
	noIdentity    bool
	verifier      Verifier
	unverified    bool
	httpClient    *http.Client
	webhookOpts   []reply.Option
	tp            trace.TracerProvider
	mp            metric.MeterProvider
	adapterOnly   []string // options given that only NewAdapter takes
	errs          []error
}

// WithLogger sets where the Server (and, for NewAdapter, the webhook client)
// logs; nil or absent means nothing is logged. Tokens are never logged, and
// the webhook URL only by scheme and host.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithTaskStore sets where the Server keeps its tasks
// (NewMemoryStore(DefaultMaxTasks, DefaultTaskTTL) when absent): a
// MemoryStore, or a shared store such as a2a/pgstore's for several
// replicas. The Server does not close it.
func WithTaskStore(s TaskStore) Option {
	return func(o *options) {
		if s == nil || isNilStore(s) {
			o.errs = append(o.errs, errors.New("a2a: WithTaskStore(nil)"))
			return
		}
		o.store = s
	}
}

// isNilStore reports a typed nil pointer in the interface.
func isNilStore(s TaskStore) bool {
	v := reflect.ValueOf(s)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// WithMaxRequestBytes sets the exact cap on a JSON-RPC request body
// (DefaultMaxRequestBytes when absent); it must be positive.
func WithMaxRequestBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			o.errs = append(o.errs, fmt.Errorf("a2a: WithMaxRequestBytes(%d): the cap must be positive", n))
			return
		}
		o.maxRequest = n
	}
}

// WithAnswerTimeout bounds each Backend.Ask (DefaultAnswerTimeout when
// absent); it must be positive.
func WithAnswerTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, fmt.Errorf("a2a: WithAnswerTimeout(%s): the timeout must be positive", d))
			return
		}
		o.answerTimeout = d
	}
}

// WithVerifier sets the Verifier every bearer token is checked with before
// the Server does anything for the request. The verified Caller owns the
// tasks it creates and reaches the Backend in Question.Caller.
//
// NewServer and NewAdapter need either WithVerifier or WithUnverifiedTokens.
func WithVerifier(v Verifier) Option {
	return func(o *options) {
		if v == nil {
			o.errs = append(o.errs, errors.New("a2a: WithVerifier(nil)"))
			return
		}
		o.verifier = v
	}
}

// WithUnverifiedTokens is the explicit opt-out from verification: any
// well-formed bearer token is accepted as it is, its SHA-256 fingerprint
// owns the tasks it creates, and Question.Caller is zero. Use it only when
// the Backend itself proves the token before any effect (a backend whose
// first step is a token exchange at the identity provider, say); the
// webhook backend of NewAdapter does not, so do not combine them unless the
// workflow verifies the X-Subject-Token it receives.
func WithUnverifiedTokens() Option { return func(o *options) { o.unverified = true } }

// WithNoIdentityTasks answers a message sent without a bearer token with a
// task instead of the 401 refusal, for agents whose callers expect every
// question to end in a task: SendMessage (0.3 message/send) without a token
// creates a task that fails with the status message "no identity: the
// request carried no bearer token" and status metadata failure
// "no_identity"; the Backend is never called. The message is otherwise
// checked as usual, so a malformed one is still refused. A token that is
// present is always verified: a bad one is refused, never downgraded to
// "no identity".
//
// Such tasks belong to one shared owner, "no identity", which no caller
// with a token can be: no caller with a token ever reads or lists them.
// Without a token, GetTask (tasks/get) reads a task of that owner by its
// id, so that a caller who sent with returnImmediately can see the final
// state; the id, a random UUID, is the only key. Every other method without
// a token keeps answering 401, so no one can enumerate the questions of
// tokenless callers. These tasks live in the same store, under the same
// bounds, as every other task.
func WithNoIdentityTasks() Option { return func(o *options) { o.noIdentity = true } }

// WithHTTPClient sets the HTTP client the webhook is called with
// (NewAdapter only; Config.RootCAs and Config.WebhookTimeout still apply on
// top of it). Redirects are never followed.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) {
		o.adapterOnly = append(o.adapterOnly, "WithHTTPClient")
		if c == nil {
			o.errs = append(o.errs, errors.New("a2a: WithHTTPClient(nil)"))
			return
		}
		o.httpClient = c
	}
}

// WithTracerProvider sets the OpenTelemetry tracer provider of the
// Server's spans (and, for NewAdapter, of the webhook client's); nil or
// absent means the global provider, a no-op unless the program installed
// one. The package documentation lists the spans.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(o *options) { o.tp = tp } }

// WithMeterProvider sets the OpenTelemetry meter provider of the Server's
// metrics (and, for NewAdapter, of the webhook client's); nil or absent
// means the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(o *options) { o.mp = mp } }

// WithWebhookOptions passes options to the webhook's reply.Client
// (NewAdapter only), after the ones NewAdapter derives from WithLogger,
// WithTracerProvider, WithMeterProvider and WithHTTPClient and before
// Config.WebhookTimeout and Config.RootCAs, which apply last. With
// reply.WithTransportWrapper an instrumented transport combines with
// Config.RootCAs.
func WithWebhookOptions(opts ...reply.Option) Option {
	return func(o *options) {
		o.adapterOnly = append(o.adapterOnly, "WithWebhookOptions")
		for _, ro := range opts {
			if ro == nil {
				o.errs = append(o.errs, errors.New("a2a: WithWebhookOptions: a nil reply.Option"))
				return
			}
		}
		o.webhookOpts = append(o.webhookOpts, opts...)
	}
}

func collect(opts []Option) (options, error) {
	o := options{maxRequest: DefaultMaxRequestBytes, answerTimeout: DefaultAnswerTimeout}
	for _, opt := range opts {
		if opt == nil {
			return o, errors.New("a2a: a nil Option")
		}
		opt(&o)
	}
	if len(o.errs) > 0 {
		return o, errors.Join(o.errs...)
	}
	switch {
	case o.verifier != nil && o.unverified:
		return o, errors.New("a2a: WithVerifier and WithUnverifiedTokens exclude each other")
	case o.verifier == nil && !o.unverified:
		return o, errors.New("a2a: bearer tokens need a verifier: pass WithVerifier (or, for a backend that proves tokens itself, WithUnverifiedTokens)")
	}
	return o, nil
}
