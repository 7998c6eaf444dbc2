package oidctest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestProviderKeycloakRules(t *testing.T) {
	p, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(p.AddUser(User{ID: "alice"}))
	must(p.AddClient(Client{ID: "web", Secret: "web-secret", Audiences: []string{"api"}}))
	must(p.AddClient(Client{ID: "agent", Secret: "agent-secret"}))
	if err := p.AddClient(Client{ID: "self", Audiences: []string{"self"}}); err == nil {
		t.Error("a client was accepted as its own audience")
	}
	ctx := context.Background()
	at, err := p.UserAccessToken(ctx, "alice", "web")
	must(err)
	claims, err := p.VerifyAccessToken(ctx, at, "api")
	must(err)
	if claims.Subject != "alice" || claims.AuthorizedParty != "web" {
		t.Errorf("claims = %+v", claims)
	}
	if _, err := p.VerifyAccessToken(ctx, at, "other"); !errors.Is(err, ErrTokenRejected) {
		t.Errorf("wrong audience accepted: %v", err)
	}

	// A refresh token presented by another client is refused, and a rotated
	// one cannot be used twice.
	rt, err := p.OfflineToken(ctx, "alice", "web")
	must(err)
	post := func(id, secret string, form url.Values) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, p.TokenURL(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(id, secret)
		resp, err := http.DefaultClient.Do(req)
		must(err)
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		must(err)
		return resp.StatusCode, string(b)
	}
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}
	if code, body := post("agent", "agent-secret", refresh); code != 400 || !strings.Contains(body, "invalid_grant") {
		t.Errorf("other client's refresh: %d %s", code, body)
	}
	if code, body := post("web", "web-secret", refresh); code != 200 || !strings.Contains(body, "refresh_token") {
		t.Fatalf("refresh: %d %s", code, body)
	}
	if code, body := post("web", "web-secret", refresh); code != 400 || !strings.Contains(body, "Stale token") {
		t.Errorf("reused rotated refresh token: %d %s", code, body)
	}
	if code, _ := post("web", "wrong", refresh); code != 401 {
		t.Errorf("bad client secret: status %d, want 401", code)
	}
	if got := p.TokenRequests(); got != 4 {
		t.Errorf("TokenRequests = %d, want 4", got)
	}
	for _, r := range p.Requests() {
		for _, k := range r.Params {
			if strings.Contains(k, rt) {
				t.Error("a recorded request holds a token value")
			}
		}
	}
}
