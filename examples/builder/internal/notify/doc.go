// Package notify tells a person what the builder did, through ntfy
// (POST {server}/{topic} with a Title header and the message as the body), in
// the exact message patterns of docs/builder-playbook.md (rule 13):
//
//	[N8N Builder] Building {name} (id={id})
//	[N8N Builder] FAIL — Overseer rejected {name}: {reason}
//	[N8N Builder] FAIL — {name} failed N8N import: {error}
//	[N8N Builder] BLOCKED — {name} needs credentials: {list}
//	[N8N Builder] FAIL — {name} failed Level {n}: {error}
//	[N8N Builder] READY — {name} passed all tests, awaiting your approval
//	[N8N Builder] ERROR — {name}: {exception}
//
// plus the one for a lost claim (rule 2):
//
//	[N8N Builder] SKIPPED — {name} (id={id}) is already claimed by another builder
//
// A notification is a side channel: Deliver logs a failed delivery and returns
// the error for the caller to record next to (never instead of) the outcome.
//
// Failure taxonomy:
//   - *DeliveryError: ntfy answered a non-2xx status (keeps the status, ntfy's
//     {"code","error"} and the bounded body), or a 2xx that is not a published
//     message event; transport errors are wrapped in it too.
//   - ErrInvalid: a server URL that is not http(s) or a topic outside
//     [-_A-Za-z0-9]{1,64}.
//
// Bounds: a message body is cut to 4000 bytes (ntfy's message limit is 4096;
// longer ones turn into attachments); an answer is read up to 64 KiB.
package notify
