package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/decision"
	"github.com/candorkit/candor/examples/internal/pgdsn"
	"github.com/candorkit/candor/retrieval"
	"github.com/candorkit/candor/retrieval/ollama"
)

const (
	// graphVersion names this agent's flow (propose → wait → decide →
	// apply). A receipt written by another version is refused at resume.
	graphVersion = "documented/1"
	// checkpointID names the point where the flow waits for a person.
	checkpointID = "await-decision"
	// storeBusyTimeout bounds how long a write waits for another process
	// holding the store's write lock.
	storeBusyTimeout = 10 * time.Second
	// fixtureProfile is the first line of a run on the controlled vectors.
	fixtureProfile = "Profile=fixture; controlled dense vectors and answer; no model qualification"
)

// Files in the data directory.
type paths struct {
	Index    string // retrieval index (SQLite)
	Store    string // approval store and the ApprovedBacklogItems table: a SQLite file or a PostgreSQL DSN
	Evidence string // diagnostic copy of the evidence; never read back
	Receipt  string // approval.WaitingReceipt of the waiting operation
}

// pathsFor returns the files of c.Dir, and the approval store -approvals
// names (default approvals.db in c.Dir).
func pathsFor(c common) paths {
	p := paths{
		Index:    filepath.Join(c.Dir, "index.db"),
		Store:    filepath.Join(c.Dir, "approvals.db"),
		Evidence: filepath.Join(c.Dir, "evidence.json"),
		Receipt:  filepath.Join(c.Dir, "receipt.json"),
	}
	if c.Approvals != "" {
		p.Store = c.Approvals
	}
	return p
}

// storePlace names p.Store for the output: a DSN without its password.
func (p paths) storePlace() string {
	if pgdsn.IsDSN(p.Store) {
		return pgdsn.Server(p.Store)
	}
	return p.Store
}

// storeMissing reports whether p.Store is a SQLite file that does not
// exist (a PostgreSQL store is created when missing).
func (p paths) storeMissing() bool {
	if pgdsn.IsDSN(p.Store) {
		return false
	}
	_, err := os.Stat(p.Store)
	return errors.Is(err, fs.ErrNotExist)
}

// errPending: an earlier run's operation still waits for a decision.
var errPending = errors.New("an earlier proposal is still waiting for a decision")

// errNoRun: resume found nothing to resume.
var errNoRun = errors.New("nothing to resume")

// errInconsistent: what is stored contradicts itself; reported, never shown
// as a state.
var errInconsistent = errors.New("stored state is inconsistent")

func profileLine(cfg runConfig) string {
	if cfg.Live {
		return fmt.Sprintf("Profile=live; Ollama dense vectors (model %s at %s), controlled answer; no model qualification",
			cfg.OllamaModel, cfg.OllamaURL)
	}
	return fixtureProfile
}

// stores holds the approval store and the backlog table's connection.
type stores struct {
	approval *approval.Store
	backlog  *backlog
}

func openStores(ctx context.Context, path string, log *slog.Logger) (*stores, error) {
	if pgdsn.IsDSN(path) {
		return openStoresPG(ctx, path, log)
	}
	st, err := approval.Open(ctx, path, approval.WithLogger(log), approval.WithBusyTimeout(storeBusyTimeout))
	if err != nil {
		return nil, err
	}
	bl, err := openBacklog(path, storeBusyTimeout)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return &stores{approval: st, backlog: bl}, nil
}

func (s *stores) Close() error { return errors.Join(s.approval.Close(), s.backlog.Close()) }

// proposeRun is the run command: retrieve, gate, register, write the
// receipt, stop.
func proposeRun(ctx context.Context, cfg runConfig, out io.Writer, log *slog.Logger) (err error) {
	fmt.Fprintln(out, profileLine(cfg))
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	p := pathsFor(cfg.common)
	s, err := openStores(ctx, p.Store, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if err := s.backlog.ensure(ctx); err != nil {
		return err
	}
	if err := refusePending(ctx, s.approval, p, log); err != nil {
		return err
	}

	corpus := builtinCorpus()
	chunks := retrieval.Chunks(corpus)
	m, vectors, query := fixtureManifest(corpus), fixtureVectors(chunks), fixtureQuery()
	if cfg.Live {
		if m, vectors, query, err = liveVectors(ctx, cfg, corpus, chunks); err != nil {
			return err
		}
	}
	hits, err := buildAndSearch(ctx, p.Index, corpus, m, vectors, query, log)
	if err != nil {
		return err
	}
	policy := retrieval.CorpusPolicy{AsOf: asOf(), Scope: scope}
	if err := checkPolicy(corpus, policy, hits); err != nil {
		return err
	}
	var layout string
	if !cfg.Live {
		if hits[0].ChunkID != answerChunk {
			return fmt.Errorf("fixture check: query (1,0) ranked %s first, want %s", hits[0].ChunkID, answerChunk)
		}
		if layout, err = fixtureLayout(corpus, chunks, vectors, policy); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Index=%s chunks=%d provider=%s model=%s dims=%d\n", p.Index, len(chunks), m.Provider, m.Model, m.Dims)
	if layout != "" {
		fmt.Fprintln(out, layout)
	}
	fmt.Fprintf(out, "Question=%q as-of=%s scope=%s\n", question, asOf().Format(time.DateOnly), scope)
	for _, d := range decoys() {
		if cfg.Live {
			fmt.Fprintf(out, "Refused before ranking: %s (%s)\n", d.ID, d.Want)
		} else {
			fmt.Fprintf(out, "Refused before ranking: %s (%s; its vector equals the query)\n", d.ID, d.Want)
		}
	}
	for i, h := range hits {
		fmt.Fprintf(out, "Hit %d: %s score=%.3f %q\n", i+1, h.ChunkID, h.Score, h.Title)
	}

	proposal := controlledProposal(cfg.InvalidEvidence)
	ans := retrieval.AnswerGate{}.Validate(proposal, retrieval.GateInput{Question: question, AsOf: asOf(), Hits: hits})
	if err := ans.Err(); err != nil {
		return fmt.Errorf("evidence refused, nothing registered: %w", err)
	}
	fmt.Fprintf(out, "Answer accepted: %s\n", ans.Text)

	draft := proposeDraft(ans)
	if errs := draft.Validate(); len(errs) > 0 {
		return fmt.Errorf("draft refused, nothing registered: %w", errors.Join(errs...))
	}
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("operation id: %w", err)
	}
	opID := "documented-" + id.String()
	st, err := s.approval.Register(ctx, approval.Ticket{OperationID: opID, Draft: draft})
	if err != nil {
		return err
	}
	if err := writeEvidence(p.Evidence, evidenceFile{
		Note:      "Diagnostic copy only: resume and show read the approval store, never this file.",
		Profile:   profileLine(cfg),
		Question:  question,
		AsOf:      asOf().Format(time.DateOnly),
		Scope:     scope,
		Manifest:  m,
		Refused:   decoys(),
		Hits:      hits,
		Proposal:  proposal,
		Answer:    ans.Text,
		Operation: opID,
		Draft:     st.Draft,
	}); err != nil {
		return err
	}
	session, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("session id: %w", err)
	}
	rc, err := s.approval.Receipt(ctx, approval.WaitingReceipt{
		GraphVersion: graphVersion, SessionID: session.String(), CheckpointID: checkpointID,
		OperationID: opID, RequestID: uuid.NewString(),
	})
	if err != nil {
		return err
	}
	if err := approval.WriteReceiptFile(p.Receipt, rc); err != nil {
		return err
	}
	fmt.Fprintf(out, "Operation=%s\n", opID)
	fmt.Fprintf(out, "Status=%s\n", st.Status)
	fmt.Fprintf(out, "Draft=%s\n", st.Draft)
	fmt.Fprintf(out, "Evidence=%s (diagnostic copy only)\n", p.Evidence)
	fmt.Fprintf(out, "Receipt=%s\n", p.Receipt)
	fmt.Fprintf(out, "Waiting for a decision. Decide with:\n  %s\n  %s\n",
		decideCommand(p, approval.Approve), decideCommand(p, approval.Reject))
	return nil
}

// refusePending stops a run while the operation of the receipt on disk still
// waits: overwriting the receipt would strand that request.
func refusePending(ctx context.Context, store *approval.Store, p paths, log *slog.Logger) error {
	if _, err := os.Stat(p.Receipt); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	rc, err := approval.ReadReceiptFile(p.Receipt)
	if err != nil {
		return fmt.Errorf("existing receipt: %w", err)
	}
	st, err := store.Read(ctx, rc.OperationID)
	switch {
	case errors.Is(err, approval.ErrUnknownOperation):
		log.Warn("documented: replacing a receipt for an operation this store does not hold", "operation_id", rc.OperationID)
		return nil
	case err != nil:
		return err
	case st.Status == approval.StatusWaiting:
		return fmt.Errorf("%w: operation %s; decide it first:\n  %s\n  %s", errPending, rc.OperationID,
			decideCommand(p, approval.Approve), decideCommand(p, approval.Reject))
	}
	return nil
}

// liveVectors embeds every chunk and the question with Ollama. Any failure
// is returned: there is no fallback to the controlled vectors.
func liveVectors(ctx context.Context, cfg runConfig, corpus []retrieval.Source, chunks []retrieval.Chunk) (retrieval.Manifest, [][]float32, []float32, error) {
	fail := func(err error) (retrieval.Manifest, [][]float32, []float32, error) {
		return retrieval.Manifest{}, nil, nil, fmt.Errorf("live embedding with model %q at %s failed (no fallback to the fixture vectors): %w",
			cfg.OllamaModel, cfg.OllamaURL, err)
	}
	emb, err := ollama.New(cfg.OllamaURL, cfg.OllamaModel, ollama.WithTimeout(cfg.OllamaTimeout))
	if err != nil {
		return fail(err)
	}
	texts := make([]string, 0, len(chunks)+1)
	for _, c := range chunks {
		texts = append(texts, c.Text)
	}
	texts = append(texts, question)
	vs, err := emb.Embed(ctx, texts)
	if err != nil {
		return fail(err)
	}
	if len(vs) != len(texts) || len(vs[0]) == 0 {
		return fail(fmt.Errorf("%d vectors for %d texts", len(vs), len(texts)))
	}
	m := retrieval.Manifest{
		Profile: "live", Provider: "ollama", Model: emb.Model(), Dims: len(vs[0]),
		CorpusDigest: retrieval.CorpusDigest(corpus),
	}
	return m, vs[:len(chunks)], vs[len(chunks)], nil
}

// buildAndSearch rebuilds the index file with the given vectors and searches
// it once with query, as of the fixed date in the fixed scope.
func buildAndSearch(ctx context.Context, path string, corpus []retrieval.Source, m retrieval.Manifest,
	vectors [][]float32, query []float32, log *slog.Logger) (hits []retrieval.Hit, err error) {
	ix, err := retrieval.Open(ctx, path, m, retrieval.WithLogger(log))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, ix.Close()) }()
	if err := ix.Rebuild(ctx, corpus, m, vectors); err != nil {
		return nil, err
	}
	hits, err = ix.Search(ctx, query, retrieval.CorpusPolicy{AsOf: asOf(), Scope: scope}, searchK)
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// evidenceFile is the diagnostic copy run writes. Nothing reads it back.
type evidenceFile struct {
	Note      string             `json:"note"`
	Profile   string             `json:"profile"`
	Question  string             `json:"question"`
	AsOf      string             `json:"as_of"`
	Scope     string             `json:"scope"`
	Manifest  retrieval.Manifest `json:"manifest"`
	Refused   []decoy            `json:"refused_before_ranking"`
	Hits      []retrieval.Hit    `json:"hits"`
	Proposal  retrieval.Proposal `json:"proposal"`
	Answer    string             `json:"answer"`
	Operation string             `json:"operation_id"`
	Draft     json.RawMessage    `json:"draft_as_registered"`
}

func writeEvidence(path string, e evidenceFile) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("encode evidence: %w", err)
	}
	return writeFileAtomic(path, buf.Bytes())
}

// writeFileAtomic writes data to a temporary file next to path, syncs it
// and renames it over path (mode 0600).
func writeFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name()) // best effort; the error that matters is returned
		}
	}()
	if _, err := f.Write(data); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync %s: %w", path, err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}

// decideCommand is the command a person runs to decide.
// A PostgreSQL store is named without its password (PGPASSWORD or
// ~/.pgpass supply it).
func decideCommand(p paths, v approval.Verdict) string {
	store := ""
	if pgdsn.IsDSN(p.Store) {
		store = " -approvals " + shellQuote(pgdsn.Server(p.Store))
	}
	return "go run ./examples/documented resume -dir " + shellQuote(filepath.Dir(p.Receipt)) + store + " " + string(v)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%,=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resumeRun is the resume command: in a new process, pick the waiting
// operation up from its receipt, record the decision and apply an approval.
func resumeRun(ctx context.Context, cfg resumeConfig, out io.Writer, log *slog.Logger) (err error) {
	p := pathsFor(cfg.common)
	if _, err := os.Stat(p.Receipt); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: no receipt at %s (run first)", errNoRun, p.Receipt)
	}
	if p.storeMissing() {
		return fmt.Errorf("%w: no approval store at %s", errNoRun, p.Store)
	}
	rc, err := approval.ReadReceiptFile(p.Receipt)
	if err != nil {
		return err
	}
	s, err := openStores(ctx, p.Store, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	st, err := s.approval.Resume(ctx, rc, graphVersion)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Resumed operation %s at %s (graph %s), status %s\n", rc.OperationID, rc.CheckpointID, rc.GraphVersion, st.Status)
	if err := s.backlog.ensure(ctx); err != nil {
		return err
	}
	// The examples' one policy for a ticket already decided (package
	// decision): the same verdict again records nothing; the other verdict
	// is refused.
	dec, err := decision.Record(ctx, s.approval, approval.Decision{
		OperationID: rc.OperationID, Verdict: approval.Verdict(cfg.Verdict),
		Comment: cfg.Comment, DecidedBy: cfg.DecidedBy,
	})
	if errors.Is(err, approval.ErrAlreadyDecided) {
		// Nothing changed; show what stands, then fail.
		if cur, rerr := s.approval.Read(ctx, rc.OperationID); rerr == nil {
			fmt.Fprintln(out, "Stored state (unchanged):")
			if perr := printOperation(ctx, out, s, cur); perr != nil {
				return errors.Join(err, perr)
			}
		}
		return err
	}
	if err != nil {
		return err
	}
	if dec.Repeated {
		fmt.Fprintf(out, "Decision: %s\n", dec)
		if st, err = s.approval.Read(ctx, rc.OperationID); err != nil {
			return err
		}
	} else {
		st = dec.State
	}
	if st.Status == approval.StatusApproved || st.Status == approval.StatusCompleted {
		if st, err = s.approval.Apply(ctx, rc.OperationID, writeBacklogItem(time.Now, s.backlog.pg)); err != nil {
			return err
		}
	}
	return printOperation(ctx, out, s, st)
}

// show prints every stored operation, the receipt and the backlog rows.
func show(ctx context.Context, cfg common, out io.Writer, log *slog.Logger) (err error) {
	p := pathsFor(cfg)
	fmt.Fprintf(out, "Store=%s\n", p.storePlace())
	if p.storeMissing() {
		fmt.Fprintln(out, "Nothing stored yet in this directory.")
		fmt.Fprintln(out, "Operations=0")
		fmt.Fprintln(out, "ApprovedBacklogItems=0")
		return nil
	}
	s, err := openStores(ctx, p.Store, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if rc, rerr := approval.ReadReceiptFile(p.Receipt); rerr == nil {
		fmt.Fprintf(out, "Receipt=%s operation=%s\n", p.Receipt, rc.OperationID)
	} else if errors.Is(rerr, fs.ErrNotExist) {
		fmt.Fprintf(out, "Receipt=none\n")
	} else {
		fmt.Fprintf(out, "Receipt=%s unreadable: %v\n", p.Receipt, rerr)
	}
	var states []approval.State
	for cursor := ""; ; {
		page, err := s.approval.List(ctx, approval.Filter{Cursor: cursor, Limit: approval.MaxPageSize})
		if err != nil {
			return err
		}
		states = append(states, page.States...)
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	rows, err := s.backlog.rows(ctx)
	if err != nil {
		return err
	}
	if err := checkRows(states, rows); err != nil {
		return err
	}
	for _, st := range states {
		fmt.Fprintln(out)
		writeState(out, st, rows)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Operations=%d\n", len(states))
	fmt.Fprintf(out, "ApprovedBacklogItems=%d\n", len(rows))
	return nil
}

// printOperation prints one operation's stored state and the row count,
// after checking the rows against it.
func printOperation(ctx context.Context, out io.Writer, s *stores, st approval.State) error {
	rows, err := s.backlog.rows(ctx)
	if err != nil {
		return err
	}
	if err := checkRows([]approval.State{st}, rows); err != nil {
		return err
	}
	writeState(out, st, rows)
	fmt.Fprintf(out, "ApprovedBacklogItems=%d\n", len(rows))
	return nil
}

// checkRows confirms that each given operation has exactly one backlog row
// when it is Completed and none otherwise, and that the row holds the
// operation's approved item and persisted draft.
func checkRows(states []approval.State, rows []backlogRow) error {
	for _, st := range states {
		var mine []backlogRow
		for _, r := range rows {
			if r.OperationID == st.OperationID {
				mine = append(mine, r)
			}
		}
		switch {
		case st.Status == approval.StatusCompleted && len(mine) != 1:
			return fmt.Errorf("%w: completed operation %s has %d ApprovedBacklogItems rows, want 1", errInconsistent, st.OperationID, len(mine))
		case st.Status != approval.StatusCompleted && len(mine) != 0:
			return fmt.Errorf("%w: %s operation %s has %d ApprovedBacklogItems rows, want 0", errInconsistent, st.Status, st.OperationID, len(mine))
		case len(mine) == 1 && (mine[0].ApprovalItemID != st.ItemID || !bytes.Equal(mine[0].Draft, st.Draft)):
			return fmt.Errorf("%w: the ApprovedBacklogItems row of %s does not hold its approved item %d and draft", errInconsistent, st.OperationID, st.ItemID)
		}
	}
	return nil
}

func writeState(out io.Writer, st approval.State, rows []backlogRow) {
	fmt.Fprintf(out, "Operation=%s\n", st.OperationID)
	fmt.Fprintf(out, "Status=%s\n", st.Status)
	fmt.Fprintf(out, "Created=%s\n", st.CreatedAt.UTC().Format(time.RFC3339))
	if d := st.Decision; d != nil {
		fmt.Fprintf(out, "Decision=%s by %s at %s", d.Verdict, d.DecidedBy, st.DecidedAt.UTC().Format(time.RFC3339))
		if d.Comment != "" {
			fmt.Fprintf(out, " comment=%q", d.Comment)
		}
		fmt.Fprintln(out)
	}
	if st.ItemID == 0 {
		fmt.Fprintln(out, "ItemID=none")
	} else {
		fmt.Fprintf(out, "ItemID=%d\n", st.ItemID)
	}
	for _, r := range rows {
		if r.OperationID == st.OperationID {
			fmt.Fprintf(out, "BacklogRow=%d\n", r.ID)
		}
	}
	fmt.Fprintf(out, "Draft=%s\n", st.Draft)
}
