package jwtauth

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Defaults.
const (
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
	DefaultLeeway = 30 * time.Second
	// DefaultMaxResponseBytes caps each body read from the issuer.
	DefaultMaxResponseBytes int64 = 1 << 20
	// DefaultTimeout bounds each request to the issuer when the HTTP client
	// has no timeout of its own.
	DefaultTimeout = 10 * time.Second
	// RefreshInterval is the least time between two key set fetches caused
	// by unknown key ids.
	RefreshInterval = 30 * time.Second
	// MaxKeyAge is how long a fetched key set is used before it is fetched
	// again.
	MaxKeyAge = time.Hour
)

// Option configures New.
type Option func(*options)

type options struct {
	httpClient     *http.Client
	rootCAs        *x509.CertPool
	maxBytes       int64
	leeway         time.Duration
	scopes         []string
	introspect     string
	clientID       string
	clientSecret   string
	withIntrospect bool
	errs           []error
}

// WithHTTPClient sets the client used for every request to the issuer (its
// transport and timeout); redirects are still refused.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) {
		if c == nil {
			o.errs = append(o.errs, errors.New("WithHTTPClient: nil client"))
		}
		o.httpClient = c
	}
}

// WithRootCAs sets the roots that verify the issuer's TLS certificates, on
// a clone of the HTTP client's transport.
func WithRootCAs(pool *x509.CertPool) Option {
	return func(o *options) {
		if pool == nil {
			o.errs = append(o.errs, errors.New("WithRootCAs: nil pool"))
		}
		o.rootCAs = pool
	}
}

// WithMaxResponseBytes caps each body read from the issuer (default
// DefaultMaxResponseBytes).
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			o.errs = append(o.errs, fmt.Errorf("WithMaxResponseBytes: %d is not positive", n))
		}
		o.maxBytes = n
	}
}

// WithLeeway sets the clock skew allowed on exp, nbf and iat (default
// DefaultLeeway; 0 allows none).
func WithLeeway(d time.Duration) Option {
	return func(o *options) {
		if d < 0 || d > 10*time.Minute {
			o.errs = append(o.errs, fmt.Errorf("WithLeeway: %v is not between 0 and 10m", d))
		}
		o.leeway = d
	}
}

// WithRequiredScopes makes Verify refuse, with a *ScopeError, a token that
// does not grant every one of scopes.
func WithRequiredScopes(scopes ...string) Option {
	return func(o *options) {
		for _, s := range scopes {
			if s == "" {
				o.errs = append(o.errs, errors.New("WithRequiredScopes: empty scope"))
			}
		}
		o.scopes = append(o.scopes, scopes...)
	}
}

// WithIntrospection checks tokens that are not JWTs at the issuer's RFC 7662
// introspection endpoint, authenticating as clientID with clientSecret
// (HTTP Basic). An empty endpoint uses the discovery document's
// "introspection_endpoint".
func WithIntrospection(endpoint, clientID, clientSecret string) Option {
	return func(o *options) {
		if clientID == "" || clientSecret == "" {
			o.errs = append(o.errs, errors.New("WithIntrospection: client id and secret are required"))
		}
		o.withIntrospect = true
		o.introspect, o.clientID, o.clientSecret = endpoint, clientID, clientSecret
	}
}
