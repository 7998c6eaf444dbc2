package mandate

import (
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/secret"
	"github.com/candorkit/candor/tokenexchange"
)

// Option configures Open and OpenDB. Every option applies to both, except
// WithSchema, which only a PostgreSQL database takes.
type Option func(*options)

type options struct {
	key    secret.Secret
	keyLen int
	keySet bool
	agents map[string]*tokenexchange.Config
	errs   []error
	log    *slog.Logger

	schema    string
	schemaSet bool
	lease     time.Duration

	tp trace.TracerProvider
	mp metric.MeterProvider
}

// DefaultLease is how long a redemption's lease lasts without renewal: the
// bound after which the lease of a holder that died is taken over.
const DefaultLease = 30 * time.Second

// DefaultSchema is the PostgreSQL schema the store keeps its tables in
// when WithSchema is not given.
const DefaultSchema = "candor"

// WithKey sets the KeySize-byte AES-256 key that seals refresh tokens at
// rest. It is supplied by the caller (for example from an environment
// variable, see ParseKey) and never stored. Required. The bytes are copied.
func WithKey(key []byte) Option {
	k := secret.New(string(key))
	n := len(key)
	return func(o *options) { o.key, o.keyLen, o.keySet = k, n, true }
}

// WithAgent names an agent and the Config it redeems mandates with: its
// ClientID/ClientSecret authenticate both the refresh_token grant and the
// exchange; Audience, Scopes and RequestedTokenType shape the exchanged
// token; a RevocationURL makes Revoke revoke the refresh token at the
// provider too. cfg is validated by Open and copied. A Store without an
// agent can Grant and Revoke (in the store only); Token for an agent it was
// not given returns ErrUnknownAgent. Naming an agent twice is an error.
func WithAgent(name string, cfg *tokenexchange.Config) Option {
	var cp *tokenexchange.Config
	if cfg != nil {
		c := *cfg
		c.Audience = append([]string(nil), cfg.Audience...)
		c.Scopes = append([]string(nil), cfg.Scopes...)
		cp = &c
	}
	return func(o *options) {
		if name == "" {
			o.errs = append(o.errs, fmt.Errorf("%w: WithAgent: empty agent name", tokenexchange.ErrConfig))
			return
		}
		if _, dup := o.agents[name]; dup {
			o.errs = append(o.errs, fmt.Errorf("%w: WithAgent: agent %q named twice", tokenexchange.ErrConfig, name))
			return
		}
		if err := cp.Validate(); err != nil {
			o.errs = append(o.errs, fmt.Errorf("WithAgent %q: %w", name, err))
			return
		}
		if o.agents == nil {
			o.agents = map[string]*tokenexchange.Config{}
		}
		o.agents[name] = cp
	}
}

// WithLogger sets where the store logs (grants, revocations, redemptions,
// rotations; never a token or the key). Nil or absent logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// WithSchema names the PostgreSQL schema that holds the store's tables
// (created when missing; default DefaultSchema): a plain lower-case SQL
// identifier. A SQLite database has no schemas: Open, and OpenDB on SQLite,
// refuse this option.
func WithSchema(name string) Option {
	return func(o *options) { o.schema, o.schemaSet = name, true }
}

// WithLease sets how long a redemption's lease on one (user, agent)
// mandate lasts without renewal (default DefaultLease). A live holder
// renews it every third of d while it waits for the provider; a holder
// that died is taken over by another process d after its last renewal.
// d is at least 100 ms.
func WithLease(d time.Duration) Option {
	return func(o *options) {
		if d < 100*time.Millisecond {
			o.errs = append(o.errs, fmt.Errorf("%w: WithLease: %v is shorter than 100ms", tokenexchange.ErrConfig, d))
			return
		}
		o.lease = d
	}
}
