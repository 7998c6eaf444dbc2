package a2a_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/internal/pgtest"
)

// storeKit makes fresh stores of one implementation for the contract suite.
type storeKit struct {
	// open returns an empty store bounded by maxTasks and ttl, and a
	// function that moves the store's clock on.
	open func(t *testing.T, maxTasks int, ttl time.Duration) (a2a.TaskStore, func(time.Duration))
	// run runs one case: in a synctest bubble for the memory store, whose
	// clock is the bubble's.
	run func(t *testing.T, f func(t *testing.T))
}

func memoryKit() storeKit {
	return storeKit{
		open: func(t *testing.T, maxTasks int, ttl time.Duration) (a2a.TaskStore, func(time.Duration)) {
			s, err := a2a.NewMemoryStore(maxTasks, ttl)
			require.NoError(t, err)
			return s, time.Sleep // in the bubble, Sleep moves the fake clock at once
		},
		run: func(t *testing.T, f func(t *testing.T)) { synctest.Test(t, f) },
	}
}

// fakeClock is a settable clock for the PostgreSQL store.
type fakeClock struct{ nanos atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.nanos.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) now() time.Time          { return time.Unix(0, c.nanos.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.nanos.Add(int64(d)) }
func openPool(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// postgresKit opens every store in its own schema of one database.
func postgresKit(t *testing.T) storeKit {
	cluster := pgtest.Start(t)
	db := openPool(t, cluster.NewDatabase(t))
	var n atomic.Int64
	return storeKit{
		open: func(t *testing.T, maxTasks int, ttl time.Duration) (a2a.TaskStore, func(time.Duration)) {
			clock := newFakeClock()
			s, err := pgstore.OpenDB(context.Background(), db,
				pgstore.WithSchema(fmt.Sprintf("contract_%d", n.Add(1))),
				pgstore.WithMaxTasks(maxTasks), pgstore.WithTaskTTL(ttl), pgstore.WithClock(clock.now))
			require.NoError(t, err)
			return s, clock.advance
		},
		run: func(t *testing.T, f func(t *testing.T)) { f(t) },
	}
}

// TestTaskStoreContract runs the TaskStore contract against the memory
// store and the PostgreSQL store.
func TestTaskStoreContract(t *testing.T) {
	kits := map[string]func(*testing.T) storeKit{
		"memory":   func(*testing.T) storeKit { return memoryKit() },
		"postgres": postgresKit,
	}
	for name, kit := range kits {
		t.Run(name, func(t *testing.T) {
			k := kit(t)
			for _, c := range contractCases {
				t.Run(c.name, func(t *testing.T) { k.run(t, func(t *testing.T) { c.f(t, k) }) })
			}
		})
	}
}

var contractCases = []struct {
	name string
	f    func(t *testing.T, k storeKit)
}{
	{"VersionsOwnersCopies", contractVersionsOwnersCopies},
	{"StaleVersionRace", contractStaleVersionRace},
	{"RoundTrip", contractRoundTrip},
	{"TTL", contractTTL},
	{"LRU", contractLRU},
	{"List", contractList},
	{"ListCursorStable", contractListCursorStable},
}

func contractVersionsOwnersCopies(t *testing.T, k storeKit) {
	s, _ := k.open(t, a2a.DefaultMaxTasks, a2a.DefaultTaskTTL)
	alice, bob := asCaller("alice"), asCaller("bob")
	tk := task("t", a2apb.TaskStateSubmitted)
	v1, err := s.Create(alice, tk)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, int64(v1), int64(1))
	_, err = s.Create(alice, tk)
	assert.ErrorIs(t, err, taskstore.ErrTaskAlreadyExists)
	_, err = s.Create(bob, tk)
	assert.ErrorIs(t, err, taskstore.ErrTaskAlreadyExists, "an id is held whoever asks")

	tk.Status.State = a2apb.TaskStateWorking // the caller's copy, not the store's
	got, err := s.Get(alice, "t")
	require.NoError(t, err)
	assert.Equal(t, a2apb.TaskStateSubmitted, got.Task.Status.State)
	assert.Equal(t, v1, got.Version)

	v2, err := s.Update(alice, &taskstore.UpdateRequest{Task: tk, PrevVersion: v1})
	require.NoError(t, err)
	assert.Greater(t, int64(v2), int64(v1))
	_, err = s.Update(alice, &taskstore.UpdateRequest{Task: task("t", a2apb.TaskStateFailed), PrevVersion: v1})
	assert.ErrorIs(t, err, taskstore.ErrConcurrentModification, "a stale version is refused")
	got, err = s.Get(alice, "t")
	require.NoError(t, err)
	assert.Equal(t, a2apb.TaskStateWorking, got.Task.Status.State, "the refused update changed nothing")
	assert.Equal(t, v2, got.Version)

	_, err = s.Update(alice, &taskstore.UpdateRequest{Task: task("none", a2apb.TaskStateWorking)})
	assert.ErrorIs(t, err, a2apb.ErrTaskNotFound)
	_, err = s.Get(bob, "t")
	assert.ErrorIs(t, err, a2apb.ErrTaskNotFound, "another owner")
	_, err = s.Get(context.Background(), "t")
	assert.ErrorIs(t, err, a2apb.ErrTaskNotFound, "no caller")
	page, err := s.List(bob, &a2apb.ListTasksRequest{})
	require.NoError(t, err)
	assert.Empty(t, page.Tasks)
	assert.Zero(t, page.TotalSize)
	_, err = s.Create(alice, &a2apb.Task{})
	assert.ErrorIs(t, err, a2apb.ErrInvalidParams)
}

// Writers that read the same version race: exactly one wins, the others
// are refused, and the stored task is the winner's.
func contractStaleVersionRace(t *testing.T, k storeKit) {
	s, _ := k.open(t, a2a.DefaultMaxTasks, a2a.DefaultTaskTTL)
	alice := asCaller("alice")
	v1, err := s.Create(alice, task("t", a2apb.TaskStateWorking))
	require.NoError(t, err)
	const writers = 8
	var wg sync.WaitGroup
	results := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			tk := task("t", a2apb.TaskStateCompleted)
			tk.Metadata = map[string]any{"writer": float64(i)}
			_, results[i] = s.Update(alice, &taskstore.UpdateRequest{Task: tk, PrevVersion: v1})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range results {
		if err == nil {
			assert.Equal(t, -1, winner, "two writers won")
			winner = i
			continue
		}
		assert.ErrorIs(t, err, taskstore.ErrConcurrentModification)
	}
	require.NotEqual(t, -1, winner, "no writer won")
	got, err := s.Get(alice, "t")
	require.NoError(t, err)
	assert.Equal(t, float64(winner), got.Task.Metadata["writer"])
	assert.Equal(t, v1+1, got.Version)
}

// History and artifacts come back as they were written.
func contractRoundTrip(t *testing.T, k storeKit) {
	s, _ := k.open(t, a2a.DefaultMaxTasks, a2a.DefaultTaskTTL)
	alice := asCaller("alice")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tk := task("t", a2apb.TaskStateCompleted)
	tk.Status.Timestamp = &now
	tk.History = []*a2apb.Message{
		a2apb.NewMessage(a2apb.MessageRoleUser, a2apb.NewTextPart("How many?")),
		a2apb.NewMessage(a2apb.MessageRoleAgent, a2apb.NewTextPart("7305")),
	}
	tk.Artifacts = []*a2apb.Artifact{{ID: "a1", Name: "answer", Parts: a2apb.ContentParts{a2apb.NewTextPart("7305")}}}
	_, err := s.Create(alice, tk)
	require.NoError(t, err)
	got, err := s.Get(alice, "t")
	require.NoError(t, err)
	assert.JSONEq(t, string(mustJSON(t, tk)), string(mustJSON(t, got.Task)))

	one := 1
	page, err := s.List(alice, &a2apb.ListTasksRequest{HistoryLength: &one})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	assert.Len(t, page.Tasks[0].History, 1, "history cut to HistoryLength")
	assert.Equal(t, "7305", textOfPart(page.Tasks[0].History[0]))
	assert.Empty(t, page.Tasks[0].Artifacts, "artifacts only on request")
	page, err = s.List(alice, &a2apb.ListTasksRequest{IncludeArtifacts: true})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	assert.Len(t, page.Tasks[0].Artifacts, 1)
	assert.Len(t, page.Tasks[0].History, 2)
}

func textOfPart(m *a2apb.Message) string {
	if m == nil || len(m.Parts) == 0 {
		return ""
	}
	t, _ := m.Parts[0].Content.(a2apb.Text)
	return string(t)
}

func contractTTL(t *testing.T, k storeKit) {
	s, advance := k.open(t, 10, time.Minute)
	alice := asCaller("alice")
	_, err := s.Create(alice, task("a", a2apb.TaskStateCompleted))
	require.NoError(t, err)
	advance(59 * time.Second)
	_, err = s.Get(alice, "a")
	require.NoError(t, err, "before the TTL")
	advance(59 * time.Second) // the Get above renewed it
	_, err = s.Get(alice, "a")
	require.NoError(t, err, "within the TTL of the last use")
	advance(time.Minute)
	_, err = s.Get(alice, "a")
	assert.ErrorIs(t, err, a2apb.ErrTaskNotFound, "after the TTL")
	_, err = s.Update(alice, &taskstore.UpdateRequest{Task: task("a", a2apb.TaskStateFailed)})
	assert.ErrorIs(t, err, a2apb.ErrTaskNotFound, "an expired task takes no update")
	page, err := s.List(alice, &a2apb.ListTasksRequest{})
	require.NoError(t, err)
	assert.Empty(t, page.Tasks)
	_, err = s.Create(alice, task("a", a2apb.TaskStateWorking))
	assert.NoError(t, err, "an expired id can be created again")
}

func contractLRU(t *testing.T, k storeKit) {
	s, advance := k.open(t, 2, time.Hour)
	ctx := asCaller("alice")
	mustCreate := func(tk *a2apb.Task) {
		t.Helper()
		advance(time.Second)
		_, err := s.Create(ctx, tk)
		require.NoError(t, err)
	}
	mustCreate(task("running", a2apb.TaskStateWorking))
	mustCreate(task("old", a2apb.TaskStateCompleted))
	mustCreate(task("new", a2apb.TaskStateFailed))
	// Over the bound: the least recently used finished task goes, the running one stays.
	_, err := s.Get(ctx, "old")
	assert.ErrorIs(t, err, a2apb.ErrTaskNotFound, "old: want evicted")
	for _, id := range []a2apb.TaskID{"new", "running"} {
		advance(time.Second)
		_, err := s.Get(ctx, id)
		assert.NoError(t, err, id)
	}
	// Reading "running" made it recent, but it is not finished: "new" goes next.
	mustCreate(task("newer", a2apb.TaskStateCompleted))
	_, err = s.Get(ctx, "new")
	assert.ErrorIs(t, err, a2apb.ErrTaskNotFound, "new: want evicted")
	for _, id := range []a2apb.TaskID{"running", "newer"} {
		_, err := s.Get(ctx, id)
		assert.NoError(t, err, id)
	}
	page, err := s.List(ctx, &a2apb.ListTasksRequest{})
	require.NoError(t, err)
	assert.Equal(t, 2, page.TotalSize, "the bound holds")
}

func contractList(t *testing.T, k storeKit) {
	s, advance := k.open(t, 100, time.Hour)
	alice := asCaller("alice")
	for i := range 5 {
		advance(time.Second)
		state := a2apb.TaskStateCompleted
		if i%2 == 1 {
			state = a2apb.TaskStateFailed
		}
		tk := task(string(rune('a'+i)), state)
		stamp := time.Date(2026, 2, 1, 0, 0, i, 0, time.UTC)
		tk.Status.Timestamp = &stamp
		if i == 4 {
			tk.ContextID = "other"
		}
		_, err := s.Create(alice, tk)
		require.NoError(t, err)
	}
	_, err := s.Create(asCaller("bob"), task("z", a2apb.TaskStateCompleted))
	require.NoError(t, err)

	ids := listAll(t, s, alice, &a2apb.ListTasksRequest{PageSize: 2}, 5)
	assert.Equal(t, "edcba", ids, "newest first")

	failed, err := s.List(alice, &a2apb.ListTasksRequest{Status: a2apb.TaskStateFailed})
	require.NoError(t, err)
	assert.Len(t, failed.Tasks, 2)
	assert.Equal(t, 2, failed.TotalSize)
	other, err := s.List(alice, &a2apb.ListTasksRequest{ContextID: "other"})
	require.NoError(t, err)
	require.Len(t, other.Tasks, 1)
	assert.Equal(t, a2apb.TaskID("e"), other.Tasks[0].ID)
	after := time.Date(2026, 2, 1, 0, 0, 3, 0, time.UTC)
	recent, err := s.List(alice, &a2apb.ListTasksRequest{StatusTimestampAfter: &after})
	require.NoError(t, err)
	assert.Len(t, recent.Tasks, 2, "status timestamps at or after the bound")

	for _, bad := range []*a2apb.ListTasksRequest{{PageSize: 101}, {PageSize: -1}, {PageToken: "%%%"}} {
		_, err := s.List(alice, bad)
		assert.ErrorIs(t, err, a2apb.ErrInvalidParams, "%+v", bad)
	}
}

// A task written while a listing is paged does not shift the pages that
// follow: nothing is listed twice, nothing listed before is skipped.
func contractListCursorStable(t *testing.T, k storeKit) {
	s, advance := k.open(t, 100, time.Hour)
	alice := asCaller("alice")
	for _, id := range []string{"a", "b", "c", "d"} {
		advance(time.Second)
		_, err := s.Create(alice, task(id, a2apb.TaskStateCompleted))
		require.NoError(t, err)
	}
	first, err := s.List(alice, &a2apb.ListTasksRequest{PageSize: 2})
	require.NoError(t, err)
	require.NotEmpty(t, first.NextPageToken)
	advance(time.Second)
	_, err = s.Create(alice, task("e", a2apb.TaskStateCompleted))
	require.NoError(t, err)
	rest := listAll(t, s, alice, &a2apb.ListTasksRequest{PageSize: 2, PageToken: first.NextPageToken}, 5)
	assert.Equal(t, "dc", string(joinIDs([]a2apb.TaskID{first.Tasks[0].ID, first.Tasks[1].ID})))
	assert.Equal(t, "ba", rest)
}

// listAll pages through the caller's tasks and returns their ids joined.
func listAll(t *testing.T, s a2a.TaskStore, ctx context.Context, req *a2apb.ListTasksRequest, total int) string {
	t.Helper()
	var ids []a2apb.TaskID
	for page := 0; ; page++ {
		resp, err := s.List(ctx, req)
		require.NoError(t, err)
		assert.Equal(t, total, resp.TotalSize)
		for _, tk := range resp.Tasks {
			ids = append(ids, tk.ID)
		}
		if resp.NextPageToken == "" {
			break
		}
		require.Less(t, page, 10, "paging does not end")
		req.PageToken = resp.NextPageToken
	}
	return string(joinIDs(ids))
}
