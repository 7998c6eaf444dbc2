// Package candor is the root of a module of composable agent primitives for
// Go services that put agents in front of real systems. The root package holds
// no code; the packages below it are each usable alone:
//
//   - mcpclient: MCP tool calls that never read isError as data
//   - tokenexchange: RFC 8693 token exchange on golang.org/x/oauth2;
//     tokenexchange/mandate: offline mandates (a user's refresh token, encrypted at rest)
//   - a2a: a contract-strict A2A facade in front of a webhook
//   - reply: the {"answer","escalate"} webhook contract
//   - approval: an immutable approval store; effects at most once
//   - retrieval: a policy-first exact-cosine index and AnswerGate;
//     retrieval/ollama: an embedder for an Ollama server
//   - reorder: the periodic purchase proposal
//   - n8n: the n8n API client, safe deploys and validation
//
// # Conventions
//
// Every package follows the same conventions for constructors (Dial, Open,
// OpenDB, New), options, logging, errors and listing; CONTRIBUTING.md in the
// repository states them with an example of each.
//
// # Stability
//
// The module is at v0. Until v1.0.0:
//
//   - Exported Go APIs may change in any minor release (v0.x.0). Every such
//     change is listed under "Breaking" in CHANGELOG.md with its replacement,
//     and a program written against the old API fails to compile rather than
//     changing behaviour silently.
//   - Patch releases (v0.x.y) change no exported API.
//   - What is never broken silently, even at v0: the on-disk formats of the
//     stores (approval, mandates, retrieval indexes) — a new release migrates
//     an existing file or refuses it with a typed error, never reads it wrong;
//     the wire contracts (the webhook reply contract, the A2A and MCP
//     protocol versions served); and the failure semantics each package's
//     doc.go lists: an error that is a failure today is never turned into a
//     success by an upgrade.
//   - Error kinds returned by Classify functions are stable strings: new kinds
//     may be added, existing ones are not renamed.
package candor
