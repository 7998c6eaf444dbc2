package a2a

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// TaskStore is where a Server keeps its tasks: a2a-go's taskstore.Store
// (Create, Update, Get, List) with candor's contract on top. NewServer and
// NewAdapter take one with WithTaskStore; without it they use a
// MemoryStore of DefaultMaxTasks and DefaultTaskTTL. Package a2a/pgstore
// implements it on PostgreSQL, for several replicas sharing one set of
// tasks.
//
// An implementation must keep, under concurrent use from several
// goroutines (and, for a shared store, several processes):
//
//   - Owners: Create records Owner(ctx) as the task's owner; Get and List
//     show a task only when Owner(ctx) equals it, and answer
//     a2a.ErrTaskNotFound (an empty page for List) otherwise, as for a
//     task that does not exist. An empty Owner matches no task.
//   - Versions: Create returns version 1 or more; every Update returns a
//     version greater than the one it replaced. An Update whose
//     PrevVersion is not taskstore.TaskVersionMissing and differs from the
//     stored version changes nothing and fails with
//     taskstore.ErrConcurrentModification: a write based on a stale read
//     never overwrites a newer state.
//   - Atomicity: a call that returns an error may or may not have been
//     applied only when the error says the outcome is unknown (a lost
//     connection); a call that returns a version has been applied durably
//     for every reader the store serves.
//   - Bounds: a task unused (neither written nor read) for the store's TTL
//     is forgotten, and finished tasks beyond the store's size bound are
//     forgotten least recently used first; a forgotten task is
//     a2a.ErrTaskNotFound. Running tasks are never evicted for room. A
//     shared store may delete in periodic sweeps, within a documented slack,
//     but never returns an expired task.
//   - Copies: tasks are copied in and out; a caller never alters stored
//     state through a pointer.
//   - Listing: List returns the caller's tasks most recently updated
//     first, pages of PageSize (default 50, 1 to 100, else
//     a2a.ErrInvalidParams), NextPageToken opaque and stable, filtered by
//     ContextID, Status and StatusTimestampAfter, history cut to
//     HistoryLength and artifacts left out unless IncludeArtifacts.
type TaskStore interface {
	taskstore.Store
}

// Owner is the owner of the tasks of the call in ctx, as the Server sets it
// before any store method runs: the verified caller (its issuer and
// subject), with WithUnverifiedTokens the SHA-256 fingerprint of the bearer
// token, or the shared "no identity" owner of tokenless tasks
// (WithNoIdentityTasks). It is "" when ctx carries no caller: a TaskStore
// shows no task to "".
func Owner(ctx context.Context) string { return ownerFrom(ctx) }
