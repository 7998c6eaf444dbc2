// Package secrets loads the builder's n8n connection (base URL and API key)
// from a secret source, keeps the key in memory only, and never lets it reach a
// log, an error or a printed value.
//
// A Source answers for one n8n environment (Sandbox or Production). Two
// sources exist:
//
//   - Env (the default) reads environment variables:
//     N8N_SANDBOX_URL, N8N_SANDBOX_API_KEY (required) and N8N_SANDBOX_EMAIL,
//     N8N_SANDBOX_PASSWORD (optional: an owner login, for the parts of n8n
//     1.x that only a session can reach, such as listing credentials); the
//     same names with PRODUCTION for production.
//   - Vault logs in with AppRole (role_id and secret_id read from files,
//     POST /v1/auth/approle/login → auth.client_token), then reads the KV v2
//     secret secret/sandbox/n8n (GET /v1/secret/data/sandbox/n8n → data.data)
//     with the fields api_key and base_url (email and password optional);
//     production reads secret/production/n8n. Plain net/http, TLS verified.
//
// The API key, the password and the Vault credentials are held in the
// module's redacting type, internal/secret's Secret: every way of printing,
// logging or marshalling it gives "[REDACTED]"; Reveal is the only way to the
// value. Vault error bodies are redacted with secret.Redact, which also
// removes the encoded forms of each secret.
//
// The AppRole login token is revoked (POST /v1/auth/token/revoke-self) before
// N8N returns, whether the read succeeded or not; mount and path segments
// are path-escaped, and a mount with an empty, "." or ".." segment is
// refused (ErrInvalid) before any request.
//
// Failure taxonomy:
//   - ErrMissing (*MissingError): a required value is absent or empty; names
//     the variables or fields, never values.
//   - *VaultError: Vault answered with an error status or an unusable body.
//     It keeps the operation, the HTTP status and Vault's "errors" list; a body
//     is kept (bounded, with the secret id and token scrubbed) only for
//     non-2xx answers, because a 2xx read carries the API key.
//   - ErrInvalid: a value is present but unusable (a base URL that is not
//     http(s), a credential file that is empty or too large, a mount path
//     with an empty, "." or ".." segment).
//   - A *VaultError with Op "revoke login token": the read may have
//     succeeded, but the login token could not be revoked; N8N returns no
//     connection then.
//
// Reads are bounded: credential files to 4 KiB, Vault bodies to 64 KiB.
package secrets
