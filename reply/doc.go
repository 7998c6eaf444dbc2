// Package reply decodes the webhook reply contract that candor's workflows
// answer with: exactly one JSON object holding a string "answer" and a boolean
// "escalate", and nothing else.
//
// The contract exists once in the module. Package a2a maps a decoded Reply to a
// Task state and package n8n returns it from CallWebhook; both call Decode, so a
// body that one accepts the other accepts too.
//
// Decode is strict on purpose: an empty body is ErrEmpty, and a body that is not
// exactly the contract (not JSON, another type, a missing, repeated, extra or
// differently-cased key, a blank answer, trailing data) is a *ContractError that
// keeps the raw bytes, so drift in a workflow is visible instead of being read as
// an answer. Decode never reads from a network: callers bound the body first
// (MaxBytes is a sensible bound).
package reply
