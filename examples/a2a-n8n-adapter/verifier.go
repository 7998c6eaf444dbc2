package main

import (
	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/jwtauth"
)

// newVerifier builds the verifier of callers' tokens: JWTs signed with the
// keys cfg.Issuer publishes, for cfg.Audience, granting cfg.Scopes. The
// issuer's TLS certificate is verified with cfg.RootCAs (the system roots
// plus ADAPTER_CA_BUNDLE) when set.
func newVerifier(cfg config) (a2a.Verifier, error) {
	var opts []jwtauth.Option
	if cfg.RootCAs != nil {
		opts = append(opts, jwtauth.WithRootCAs(cfg.RootCAs))
	}
	if len(cfg.Scopes) > 0 {
		opts = append(opts, jwtauth.WithRequiredScopes(cfg.Scopes...))
	}
	return jwtauth.New(cfg.Issuer, cfg.Audience, opts...)
}
