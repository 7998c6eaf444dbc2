package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/candorkit/candor/examples/internal/demo"
	"github.com/candorkit/candor/tokenexchange/mandate"
)

// Identities of the embedded demo.
const (
	demoUser    = demo.User       // the person whose mandate the agent uses
	demoAgent   = "reorder-agent" // this agent: a confidential client allowed to exchange
	mcpAudience = demo.Audience   // the catalog, a bearer-only resource server
)

// Files of the embedded demo in the state directory.
const (
	demoKeyFile     = "demo-mandate.key" // the demo's mandate key when CANDOR_MANDATE_KEY is unset
	demoConsentFile = "demo-consent"     // "granted" or "revoked": Marie's standing choice
)

// startEmbedded starts the demo world of examples/internal/demo: the
// provider (Marie, this agent's client, the catalog's audience) and the
// catalog, whose bearer check verifies every request's token at the
// provider for the catalog's audience (signature, issuer, expiry, aud).
func startEmbedded(ctx context.Context, log *slog.Logger) (*demo.World, error) {
	return demo.Start(ctx, demoAgent, demo.WithLogger(log))
}

// consent is Marie's standing choice in the demo.
type consent string

const (
	consentUnset   consent = ""
	consentGranted consent = "granted"
	consentRevoked consent = "revoked"
)

func readConsent(dir string) (consent, error) {
	b, err := os.ReadFile(filepath.Join(dir, demoConsentFile))
	if errors.Is(err, fs.ErrNotExist) {
		return consentUnset, nil
	}
	if err != nil {
		return "", err
	}
	switch c := consent(bytes.TrimSpace(b)); c {
	case consentGranted, consentRevoked:
		return c, nil
	default:
		return "", fmt.Errorf("%s holds %q, want %q or %q", demoConsentFile, c, consentGranted, consentRevoked)
	}
}

func writeConsent(dir string, c consent) error {
	return os.WriteFile(filepath.Join(dir, demoConsentFile), []byte(string(c)+"\n"), 0o600)
}

// grantDemoMandate brings the mandate store in line with Marie's choice at
// this process's provider. The embedded provider lives only as long as the
// process, so the offline token of an earlier run means nothing to it: while
// her consent stands (and on the very first run, which records it), the demo
// has her grant a fresh offline token. Once she revoked it, nothing is
// granted and the agent finds no mandate. A real provider keeps the offline
// session, and the store keeps its rotated refresh token from run to run.
func grantDemoMandate(ctx context.Context, e *demo.World, store *mandate.Store, dir string, log *slog.Logger) error {
	c, err := readConsent(dir)
	if err != nil {
		return err
	}
	if c == consentRevoked {
		log.Info("demo: marie revoked her mandate; not granting it again", slog.String("grant-again", "reorder grant"))
		return nil
	}
	offline, err := e.OfflineToken(ctx)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := store.Grant(ctx, demoUser, demoAgent, offline); err != nil {
		return fmt.Errorf("demo: storing marie's mandate: %w", err)
	}
	if c == consentUnset {
		log.Info("demo: first run, marie grants the reorder agent an offline mandate")
		return writeConsent(dir, consentGranted)
	}
	return nil
}

// demoKey returns the demo's mandate key, created on first use in the state
// directory with mode 0600. It exists so that `go run` works without any
// setup; it protects nothing that the state directory's permissions do not
// already protect. Real runs take the key from CANDOR_MANDATE_KEY only.
func demoKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, demoKeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		return mandate.ParseKey(string(bytes.TrimSpace(b)))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, mandate.KeySize)
	_, _ = rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return demoKey(dir) // another process created it meanwhile
	}
	if err != nil {
		return nil, err
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, err
	}
	return key, nil
}
