package demo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/examples/internal/catalog"
	"github.com/candorkit/candor/examples/internal/demo"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

func start(t *testing.T, agent string, opts ...demo.Option) *demo.World {
	t.Helper()
	w, err := demo.Start(t.Context(), agent, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// getProduct reads one product from the world's catalog with token.
func getProduct(ctx context.Context, w *demo.World, token string) (catalog.Product, error) {
	c, err := mcpclient.Dial(ctx, w.MCPURL, mcpclient.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})))
	if err != nil {
		return catalog.Product{}, err
	}
	defer c.Close()
	return mcpclient.CallJSON[catalog.Product](ctx, c, catalog.ToolGetProduct, map[string]string{"productCode": "S24_2000"})
}

// The availability world: the user's front-end token is refused by the
// catalog; the token the agent exchanges it for is verified, and the call
// log says which token came with each request.
func TestFrontEndExchange(t *testing.T) {
	ctx := t.Context()
	w := start(t, "shop-agent", demo.WithFrontEnd("shop-web", time.Hour), demo.WithCallLog())

	userTok, err := w.UserToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := w.OP.VerifyAccessToken(ctx, userTok, "shop-agent")
	if err != nil || claims.Subject != demo.User || claims.AuthorizedParty != "shop-web" || time.Until(claims.Expiry) < 59*time.Minute {
		t.Fatalf("user token claims %+v, %v", claims, err)
	}
	if _, err := getProduct(ctx, w, userTok); !errors.Is(err, mcpclient.ErrUnauthorized) {
		t.Fatalf("the user's own token reached the catalog: %v", err)
	}
	if ok, refused := w.Verified(); ok != 0 || refused != 1 {
		t.Fatalf("after the user's token: %d verified, %d refused", ok, refused)
	}

	cfg := w.AgentConfig()
	if cfg.ClientID != "shop-agent" || cfg.ClientSecret != w.AgentSecret || !slices.Equal(cfg.Audience, []string{demo.Audience}) {
		t.Fatalf("agent config %v", cfg)
	}
	exchanged, err := cfg.Exchange(ctx, userTok)
	if err != nil {
		t.Fatal(err)
	}
	p, err := getProduct(ctx, w, exchanged.AccessToken)
	if err != nil || p.Code != "S24_2000" || p.QuantityInStock != 15 {
		t.Fatalf("with the exchanged token: %+v, %v", p, err)
	}

	calls := w.Calls()
	ok, refused := w.Verified()
	if len(calls) < 2 || ok+refused != len(calls) || refused != 1 {
		t.Fatalf("%d calls logged, %d verified, %d refused", len(calls), ok, refused)
	}
	if c := calls[0]; c.Token != userTok || c.Claims != nil || !errors.Is(c.Err, oidctest.ErrTokenRejected) {
		t.Fatalf("first call %v", c)
	}
	for _, c := range calls[1:] {
		if c.Token != exchanged.AccessToken || c.Err != nil || c.Claims.Subject != demo.User ||
			c.Claims.AuthorizedParty != "shop-agent" || !slices.Contains(c.Claims.Audience, demo.Audience) {
			t.Fatalf("call %v", c)
		}
	}
}

// The reorder world: the offline token, stored as a mandate and redeemed
// with the agent's credentials, gives a token the catalog accepts. Without
// WithCallLog nothing but the counts is kept.
func TestOfflineMandate(t *testing.T) {
	ctx := t.Context()
	w := start(t, "night-agent")
	if _, err := w.UserToken(ctx); !errors.Is(err, demo.ErrNoFrontEnd) {
		t.Fatalf("UserToken without a front end: %v", err)
	}
	offline, err := w.OfflineToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, mandate.KeySize)
	store, err := mandate.Open(ctx, filepath.Join(t.TempDir(), "m.db"), mandate.WithKey(key), mandate.WithAgent(w.Agent, w.AgentConfig()))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Grant(ctx, demo.User, w.Agent, offline); err != nil {
		t.Fatal(err)
	}
	tok, err := store.Token(ctx, demo.User, w.Agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := getProduct(ctx, w, tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	if ok, refused := w.Verified(); ok == 0 || refused != 0 {
		t.Fatalf("%d verified, %d refused", ok, refused)
	}
	if calls := w.Calls(); calls != nil {
		t.Fatalf("calls logged without WithCallLog: %d", len(calls))
	}
}

func TestStartRejectsAgentID(t *testing.T) {
	for _, agent := range []string{"", demo.Audience, "web"} {
		if w, err := demo.Start(t.Context(), agent, demo.WithFrontEnd("web", 0)); err == nil {
			w.Close()
			t.Errorf("agent id %q accepted", agent)
		}
	}
}

func TestNoSecretInOutput(t *testing.T) {
	ctx := t.Context()
	w := start(t, "agent", demo.WithFrontEnd("web", 0), demo.WithCallLog())
	userTok, err := w.UserToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exchanged, err := w.AgentConfig().Exchange(ctx, userTok)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = getProduct(ctx, w, userTok)
	if _, err := getProduct(ctx, w, exchanged.AccessToken); err != nil {
		t.Fatal(err)
	}
	calls := w.Calls()
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("demo", "world", w, "calls", calls, "first", calls[0])
	out := fmt.Sprintf("%v %+v %#v %s %v %+v %#v", w, w, w, w, calls, calls, calls) + logs.String()
	for _, secret := range []string{w.AgentSecret, userTok, exchanged.AccessToken} {
		if strings.Contains(out, secret) {
			t.Fatalf("a secret is printed:\n%s", out)
		}
	}
	if !strings.Contains(out, w.MCPURL) || !strings.Contains(out, `sub="marie"`) {
		t.Fatalf("the output names nothing useful:\n%s", out)
	}
}
