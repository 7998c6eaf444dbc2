// Package mandate keeps offline mandates, so that an agent acts for a
// person when the person is not there, and only then.
//
// A mandate is the refresh token a person granted an agent beforehand
// (scope offline_access), stored per (user, agent) in SQLite or
// PostgreSQL, sealed with AES-256-GCM (random nonce, the row key as
// additional data) under a key the caller supplies (WithKey) and the store
// never writes down.
// (*Store).Token refreshes it at the agent's client, persists a rotated
// refresh token as soon as the refresh answer is in (before the answer is
// judged, and even if the caller's context ends meanwhile, since the
// provider no longer accepts the old one), and exchanges the new access
// token for the agent's audience (tokenexchange.Config.Exchange). With no
// mandate, the agent does nothing: that is decided before any network
// request. (*Store).Revoke erases the mandate and, when the agent's Config
// has a RevocationURL, then revokes the refresh token at the provider
// (RFC 7009).
//
// Open opens a SQLite database file the store owns (WAL,
// synchronous=FULL, a 5 s busy timeout, the path taken literally). OpenDB
// uses a *sql.DB the caller owns and tells the backend from its driver:
// SQLite (driver "sqlite", modernc.org/sqlite), for instance to keep
// mandates in the application's own file, or PostgreSQL (driver "pgx",
// github.com/jackc/pgx/v5/stdlib), where the tables live under a schema
// (WithSchema, default "candor", created when missing). Either way the
// store migrates its table, candor_mandates, recording its checksummed
// migrations in candor_mandates_migrations; a SQLite table created before
// migrations were recorded is adopted as it is. The store logs only
// through WithLogger.
//
// This package is apart from tokenexchange because it compiles the SQLite
// and PostgreSQL drivers, which an importer of the exchange alone does not
// need.
//
// # Several processes, several nodes
//
// Any number of processes may share one database (a SQLite file on one
// machine, a PostgreSQL database from any number of nodes). Redemptions of
// one (user, agent) mandate are serialized among all of them, so a
// provider that rotates refresh tokens and refuses a used one never sees
// the same refresh token twice: before presenting the stored token,
// Token takes a lease in the mandate's row (holder, expiry on the
// database's clock, and a fencing counter), and gives it up in the same
// statement that persists the rotated token (or right after the refresh
// when the provider did not rotate). Other processes wait, polling with a
// growing interval, and read the new token once the lease is free. Within
// one process, calls for the same mandate first queue in the process.
//
// The lease lasts WithLease (default 30 s) and its holder renews it every
// third of that while it waits for the provider. A holder that died (a
// crash, SIGKILL, a node lost) stops renewing; its lease is taken over
// once it expires, by exactly one waiter, since acquisition is a single
// conditional UPDATE on the fence it read. Every write of the row bumps the
// fence, and the persist of a rotated token is conditioned on the holder's
// fence: a holder whose lease was taken over meanwhile (it was paused
// longer than the lease) cannot overwrite the row, and its Token reports
// tokenexchange.ErrRotationNotPersisted. A holder that cannot renew its
// lease for two thirds of its duration abandons the refresh (ErrLeaseLost)
// before anyone else may start one. Grant and Revoke do not wait for a
// lease: they end it, so a redemption in flight cannot persist over them.
//
// Why a lease rather than a row lock (SELECT … FOR UPDATE held across the
// refresh) on PostgreSQL: one mechanism for both backends, with the same
// bound on a dead holder. A row lock is released only when the server
// notices its session is gone, which for a node that vanished from the
// network depends on TCP keepalive settings (hours by default), not on
// the store; it would also hold a connection and an open transaction
// through every HTTP call to the provider. SQLite cannot hold a write
// transaction across a network call without blocking every other writer
// of the file.
//
// What no lock can prevent: a holder that dies after the provider rotated
// the token but before the new one was persisted takes the only valid
// token with it. The next redemption is then refused (ErrRejected) and
// the person must grant the mandate again.
//
// # Failure taxonomy
//
// Token, Grant and Revoke return an *Error{User, Agent, Reason, Err}, whose
// Reason is a sentinel and Err the cause; Classify(err) names the failure's
// Kind (a stable snake_case string, also a telemetry label):
//
//   - ErrNoMandate ("no_mandate"), ErrRevoked ("mandate_revoked"),
//     ErrUnreadable ("mandate_unreadable": a wrong key, a tampered or moved
//     row), ErrUnknownAgent ("unknown_agent"): returned by Token before any
//     network request.
//   - ErrRejected ("mandate_rejected"): the provider refused the refresh
//     token (invalid_grant, classified on the code as received). The person
//     must grant the mandate again.
//   - errors.Is(err, ErrNoMandate) is true for every kind that means "no
//     authority": no mandate, revoked, unreadable, rejected. The agent
//     stops.
//   - tokenexchange.ErrRotationNotPersisted ("rotation_not_persisted"): the
//     provider rotated the refresh token but the new one could not be
//     stored (a database failure, also matching ErrStore; or the mandate
//     was revoked or granted again, or the redemption's lease taken over,
//     meanwhile); no token is returned, the row keeps what it held, and the
//     mandate may have to be granted again.
//   - ErrLeaseLost ("lease_lost"): the redemption could not renew its lease
//     and stopped before the provider answered; retrying is safe.
//   - ErrProviderNotRevoked ("provider_not_revoked"): Revoke revoked the
//     mandate in the store, but the provider refused or could not be
//     reached, or the key could not open the sealed token. The token may
//     stay valid at the provider until it expires, held by no one.
//   - A failure of the provider that is not about the mandate (the exchange
//     after the refresh, a transport failure, an unusable answer) keeps
//     tokenexchange's types in Err (*tokenexchange.StatusError,
//     *tokenexchange.ResponseError, …) and its kind: Classify returns
//     Kind(tokenexchange.Classify(err)), for example "invalid_request",
//     "invalid_response", "transport".
//   - ErrStore ("store"): a database failure (unreachable, a refused
//     statement), the driver's error in Err. Nothing is reported as stored
//     that was not: a Grant or Revoke that returns it may not have taken
//     effect, a Token that returns it sent nothing to the provider. Once
//     the database is back, the store goes on; a lease its redemption held
//     expires by itself.
//   - A call whose context ends (while Token waits for another holder's
//     lease, or during a statement) returns an *Error whose Err is the
//     context's error (Classify: "canceled" or "timeout").
//   - Open and OpenDB: tokenexchange.ErrConfig ("config") for a missing or
//     wrong-sized key, an invalid agent Config, an agent named twice, an
//     empty path, a nil database, a database of another driver, a lease
//     shorter than 100 ms, WithSchema on SQLite or a schema name that is
//     not a plain lower-case identifier; ErrSchema ("schema") for a database
//     migrated by a newer program or whose migration record was altered
//     (nothing is written to it); otherwise the driver's error.
//
// # Telemetry
//
// WithTracerProvider and WithMeterProvider (nil or absent: the global
// providers, no-ops unless the program installed an SDK) trace and time
// each redemption; an agent Config without providers of its own gets the
// store's, so its refresh and exchange spans are children of the
// redemption's, and the provider receives the trace context.
//
// Span "mandate redeem" (kind internal; scope
// github.com/candorkit/candor/tokenexchange/mandate), one per Token, with
// mandate.agent; mandate.outcome ("redeemed" or "failed");
// mandate.lease.wait, the seconds the redemption waited for the mandate's
// lease (in this process and from another holder), once it held it; on
// failure error.type, the Classify kind, and status Error described by
// that kind (never the error text). The user is not recorded (an
// identifier of a person), nor any token or the key.
//
// Metrics (histograms, seconds): mandate.redemption.duration, per Token,
// with mandate.agent, mandate.outcome and error.type;
// mandate.lease.wait.duration, per redemption that obtained the lease,
// with mandate.agent.
//
// # Secrets
//
// The refresh tokens are never stored in clear, never logged and never in
// an error. Printing or logging a Store shows its agent names only;
// ParseKey's error never quotes its input.
package mandate
