package queue

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// ErrNoAssertion reports an idea without an assertion spec; level 4 fails with
// "no assertion defined".
var ErrNoAssertion = errors.New("no assertion defined")

// AssertionError reports a stored assertion spec that does not decode or is
// incomplete. Raw keeps the stored text.
type AssertionError struct {
	Reason string
	Raw    string
}

func (e *AssertionError) Error() string { return "queue: invalid assertion spec: " + e.Reason }

// Assertion is an idea's level-4 spec: the system state a correct run leaves
// behind. It is stored as JSON in automation_ideas.assertion:
//
//	{"sql":  [{"query": "SELECT 1 FROM orders WHERE status = 'confirmed'"}],
//	 "http": [{"capture": "order-confirmations", "method": "POST", "body_contains": "confirmed"}]}
//
// Every SQL query must return at least one row; every HTTP capture must have
// been called (a request recorded in http_captures since the smoke run
// started). A spec holds at least one of each: the minimum of
// docs/builder-playbook.md (rule 10) is a
// SQL query that must return a row and an HTTP capture that must have been
// called.
//
// Trigger, optional, is the trigger data of the level-3 smoke run: the items
// pinned as the trigger node's output (for a Webhook trigger, objects like
// {"body": {...}, "headers": {...}}). Without it the trigger emits one empty
// item.
type Assertion struct {
	SQL     []SQLCheck       `json:"sql,omitempty"`
	HTTP    []HTTPCheck      `json:"http,omitempty"`
	Trigger []map[string]any `json:"trigger,omitempty"`
}

// SQLCheck is a query that must return at least one row. It runs against the
// builder's database in a transaction that is always rolled back.
type SQLCheck struct {
	Query string `json:"query"`
}

// HTTPCheck names a capture endpoint (POST/GET {capture base}/capture/{name})
// the workflow must have called; Method and BodyContains narrow the match.
type HTTPCheck struct {
	Capture      string `json:"capture"`
	Method       string `json:"method,omitempty"`
	BodyContains string `json:"body_contains,omitempty"`
}

var captureName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Validate reports an incomplete spec: a malformed check, or no SQL check or
// no HTTP check.
func (a Assertion) Validate() error {
	if err := a.wellFormed(); err != nil {
		return err
	}
	switch {
	case len(a.SQL) == 0:
		return errors.New("it has no sql check (at least one query that must return a row)")
	case len(a.HTTP) == 0:
		return errors.New("it has no http check (at least one capture that must have been called)")
	}
	return nil
}

// wellFormed reports a malformed check, or a spec without any check.
func (a Assertion) wellFormed() error {
	if len(a.SQL)+len(a.HTTP) == 0 {
		return errors.New("it has no sql and no http check")
	}
	for i, c := range a.SQL {
		if strings.TrimSpace(c.Query) == "" {
			return fmt.Errorf("sql[%d] has an empty query", i)
		}
	}
	for i, item := range a.Trigger {
		if item == nil {
			return fmt.Errorf("trigger[%d] is not a JSON object", i)
		}
	}
	for i, c := range a.HTTP {
		if !captureName.MatchString(c.Capture) {
			return fmt.Errorf("http[%d] capture %q is not a name of [a-z0-9_-]", i, c.Capture)
		}
		switch c.Method {
		case "", http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		default:
			return fmt.Errorf("http[%d] method %q is not GET, POST, PUT, PATCH or DELETE", i, c.Method)
		}
	}
	return nil
}

// Encode validates and serialises the spec for the assertion column.
func (a Assertion) Encode() (string, error) {
	if err := a.Validate(); err != nil {
		return "", &AssertionError{Reason: err.Error()}
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("queue: encode assertion: %w", err)
	}
	return string(b), nil
}

// ParseAssertion decodes a stored spec strictly: one JSON object, no unknown
// keys, no trailing data, and Validate must pass. Blank → ErrNoAssertion.
func ParseAssertion(raw string) (Assertion, error) {
	if strings.TrimSpace(raw) == "" {
		return Assertion{}, ErrNoAssertion
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var a Assertion
	if err := dec.Decode(&a); err != nil {
		return Assertion{}, &AssertionError{Reason: err.Error(), Raw: raw}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Assertion{}, &AssertionError{Reason: "trailing data after the JSON object", Raw: raw}
	}
	if err := a.Validate(); err != nil {
		return Assertion{}, &AssertionError{Reason: err.Error(), Raw: raw}
	}
	return a, nil
}

// Assertion decodes the idea's spec (ErrNoAssertion when none).
func (it Idea) Assertion() (Assertion, error) { return ParseAssertion(it.AssertionJSON) }

// CheckResult is the outcome of one check of an Assertion.
type CheckResult struct {
	Check  string // "sql[0]: SELECT …" or "http[0]: POST order-confirmations"
	Passed bool
	Detail string
}

// AssertionReport is the outcome of all checks.
type AssertionReport struct {
	Results []CheckResult
}

// Passed reports whether there were checks and every one passed.
func (r AssertionReport) Passed() bool {
	if len(r.Results) == 0 {
		return false
	}
	for _, c := range r.Results {
		if !c.Passed {
			return false
		}
	}
	return true
}

// Failure is a one-line description of the first failed check ("" when all passed).
func (r AssertionReport) Failure() string {
	if len(r.Results) == 0 {
		return ErrNoAssertion.Error()
	}
	for _, c := range r.Results {
		if !c.Passed {
			return c.Check + ": " + c.Detail
		}
	}
	return ""
}

// CheckAssertion runs every check of a against this database: SQL queries in
// a rolled-back transaction (read-only on PostgreSQL), HTTP checks against the
// captures recorded at or after since. It runs any well-formed checks (an
// idea's spec, which holds both kinds, is checked by Validate when it is
// stored and read). A failing or erroring check is a failed CheckResult; the
// error return is for a malformed spec or a database that cannot be read at
// all.
func (s *Store) CheckAssertion(ctx context.Context, a Assertion, since time.Time) (AssertionReport, error) {
	var rep AssertionReport
	if err := a.wellFormed(); err != nil {
		return rep, &AssertionError{Reason: err.Error()}
	}
	for i, c := range a.SQL {
		res := CheckResult{Check: fmt.Sprintf("sql[%d]: %s", i, oneLine(c.Query, 120))}
		found, err := s.queryHasRow(ctx, c.Query)
		switch {
		case err != nil:
			res.Detail = "query failed: " + err.Error()
		case !found:
			res.Detail = "query returned no row"
		default:
			res.Passed, res.Detail = true, "returned a row"
		}
		rep.Results = append(rep.Results, res)
	}
	for i, c := range a.HTTP {
		method := c.Method
		if method == "" {
			method = "any method"
		}
		res := CheckResult{Check: fmt.Sprintf("http[%d]: %s %s", i, method, c.Capture)}
		caps, err := s.Captures(ctx, c.Capture, since)
		if err != nil {
			return rep, err
		}
		for _, cp := range caps {
			if (c.Method == "" || cp.Method == c.Method) && strings.Contains(cp.Body, c.BodyContains) {
				res.Passed = true
				res.Detail = fmt.Sprintf("called at %s", cp.ReceivedAt.Format(time.RFC3339Nano))
				break
			}
		}
		if !res.Passed {
			res.Detail = fmt.Sprintf("not called since %s (%d other request(s) to this capture)", since.UTC().Format(time.RFC3339), len(caps))
			if c.BodyContains != "" {
				res.Detail += fmt.Sprintf(" with a body containing %q", c.BodyContains)
			}
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

func (s *Store) queryHasRow(ctx context.Context, query string) (bool, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.dialect == Postgres})
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // always rolled back: checks never change state
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := rows.Next()
	if err := rows.Err(); err != nil {
		return false, err
	}
	return found, nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// Capture is one request recorded by the capture endpoint.
type Capture struct {
	ID         int64
	Capture    string
	Method     string
	Path       string
	Body       string
	ReceivedAt time.Time
}

// RecordCapture stores one received request.
func (s *Store) RecordCapture(ctx context.Context, c Capture) (int64, error) {
	if !captureName.MatchString(c.Capture) {
		return 0, fmt.Errorf("queue: capture name %q is not of [a-z0-9_-]", c.Capture)
	}
	var id int64
	err := s.db.QueryRowContext(ctx, s.q(`INSERT INTO http_captures (capture, method, path, body, received_at)
		VALUES (?, ?, ?, ?, ?) RETURNING id`), c.Capture, c.Method, c.Path, c.Body, s.stamp()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("queue: record capture %s: %w", c.Capture, err)
	}
	return id, nil
}

// maxCapturesRead bounds how many requests of one capture a check reads.
const maxCapturesRead = 500

// Captures returns the newest requests (at most 500) recorded for a capture at
// or after since, oldest first.
func (s *Store) Captures(ctx context.Context, capture string, since time.Time) ([]Capture, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, capture, method, path, body, received_at FROM http_captures
		WHERE capture = ? ORDER BY id DESC LIMIT ?`), capture, maxCapturesRead)
	if err != nil {
		return nil, fmt.Errorf("queue: read captures %s: %w", capture, err)
	}
	defer rows.Close()
	var out []Capture
	for rows.Next() {
		var c Capture
		if err := rows.Scan(&c.ID, &c.Capture, &c.Method, &c.Path, &c.Body, &c.ReceivedAt); err != nil {
			return nil, fmt.Errorf("queue: scan capture: %w", err)
		}
		if !c.ReceivedAt.Before(since) {
			out = append(out, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queue: read captures %s: %w", capture, err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// MaxCaptureBody bounds the body the capture endpoint reads and stores.
const MaxCaptureBody = 1 << 20

// CaptureHandler records every request to /capture/{name} in http_captures and
// answers 200 {"captured":true}. A body over MaxCaptureBody answers 413 and is
// not recorded; a bad name answers 404.
func (s *Store) CaptureHandler(logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/capture/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if !captureName.MatchString(name) {
			http.Error(w, `{"error":"unknown capture name"}`, http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCaptureBody))
		if err != nil {
			http.Error(w, `{"error":"body too large or unreadable"}`, http.StatusRequestEntityTooLarge)
			return
		}
		if _, err := s.RecordCapture(r.Context(), Capture{Capture: name, Method: r.Method, Path: r.URL.Path, Body: string(bytes.ToValidUTF8(body, []byte("\uFFFD")))}); err != nil {
			logger.Error("capture not recorded", "capture", name, "err", err)
			http.Error(w, `{"error":"not recorded"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"captured":true}`)
	})
	return mux
}
