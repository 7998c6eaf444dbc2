package a2a_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/candorkit/candor/a2a"
)

func newStore(t *testing.T, maxTasks int, ttl time.Duration) *a2a.MemoryStore {
	t.Helper()
	s, err := a2a.NewMemoryStore(maxTasks, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func asCaller(name string) context.Context {
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(name, nil)
	return ctx
}

func task(id string, state a2apb.TaskState) *a2apb.Task {
	return &a2apb.Task{ID: a2apb.TaskID(id), ContextID: "ctx", Status: a2apb.TaskStatus{State: state}}
}

// The store's time is the bubble's fake clock: time.Sleep advances it at once.
func TestStoreTTL(t *testing.T) { synctest.Test(t, testStoreTTL) }

func testStoreTTL(t *testing.T) {
	s := newStore(t, 10, time.Minute)
	ctx := asCaller("alice")
	if _, err := s.Create(ctx, task("a", a2apb.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(59 * time.Second)
	if _, err := s.Get(ctx, "a"); err != nil {
		t.Fatalf("Get before the TTL: %v", err)
	}
	time.Sleep(59 * time.Second) // the Get above renewed it
	if _, err := s.Get(ctx, "a"); err != nil {
		t.Fatalf("Get within the TTL of the last use: %v", err)
	}
	time.Sleep(time.Minute)
	if _, err := s.Get(ctx, "a"); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("Get after the TTL: %v, want TaskNotFound", err)
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d after expiry", s.Len())
	}
}

func TestStoreLRU(t *testing.T) {
	s := newStore(t, 2, time.Hour)
	ctx := asCaller("alice")
	mustCreate := func(tk *a2apb.Task) {
		t.Helper()
		if _, err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(task("running", a2apb.TaskStateWorking))
	mustCreate(task("old", a2apb.TaskStateCompleted))
	mustCreate(task("new", a2apb.TaskStateFailed))
	// Over the bound: the least recently used finished task goes, the running one stays.
	if _, err := s.Get(ctx, "old"); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("old: %v, want evicted", err)
	}
	for _, id := range []a2apb.TaskID{"running", "new"} {
		if _, err := s.Get(ctx, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	// Reading "running" made it recent, but it is not finished: "new" goes next.
	mustCreate(task("newer", a2apb.TaskStateCompleted))
	if _, err := s.Get(ctx, "new"); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("new: %v, want evicted", err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
}

func TestStoreVersionsOwnersCopies(t *testing.T) {
	s := newStore(t, a2a.DefaultMaxTasks, a2a.DefaultTaskTTL)
	alice, bob := asCaller("alice"), asCaller("bob")
	tk := task("t", a2apb.TaskStateSubmitted)
	v1, err := s.Create(alice, tk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(alice, tk); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		t.Fatalf("second Create: %v", err)
	}
	tk.Status.State = a2apb.TaskStateWorking // the caller's copy, not the store's
	got, err := s.Get(alice, "t")
	if err != nil || got.Task.Status.State != a2apb.TaskStateSubmitted || got.Version != v1 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	v2, err := s.Update(alice, &taskstore.UpdateRequest{Task: tk, PrevVersion: v1})
	if err != nil || v2 <= v1 {
		t.Fatalf("Update = %d, %v", v2, err)
	}
	if _, err := s.Update(alice, &taskstore.UpdateRequest{Task: tk, PrevVersion: v1}); !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("stale Update: %v", err)
	}
	if _, err := s.Update(alice, &taskstore.UpdateRequest{Task: task("none", a2apb.TaskStateWorking)}); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("Update of an unknown task: %v", err)
	}
	if _, err := s.Get(bob, "t"); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("Get by another owner: %v", err)
	}
	if _, err := s.Get(context.Background(), "t"); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("Get without a caller: %v", err)
	}
}

func TestStoreList(t *testing.T) { synctest.Test(t, testStoreList) }

func testStoreList(t *testing.T) {
	s := newStore(t, 100, time.Hour)
	alice := asCaller("alice")
	for i := range 5 {
		time.Sleep(time.Second)
		state := a2apb.TaskStateCompleted
		if i%2 == 1 {
			state = a2apb.TaskStateFailed
		}
		if _, err := s.Create(alice, task(string(rune('a'+i)), state)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(asCaller("bob"), task("z", a2apb.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	var ids []a2apb.TaskID
	req := &a2apb.ListTasksRequest{PageSize: 2}
	for page := 0; ; page++ {
		resp, err := s.List(alice, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.TotalSize != 5 {
			t.Fatalf("TotalSize = %d", resp.TotalSize)
		}
		for _, tk := range resp.Tasks {
			ids = append(ids, tk.ID)
		}
		if resp.NextPageToken == "" {
			break
		}
		if page > 5 {
			t.Fatal("paging does not end")
		}
		req.PageToken = resp.NextPageToken
	}
	if got := string(joinIDs(ids)); got != "edcba" {
		t.Fatalf("listed %s, want newest first edcba", got)
	}
	failed, err := s.List(alice, &a2apb.ListTasksRequest{Status: a2apb.TaskStateFailed})
	if err != nil || len(failed.Tasks) != 2 {
		t.Fatalf("failed tasks = %+v, %v", failed, err)
	}
	for _, bad := range []*a2apb.ListTasksRequest{{PageSize: 101}, {PageSize: -1}, {PageToken: "%%%"}} {
		if _, err := s.List(alice, bad); !errors.Is(err, a2apb.ErrInvalidParams) {
			t.Fatalf("List(%+v): %v, want InvalidParams", bad, err)
		}
	}
}

func joinIDs(ids []a2apb.TaskID) []byte {
	var b []byte
	for _, id := range ids {
		b = append(b, id...)
	}
	return b
}
