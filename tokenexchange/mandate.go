package tokenexchange

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// KeySize is the mandate key size: AES-256.
const KeySize = 32

// mandateAAD prefixes the additional data that binds a sealed refresh token
// to its row.
const mandateAAD = "candor/tokenexchange/mandate/v1"

const mandateSchema = `CREATE TABLE IF NOT EXISTS candor_mandates (
	user_id    TEXT    NOT NULL,
	agent      TEXT    NOT NULL,
	sealed     BLOB    NOT NULL,
	granted_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	revoked_at INTEGER,
	PRIMARY KEY (user_id, agent)
)`

// MandateOptions configure a MandateStore.
type MandateOptions struct {
	// Key is the 32-byte AES-256 key that seals refresh tokens at rest. It
	// is supplied by the caller (for example from an environment variable,
	// see ParseKey) and never stored. Required.
	Key []byte
	// Agents maps an agent name to the Config it redeems mandates with: its
	// ClientID/ClientSecret authenticate both the refresh_token grant and
	// the exchange; Audience, Scopes and RequestedTokenType shape the
	// exchanged token. An agent absent here gets ErrUnknownAgent from Token.
	Agents map[string]*Config
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
}

// String describes the options without the key: the agent names and
// whether a key is set. GoString, Format and LogValue print the same, so no
// verb and no log line can show the key.
func (o MandateOptions) String() string {
	names := make([]string, 0, len(o.Agents))
	for n := range o.Agents {
		names = append(names, n)
	}
	slices.Sort(names)
	key := "none"
	if len(o.Key) > 0 {
		key = redacted
	}
	return fmt.Sprintf("tokenexchange.MandateOptions{agents=%q key=%s}", names, key)
}

// GoString is String.
func (o MandateOptions) GoString() string { return o.String() }

// Format prints String() for every verb.
func (o MandateOptions) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(o.String())) }

// LogValue logs String().
func (o MandateOptions) LogValue() slog.Value { return slog.StringValue(o.String()) }

// MandateStore keeps offline mandates: per (user, agent), the user's refresh
// token sealed with AES-256-GCM (random nonce; the row key as additional
// data), in SQLite. Safe for concurrent use; calls for the same (user, agent)
// are serialized in this process.
type MandateStore struct {
	db     *sql.DB
	ownsDB bool
	aead   cipher.AEAD
	agents map[string]*Config
	log    *slog.Logger

	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	ch   chan struct{}
	refs int
}

// ParseKey decodes a KeySize-byte key written as standard or URL-safe base64
// (padded or not) or as hex, as it would come from an environment variable.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	return nil, fmt.Errorf("%w: mandate key must be %d bytes in base64 or hex", ErrConfig, KeySize)
}

// OpenMandateStore opens (creating if needed) the SQLite database at path
// and the mandate table in it. Close closes the database.
func OpenMandateStore(ctx context.Context, path string, opts MandateOptions) (*MandateStore, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty database path", ErrConfig)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("tokenexchange: open mandate database: %w", err)
	}
	s, err := NewMandateStore(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownsDB = true
	return s, nil
}

// NewMandateStore uses an open SQLite database (driver "sqlite",
// modernc.org/sqlite) and creates the mandate table if needed. Close does
// not close db.
func NewMandateStore(ctx context.Context, db *sql.DB, opts MandateOptions) (*MandateStore, error) {
	if len(opts.Key) != KeySize {
		return nil, fmt.Errorf("%w: mandate key must be %d bytes, got %d", ErrConfig, KeySize, len(opts.Key))
	}
	block, err := aes.NewCipher(opts.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	agents := make(map[string]*Config, len(opts.Agents))
	for name, cfg := range opts.Agents {
		if err := cfg.validate(); err != nil {
			return nil, fmt.Errorf("agent %q: %w", name, err)
		}
		agents[name] = cfg.clone()
	}
	if _, err := db.ExecContext(ctx, mandateSchema); err != nil {
		return nil, fmt.Errorf("tokenexchange: create mandate table: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &MandateStore{db: db, aead: aead, agents: agents, log: log, locks: map[string]*keyLock{}}, nil
}

// Close closes the database if the store opened it.
func (s *MandateStore) Close() error {
	if s.ownsDB {
		return s.db.Close()
	}
	return nil
}

// additionalData binds a ciphertext to its (user, agent) row: a sealed token
// copied to another row does not open.
func additionalData(user, agent string) []byte {
	b := make([]byte, 0, len(mandateAAD)+len(user)+len(agent)+2*binary.MaxVarintLen64)
	b = append(b, mandateAAD...)
	b = binary.AppendUvarint(b, uint64(len(user)))
	b = append(b, user...)
	b = binary.AppendUvarint(b, uint64(len(agent)))
	b = append(b, agent...)
	return b
}

func (s *MandateStore) seal(user, agent, refreshToken string) []byte {
	return s.aead.Seal(nil, nil, []byte(refreshToken), additionalData(user, agent))
}

func (s *MandateStore) open(user, agent string, sealed []byte) (string, error) {
	pt, err := s.aead.Open(nil, nil, sealed, additionalData(user, agent))
	if err != nil {
		return "", err
	}
	return string(pt), nil
}

func mandateErr(user, agent string, kind, cause error) *MandateError {
	return &MandateError{User: user, Agent: agent, Kind: kind, Err: cause}
}

// lock serializes work on one (user, agent) in this process.
func (s *MandateStore) lock(ctx context.Context, user, agent string) (func(), error) {
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
func (s *MandateStore) Grant(ctx context.Context, user, agent, refreshToken string) error {
	if user == "" || agent == "" {
		return fmt.Errorf("%w: user and agent are required", ErrConfig)
	}
	if refreshToken == "" {
		return mandateErr(user, agent, ErrNoMandate, errors.New("empty refresh token"))
	}
	unlock, err := s.lock(ctx, user, agent)
	if err != nil {
		return err
	}
	defer unlock()
	now := time.Now().UnixMilli()
	_, err = s.db.ExecContext(ctx, `INSERT INTO candor_mandates (user_id, agent, sealed, granted_at, updated_at, revoked_at)
		VALUES (?, ?, ?, ?, ?, NULL)
		ON CONFLICT (user_id, agent) DO UPDATE SET sealed = excluded.sealed,
			granted_at = excluded.granted_at, updated_at = excluded.updated_at, revoked_at = NULL`,
		user, agent, s.seal(user, agent, refreshToken), now, now)
	if err != nil {
		return mandateErr(user, agent, nil, fmt.Errorf("store: %w", err))
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "mandate granted", slog.String("user", user), slog.String("agent", agent))
	return nil
}

// Revoke ends the mandate of user for agent. First, in the store: the
// sealed refresh token is erased and the row kept, with its revocation
// time, as evidence; from then on Token returns ErrMandateRevoked before any
// network request. Then, when the agent's Config has a RevocationURL, the
// refresh token is revoked at the provider (RFC 7009, one POST). If that
// fails, the mandate stays revoked in the store and the error matches
// ErrProviderNotRevoked (wrapping the provider's *Error or the transport
// error): the token may stay valid at the provider until it expires, but
// nothing holds it any more.
//
// Revoking twice is not an error and sends nothing the second time;
// revoking a mandate that never existed returns a *MandateError matching
// ErrNoMandate.
func (s *MandateStore) Revoke(ctx context.Context, user, agent string) error {
	unlock, err := s.lock(ctx, user, agent)
	if err != nil {
		return err
	}
	defer unlock()
	var sealed []byte
	var revokedAt sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT sealed, revoked_at FROM candor_mandates WHERE user_id = ? AND agent = ?`,
		user, agent).Scan(&sealed, &revokedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return mandateErr(user, agent, ErrNoMandate, nil)
	case err != nil:
		return mandateErr(user, agent, nil, fmt.Errorf("load: %w", err))
	}
	now := time.Now().UnixMilli()
	res, err := s.db.ExecContext(ctx, `UPDATE candor_mandates SET sealed = X'', updated_at = ?,
		revoked_at = COALESCE(revoked_at, ?) WHERE user_id = ? AND agent = ?`, now, now, user, agent)
	if err != nil {
		return mandateErr(user, agent, nil, fmt.Errorf("store: %w", err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mandateErr(user, agent, nil, fmt.Errorf("store: %w", err))
	}
	if n == 0 {
		return mandateErr(user, agent, ErrNoMandate, nil)
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "mandate revoked", slog.String("user", user), slog.String("agent", agent))

	cfg := s.agents[agent]
	if revokedAt.Valid || cfg == nil || cfg.RevocationURL == "" {
		return nil // already revoked (the token was erased then), or no endpoint to tell
	}
	refreshToken, err := s.open(user, agent, sealed)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "mandate revoked in the store only: it cannot be opened with this key",
			slog.String("user", user), slog.String("agent", agent))
		return mandateErr(user, agent, ErrProviderNotRevoked, ErrMandateUnreadable)
	}
	if err := cfg.revokeRefreshToken(ctx, refreshToken); err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "mandate revoked in the store only: the provider did not revoke it",
			slog.String("user", user), slog.String("agent", agent), slog.Any("error", err))
		return mandateErr(user, agent, ErrProviderNotRevoked, err)
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "mandate revoked at the provider", slog.String("user", user), slog.String("agent", agent))
	return nil
}

// Token redeems the mandate of user for agent: the stored refresh token is
// sent with the refresh_token grant at the agent's client, and the access
// token obtained is exchanged for the agent's audience. When the provider
// rotates the refresh token, the new one is persisted before the exchange,
// and no token is returned if that fails (ErrRotationNotPersisted).
//
// Unknown agent, no mandate, a revoked mandate, or one the key cannot open
// return a *MandateError before any network request.
func (s *MandateStore) Token(ctx context.Context, user, agent string) (*Token, error) {
	cfg, ok := s.agents[agent]
	if !ok {
		return nil, mandateErr(user, agent, ErrUnknownAgent, nil)
	}
	unlock, err := s.lock(ctx, user, agent)
	if err != nil {
		return nil, err
	}
	defer unlock()

	var sealed []byte
	var revokedAt sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT sealed, revoked_at FROM candor_mandates WHERE user_id = ? AND agent = ?`,
		user, agent).Scan(&sealed, &revokedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, mandateErr(user, agent, ErrNoMandate, nil)
	case err != nil:
		return nil, mandateErr(user, agent, nil, fmt.Errorf("load: %w", err))
	case revokedAt.Valid:
		return nil, mandateErr(user, agent, ErrMandateRevoked, nil)
	}
	refreshToken, err := s.open(user, agent, sealed)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "mandate cannot be opened", slog.String("user", user), slog.String("agent", agent))
		return nil, mandateErr(user, agent, ErrMandateUnreadable, nil)
	}

	refreshed, err := cfg.refresh(ctx, refreshToken)
	if err != nil {
		var oe *Error
		if errors.As(err, &oe) && oe.Code() == "invalid_grant" {
			return nil, mandateErr(user, agent, ErrMandateRejected, err)
		}
		return nil, mandateErr(user, agent, nil, fmt.Errorf("refresh: %w", err))
	}
	if refreshed.refreshToken != "" && refreshed.refreshToken != refreshToken {
		if err := s.persistRotation(ctx, user, agent, sealed, refreshed.refreshToken); err != nil {
			return nil, err
		}
	}
	tok, err := cfg.Exchange(ctx, refreshed.accessToken)
	if err != nil {
		return nil, mandateErr(user, agent, nil, err)
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "mandate redeemed",
		slog.String("user", user), slog.String("agent", agent), slog.Any("token", tok))
	return tok, nil
}

// persistTimeout bounds the write of a rotated refresh token, which does not
// end with the caller's context.
const persistTimeout = 10 * time.Second

// persistRotation replaces the sealed refresh token, but only if the row
// still holds the one that was redeemed and is not revoked. The provider
// has already made the old token stale, so the write goes on even when the
// caller's context ends meanwhile: dropping it would lose the mandate.
func (s *MandateStore) persistRotation(ctx context.Context, user, agent string, old []byte, next string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	res, err := s.db.ExecContext(ctx, `UPDATE candor_mandates SET sealed = ?, updated_at = ?
		WHERE user_id = ? AND agent = ? AND sealed = ? AND revoked_at IS NULL`,
		s.seal(user, agent, next), time.Now().UnixMilli(), user, agent, old)
	if err != nil {
		return mandateErr(user, agent, ErrRotationNotPersisted, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mandateErr(user, agent, ErrRotationNotPersisted, err)
	}
	if n != 1 {
		return mandateErr(user, agent, ErrRotationNotPersisted, errors.New("mandate changed or was revoked meanwhile"))
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "rotated refresh token persisted", slog.String("user", user), slog.String("agent", agent))
	return nil
}

func (s *MandateStore) String() string {
	names := make([]string, 0, len(s.agents))
	for n := range s.agents {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Sprintf("tokenexchange.MandateStore{agents=%q key=%s}", names, redacted)
}
func (s *MandateStore) GoString() string           { return s.String() }
func (s *MandateStore) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }
func (s *MandateStore) LogValue() slog.Value       { return slog.StringValue(s.String()) }
