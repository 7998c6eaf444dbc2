package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	_ "modernc.org/sqlite"             // driver "sqlite"
)

// Dialect is the SQL database behind a Store.
type Dialect int

const (
	SQLite Dialect = iota + 1
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "dialect(" + strconv.Itoa(int(d)) + ")"
}

// IdeaType is the only idea type the builder picks.
const IdeaType = "n8n_automation"

// Idea statuses (the status column, owned by whoever files ideas).
const (
	StatusReadyToBuild = "ready_to_build"
	StatusDeployed     = "deployed"
)

// BuilderStatus is the builder's own progress on an idea.
type BuilderStatus string

const (
	NotStarted       BuilderStatus = "not_started"
	Queued           BuilderStatus = "queued"
	Building         BuilderStatus = "building"
	Failed           BuilderStatus = "failed"
	AwaitingApproval BuilderStatus = "awaiting_approval"
	Deployed         BuilderStatus = "deployed"
)

// Sentinel errors; see the package documentation.
var (
	ErrNoIdea     = errors.New("queue: no idea is ready to build")
	ErrNotFound   = errors.New("queue: no such idea")
	ErrClaimed    = errors.New("queue: idea already claimed by another builder")
	ErrTransition = errors.New("queue: builder status transition not allowed")
)

// TransitionError reports a conditional UPDATE that changed no row because the
// idea was not in one of the From states. It matches ErrClaimed when the
// transition was a claim, ErrTransition otherwise.
type TransitionError struct {
	ID     int64
	To     BuilderStatus
	From   []BuilderStatus
	Actual BuilderStatus
}

func (e *TransitionError) Error() string {
	from := make([]string, len(e.From))
	for i, f := range e.From {
		from[i] = string(f)
	}
	verb := "move"
	if e.To == Queued {
		verb = "claim"
	}
	return fmt.Sprintf("queue: cannot %s idea %d to %s: builder_status is %s, want %s",
		verb, e.ID, e.To, e.Actual, strings.Join(from, " or "))
}

func (e *TransitionError) Unwrap() error {
	if e.To == Queued {
		return ErrClaimed
	}
	return ErrTransition
}

// Idea is one row of automation_ideas.
type Idea struct {
	ID                   int64
	Name                 string
	Type                 string
	Status               string
	BuilderStatus        BuilderStatus
	Priority             sql.NullInt64 // NULL sorts last
	Spec                 string        // what the automation must do
	Infrastructure       string        // systems, endpoints and conventions it runs against
	AssertionJSON        string        // raw assertion spec; see Idea.Assertion
	SandboxWorkflowID    string        // "" until imported into the sandbox
	ProductionWorkflowID string        // "" until deployed
	LastError            string
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

// NewIdea is what InsertIdea stores. Type and Status default to
// IdeaType and StatusReadyToBuild.
type NewIdea struct {
	Name           string
	Type           string
	Status         string
	Priority       sql.NullInt64
	Spec           string
	Infrastructure string
	Assertion      *Assertion // nil stores no assertion (L4 will fail)
}

// TestResult is one row of agent_test_results. Level 0 records an unhandled
// error outside the four test levels.
type TestResult struct {
	ID           int64
	AutomationID int64
	Level        int
	Passed       bool
	Detail       string
	CreatedAt    time.Time
}

// Status is the stored status word: "pass" or "fail".
func (r TestResult) Status() string {
	if r.Passed {
		return "pass"
	}
	return "fail"
}

// Store is the queue on one database. It is safe for concurrent use.
type Store struct {
	db      *sql.DB
	dialect Dialect
	now     func() time.Time
}

// Option configures a Store.
type Option func(*Store)

// WithClock replaces time.Now for created_at/updated_at (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// IsPostgres reports whether a -db value names PostgreSQL.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the queue named by dsn: a postgres:// or postgresql:// URL for
// PostgreSQL, otherwise a SQLite file path (an optional "sqlite:" prefix is
// removed). SQLite files are opened in WAL mode with a busy timeout so several
// builder processes can share one file. Open pings the database.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	var (
		db      *sql.DB
		err     error
		dialect Dialect
	)
	if IsPostgres(dsn) {
		dialect = Postgres
		db, err = sql.Open("pgx", dsn)
	} else {
		dialect = SQLite
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, errors.New("queue: empty database path")
		}
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", "immediate")
		db, err = sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	}
	if err != nil {
		return nil, fmt.Errorf("queue: open %s: %w", dialect, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("queue: connect to %s: %w", dialect, redactDSNError(err, dsn))
	}
	return New(db, dialect, opts...), nil
}

// redactDSNError keeps a password in a PostgreSQL URL out of an error.
func redactDSNError(err error, dsn string) error {
	u, perr := url.Parse(dsn)
	if perr != nil || u.User == nil {
		return err
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(err.Error(), pw) {
		return errors.New(strings.ReplaceAll(err.Error(), pw, "[REDACTED]"))
	}
	return err
}

// New wraps an open database of the given dialect.
func New(db *sql.DB, dialect Dialect, opts ...Option) *Store {
	s := &Store{db: db, dialect: dialect, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Dialect reports the database kind.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB returns the underlying database (assertion checks and tests read it).
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// q adapts a query written with ? placeholders to the dialect.
func (s *Store) q(query string) string {
	if s.dialect != Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

func (s *Store) stamp() time.Time { return s.now().UTC() }

// Init creates the tables and indexes when they do not exist.
func (s *Store) Init(ctx context.Context) error {
	id, ts := "INTEGER PRIMARY KEY AUTOINCREMENT", "TIMESTAMP"
	if s.dialect == Postgres {
		id, ts = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "TIMESTAMPTZ"
	}
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS automation_ideas (
			id ` + id + `,
			name TEXT NOT NULL CHECK (name <> ''),
			type TEXT NOT NULL,
			status TEXT NOT NULL,
			builder_status TEXT NOT NULL DEFAULT 'not_started' CHECK (builder_status IN
				('not_started','queued','building','failed','awaiting_approval','deployed')),
			priority INTEGER,
			spec TEXT NOT NULL DEFAULT '',
			infrastructure TEXT NOT NULL DEFAULT '',
			assertion TEXT,
			sandbox_workflow_id TEXT,
			production_workflow_id TEXT,
			last_error TEXT,
			created_at ` + ts + ` NOT NULL,
			updated_at ` + ts + ` NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS automation_ideas_pick
			ON automation_ideas (type, status, builder_status, priority, id)`,
		`CREATE TABLE IF NOT EXISTS agent_test_results (
			id ` + id + `,
			automation_id BIGINT NOT NULL REFERENCES automation_ideas (id),
			test_level INTEGER NOT NULL CHECK (test_level BETWEEN 0 AND 4),
			status TEXT NOT NULL CHECK (status IN ('pass','fail')),
			detail TEXT NOT NULL DEFAULT '',
			created_at ` + ts + ` NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS agent_test_results_automation
			ON agent_test_results (automation_id, id)`,
		`CREATE TABLE IF NOT EXISTS http_captures (
			id ` + id + `,
			capture TEXT NOT NULL,
			method TEXT NOT NULL,
			path TEXT NOT NULL,
			body TEXT NOT NULL,
			received_at ` + ts + ` NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS http_captures_capture ON http_captures (capture, id)`,
	}
	for _, st := range stmts {
		if _, err := s.db.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("queue: init %s schema: %w", s.dialect, err)
		}
	}
	return nil
}

const ideaColumns = `id, name, type, status, builder_status, priority, spec, infrastructure,
	assertion, sandbox_workflow_id, production_workflow_id, last_error, created_at, updated_at`

func scanIdea(row interface{ Scan(...any) error }) (Idea, error) {
	var (
		it                              Idea
		bs                              string
		assertion, sandbox, prod, lastE sql.NullString
	)
	err := row.Scan(&it.ID, &it.Name, &it.Type, &it.Status, &bs, &it.Priority, &it.Spec, &it.Infrastructure,
		&assertion, &sandbox, &prod, &lastE, &it.CreatedAt, &it.UpdatedAt)
	if err != nil {
		return Idea{}, err
	}
	it.BuilderStatus = BuilderStatus(bs)
	it.AssertionJSON, it.SandboxWorkflowID, it.ProductionWorkflowID, it.LastError = assertion.String, sandbox.String, prod.String, lastE.String
	return it, nil
}

// InsertIdea stores a new idea (builder_status not_started) and returns its id.
func (s *Store) InsertIdea(ctx context.Context, n NewIdea) (int64, error) {
	if strings.TrimSpace(n.Name) == "" {
		return 0, errors.New("queue: an idea needs a name")
	}
	if n.Type == "" {
		n.Type = IdeaType
	}
	if n.Status == "" {
		n.Status = StatusReadyToBuild
	}
	var assertion sql.NullString
	if n.Assertion != nil {
		raw, err := n.Assertion.Encode()
		if err != nil {
			return 0, err
		}
		assertion = sql.NullString{String: raw, Valid: true}
	}
	now := s.stamp()
	var id int64
	err := s.db.QueryRowContext(ctx, s.q(`INSERT INTO automation_ideas
		(name, type, status, builder_status, priority, spec, infrastructure, assertion, created_at, updated_at)
		VALUES (?, ?, ?, 'not_started', ?, ?, ?, ?, ?, ?) RETURNING id`),
		n.Name, n.Type, n.Status, n.Priority, n.Spec, n.Infrastructure, assertion, now, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("queue: insert idea %q: %w", n.Name, err)
	}
	return id, nil
}

// Pick returns the next idea to build: type n8n_automation, status
// ready_to_build, builder_status not_started, by priority (NULL last) then id.
// It does not claim it. No such idea → ErrNoIdea.
func (s *Store) Pick(ctx context.Context) (Idea, error) {
	row := s.db.QueryRowContext(ctx, s.q(`SELECT `+ideaColumns+` FROM automation_ideas
		WHERE type = ? AND status = ? AND builder_status = ?
		ORDER BY priority ASC NULLS LAST, id ASC LIMIT 1`), IdeaType, StatusReadyToBuild, string(NotStarted))
	it, err := scanIdea(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Idea{}, ErrNoIdea
	}
	if err != nil {
		return Idea{}, fmt.Errorf("queue: pick: %w", err)
	}
	return it, nil
}

// Get reads one idea. Unknown id → ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (Idea, error) {
	it, err := scanIdea(s.db.QueryRowContext(ctx, s.q(`SELECT `+ideaColumns+` FROM automation_ideas WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Idea{}, fmt.Errorf("%w: id %d", ErrNotFound, id)
	}
	if err != nil {
		return Idea{}, fmt.Errorf("queue: get idea %d: %w", id, err)
	}
	return it, nil
}

// transition runs one conditional UPDATE setting builder_status to `to` (plus
// the extra assignments) where the idea is in one of `from`.
func (s *Store) transition(ctx context.Context, id int64, to BuilderStatus, from []BuilderStatus, extra string, extraArgs ...any) error {
	args := []any{string(to), s.stamp()}
	args = append(args, extraArgs...)
	args = append(args, id)
	marks := make([]string, len(from))
	for i, f := range from {
		marks[i] = "?"
		args = append(args, string(f))
	}
	query := `UPDATE automation_ideas SET builder_status = ?, updated_at = ?` + extra +
		` WHERE id = ? AND builder_status IN (` + strings.Join(marks, ", ") + `)`
	res, err := s.db.ExecContext(ctx, s.q(query), args...)
	if err != nil {
		return fmt.Errorf("queue: idea %d to %s: %w", id, to, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("queue: idea %d to %s: rows affected: %w", id, to, err)
	}
	if n == 1 {
		return nil
	}
	cur, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	return &TransitionError{ID: id, To: to, From: from, Actual: cur.BuilderStatus}
}

// Claim takes the idea for this builder: builder_status not_started → queued
// in one conditional UPDATE. Zero rows changed → an error matching ErrClaimed
// (another builder has it); unknown id → ErrNotFound.
func (s *Store) Claim(ctx context.Context, id int64) error {
	return s.transition(ctx, id, Queued, []BuilderStatus{NotStarted}, "")
}

// Release gives a claimed idea back (queued → not_started) so another run can
// retry it. Only allowed before generation starts.
func (s *Store) Release(ctx context.Context, id int64) error {
	return s.transition(ctx, id, NotStarted, []BuilderStatus{Queued}, "")
}

// StartBuilding marks the start of generation (queued → building). From here
// on a failure leaves the idea failed for manual review.
func (s *Store) StartBuilding(ctx context.Context, id int64) error {
	return s.transition(ctx, id, Building, []BuilderStatus{Queued}, "")
}

// Fail records a failure with its reason (queued, building or
// awaiting_approval → failed).
func (s *Store) Fail(ctx context.Context, id int64, reason string) error {
	return s.transition(ctx, id, Failed, []BuilderStatus{Queued, Building, AwaitingApproval}, `, last_error = ?`, reason)
}

// SetSandboxWorkflow records (or, with "", clears) the sandbox workflow id of
// an idea being built.
func (s *Store) SetSandboxWorkflow(ctx context.Context, id int64, workflowID string) error {
	v := sql.NullString{String: workflowID, Valid: workflowID != ""}
	return s.transition(ctx, id, Building, []BuilderStatus{Building}, `, sandbox_workflow_id = ?`, v)
}

// AwaitApproval marks an idea whose tests all passed (building →
// awaiting_approval). It needs the sandbox workflow id to be recorded.
func (s *Store) AwaitApproval(ctx context.Context, id int64) error {
	it, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if it.SandboxWorkflowID == "" && it.BuilderStatus == Building {
		return fmt.Errorf("%w: idea %d has no sandbox workflow id recorded", ErrTransition, id)
	}
	return s.transition(ctx, id, AwaitingApproval, []BuilderStatus{Building}, "")
}

// MarkDeployed records the production deployment (awaiting_approval →
// deployed, and status = 'deployed'). A second call finds the idea deployed
// and returns a *TransitionError with Actual == Deployed.
func (s *Store) MarkDeployed(ctx context.Context, id int64, productionWorkflowID string) error {
	if productionWorkflowID == "" {
		return fmt.Errorf("%w: idea %d: deployed needs the production workflow id", ErrTransition, id)
	}
	return s.transition(ctx, id, Deployed, []BuilderStatus{AwaitingApproval},
		`, status = ?, production_workflow_id = ?`, StatusDeployed, productionWorkflowID)
}

// AddTestResult appends one row to agent_test_results and returns its id.
func (s *Store) AddTestResult(ctx context.Context, r TestResult) (int64, error) {
	if r.Level < 0 || r.Level > 4 {
		return 0, fmt.Errorf("queue: test level %d outside 0..4", r.Level)
	}
	var id int64
	err := s.db.QueryRowContext(ctx, s.q(`INSERT INTO agent_test_results
		(automation_id, test_level, status, detail, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`),
		r.AutomationID, r.Level, r.Status(), r.Detail, s.stamp()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("queue: record level %d result for idea %d: %w", r.Level, r.AutomationID, err)
	}
	return id, nil
}

// TestResults returns an idea's test rows in the order they were written.
func (s *Store) TestResults(ctx context.Context, automationID int64) ([]TestResult, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, automation_id, test_level, status, detail, created_at
		FROM agent_test_results WHERE automation_id = ? ORDER BY id ASC`), automationID)
	if err != nil {
		return nil, fmt.Errorf("queue: test results of idea %d: %w", automationID, err)
	}
	defer rows.Close()
	var out []TestResult
	for rows.Next() {
		var (
			r      TestResult
			status string
		)
		if err := rows.Scan(&r.ID, &r.AutomationID, &r.Level, &status, &r.Detail, &r.CreatedAt); err != nil {
			return nil, fmt.Errorf("queue: scan test result: %w", err)
		}
		r.Passed = status == "pass"
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queue: test results of idea %d: %w", automationID, err)
	}
	return out, nil
}
