package pipeline

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/n8n"
)

// SandboxSuffix ends the name of every credential a workflow may use in the
// sandbox. Production uses the same name without it.
const SandboxSuffix = "-sandbox"

// ErrUnresolved matches a *CredentialError.
var ErrUnresolved = errors.New("pipeline: credential references do not resolve")

// Unresolved is one credential reference that could not be bound.
type Unresolved struct {
	Node   string // node name
	Type   string // credential type the node asks for
	Name   string // name the node references (after mapping, for production)
	Reason string
}

func (u Unresolved) String() string {
	return fmt.Sprintf("%s (%s, node %q): %s", u.Name, u.Type, u.Node, u.Reason)
}

// CredentialError lists every reference that did not resolve in one
// environment; nothing was written.
type CredentialError struct {
	Env        secrets.Environment
	Unresolved []Unresolved
}

func (e *CredentialError) Error() string {
	parts := make([]string, len(e.Unresolved))
	for i, u := range e.Unresolved {
		parts[i] = u.String()
	}
	return fmt.Sprintf("pipeline: %d credential reference(s) do not resolve in %s: %s",
		len(e.Unresolved), e.Env, strings.Join(parts, "; "))
}

func (e *CredentialError) Unwrap() error { return ErrUnresolved }

// Names lists the unresolved references for the BLOCKED notification.
func (e *CredentialError) Names() []string {
	out := make([]string, len(e.Unresolved))
	for i, u := range e.Unresolved {
		out[i] = fmt.Sprintf("%s (%s: %s)", u.Name, u.Type, u.Reason)
	}
	return out
}

// ResolveCredentials binds every credential reference of wf to one credential
// of avail (the credentials of the target instance) and returns a copy of wf
// whose references carry that credential's id and exact name. wf is not
// changed.
//
// A reference resolves by name (same name and type), else by type when
// exactly one credential of that type exists. In the Sandbox the referenced
// name and the credential bound must both end in SandboxSuffix; anything
// else is refused, so a workflow under test can never hold a production
// credential. For Production the referenced name is first mapped away from
// its SandboxSuffix ("Orders API-sandbox" → "Orders API"), and a credential
// whose name ends in SandboxSuffix is never bound. The error is a
// *CredentialError listing every reference that did not resolve.
func ResolveCredentials(wf *n8n.Workflow, avail []n8n.Credential, env secrets.Environment) (*n8n.Workflow, error) {
	if env != secrets.Sandbox && env != secrets.Production {
		return nil, fmt.Errorf("pipeline: unknown environment %q", env)
	}
	out := wf.Clone()
	var bad []Unresolved
	for i := range out.Nodes {
		n := &out.Nodes[i]
		types := make([]string, 0, len(n.Credentials))
		for t := range n.Credentials {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, typ := range types {
			ref := n.Credentials[typ]
			name := strings.TrimSpace(ref.Name)
			if env == secrets.Production {
				name = strings.TrimSuffix(name, SandboxSuffix)
			}
			cred, reason := resolveOne(name, typ, avail, env)
			if reason != "" {
				bad = append(bad, Unresolved{Node: n.Name, Type: typ, Name: name, Reason: reason})
				continue
			}
			n.Credentials[typ] = n8n.CredentialRef{ID: cred.ID, Name: cred.Name}
		}
	}
	if len(bad) > 0 {
		return nil, &CredentialError{Env: env, Unresolved: bad}
	}
	return out, nil
}

func resolveOne(name, typ string, avail []n8n.Credential, env secrets.Environment) (n8n.Credential, string) {
	if name == "" {
		return n8n.Credential{}, "the reference has no name"
	}
	if env == secrets.Sandbox && !strings.HasSuffix(name, SandboxSuffix) {
		return n8n.Credential{}, "refused in the sandbox: the name does not end in " + SandboxSuffix
	}
	usable := func(c n8n.Credential) bool {
		if env == secrets.Sandbox {
			return strings.HasSuffix(c.Name, SandboxSuffix)
		}
		return !strings.HasSuffix(c.Name, SandboxSuffix)
	}
	var byName, byType []n8n.Credential
	for _, c := range avail {
		if c.Type != typ || c.ID == "" {
			continue
		}
		byType = append(byType, c)
		if c.Name == name {
			byName = append(byName, c)
		}
	}
	switch {
	case len(byName) == 1 && usable(byName[0]):
		return byName[0], ""
	case len(byName) == 1:
		return n8n.Credential{}, fmt.Sprintf("%q is not a %s credential", byName[0].Name, env)
	case len(byName) > 1:
		return n8n.Credential{}, fmt.Sprintf("%d credentials of this type share the name", len(byName))
	case len(byType) == 1 && usable(byType[0]):
		return byType[0], ""
	case len(byType) == 1:
		return n8n.Credential{}, fmt.Sprintf("no credential of this name, and the only one of this type (%q) is not a %s credential", byType[0].Name, env)
	case len(byType) == 0:
		return n8n.Credential{}, "no credential of this name or type exists"
	}
	return n8n.Credential{}, fmt.Sprintf("no credential of this name, and %d of this type exist", len(byType))
}

// credentialNames lists the names of creds, sorted.
func credentialNames(creds []n8n.Credential) []string {
	out := make([]string, 0, len(creds))
	for _, c := range creds {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}
