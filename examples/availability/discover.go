package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/candorkit/candor/internal/httpx"
)

// maxDiscoveryBytes bounds the discovery document read from the issuer.
const maxDiscoveryBytes = 256 << 10

// discoverTokenURL reads the token endpoint from the issuer's OpenID
// discovery document. The issuer must be https (plain http only on
// loopback), the document's issuer must equal it (OpenID Connect Discovery
// §4.3), and no redirect is followed.
func discoverTokenURL(ctx context.Context, issuer string) (string, error) {
	issuer = strings.TrimSuffix(issuer, "/")
	if err := checkSecureURL("issuer", issuer); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/.well-known/openid-configuration", nil)
	if err != nil {
		return "", fmt.Errorf("discovery at %s: %w", issuer, err)
	}
	req.Header.Set("Accept", "application/json")
	hc := httpx.NoRedirectClient(nil)
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("discovery at %s: %w", issuer, err)
	}
	defer resp.Body.Close()
	body, err := httpx.ReadAll(resp.Body, maxDiscoveryBytes)
	switch {
	case errors.Is(err, httpx.ErrTooLarge):
		return "", fmt.Errorf("discovery at %s: document larger than %d bytes", issuer, maxDiscoveryBytes)
	case err != nil:
		return "", fmt.Errorf("discovery at %s: reading the document: %w", issuer, err)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("discovery at %s: HTTP %d", issuer, resp.StatusCode)
	}
	var doc struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("discovery at %s: the document is not JSON: %w", issuer, err)
	}
	if strings.TrimSuffix(doc.Issuer, "/") != issuer {
		return "", fmt.Errorf("discovery at %s: the document names issuer %q", issuer, doc.Issuer)
	}
	if doc.TokenEndpoint == "" {
		return "", fmt.Errorf("discovery at %s: no token_endpoint", issuer)
	}
	if err := checkSecureURL("token_endpoint", doc.TokenEndpoint); err != nil {
		return "", fmt.Errorf("discovery at %s: %w", issuer, err)
	}
	return doc.TokenEndpoint, nil
}

// checkSecureURL refuses a URL that a client secret or a token would travel
// to in clear: it must be an absolute https URL, plain http only on
// loopback. name says which setting it is; the URL is quoted without any
// password it holds.
func checkSecureURL(name, raw string) error {
	u, err := url.Parse(raw)
	if err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http" && httpx.IsLoopback(u.Hostname())) {
		return nil
	}
	shown := raw
	if err == nil {
		shown = u.Redacted()
	}
	return fmt.Errorf("%s %q must be an absolute https URL (plain http only on loopback)", name, shown)
}
