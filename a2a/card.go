package a2a

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

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
func (a Agent) Card() *a2apb.AgentCard {
	version := a.Version
	if version == "" {
		version = "1.0.0"
	}
	tags := a.Skill.Tags
	if len(tags) == 0 {
		tags = []string{a.Skill.ID}
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
			Tags: tags, Examples: a.Skill.Examples,
		}},
		SecuritySchemes:      a2apb.NamedSecuritySchemes{"bearer": a2apb.HTTPAuthSecurityScheme{Scheme: "Bearer"}},
		SecurityRequirements: a2apb.SecurityRequirementsOptions{{"bearer": {}}},
	}
}

// cardJSON renders the card once for both wire versions: the 1.0 fields as
// a2a-go writes them, plus the 0.3 fields (url, protocolVersion,
// preferredTransport, security) and, for the bearer scheme, one object that
// carries both the 1.0 form ({"httpAuthSecurityScheme": {...}}) and the 0.3
// form ({"type": "http", "scheme": "bearer"}). a2a-go's own compat card
// (a2av0.NewStaticAgentCardProducer) writes only the 0.3 form of the scheme,
// which a2a-go's 1.0 card parser rejects.
func (a Agent) cardJSON() ([]byte, error) {
	card := a.Card()
	b, err := json.Marshal(card)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["url"] = a.URL
	m["protocolVersion"] = Version03
	m["preferredTransport"] = string(a2apb.TransportProtocolJSONRPC)
	m["security"] = []map[string][]string{{"bearer": {}}}
	m["securitySchemes"] = map[string]any{"bearer": map[string]any{
		"httpAuthSecurityScheme": map[string]string{"scheme": "Bearer"},
		"type":                   "http",
		"scheme":                 "bearer",
	}}
	return json.MarshalIndent(m, "", "  ")
}

// cardHandler serves fixed card bytes with Cache-Control and a strong ETag,
// answering If-None-Match with 304.
func cardHandler(body []byte) http.Handler {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match")
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet, http.MethodHead:
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		h.Set("Cache-Control", cardCacheControl)
		h.Set("ETag", etag)
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
