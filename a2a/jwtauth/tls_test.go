package jwtauth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/jwtauth"
)

// An issuer over TLS is verified with the given roots, whichever order
// WithHTTPClient and WithRootCAs come in, and refused without them.
func TestIssuerOverTLS(t *testing.T) {
	ctx := context.Background()
	s := newSigner(t, jose.ES256, "k")
	var issuer string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "jwks_uri": issuer + "/keys"})
		case "/keys":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{s.jwk()}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	issuer = srv.URL
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := claims(time.Now())
	c["iss"] = issuer
	tok := s.sign(t, c)

	base := &http.Client{Timeout: 5 * time.Second}
	for name, opts := range map[string][]jwtauth.Option{
		"roots then client": {jwtauth.WithRootCAs(pool), jwtauth.WithHTTPClient(base)},
		"client then roots": {jwtauth.WithHTTPClient(base), jwtauth.WithRootCAs(pool)},
		"roots only":        {jwtauth.WithRootCAs(pool)},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := jwtauth.New(issuer, "agent", opts...)
			require.NoError(t, err)
			_, err = v.Verify(ctx, tok)
			assert.NoError(t, err)
		})
	}
	assert.Nil(t, base.Transport, "the caller's client is not modified")

	v, err := jwtauth.New(issuer, "agent", jwtauth.WithHTTPClient(base))
	require.NoError(t, err)
	_, err = v.Verify(ctx, tok)
	require.Error(t, err)
	assert.NotErrorIs(t, err, a2a.ErrInvalidToken)
	var ce *tls.CertificateVerificationError
	assert.ErrorAs(t, err, &ce)
}
