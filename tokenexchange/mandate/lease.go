package mandate

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"time"
)

// lease is one holder's right to redeem a (user, agent) mandate: the row's
// lease_holder and fence while it holds it. Every write of the row bumps
// the fence, so a write conditioned on the fence fails once anyone else
// acquired the lease, persisted, granted or revoked meanwhile.
type lease struct {
	user, agent string
	holder      string // "" when the store redeems without leases
	fence       int64
	released    bool // a persist released it
}

// errLeaseLost is the cause a redemption's context is cancelled with when
// its lease could not be renewed.
var errLeaseLost = errors.New("lease lost")

// Poll bounds while another holder has the lease.
const (
	minPoll = 5 * time.Millisecond
	maxPoll = 250 * time.Millisecond
)

// releaseTimeout bounds the release of a lease, which does not end with the
// caller's context.
const releaseTimeout = 5 * time.Second

func newHolderID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// acquire takes the lease on the mandate of user for agent and returns it
// with the sealed refresh token it guards. While a live holder has it,
// acquire polls (with a growing, jittered interval) until the holder
// releases it, persists, or stops renewing it for the lease duration (it
// died): then the lease is taken over. Only one acquirer wins each round:
// the acquisition is conditioned on the fence it read. It returns an *Error
// for no mandate, a revoked one, a store failure or the end of ctx.
func (s *Store) acquire(ctx context.Context, user, agent string) (*lease, []byte, error) {
	d := s.dialect
	holder := newHolderID()
	if !s.noLease {
		// The common case in one statement: the lease is free.
		var sealed []byte
		var fence int64
		err := s.db.QueryRowContext(ctx, d.q(`UPDATE {t} SET lease_holder = ?, lease_until = {now} + ?, fence = fence + 1
			WHERE user_id = ? AND agent = ? AND revoked_at IS NULL AND lease_holder IS NULL
			RETURNING sealed, fence`), holder, s.lease.Milliseconds(), user, agent).Scan(&sealed, &fence)
		switch {
		case err == nil:
			return &lease{user: user, agent: agent, holder: holder, fence: fence}, sealed, nil
		case !errors.Is(err, sql.ErrNoRows):
			return nil, nil, s.storeErr(ctx, user, agent, "acquire the lease", err)
		}
		// No mandate, a revoked one, or the lease is held: find out below.
	}
	poll := minPoll
	for {
		var sealed []byte
		var revokedAt sql.NullInt64
		var prev sql.NullString
		var until, fence, now int64
		err := s.db.QueryRowContext(ctx, d.q(`SELECT sealed, revoked_at, lease_holder, lease_until, fence, {now}
			FROM {t} WHERE user_id = ? AND agent = ?`), user, agent).Scan(&sealed, &revokedAt, &prev, &until, &fence, &now)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil, mandateErr(user, agent, ErrNoMandate, nil)
		case err != nil:
			return nil, nil, s.storeErr(ctx, user, agent, "load", err)
		case revokedAt.Valid:
			return nil, nil, mandateErr(user, agent, ErrRevoked, nil)
		}
		if s.noLease {
			return &lease{user: user, agent: agent, fence: fence}, sealed, nil
		}
		if prev.Valid && until > now {
			wait := min(poll, time.Duration(until-now+1)*time.Millisecond)
			wait = wait/2 + mrand.N(wait/2+1)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, nil, mandateErr(user, agent, nil, fmt.Errorf("waiting for the redemption lease: %w", context.Cause(ctx)))
			}
			poll = min(2*poll, maxPoll, s.lease/4)
			continue
		}
		res, err := s.db.ExecContext(ctx, d.q(`UPDATE {t} SET lease_holder = ?, lease_until = {now} + ?, fence = fence + 1
			WHERE user_id = ? AND agent = ? AND fence = ? AND revoked_at IS NULL
			AND (lease_holder IS NULL OR lease_until <= {now})`),
			holder, s.lease.Milliseconds(), user, agent, fence)
		if err != nil {
			return nil, nil, s.storeErr(ctx, user, agent, "acquire the lease", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, nil, s.storeErr(ctx, user, agent, "acquire the lease", err)
		}
		if n != 1 {
			poll = minPoll // someone else moved first: read again
			continue
		}
		if prev.Valid {
			s.logAttrs(ctx, slog.LevelWarn, "mandate lease taken over from a holder that stopped renewing it",
				slog.String("user", user), slog.String("agent", agent), slog.Int64("fence", fence+1))
		}
		return &lease{user: user, agent: agent, holder: holder, fence: fence + 1}, sealed, nil
	}
}

// hold renews l every third of the lease duration until stop is called,
// and returns a context derived from ctx that is cancelled (cause
// errLeaseLost) when the lease was taken over or could not be renewed
// for two thirds of its duration, so the redemption stops before another
// holder may start.
func (s *Store) hold(ctx context.Context, l *lease) (context.Context, func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	if l.holder == "" || s.noRenew {
		return lctx, func() { cancel(nil) }
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		interval := s.lease / 3
		t := time.NewTicker(interval)
		defer t.Stop()
		lastOK := time.Now()
		for {
			select {
			case <-done:
				return
			case <-lctx.Done():
				return
			case <-t.C:
			}
			started := time.Now()
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), interval)
			res, err := s.db.ExecContext(rctx, s.dialect.q(`UPDATE {t} SET lease_until = {now} + ?
				WHERE user_id = ? AND agent = ? AND fence = ? AND lease_holder = ?`),
				s.lease.Milliseconds(), l.user, l.agent, l.fence, l.holder)
			var n int64
			if err == nil {
				n, err = res.RowsAffected()
			}
			rcancel()
			switch {
			case err == nil && n == 1:
				lastOK = started
			case err == nil:
				s.logAttrs(ctx, slog.LevelWarn, "mandate lease taken over while redeeming",
					slog.String("user", l.user), slog.String("agent", l.agent))
				cancel(errLeaseLost)
				return
			case time.Since(lastOK) >= 2*s.lease/3:
				s.logAttrs(ctx, slog.LevelWarn, "mandate lease could not be renewed",
					slog.String("user", l.user), slog.String("agent", l.agent), slog.Any("error", err))
				cancel(errLeaseLost)
				return
			}
		}
	}()
	return lctx, func() {
		close(done)
		<-finished
		cancel(nil)
	}
}

// release gives up l unless the row moved on (a persist already released
// it, or someone took it over).
func (s *Store) release(ctx context.Context, l *lease) {
	if l.holder == "" || l.released {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	_, err := s.db.ExecContext(ctx, s.dialect.q(`UPDATE {t} SET lease_holder = NULL, lease_until = 0
		WHERE user_id = ? AND agent = ? AND fence = ? AND lease_holder = ?`), l.user, l.agent, l.fence, l.holder)
	if err != nil {
		s.logAttrs(ctx, slog.LevelWarn, "mandate lease not released: it expires by itself",
			slog.String("user", l.user), slog.String("agent", l.agent), slog.Any("error", err))
	}
}

// storeErr wraps a database failure. One that happened because ctx ended
// is reported as the end of ctx (the database did not fail), keeping the
// driver's error beside it.
func (s *Store) storeErr(ctx context.Context, user, agent, what string, err error) *Error {
	if ctx.Err() != nil {
		return mandateErr(user, agent, nil, fmt.Errorf("%s: %w", what, errors.Join(context.Cause(ctx), err)))
	}
	return mandateErr(user, agent, ErrStore, fmt.Errorf("%s: %w", what, err))
}
