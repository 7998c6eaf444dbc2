package a2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/internal/pgtest"
)

// watchedStore forwards to a real store and reports the outcome of every
// Update, so a test knows when a replica has committed (or failed to
// commit) a task's final state without polling.
type watchedStore struct {
	a2a.TaskStore
	updates chan updateResult
}

type updateResult struct {
	owner string // a2a.Owner of the call
	state a2apb.TaskState
	err   error
}

func (w watchedStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	v, err := w.TaskStore.Update(ctx, req)
	w.updates <- updateResult{a2a.Owner(ctx), req.Task.Status.State, err}
	return v, err
}

// gate is a backend that answers each question once the test releases it.
type gate struct {
	asked   chan string
	release chan a2a.Outcome
}

func newGate() *gate { return &gate{asked: make(chan string, 16), release: make(chan a2a.Outcome, 16)} }

func (g *gate) Ask(ctx context.Context, q a2a.Question) a2a.Outcome {
	g.asked <- q.Text
	select {
	case out := <-g.release:
		return out
	case <-ctx.Done():
		return a2a.Fail("gave up", ctx.Err())
	}
}

// roundRobin forwards POSTs to its replicas in turn (GETs, the card, to the
// first) and records which replica served each POST.
type roundRobin struct {
	*httptest.Server
	mu      sync.Mutex
	proxies []*httputil.ReverseProxy
	next    int
	served  []int
}

func newRoundRobin(t *testing.T) *roundRobin {
	rr := &roundRobin{}
	rr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rr.mu.Lock()
		i := 0
		if r.Method == http.MethodPost {
			i = rr.next
			rr.next = (rr.next + 1) % len(rr.proxies)
			rr.served = append(rr.served, i)
		}
		p := rr.proxies[i]
		rr.mu.Unlock()
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(rr.Close)
	return rr
}

func (rr *roundRobin) add(t *testing.T, backend string) {
	u, err := url.Parse(backend)
	require.NoError(t, err)
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.proxies = append(rr.proxies, httputil.NewSingleHostReverseProxy(u))
}

// last is the replica that served the latest POST.
func (rr *roundRobin) last() int {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.served[len(rr.served)-1]
}

// replica is one Server with its own connection pool on the shared database.
type replica struct {
	srv   *a2a.Server
	url   string
	store watchedStore
	gate  *gate
}

func startReplica(t *testing.T, agentURL, dsn string) *replica {
	db := openPool(t, dsn)
	s, err := pgstore.OpenDB(context.Background(), db, pgstore.WithSchema("replicated"))
	require.NoError(t, err)
	r := &replica{store: watchedStore{s, make(chan updateResult, 64)}, gate: newGate()}
	r.srv, err = a2a.NewServer(testAgent(agentURL), r.gate, a2a.WithVerifier(testVerifier), a2a.WithTaskStore(r.store))
	require.NoError(t, err)
	ts := httptest.NewServer(r.srv)
	t.Cleanup(ts.Close)
	r.url = ts.URL
	return r
}

// Two replicas, each with its own pool, behind a round-robin proxy on one
// PostgreSQL: a task created through one is read, listed and seen final
// through the other, and another caller sees it through neither.
func TestReplicasShareTasks(t *testing.T) {
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	rr := newRoundRobin(t)
	agentURL := rr.URL + "/a2a"
	var a, b *replica
	var wg sync.WaitGroup // both open the store at once: the migration runs once
	wg.Go(func() { a = startReplica(t, agentURL, dsn) })
	wg.Go(func() { b = startReplica(t, agentURL, dsn) })
	wg.Wait()
	require.NotNil(t, a)
	require.NotNil(t, b)
	rr.add(t, a.url)
	rr.add(t, b.url)
	replicas := []*replica{a, b}

	ctx := context.Background()
	alice := newClient(t, rr.URL, testToken)
	bob := newClient(t, rr.URL, "tok-bob-7d1e")

	// A blocking SendMessage answered by one replica, read through the other.
	a.gate.release <- a2a.Answer("7305 in stock")
	res, err := alice.SendMessage(ctx, userMessage("How many?"))
	require.NoError(t, err)
	require.Equal(t, 0, rr.last())
	done := res.(*a2apb.Task)
	require.Equal(t, a2apb.TaskStateCompleted, done.Status.State)
	got, err := alice.GetTask(ctx, &a2apb.GetTaskRequest{ID: done.ID})
	require.NoError(t, err)
	assert.Equal(t, 1, rr.last())
	assert.Equal(t, a2apb.TaskStateCompleted, got.Status.State)
	assert.Equal(t, "7305 in stock", got.Artifacts[0].Parts[0].Text())

	// returnImmediately: created on A (working), read and listed on B and
	// A while it runs, finished by A, seen final on B.
	req := userMessage("And in Lyon?")
	req.Config = &a2apb.SendMessageConfig{ReturnImmediately: true}
	res, err = alice.SendMessage(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 0, rr.last())
	running := res.(*a2apb.Task)
	require.Equal(t, a2apb.TaskStateWorking, running.Status.State)
	assert.Equal(t, "How many?", <-a.gate.asked)
	assert.Equal(t, "And in Lyon?", <-a.gate.asked)
	got, err = alice.GetTask(ctx, &a2apb.GetTaskRequest{ID: running.ID})
	require.NoError(t, err)
	assert.Equal(t, 1, rr.last())
	assert.Equal(t, a2apb.TaskStateWorking, got.Status.State, "B reads the task A holds")
	list, err := alice.ListTasks(ctx, &a2apb.ListTasksRequest{PageSize: 1})
	require.NoError(t, err)
	assert.Equal(t, 0, rr.last())
	assert.Equal(t, 2, list.TotalSize)
	require.Len(t, list.Tasks, 1)
	assert.Equal(t, running.ID, list.Tasks[0].ID, "most recently written first")
	page2, err := alice.ListTasks(ctx, &a2apb.ListTasksRequest{PageSize: 1, PageToken: list.NextPageToken})
	require.NoError(t, err)
	assert.Equal(t, 1, rr.last(), "the next page from the other replica")
	require.Len(t, page2.Tasks, 1)
	assert.Equal(t, done.ID, page2.Tasks[0].ID)
	assert.Empty(t, page2.NextPageToken)

	drainUpdates(a.store.updates)
	a.gate.release <- a2a.Answer("12 in Lyon")
	var aliceOwner string
	for up := range a.store.updates { // until A has committed the final state
		require.NoError(t, up.err)
		if up.state.Terminal() {
			aliceOwner = up.owner
			break
		}
	}
	require.NotEmpty(t, aliceOwner)
	for i := range 2 { // through the proxy (A, B), then straight to B
		got, err = alice.GetTask(ctx, &a2apb.GetTaskRequest{ID: running.ID})
		require.NoError(t, err)
		assert.Equal(t, i, rr.last())
		assert.Equal(t, a2apb.TaskStateCompleted, got.Status.State, "replica %d", i)
		assert.Equal(t, "12 in Lyon", got.Artifacts[len(got.Artifacts)-1].Parts[0].Text())
	}
	direct := newClient(t, b.url, testToken)
	got, err = direct.GetTask(ctx, &a2apb.GetTaskRequest{ID: running.ID})
	require.NoError(t, err)
	assert.Equal(t, a2apb.TaskStateCompleted, got.Status.State, "B on its own")

	// A message to the finished task is refused by either replica.
	for range replicas {
		msg := userMessage("more?")
		msg.Message.TaskID = running.ID
		_, err = alice.SendMessage(ctx, msg)
		assert.ErrorIs(t, err, a2apb.ErrUnsupportedOperation, "replica %d", rr.last())
	}

	// Versions across replicas: both read version v; B writes first, so
	// A's write based on v is refused and B's state stays.
	owner := asCaller(aliceOwner)
	st, err := a.store.Get(owner, running.ID)
	require.NoError(t, err)
	fromB := st.Task
	fromB.Metadata = map[string]any{"writer": "B"}
	_, err = b.store.TaskStore.Update(owner, &taskstore.UpdateRequest{Task: fromB, PrevVersion: st.Version})
	require.NoError(t, err)
	fromA := st.Task
	fromA.Metadata = map[string]any{"writer": "A"}
	_, err = a.store.TaskStore.Update(owner, &taskstore.UpdateRequest{Task: fromA, PrevVersion: st.Version})
	assert.ErrorIs(t, err, taskstore.ErrConcurrentModification, "a stale write from the other replica")
	st, err = a.store.Get(owner, running.ID)
	require.NoError(t, err)
	assert.Equal(t, "B", st.Task.Metadata["writer"])

	// Bob sees none of alice's tasks, through either replica.
	for range replicas {
		for _, id := range []a2apb.TaskID{done.ID, running.ID} {
			_, err := bob.GetTask(ctx, &a2apb.GetTaskRequest{ID: id})
			assert.ErrorIs(t, err, a2apb.ErrTaskNotFound, "replica %d", rr.last())
		}
		list, err := bob.ListTasks(ctx, &a2apb.ListTasksRequest{})
		require.NoError(t, err)
		assert.Empty(t, list.Tasks, "replica %d", rr.last())
		assert.Zero(t, list.TotalSize)
	}
}

// PostgreSQL stopped mid-run: calls fail with errors (the store's are
// ErrUnavailable), a task whose final state could not be committed is
// never reported completed, and after the restart the same store goes on.
func TestPostgresStoppedMidRun(t *testing.T) {
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	f := &facade{}
	var r *replica
	f = startFacade(t, func(endpoint string) (*a2a.Server, error) {
		r = startReplica(t, endpoint, dsn)
		return r.srv, nil
	})
	ctx := context.Background()
	c := newClient(t, f.URL, testToken)

	// A task left running when the database stops.
	req := userMessage("slow question")
	req.Config = &a2apb.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, req)
	require.NoError(t, err)
	running := res.(*a2apb.Task)
	<-r.gate.asked

	cluster.Stop(t, pgtest.StopOptions{})
	r.gate.release <- a2a.Answer("too late")
	for up := range r.store.updates {
		if up.state.Terminal() {
			assert.ErrorIs(t, up.err, pgstore.ErrUnavailable, "the final state was not committed")
			break
		}
	}
	_, err = c.GetTask(ctx, &a2apb.GetTaskRequest{ID: running.ID})
	assert.Error(t, err, "GetTask while the database is down")
	_, err = r.store.Get(asCaller("x"), running.ID)
	assert.ErrorIs(t, err, pgstore.ErrUnavailable)
	_, err = r.store.List(asCaller("x"), &a2apb.ListTasksRequest{})
	assert.ErrorIs(t, err, pgstore.ErrUnavailable)
	_, err = r.store.Create(asCaller("x"), task("y", a2apb.TaskStateWorking))
	assert.ErrorIs(t, err, pgstore.ErrUnavailable)

	r.gate.release <- a2a.Answer("never stored")
	res, err = c.SendMessage(ctx, userMessage("while down"))
	t.Logf("SendMessage while down: %v (backend asked: %d)", err, len(r.gate.asked))
	if err != nil { // the caller learns nothing of the database
		u, perr := url.Parse(dsn)
		require.NoError(t, perr)
		for _, private := range []string{u.Host, strconv.Itoa(cluster.Port), u.Path[1:], "user="} {
			assert.NotContains(t, err.Error(), private)
		}
	}
	assert.Error(t, err, "a SendMessage whose task cannot be stored fails")
	if task, ok := res.(*a2apb.Task); ok {
		assert.NotEqual(t, a2apb.TaskStateCompleted, task.Status.State, "reported completed without a commit")
	}

	_, raw := rawRPC(t, f.URL+"/a2a", map[string]string{"A2A-Version": "1.0", "Authorization": "Bearer " + testToken},
		`{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"`+string(running.ID)+`"}}`)
	require.NotNil(t, raw.Error, "GetTask while the database is down")
	assert.Equal(t, -32603, raw.Error.Code, raw.Error.Message)
	assert.Nil(t, raw.Result)

	cluster.Start(t)
	got, err := c.GetTask(ctx, &a2apb.GetTaskRequest{ID: running.ID})
	require.NoError(t, err, "the store goes on after the restart")
	assert.Equal(t, a2apb.TaskStateWorking, got.Status.State, "the uncommitted final state was not invented")
	list, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{})
	require.NoError(t, err)
	for _, tk := range list.Tasks {
		assert.NotEqual(t, a2apb.TaskStateCompleted, tk.Status.State, "task %s", tk.ID)
	}
	r.gate.release <- a2a.Answer("back")
	res, err = c.SendMessage(ctx, userMessage("after the restart"))
	require.NoError(t, err)
	assert.Equal(t, a2apb.TaskStateCompleted, res.(*a2apb.Task).Status.State)
	drainUpdates(r.store.updates)
}

func drainUpdates(ch chan updateResult) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
