package pgstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/internal/pgx"
)

// DefaultSchema is the schema the store's tables live in unless
// WithSchema names another.
const DefaultSchema = "candor_a2a"

// Store is an a2a.TaskStore on PostgreSQL; see the package documentation.
// It is safe for concurrent use, and any number of Stores (in as many
// processes) may share one schema.
type Store struct {
	db       *sql.DB
	schema   string
	max      int
	ttl      time.Duration
	now      func() time.Time
	every    int64        // a sweep runs after every every-th write
	writes   atomic.Int64 // writes so far, for the sweep
	sweepKey int64        // advisory lock of the sweeper

	qCreate, qUpdate, qExists, qGet, qList, qCount, qSweep string
}

var _ a2a.TaskStore = (*Store)(nil)

// Option configures OpenDB.
type Option func(*options)

type options struct {
	schema string
	max    int
	ttl    time.Duration
	clock  func() time.Time
	errs   []error
}

// WithSchema sets the schema holding the store's tables (DefaultSchema
// when absent): a plain lower-case SQL identifier. Every Store sharing the
// tasks must name the same schema.
func WithSchema(name string) Option {
	return func(o *options) {
		if !pgx.IsIdent(name) {
			o.errs = append(o.errs, fmt.Errorf("pgstore: WithSchema(%q): not a plain lower-case identifier", name))
			return
		}
		o.schema = name
	}
}

// WithMaxTasks bounds the tasks kept (a2a.DefaultMaxTasks when absent):
// beyond it the least recently used finished tasks are deleted; running
// ones are never deleted for room. It must be positive. The bound is
// checked after every write when it is below 200, else after every
// (n/100)-th write of each Store: between two checks the tasks held can
// exceed it by one percent per replica. Every Store sharing the schema should use
// the same bound: each one enforces its own after its writes.
func WithMaxTasks(n int) Option {
	return func(o *options) {
		if n <= 0 {
			o.errs = append(o.errs, fmt.Errorf("pgstore: WithMaxTasks(%d): the bound must be positive", n))
			return
		}
		o.max = n
	}
}

// WithTaskTTL sets how long a task is kept after its last use
// (a2a.DefaultTaskTTL when absent); it must be positive.
func WithTaskTTL(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, fmt.Errorf("pgstore: WithTaskTTL(%s): the TTL must be positive", d))
			return
		}
		o.ttl = d
	}
}

// WithClock sets the clock that stamps each use of a task, from which its
// expiry is computed (time.Now when absent). Replicas sharing a schema
// should have synchronised clocks: the TTL is off by their skew.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now == nil {
			o.errs = append(o.errs, errors.New("pgstore: WithClock(nil)"))
			return
		}
		o.clock = now
	}
}

// OpenDB brings the store's schema in db (a *sql.DB of the pgx driver,
// github.com/jackc/pgx/v5/stdlib, that the caller owns) to the current
// version and returns the store. Migrations are checksummed and applied
// once even when several replicas open the store at the same time; a
// schema altered by hand or migrated by a newer program is refused. Close
// leaves db open.
func OpenDB(ctx context.Context, db *sql.DB, opts ...Option) (*Store, error) {
	o := options{schema: DefaultSchema, max: a2a.DefaultMaxTasks, ttl: a2a.DefaultTaskTTL, clock: time.Now}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("pgstore: a nil Option")
		}
		opt(&o)
	}
	if len(o.errs) > 0 {
		return nil, errors.Join(o.errs...)
	}
	if db == nil {
		return nil, errors.New("pgstore: OpenDB: db is nil")
	}
	if !pgx.IsPostgres(db) {
		return nil, errors.New("pgstore: OpenDB: db is not a PostgreSQL database of the pgx driver (github.com/jackc/pgx/v5/stdlib)")
	}
	if err := pgx.Migrate(ctx, db, o.schema, migrationsTable, migrations); err != nil {
		return nil, wrap("migrate", err)
	}
	s := &Store{db: db, schema: o.schema, max: o.max, ttl: o.ttl, now: o.clock, every: sweepEvery(o.max)}
	s.prepare()
	return s, nil
}

// Close releases nothing the caller owns: the *sql.DB stays open.
func (s *Store) Close() error { return nil }

func (s *Store) prepare() {
	t := pgx.Quote(s.schema) + ".tasks"
	seq := "nextval('" + pgx.Quote(s.schema) + ".task_seq')"
	s.qCreate = `INSERT INTO ` + t + ` AS t (id, owner, context_id, state, finished, status_at, version, seq, last_used, task)
VALUES ($1, $2, $3, $4, $5, $6, 1, ` + seq + `, $7, $8)
ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, context_id = EXCLUDED.context_id, state = EXCLUDED.state,
	finished = EXCLUDED.finished, status_at = EXCLUDED.status_at, version = t.version + 1, seq = EXCLUDED.seq,
	last_used = EXCLUDED.last_used, task = EXCLUDED.task
WHERE t.last_used <= $9
RETURNING version`
	s.qUpdate = `UPDATE ` + t + ` SET context_id = $2, state = $3, finished = $4, status_at = $5, task = $6,
	version = version + 1, seq = ` + seq + `, last_used = GREATEST(last_used, $7)
WHERE id = $1 AND last_used > $8 AND ($9::bigint = 0 OR version = $9)
RETURNING version`
	s.qExists = `SELECT version FROM ` + t + ` WHERE id = $1 AND last_used > $2`
	// A read stamps its use only when the last stamp is older than a
	// hundredth of the TTL, so that polling a task does not write a row
	// version per poll; the TTL then runs from up to 1 % before the last use.
	s.qGet = `WITH hit AS (SELECT id, task, version, last_used FROM ` + t + `
	WHERE id = $1 AND owner = $2 AND last_used > $4),
touch AS (UPDATE ` + t + ` AS t SET last_used = GREATEST(t.last_used, $3) FROM hit
	WHERE t.id = hit.id AND hit.last_used < $5)
SELECT task, version FROM hit`
	filter := ` FROM ` + t + ` WHERE owner = $1 AND last_used > $2 AND ($3 = '' OR context_id = $3)
	AND ($4 = '' OR state = $4) AND ($5::bigint IS NULL OR status_at >= $5)`
	s.qList = `SELECT seq, task` + filter + ` AND ($6::bigint = 0 OR seq < $6) ORDER BY seq DESC LIMIT $7`
	s.qCount = `SELECT count(*)` + filter
	// One sweeper at a time over the schema (the others skip theirs):
	// expiry in two parts, finished and running, each on its partial
	// index, then the least recently used finished tasks beyond the bound,
	// read from the old end of their index.
	s.qSweep = `WITH lock AS (SELECT pg_try_advisory_xact_lock($3) AS held),
expired_finished AS (
	DELETE FROM ` + t + ` WHERE (SELECT held FROM lock) AND id IN (
		SELECT id FROM ` + t + ` WHERE finished AND last_used <= $1 FOR UPDATE SKIP LOCKED)
), expired_running AS (
	DELETE FROM ` + t + ` WHERE (SELECT held FROM lock) AND id IN (
		SELECT id FROM ` + t + ` WHERE NOT finished AND last_used <= $1 FOR UPDATE SKIP LOCKED)
)
DELETE FROM ` + t + ` WHERE (SELECT held FROM lock) AND id IN (
	SELECT id FROM ` + t + ` WHERE finished AND last_used > $1 ORDER BY last_used, id
	LIMIT GREATEST((SELECT count(*) FROM ` + t + ` WHERE last_used > $1) - $2, 0)
	FOR UPDATE SKIP LOCKED)`
	sum := sha256.Sum256([]byte("candor/a2a/pgstore/sweep\x00" + s.schema))
	s.sweepKey = int64(binary.BigEndian.Uint64(sum[:8]))
}

// cut is the latest last use of a task expired at now: a task lives while
// now - last use < TTL.
func (s *Store) cut(now time.Time) int64 { return now.Add(-s.ttl).UnixNano() }

type row struct {
	state    string
	finished bool
	stamp    sql.NullInt64
	context  string
	task     []byte
}

func rowOf(task *a2apb.Task) (row, error) {
	if task == nil || task.ID == "" {
		return row{}, fmt.Errorf("a task with an id is required: %w", a2apb.ErrInvalidParams)
	}
	b, err := json.Marshal(task)
	if err != nil {
		return row{}, fmt.Errorf("pgstore: encoding task %s: %w", task.ID, err)
	}
	r := row{state: string(task.Status.State), finished: task.Status.State.Terminal(), context: task.ContextID, task: b}
	if ts := task.Status.Timestamp; ts != nil {
		r.stamp = sql.NullInt64{Int64: ts.UnixNano(), Valid: true}
	}
	return r, nil
}

// Create implements a2a.TaskStore. The owner is a2a.Owner(ctx).
func (s *Store) Create(ctx context.Context, task *a2apb.Task) (taskstore.TaskVersion, error) {
	r, err := rowOf(task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	now := s.now()
	var v int64
	err = s.db.QueryRowContext(ctx, s.qCreate, string(task.ID), a2a.Owner(ctx), r.context, r.state, r.finished,
		r.stamp, now.UnixNano(), r.task, s.cut(now)).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	case err != nil:
		return taskstore.TaskVersionMissing, wrap("create task", err)
	}
	s.sweep(ctx, now)
	return taskstore.TaskVersion(v), nil
}

// Update implements a2a.TaskStore with optimistic concurrency: an update
// whose PrevVersion is not the stored version is refused with
// taskstore.ErrConcurrentModification, whichever replica wrote the newer
// version.
func (s *Store) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if req == nil {
		return taskstore.TaskVersionMissing, a2apb.ErrInvalidParams
	}
	r, err := rowOf(req.Task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	now := s.now()
	id := string(req.Task.ID)
	var v int64
	err = s.db.QueryRowContext(ctx, s.qUpdate, id, r.context, r.state, r.finished, r.stamp, r.task,
		now.UnixNano(), s.cut(now), int64(req.PrevVersion)).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		err = s.db.QueryRowContext(ctx, s.qExists, id, s.cut(now)).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return taskstore.TaskVersionMissing, a2apb.ErrTaskNotFound
		case err != nil:
			return taskstore.TaskVersionMissing, wrap("update task", err)
		}
		return taskstore.TaskVersionMissing, fmt.Errorf("pgstore: task %s is at version %d, the update was based on %d: %w",
			id, v, req.PrevVersion, taskstore.ErrConcurrentModification)
	case err != nil:
		return taskstore.TaskVersionMissing, wrap("update task", err)
	}
	s.sweep(ctx, now)
	return taskstore.TaskVersion(v), nil
}

// Get implements a2a.TaskStore: the task if a2a.Owner(ctx) owns it and it
// has not expired, else a2a.ErrTaskNotFound. A read counts as a use; a
// read within a hundredth of the TTL of the last stamp writes nothing.
func (s *Store) Get(ctx context.Context, id a2apb.TaskID) (*taskstore.StoredTask, error) {
	owner := a2a.Owner(ctx)
	if owner == "" {
		return nil, a2apb.ErrTaskNotFound
	}
	now := s.now()
	var b []byte
	var v int64
	stale := now.Add(-s.ttl / 100).UnixNano()
	err := s.db.QueryRowContext(ctx, s.qGet, string(id), owner, now.UnixNano(), s.cut(now), stale).Scan(&b, &v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, a2apb.ErrTaskNotFound
	case err != nil:
		return nil, wrap("get task", err)
	}
	t, err := decode(b)
	if err != nil {
		return nil, err
	}
	return &taskstore.StoredTask{Task: t, Version: taskstore.TaskVersion(v)}, nil
}

// List implements a2a.TaskStore: the caller's tasks, most recently updated
// first. The page token is a keyset cursor (the position of the last task
// of the page in the order of writes), so any replica serves the next page
// from the same point, and a task written after the listing began does not
// shift the pages that follow.
func (s *Store) List(ctx context.Context, req *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	if req == nil {
		return nil, a2apb.ErrInvalidParams
	}
	size := req.PageSize
	switch {
	case size == 0:
		size = 50
	case size < 1 || size > 100:
		return nil, fmt.Errorf("page size must be between 1 and 100, got %d: %w", size, a2apb.ErrInvalidParams)
	}
	var after int64
	if req.PageToken != "" {
		var err error
		if after, err = parseCursor(req.PageToken); err != nil {
			return nil, err
		}
	}
	resp := &a2apb.ListTasksResponse{Tasks: []*a2apb.Task{}, PageSize: size}
	owner := a2a.Owner(ctx)
	if owner == "" {
		return resp, nil
	}
	var stamp sql.NullInt64
	if req.StatusTimestampAfter != nil {
		stamp = sql.NullInt64{Int64: req.StatusTimestampAfter.UnixNano(), Valid: true}
	}
	state := ""
	if req.Status != a2apb.TaskStateUnspecified {
		state = string(req.Status)
	}
	cut := s.cut(s.now())
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, wrap("list tasks", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := tx.QueryRowContext(ctx, s.qCount, owner, cut, req.ContextID, state, stamp).Scan(&resp.TotalSize); err != nil {
		return nil, wrap("list tasks", err)
	}
	rows, err := tx.QueryContext(ctx, s.qList, owner, cut, req.ContextID, state, stamp, after, size+1)
	if err != nil {
		return nil, wrap("list tasks", err)
	}
	defer rows.Close()
	var last int64
	for rows.Next() {
		var seq int64
		var b []byte
		if err := rows.Scan(&seq, &b); err != nil {
			return nil, wrap("list tasks", err)
		}
		if len(resp.Tasks) == size {
			resp.NextPageToken = cursor(last)
			break
		}
		t, err := decode(b)
		if err != nil {
			return nil, err
		}
		if req.HistoryLength != nil && *req.HistoryLength >= 0 && len(t.History) > *req.HistoryLength {
			t.History = t.History[len(t.History)-*req.HistoryLength:]
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		resp.Tasks = append(resp.Tasks, t)
		last = seq
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list tasks", err)
	}
	return resp, nil
}

// sweepEvery is how many writes of one Store share a sweep: one per
// hundredth of the bound. A sweep counts the tasks held (a scan of the
// bound's index entries), so each write pays for about a hundred entries
// whatever the bound, and the bound is exceeded by at most one percent per
// replica between sweeps.
func sweepEvery(maxTasks int) int64 { return int64(max(maxTasks/100, 1)) }

// sweep deletes expired tasks and, while more than the bound are held, the
// least recently used finished ones; it runs after every s.every-th write
// of this Store. The write it follows is committed whatever happens here;
// a sweep that fails is done by a later one. Expired tasks are never
// returned in the meantime: every read filters them.
func (s *Store) sweep(ctx context.Context, now time.Time) {
	if s.writes.Add(1)%s.every != 0 {
		return
	}
	_, _ = s.db.ExecContext(ctx, s.qSweep, s.cut(now), s.max, s.sweepKey)
}

func decode(b []byte) (*a2apb.Task, error) {
	var t a2apb.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("pgstore: decoding a stored task: %w", err)
	}
	return &t, nil
}

func cursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("s" + strconv.FormatInt(seq, 10)))
}

func parseCursor(tok string) (int64, error) {
	bad := fmt.Errorf("malformed page token: %w", a2apb.ErrInvalidParams)
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, bad
	}
	n, ok := strings.CutPrefix(string(b), "s")
	if !ok {
		return 0, bad
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq <= 0 {
		return 0, bad
	}
	return seq, nil
}
