package mandate

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/candorkit/candor/internal/pgx"
	"github.com/candorkit/candor/internal/secret"
	"github.com/candorkit/candor/internal/sqlitex"
	"github.com/candorkit/candor/tokenexchange"
)

// aadPrefix prefixes the additional data that binds a sealed refresh token
// to its row. It is unchanged since the store lived in package
// tokenexchange, so existing rows still open.
const aadPrefix = "candor/tokenexchange/mandate/v1"

// migrationsTable records the store's applied schema migrations.
const migrationsTable = "candor_mandates_migrations"

// sqliteMigrations is the store's SQLite schema history. Never edit an
// entry: append. Version 1 adopts a table created before migrations were
// recorded (the same shape, hence IF NOT EXISTS). Version 2 adds the
// redemption lease: its holder, its expiry (Unix milliseconds of the
// database's clock) and the fencing counter every write of the row bumps.
var sqliteMigrations = []sqlitex.Migration{
	{Version: 1, Name: "create candor_mandates", SQL: `CREATE TABLE IF NOT EXISTS candor_mandates (
	user_id    TEXT    NOT NULL,
	agent      TEXT    NOT NULL,
	sealed     BLOB    NOT NULL,
	granted_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	revoked_at INTEGER,
	PRIMARY KEY (user_id, agent)
)`},
	{Version: 2, Name: "redemption lease", SQL: `ALTER TABLE candor_mandates ADD COLUMN lease_holder TEXT;
ALTER TABLE candor_mandates ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE candor_mandates ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;`},
}

// pgMigrations is the store's PostgreSQL schema history, run with
// search_path set to the store's schema. Never edit an entry: append.
var pgMigrations = []pgx.Migration{
	{Version: 1, Name: "create candor_mandates", SQL: `CREATE TABLE candor_mandates (
	user_id      TEXT   NOT NULL,
	agent        TEXT   NOT NULL,
	sealed       BYTEA  NOT NULL,
	granted_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL,
	revoked_at   BIGINT,
	lease_holder TEXT,
	lease_until  BIGINT NOT NULL DEFAULT 0,
	fence        BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (user_id, agent)
)`},
}

// dsnOptions are the settings of a database file the store opens itself.
var dsnOptions = sqlitex.DSNOptions{BusyTimeout: 5 * time.Second, WAL: true, SyncFull: true}

// Store keeps offline mandates: per (user, agent), the user's refresh token
// sealed with AES-256-GCM (random nonce; the row key as additional data),
// in SQLite or PostgreSQL. Safe for concurrent use; redemptions of the same
// (user, agent) are serialized across every process sharing the database
// (a lease in the row), and calls for it in this process wait their turn
// in the process first. Printing or logging it shows the agent names only.
type Store struct {
	db      *sql.DB
	ownsDB  bool
	dialect dialect
	lease   time.Duration
	key     secret.Secret
	agents  map[string]*tokenexchange.Config
	log     *slog.Logger // nil: log nothing
	tel     *telemetry

	mu    sync.Mutex
	locks map[string]*keyLock

	// noLease, set by the tests only, redeems under the in-process lock
	// alone, as the store did before leases: the benchmark's baseline.
	noLease bool
	// noRenew, set by the tests only, stops lease renewal, as if the
	// holder were paused.
	noRenew bool
}

type keyLock struct {
	ch   chan struct{}
	refs int
}

// Open opens (creating if needed) the SQLite database file at path, with
// WAL journaling, synchronous=FULL and a 5 s busy timeout (checked after
// opening), and migrates the mandate table in it. Close closes the
// database. The path is used exactly as given: '#', '%' and '?' are file
// name characters. Several processes may open the same file: redemptions
// are serialized between them.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty database path", tokenexchange.ErrConfig)
	}
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	if o.schemaSet {
		return nil, fmt.Errorf("%w: WithSchema applies to PostgreSQL only; Open opens a SQLite file", tokenexchange.ErrConfig)
	}
	db, err := sql.Open("sqlite", sqlitex.DSN(path, dsnOptions))
	if err != nil {
		return nil, fmt.Errorf("mandate: open %s: %w", path, err)
	}
	if err := sqlitex.Verify(ctx, db, dsnOptions); err != nil {
		db.Close()
		return nil, fmt.Errorf("mandate: open %s: %w", path, err)
	}
	s, err := newStore(ctx, db, sqliteDialect(), o)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("mandate: open %s: %w", path, err)
	}
	s.ownsDB = true
	return s, nil
}

// OpenDB uses a database the caller opened and migrates the store's table
// (candor_mandates; its migrations are recorded in
// candor_mandates_migrations) in it. The backend is told from db's driver:
//
//   - PostgreSQL, driver "pgx" (github.com/jackc/pgx/v5/stdlib): the tables
//     live in the schema WithSchema names (default DefaultSchema), created
//     when missing; several nodes may share the database.
//   - SQLite, driver "sqlite" (modernc.org/sqlite): the caller's DSN decides
//     journaling, durability and the busy timeout (several processes
//     sharing the file need one, as Open sets).
//
// Any other driver is refused with tokenexchange.ErrConfig. Close leaves db
// open.
func OpenDB(ctx context.Context, db *sql.DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", tokenexchange.ErrConfig)
	}
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	if pgx.IsPostgres(db) {
		schema := DefaultSchema
		if o.schemaSet {
			schema = o.schema
		}
		if !pgx.IsIdent(schema) {
			return nil, fmt.Errorf("%w: WithSchema: %q is not a plain lower-case SQL identifier", tokenexchange.ErrConfig, schema)
		}
		return newStore(ctx, db, postgresDialect(schema), o)
	}
	if o.schemaSet {
		return nil, fmt.Errorf("%w: WithSchema applies to PostgreSQL only", tokenexchange.ErrConfig)
	}
	var version string
	if err := db.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&version); err != nil {
		return nil, fmt.Errorf("%w: OpenDB needs a SQLite (driver \"sqlite\") or PostgreSQL (driver \"pgx\") database: %v", tokenexchange.ErrConfig, err)
	}
	return newStore(ctx, db, sqliteDialect(), o)
}

func collect(opts []Option) (*options, error) {
	o := &options{lease: DefaultLease}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil Option", tokenexchange.ErrConfig)
		}
		opt(o)
	}
	if err := errors.Join(o.errs...); err != nil {
		return nil, err
	}
	for name, cfg := range o.agents {
		c := *cfg // an Option may be used by several stores
		if c.TracerProvider == nil {
			c.TracerProvider = o.tp
		}
		if c.MeterProvider == nil {
			c.MeterProvider = o.mp
		}
		o.agents[name] = &c
	}
	switch {
	case !o.keySet:
		return nil, fmt.Errorf("%w: WithKey is required", tokenexchange.ErrConfig)
	case o.keyLen != KeySize:
		return nil, fmt.Errorf("%w: WithKey: mandate key must be %d bytes, got %d", tokenexchange.ErrConfig, KeySize, o.keyLen)
	}
	return o, nil
}

func newStore(ctx context.Context, db *sql.DB, d dialect, o *options) (*Store, error) {
	var err error
	if d.postgres {
		err = pgx.Migrate(ctx, db, d.schema, migrationsTable, pgMigrations)
	} else {
		err = sqlitex.Migrate(ctx, db, migrationsTable, sqliteMigrations)
	}
	if err != nil {
		if errors.Is(err, sqlitex.ErrSchemaAltered) || errors.Is(err, sqlitex.ErrSchemaTooNew) ||
			errors.Is(err, pgx.ErrSchemaAltered) || errors.Is(err, pgx.ErrSchemaTooNew) {
			return nil, fmt.Errorf("%w: %w", ErrSchema, err)
		}
		return nil, fmt.Errorf("mandate: migrate: %w", err)
	}
	return &Store{db: db, dialect: d, lease: o.lease, key: o.key, agents: o.agents, log: o.log,
		tel: newTelemetry(o.tp, o.mp), locks: map[string]*keyLock{}}, nil
}

// Close closes the database if the store opened it (Open), and leaves it
// open otherwise (OpenDB).
func (s *Store) Close() error {
	if s.ownsDB {
		return s.db.Close()
	}
	return nil
}

func (s *Store) logAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if s.log != nil {
		s.log.LogAttrs(ctx, level, msg, attrs...)
	}
}

// additionalData binds a ciphertext to its (user, agent) row: a sealed token
// copied to another row does not open.
func additionalData(user, agent string) []byte {
	b := make([]byte, 0, len(aadPrefix)+len(user)+len(agent)+2*binary.MaxVarintLen64)
	b = append(b, aadPrefix...)
	b = binary.AppendUvarint(b, uint64(len(user)))
	b = append(b, user...)
	b = binary.AppendUvarint(b, uint64(len(agent)))
	b = append(b, agent...)
	return b
}

func (s *Store) aead() (cipher.AEAD, error) {
	block, err := aes.NewCipher([]byte(s.key.Reveal()))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithRandomNonce(block)
}

func (s *Store) seal(user, agent, refreshToken string) ([]byte, error) {
	aead, err := s.aead()
	if err != nil {
		return nil, err
	}
	return aead.Seal(nil, nil, []byte(refreshToken), additionalData(user, agent)), nil
}

func (s *Store) open(user, agent string, sealed []byte) (string, error) {
	aead, err := s.aead()
	if err != nil {
		return "", err
	}
	pt, err := aead.Open(nil, nil, sealed, additionalData(user, agent))
	if err != nil {
		return "", err
	}
	return string(pt), nil
}

// lock serializes work on one (user, agent) in this process.
func (s *Store) lock(ctx context.Context, user, agent string) (func(), error) {
	k := string(additionalData(user, agent))
	s.mu.Lock()
	l := s.locks[k]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		s.locks[k] = l
	}
	l.refs++
	s.mu.Unlock()
	release := func() {
		s.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(s.locks, k)
		}
		s.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// Grant stores (or replaces) the mandate of user for agent: refreshToken
// sealed with the store's key. A revoked mandate granted again is active.
// It does not wait for a redemption in another process: it ends that
// redemption's lease, so the redemption cannot persist over the new grant.
func (s *Store) Grant(ctx context.Context, user, agent, refreshToken string) error {
	if user == "" || agent == "" {
		return fmt.Errorf("%w: user and agent are required", tokenexchange.ErrConfig)
	}
	if refreshToken == "" {
		return mandateErr(user, agent, ErrNoMandate, errors.New("empty refresh token"))
	}
	unlock, err := s.lock(ctx, user, agent)
	if err != nil {
		return err
	}
	defer unlock()
	sealed, err := s.seal(user, agent, refreshToken)
	if err != nil {
		return mandateErr(user, agent, nil, fmt.Errorf("seal: %w", err))
	}
	now := time.Now().UnixMilli()
	_, err = s.db.ExecContext(ctx, s.dialect.q(`INSERT INTO {t} AS m (user_id, agent, sealed, granted_at, updated_at, revoked_at)
		VALUES (?, ?, ?, ?, ?, NULL)
		ON CONFLICT (user_id, agent) DO UPDATE SET sealed = excluded.sealed,
			granted_at = excluded.granted_at, updated_at = excluded.updated_at, revoked_at = NULL,
			lease_holder = NULL, lease_until = 0, fence = m.fence + 1`),
		user, agent, sealed, now, now)
	if err != nil {
		return s.storeErr(ctx, user, agent, "store", err)
	}
	s.logAttrs(ctx, slog.LevelInfo, "mandate granted", slog.String("user", user), slog.String("agent", agent))
	return nil
}

// Revoke ends the mandate of user for agent. First, in the store: the
// sealed refresh token is erased and the row kept, with its revocation
// time, as evidence; from then on Token returns ErrRevoked before any
// network request, and a redemption in flight in another process cannot
// persist (its lease is ended). Then, when the agent's Config has a RevocationURL, the
// refresh token is revoked at the provider (RFC 7009, one POST). If that
// fails, the mandate stays revoked in the store and the error matches
// ErrProviderNotRevoked (wrapping the provider's
// *tokenexchange.StatusError or the transport error): the token may stay
// valid at the provider until it expires, but nothing holds it any more.
//
// Revoking twice is not an error and sends nothing the second time;
// revoking a mandate that never existed returns an *Error matching
// ErrNoMandate.
func (s *Store) Revoke(ctx context.Context, user, agent string) error {
	unlock, err := s.lock(ctx, user, agent)
	if err != nil {
		return err
	}
	defer unlock()
	var sealed []byte
	var revokedAt sql.NullInt64
	err = s.db.QueryRowContext(ctx, s.dialect.q(`SELECT sealed, revoked_at FROM {t} WHERE user_id = ? AND agent = ?`),
		user, agent).Scan(&sealed, &revokedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return mandateErr(user, agent, ErrNoMandate, nil)
	case err != nil:
		return s.storeErr(ctx, user, agent, "load", err)
	}
	now := time.Now().UnixMilli()
	res, err := s.db.ExecContext(ctx, s.dialect.q(`UPDATE {t} SET sealed = ?, updated_at = ?,
		revoked_at = COALESCE(revoked_at, ?), lease_holder = NULL, lease_until = 0, fence = fence + 1
		WHERE user_id = ? AND agent = ?`), []byte{}, now, now, user, agent)
	if err != nil {
		return s.storeErr(ctx, user, agent, "store", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.storeErr(ctx, user, agent, "store", err)
	}
	if n == 0 {
		return mandateErr(user, agent, ErrNoMandate, nil)
	}
	s.logAttrs(ctx, slog.LevelInfo, "mandate revoked", slog.String("user", user), slog.String("agent", agent))

	cfg := s.agents[agent]
	if revokedAt.Valid || cfg == nil || cfg.RevocationURL == "" {
		return nil // already revoked (the token was erased then), or no endpoint to tell
	}
	refreshToken, err := s.open(user, agent, sealed)
	if err != nil {
		s.logAttrs(ctx, slog.LevelWarn, "mandate revoked in the store only: it cannot be opened with this key",
			slog.String("user", user), slog.String("agent", agent))
		return mandateErr(user, agent, ErrProviderNotRevoked, ErrUnreadable)
	}
	if err := cfg.Revoke(ctx, refreshToken, tokenexchange.RevokeOptions{TokenTypeHint: "refresh_token"}); err != nil {
		s.logAttrs(ctx, slog.LevelWarn, "mandate revoked in the store only: the provider did not revoke it",
			slog.String("user", user), slog.String("agent", agent), slog.Any("error", err))
		return mandateErr(user, agent, ErrProviderNotRevoked, err)
	}
	s.logAttrs(ctx, slog.LevelInfo, "mandate revoked at the provider", slog.String("user", user), slog.String("agent", agent))
	return nil
}

// Token redeems the mandate of user for agent: the stored refresh token is
// sent with the refresh_token grant at the agent's client, and the access
// token obtained is exchanged for the agent's audience. When the provider
// rotates the refresh token, the new one is persisted as soon as the
// refresh answer is in, before that answer is judged and before the
// exchange; if that write fails, no token is returned and the error
// matches tokenexchange.ErrRotationNotPersisted.
//
// The refresh runs under the mandate's lease (see the package
// documentation): if another process is redeeming the same mandate, Token
// waits for it, until ctx ends, and then presents the token that process
// persisted; if that process died, Token takes its lease over once the
// lease expires.
//
// Unknown agent, no mandate, a revoked mandate, or one the key cannot open
// return an *Error before any network request. A refresh the provider
// refuses with invalid_grant is ErrRejected.
func (s *Store) Token(ctx context.Context, user, agent string) (*tokenexchange.Token, error) {
	ctx, r := s.tel.begin(ctx, agent)
	tok, err := s.token(ctx, r, user, agent)
	r.end(err)
	return tok, err
}

func (s *Store) token(ctx context.Context, r *redemption, user, agent string) (*tokenexchange.Token, error) {
	cfg, ok := s.agents[agent]
	if !ok {
		return nil, mandateErr(user, agent, ErrUnknownAgent, nil)
	}
	unlock, err := s.lock(ctx, user, agent)
	if err != nil {
		return nil, mandateErr(user, agent, nil, err)
	}
	defer unlock()

	l, sealed, err := s.acquire(ctx, user, agent)
	if err != nil {
		return nil, err
	}
	r.leaseHeld()
	refreshed, err := s.refresh(ctx, cfg, l, sealed)
	if err != nil {
		return nil, err
	}
	tok, err := cfg.Exchange(ctx, refreshed.AccessToken)
	if err != nil {
		return nil, mandateErr(user, agent, nil, err)
	}
	s.logAttrs(ctx, slog.LevelInfo, "mandate redeemed",
		slog.String("user", user), slog.String("agent", agent), slog.Any("token", tok))
	return tok, nil
}

// refresh redeems the refresh token sealed in the row under lease l and
// persists a rotated one, renewing l meanwhile and releasing it after.
func (s *Store) refresh(ctx context.Context, cfg *tokenexchange.Config, l *lease, sealed []byte) (*tokenexchange.Token, error) {
	user, agent := l.user, l.agent
	defer s.release(ctx, l)
	refreshToken, err := s.open(user, agent, sealed)
	if err != nil {
		s.logAttrs(ctx, slog.LevelWarn, "mandate cannot be opened", slog.String("user", user), slog.String("agent", agent))
		return nil, mandateErr(user, agent, ErrUnreadable, nil)
	}
	hctx, stop := s.hold(ctx, l)
	refreshed, err := cfg.Refresh(hctx, refreshToken, tokenexchange.RefreshOptions{
		Rotated: func(ctx context.Context, next string) error {
			return s.persistRotation(ctx, l, next)
		},
	})
	lost := errors.Is(context.Cause(hctx), errLeaseLost)
	stop()
	switch {
	case err == nil:
		return refreshed, nil
	case errors.Is(err, tokenexchange.ErrRotationNotPersisted):
		return nil, mandateErr(user, agent, tokenexchange.ErrRotationNotPersisted, err)
	case tokenexchange.Classify(err) == tokenexchange.KindInvalidGrant:
		return nil, mandateErr(user, agent, ErrRejected, err)
	case lost && ctx.Err() == nil:
		return nil, mandateErr(user, agent, ErrLeaseLost, err)
	default:
		return nil, mandateErr(user, agent, nil, err)
	}
}

// persistTimeout bounds the write of a rotated refresh token, which does not
// end with the caller's context.
const persistTimeout = 10 * time.Second

// errMoved is why a rotated refresh token was not persisted although the
// database answered.
var errMoved = errors.New("the mandate was revoked or granted again, or its redemption lease taken over, meanwhile")

// persistRotation replaces the sealed refresh token and releases the lease
// in one statement, but only if the row's fence is still l's (no one took
// the lease over, granted or revoked meanwhile: a holder whose lease was
// taken over never overwrites) and the mandate is not revoked. The provider
// has already made the old token stale, so the write goes on even when the
// caller's context ends meanwhile: dropping it would lose the mandate.
func (s *Store) persistRotation(ctx context.Context, l *lease, next string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	sealed, err := s.seal(l.user, l.agent, next)
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	query := `UPDATE {t} SET sealed = ?, updated_at = ?, lease_holder = NULL, lease_until = 0, fence = fence + 1
		WHERE user_id = ? AND agent = ? AND fence = ? AND revoked_at IS NULL AND lease_holder = ?`
	args := []any{sealed, time.Now().UnixMilli(), l.user, l.agent, l.fence, l.holder}
	if l.holder == "" {
		query = `UPDATE {t} SET sealed = ?, updated_at = ?, fence = fence + 1
		WHERE user_id = ? AND agent = ? AND fence = ? AND revoked_at IS NULL`
		args = args[:5]
	}
	res, err := s.db.ExecContext(ctx, s.dialect.q(query), args...)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	if n != 1 {
		return errMoved
	}
	l.released = true
	s.logAttrs(ctx, slog.LevelInfo, "rotated refresh token persisted", slog.String("user", l.user), slog.String("agent", l.agent))
	return nil
}

// Format prints the agent names only, for every verb: fmt prints
// unexported fields without calling their methods, so the key and the
// agents' client secrets need their owner to keep them out.
func (s *Store) Format(f fmt.State, _ rune) {
	_, _ = fmt.Fprintf(f, "mandate.Store{agents=%q}", s.agentNames())
}

// LogValue logs the agent names only.
func (s *Store) LogValue() slog.Value {
	return slog.GroupValue(slog.Any("agents", s.agentNames()))
}

func (s *Store) agentNames() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.agents))
	for n := range s.agents {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
