package a2a

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Agent describes the agent on its card.
type Agent struct {
	Name        string
	Description string
	// Version is the agent's own version (the card's "version"); "1.0.0" if empty.
	Version string
	// URL is what callers dial: the absolute http(s) URL of the JSON-RPC
	// endpoint, declared on the card for both wire versions. The Server serves
	// JSON-RPC at its path.
	URL string
	// Skill is the agent's one skill.
	Skill Skill
}

// Skill is the card's single skill.
type Skill struct {
	ID          string
	Name        string
	Description string
	// Tags are keywords; the card requires at least one, so Skill.ID is used
	// when empty.
	Tags []string
	// Examples are sample prompts (optional).
	Examples []string
}

// Protocol versions served on the one endpoint.
const (
	Version10 = "1.0"
	Version03 = "0.3"
)

// CardPath is where the Agent Card is served (also under the endpoint's path).
const CardPath = a2asrv.WellKnownAgentCardPath

// cardCacheControl lets callers and proxies keep the card five minutes.
const cardCacheControl = "public, max-age=300"

func (a Agent) validate() (*url.URL, error) {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"Name", a.Name}, {"Description", a.Description}, {"URL", a.URL},
		{"Skill.ID", a.Skill.ID}, {"Skill.Name", a.Skill.Name}, {"Skill.Description", a.Skill.Description},
	} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, errors.New("a2a: the agent needs " + strings.Join(missing, ", "))
	}
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("a2a: the agent URL must be an absolute http or https URL without query or fragment")
	}
	return u, nil
}

// Card returns the agent's card in the 1.0 model (a2a-go's type). It declares
// one JSON-RPC interface per served version at Agent.URL, exactly one skill,
// text in and out, the bearer scheme, and no optional capability (no
// streaming, no push notifications, no extended card), since none is served.
//
// The Server serves it in two wire forms, chosen by the A2A-Version request
// header: the 1.0 form (ProtoJSON, valid against the 1.0 schema, nothing of
// 0.3 in it) without the header or with "1.0", and the 0.3 form (url,
// protocolVersion, preferredTransport, security, the 0.3 scheme shape) with
// "A2A-Version: 0.3".
func (a Agent) Card() *a2apb.AgentCard {
	version := a.Version
	if version == "" {
		version = "1.0.0"
	}
	return &a2apb.AgentCard{
		Name:        a.Name,
		Description: a.Description,
		Version:     version,
		SupportedInterfaces: []*a2apb.AgentInterface{
			{URL: a.URL, ProtocolBinding: a2apb.TransportProtocolJSONRPC, ProtocolVersion: Version10},
			{URL: a.URL, ProtocolBinding: a2apb.TransportProtocolJSONRPC, ProtocolVersion: Version03},
		},
		Capabilities:       a2apb.AgentCapabilities{},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2apb.AgentSkill{{
			ID: a.Skill.ID, Name: a.Skill.Name, Description: a.Skill.Description,
			Tags: a.tags(), Examples: a.Skill.Examples,
		}},
		SecuritySchemes:      a2apb.NamedSecuritySchemes{"bearer": a2apb.HTTPAuthSecurityScheme{Scheme: "Bearer"}},
		SecurityRequirements: a2apb.SecurityRequirementsOptions{{"bearer": {}}},
	}
}

func (a Agent) tags() []string {
	if len(a.Skill.Tags) == 0 {
		return []string{a.Skill.ID}
	}
	return a.Skill.Tags
}

// cardJSON10 renders the card in the 1.0 ProtoJSON form: a2a-go's encoding,
// except securityRequirements, whose scope lists a2a-go writes as bare
// arrays where the 1.0 schema wants {"list": [...]}.
func (a Agent) cardJSON10() ([]byte, error) {
	b, err := json.Marshal(a.Card())
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"bearer": map[string]any{"list": []string{}}}}}
	return json.MarshalIndent(m, "", "  ")
}

// cardJSON03 renders the card in the 0.3 form.
func (a Agent) cardJSON03() ([]byte, error) {
	c := a.Card()
	type skill struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
		Examples    []string `json:"examples,omitempty"`
	}
	card := struct {
		ProtocolVersion    string                       `json:"protocolVersion"`
		Name               string                       `json:"name"`
		Description        string                       `json:"description"`
		URL                string                       `json:"url"`
		PreferredTransport string                       `json:"preferredTransport"`
		Version            string                       `json:"version"`
		Capabilities       map[string]bool              `json:"capabilities"`
		SecuritySchemes    map[string]map[string]string `json:"securitySchemes"`
		Security           []map[string][]string        `json:"security"`
		DefaultInputModes  []string                     `json:"defaultInputModes"`
		DefaultOutputModes []string                     `json:"defaultOutputModes"`
		Skills             []skill                      `json:"skills"`
	}{
		ProtocolVersion:    Version03,
		Name:               c.Name,
		Description:        c.Description,
		URL:                a.URL,
		PreferredTransport: string(a2apb.TransportProtocolJSONRPC),
		Version:            c.Version,
		Capabilities:       map[string]bool{"streaming": false, "pushNotifications": false},
		SecuritySchemes:    map[string]map[string]string{"bearer": {"type": "http", "scheme": "bearer"}},
		Security:           []map[string][]string{{"bearer": {}}},
		DefaultInputModes:  c.DefaultInputModes,
		DefaultOutputModes: c.DefaultOutputModes,
		Skills:             []skill{{ID: a.Skill.ID, Name: a.Skill.Name, Description: a.Skill.Description, Tags: a.tags(), Examples: a.Skill.Examples}},
	}
	return json.MarshalIndent(card, "", "  ")
}

// ParseCard parses a 1.0 Agent Card as the 1.0 schema writes it and as
// a2a-go writes it: a securityRequirements scope list may be {"list": [...]}
// (ProtoJSON, what this package's Server sends) or a bare array. a2a-go
// v2.3.1's own parser reads only the bare array, so a2a-go clients resolve
// this package's card with agentcard.Resolver{CardParser: ParseCard}.
func ParseCard(b []byte) (*a2apb.AgentCard, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("a2a: the agent card is not a JSON object: %w", err)
	}
	if raw, ok := m["securityRequirements"]; ok {
		var reqs []struct {
			Schemes map[string]json.RawMessage `json:"schemes"`
		}
		if err := json.Unmarshal(raw, &reqs); err != nil {
			return nil, fmt.Errorf("a2a: the agent card's securityRequirements: %w", err)
		}
		out := make([]map[string]map[string][]string, len(reqs))
		for i, r := range reqs {
			out[i] = map[string]map[string][]string{"schemes": {}}
			for name, scopes := range r.Schemes {
				var list []string
				if err := json.Unmarshal(scopes, &list); err != nil {
					var wrapped struct {
						List []string `json:"list"`
					}
					if err := json.Unmarshal(scopes, &wrapped); err != nil {
						return nil, fmt.Errorf("a2a: the agent card's scopes for %q: %w", name, err)
					}
					list = wrapped.List
				}
				if list == nil {
					list = []string{}
				}
				out[i]["schemes"][name] = list
			}
		}
		fixed, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		m["securityRequirements"] = fixed
	}
	fixed, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var card a2apb.AgentCard
	if err := json.Unmarshal(fixed, &card); err != nil {
		return nil, fmt.Errorf("a2a: parsing the agent card: %w", err)
	}
	return &card, nil
}

// cardHandler serves the card, in the form the A2A-Version header asks for,
// with Cache-Control and a strong ETag per form, answering If-None-Match
// with 304.
func cardHandler(body10, body03 []byte) http.Handler {
	tag := func(b []byte) string {
		sum := sha256.Sum256(b)
		return `"` + hex.EncodeToString(sum[:16]) + `"`
	}
	etag10, etag03 := tag(body10), tag(body03)
	modified := time.Now().UTC().Format(http.TimeFormat) // the card is fixed when the Server is built
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match, A2A-Version")
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet, http.MethodHead:
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, etag := body10, etag10
		if strings.TrimSpace(r.Header.Get(a2apb.SvcParamVersion)) == Version03 {
			body, etag = body03, etag03
		}
		h.Set("Vary", "A2A-Version")
		h.Set("Cache-Control", cardCacheControl)
		h.Set("ETag", etag)
		h.Set("Last-Modified", modified)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/json")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body) // a write error means the caller went away
	})
}

func etagMatches(header, etag string) bool {
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
		if v == etag || v == "*" {
			return true
		}
	}
	return false
}
