package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

func TestAgentCard(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"

	for _, path := range []string{"/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		resp, err := http.Get(f.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" ||
			resp.Header.Get("Cache-Control") != "public, max-age=300" || resp.Header.Get("ETag") == "" {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, resp.Header)
		}

		// 1.0 view, as a2a-go's default parser reads it.
		card, err := agentcard.DefaultCardParser(body)
		if err != nil {
			t.Fatalf("1.0 parser: %v", err)
		}
		if len(card.Skills) != 1 || card.Skills[0].ID != "stock-level" || card.Skills[0].Name != "Stock level" ||
			len(card.Skills[0].Examples) != 1 || len(card.Skills[0].Tags) == 0 {
			t.Fatalf("skills = %+v, want exactly the configured one", card.Skills)
		}
		if c := card.Capabilities; c.Streaming || c.PushNotifications || c.ExtendedAgentCard {
			t.Fatalf("capabilities = %+v, want none (none is served)", c)
		}
		if len(card.SupportedInterfaces) != 2 {
			t.Fatalf("interfaces = %+v", card.SupportedInterfaces)
		}
		versions := map[string]bool{}
		for _, i := range card.SupportedInterfaces {
			if i.URL != endpoint || i.ProtocolBinding != "JSONRPC" {
				t.Fatalf("interface %+v", i)
			}
			versions[string(i.ProtocolVersion)] = true
		}
		if !versions["1.0"] || !versions["0.3"] {
			t.Fatalf("versions = %v, want 1.0 and 0.3", versions)
		}
		if _, ok := card.SecuritySchemes["bearer"]; !ok || len(card.SecurityRequirements) != 1 {
			t.Fatalf("security = %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
		}

		// 0.3 view, with a2a-go's compat parser and on the raw JSON.
		old, err := a2av0.NewAgentCardParser()(body)
		if err != nil || len(old.Skills) != 1 || len(old.SecuritySchemes) != 1 {
			t.Fatalf("0.3 parser: %+v %v", old, err)
		}
		var raw map[string]any
		if err := json.Unmarshal(body, &raw); err != nil {
			t.Fatal(err)
		}
		if raw["url"] != endpoint || raw["protocolVersion"] != "0.3" || raw["preferredTransport"] != "JSONRPC" || raw["security"] == nil {
			t.Fatalf("0.3 fields missing: %s", body)
		}
		scheme := raw["securitySchemes"].(map[string]any)["bearer"].(map[string]any)
		if scheme["type"] != "http" || scheme["scheme"] != "bearer" || scheme["httpAuthSecurityScheme"] == nil {
			t.Fatalf("bearer scheme = %v, want both forms", scheme)
		}

		// Conditional request.
		req, _ := http.NewRequest(http.MethodGet, f.URL+path, nil)
		req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
		resp2, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if resp2.StatusCode != http.StatusNotModified || resp2.Header.Get("ETag") != resp.Header.Get("ETag") {
			t.Fatalf("If-None-Match: %d, want 304", resp2.StatusCode)
		}
	}
	resp, err := http.Post(f.URL+"/.well-known/agent-card.json", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST card: %d", resp.StatusCode)
	}
	resp, err = http.Get(f.URL + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /elsewhere: %d", resp.StatusCode)
	}
}
