// Package pgdsn turns a PostgreSQL connection string given to an example
// program (a flag such as -approvals, -mandates or -tasks) into a
// database/sql pool of the pgx driver, without ever printing the password.
//
// A value is a PostgreSQL DSN when it starts with postgres:// or
// postgresql:// (IsDSN); anything else is left to the caller (a SQLite file
// path). Check validates a DSN when the flags are parsed, so a malformed one
// is a usage error before anything is contacted; Open connects and pings.
//
// Failure taxonomy:
//   - *ConfigError: the DSN does not parse. Its text names the flag and
//     never quotes the DSN (a password in it would be printed); the program
//     reports it as a usage error (exit 2).
//   - *UnreachableError: the DSN parsed, but the database did not answer
//     within the open timeout, or refused the login. Its text names the
//     flag and the server (host, port, database, user) with the password
//     redacted; the program exits 1.
package pgdsn

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/candorkit/candor/internal/secret"
)

// OpenTimeout bounds connecting to the database in Open.
const OpenTimeout = 30 * time.Second

// IsDSN reports whether v names a PostgreSQL database rather than a file.
func IsDSN(v string) bool {
	return strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://")
}

// ConfigError is a DSN that does not parse.
type ConfigError struct {
	Flag string // the flag or variable that held it, e.g. "-approvals"
}

func (e *ConfigError) Error() string {
	return e.Flag + ": not a valid PostgreSQL connection string (postgres://user:password@host:port/database?sslmode=…)"
}

// UnreachableError is a database that could not be reached or refused the
// connection.
type UnreachableError struct {
	Flag   string // the flag or variable that held the DSN
	Server string // user@host:port/database, never the password
	Err    error  // the cause, its text redacted of the password
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s: PostgreSQL %s unreachable: %v", e.Flag, e.Server, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Check validates dsn as the value of flag.
func Check(flag, dsn string) error {
	_, err := parse(flag, dsn)
	return err
}

func parse(flag, dsn string) (*pgx.ConnConfig, error) {
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, &ConfigError{Flag: flag}
	}
	return pc, nil
}

// Server describes the database dsn names (user@host:port/database), for
// progress lines; it never includes the password. A malformed dsn gives
// "(invalid PostgreSQL DSN)".
func Server(dsn string) string {
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "(invalid PostgreSQL DSN)"
	}
	return server(pc)
}

func server(pc *pgx.ConnConfig) string {
	return "postgres://" + pc.User + "@" + net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port))) + "/" + pc.Database
}

// Open parses dsn (the value of flag), opens a pgx pool and pings it. The
// caller closes the pool.
func Open(ctx context.Context, flag, dsn string) (*sql.DB, error) {
	pc, err := parse(flag, dsn)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*pc)
	ctx, cancel := context.WithTimeout(ctx, OpenTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, &UnreachableError{Flag: flag, Server: server(pc), Err: Redact(err, dsn)}
	}
	return db, nil
}

// Redact returns err with the password of dsn (if any) removed from its
// text; errors.Is and errors.As still reach err. A nil err stays nil.
func Redact(err error, dsn string) error {
	if err == nil {
		return nil
	}
	pc, perr := pgx.ParseConfig(dsn)
	if perr != nil || pc.Password == "" {
		return err
	}
	text := secret.Redact(err.Error(), pc.Password)
	if text == err.Error() {
		return err
	}
	return &redacted{text: text, err: err}
}

type redacted struct {
	text string
	err  error
}

func (r *redacted) Error() string { return r.text }
func (r *redacted) Unwrap() error { return r.err }
