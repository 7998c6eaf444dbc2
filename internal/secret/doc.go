// Package secret holds values that must never be printed, and the redaction
// of text that may echo them.
//
// A Secret prints "[REDACTED]" under every fmt verb (%v, %+v, %#v, %s, %q,
// %x, …), in log/slog, in encoding/json and in every encoding.TextMarshaler
// user. Reveal returns the value for the one place that must send it.
//
// Redact replaces each secret in a text, and its encoded forms: URL
// query-escaped (as in a form body, "+" for space, either hex case),
// path-escaped, JSON-escaped (with and without HTML escaping, "\/" and
// \u-escaped non-ASCII), and base64 (standard and URL alphabets, padded and
// raw). Basic gives the "user:pass" pair to pass alongside, so an echoed
// "Authorization: Basic …" header is redacted too. A secret shorter than
// MinSubstringLen bytes is redacted only where it stands as a whole token
// (not inside a longer word), so redacting "grant" leaves "invalid_grant"
// intact: never classify an error on redacted text, but a redaction still
// never changes an error code.
//
// # Failure taxonomy
//
// The package returns no errors. Redact never fails; an empty secret is
// ignored.
package secret
