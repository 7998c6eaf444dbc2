// Package check is the decision logic of the availability agent
// (examples/availability): an a2a.Backend that answers "can this product be
// promised?" for the person whose bearer token comes with the question.
//
// For one question, Checker.Ask
//
//  1. stops with "no identity" when the question has no token;
//  2. reads the product code with a rule (ProductCodes: S, digits,
//     underscore, word characters), never a model: no code, or several
//     different codes, is an escalation and nothing is called;
//  3. exchanges the caller's token for the catalog's audience (Exchanger,
//     in practice a *tokenexchange.Cache);
//  4. calls the catalog's get-product tool once, through an mcpclient.Pool,
//     on the MCP session of the caller the exchanged token was issued for
//     (opened by the caller's first question, reused by the next, never by
//     another caller), carrying only the exchanged token, with every
//     response bounded (MaxResponseBytes, MaxSessionBytes) and a budget of
//     one call per question; Close ends the sessions;
//  5. decides with Decide on the stock on hand (quantities committed on open
//     orders are not deducted): more than the reorder threshold is a
//     promise, anything else escalates.
//
// Decided answers and escalations are reply.Reply values mapped with
// a2a.MapReply, the facade's own mapping of a workflow's reply, so this
// agent and a webhook facade can never report the same reply differently.
//
// # Failure taxonomy
//
// Only a product with more units in stock than the threshold completes.
// Everything else is a Failed a2a.Outcome:
//
//   - decided escalations (errors.Is(err, a2a.ErrEscalated); failure
//     "escalated" on the task): no product code, several codes, "There is
//     no product X in the catalog." (get-product answered isError with the
//     catalog's 404 text), stock at or below the threshold;
//   - ErrNoIdentity: no token (also a2a.ErrNoToken) or a caller token the
//     identity provider refused in the exchange (invalid_request,
//     invalid_grant, access_denied); nothing was read;
//   - ErrExchange: the agent's own side of the exchange failed (its client
//     credentials, the provider unreachable, an unusable answer); wraps the
//     tokenexchange error;
//   - ErrCatalog: the catalog call failed (another isError text, a JSON-RPC
//     error, a payload that is not JSON, HTTP 401 or another status, a
//     read bound, a transport error); wraps the mcpclient error;
//   - *ProductError: get-product answered, but not with a usable product
//     (a field missing or mistyped, a negative or fractional stock, another
//     product than the one asked for); Raw keeps the payload.
//
// Tokens are never logged: the Checker logs the product code, the state
// and the reason only.
package check
