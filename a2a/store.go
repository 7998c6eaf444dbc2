package a2a

import (
	"cmp"
	"container/list"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// MemoryStore is a bounded in-memory TaskStore (the Server's default), so that
// GetTask works after SendMessage without memory growing with traffic.
//
// Bounds: a task is forgotten TTL after it was last written or read (idle
// expiry, checked on every call), and when more than MaxTasks are held the
// least recently used finished task is evicted first. A task still running is
// never evicted for room, only by expiry; their number is bounded by the
// server's concurrency limit, so the store holds at most MaxTasks plus that
// limit. A forgotten task answers TaskNotFound.
//
// Each task belongs to the caller that created it (the verified issuer and
// subject, or with WithUnverifiedTokens a fingerprint of the bearer token,
// set by the Server): Get and List never show a task to another caller,
// which sees TaskNotFound. Tasks made for messages without a token
// (WithNoIdentityTasks) all belong to one "no identity" owner that no token's
// fingerprint equals, so no caller with a token sees them; they count
// against the same bounds. Tasks are copied in and out, so callers
// cannot alter stored state.
type MemoryStore struct {
	mu      sync.Mutex
	max     int
	ttl     time.Duration
	byID    map[a2apb.TaskID]*list.Element
	recency *list.List // front: most recently used
}

type storedEntry struct {
	id       a2apb.TaskID
	owner    string
	task     []byte // JSON of the task
	state    a2apb.TaskState
	context  string
	stamp    *time.Time // status timestamp
	version  taskstore.TaskVersion
	updated  time.Time // last write, for List ordering
	lastUsed time.Time // last read or write, for expiry
}

var _ TaskStore = (*MemoryStore)(nil)

// NewMemoryStore returns a store holding at most maxTasks finished tasks,
// each for ttl after its last use; both must be positive.
func NewMemoryStore(maxTasks int, ttl time.Duration) (*MemoryStore, error) {
	if maxTasks <= 0 {
		return nil, fmt.Errorf("a2a: NewMemoryStore: maxTasks must be positive, got %d", maxTasks)
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("a2a: NewMemoryStore: ttl must be positive, got %s", ttl)
	}
	return &MemoryStore{max: maxTasks, ttl: ttl, byID: map[a2apb.TaskID]*list.Element{}, recency: list.New()}, nil
}

// Len reports how many tasks the store holds now (expired ones included until
// the next call purges them).
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// ownerFrom is the caller identity the Server attaches to the call context:
// the verified caller or the token's fingerprint, or noIdentityOwner for a
// tokenless call the Server let through (WithNoIdentityTasks).
func ownerFrom(ctx context.Context) string {
	cc, ok := a2asrv.CallContextFrom(ctx)
	switch {
	case !ok || cc.User == nil:
		return ""
	case cc.User.Authenticated:
		return cc.User.Name
	case cc.User.Name == noIdentityOwner:
		return noIdentityOwner
	}
	return ""
}

func encodeTask(task *a2apb.Task) ([]byte, error) {
	if task == nil || task.ID == "" {
		return nil, fmt.Errorf("a task with an id is required: %w", a2apb.ErrInvalidParams)
	}
	b, err := json.Marshal(task)
	if err != nil {
		return nil, fmt.Errorf("a2a: encoding task %s: %w", task.ID, err)
	}
	return b, nil
}

func decodeTask(b []byte) (*a2apb.Task, error) {
	var t a2apb.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("a2a: decoding a stored task: %w", err)
	}
	return &t, nil
}

// Create implements taskstore.Store.
func (s *MemoryStore) Create(ctx context.Context, task *a2apb.Task) (taskstore.TaskVersion, error) {
	b, err := encodeTask(task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.purgeLocked(now)
	if _, ok := s.byID[task.ID]; ok {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	e := &storedEntry{id: task.ID, owner: ownerFrom(ctx), version: 1, updated: now, lastUsed: now}
	e.set(task, b)
	s.byID[task.ID] = s.recency.PushFront(e)
	s.evictLocked()
	return e.version, nil
}

func (e *storedEntry) set(task *a2apb.Task, b []byte) {
	e.task = b
	e.state = task.Status.State
	e.context = task.ContextID
	e.stamp = task.Status.Timestamp
}

// Update implements taskstore.Store with optimistic concurrency on PrevVersion.
func (s *MemoryStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if req == nil {
		return taskstore.TaskVersionMissing, a2apb.ErrInvalidParams
	}
	b, err := encodeTask(req.Task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.purgeLocked(now)
	el, ok := s.byID[req.Task.ID]
	if !ok {
		return taskstore.TaskVersionMissing, a2apb.ErrTaskNotFound
	}
	e := el.Value.(*storedEntry)
	if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != e.version {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	e.set(req.Task, b)
	e.version++
	e.updated, e.lastUsed = now, now
	s.recency.MoveToFront(el)
	s.evictLocked()
	return e.version, nil
}

// Get implements taskstore.Store. A task of another caller is TaskNotFound.
func (s *MemoryStore) Get(ctx context.Context, id a2apb.TaskID) (*taskstore.StoredTask, error) {
	s.mu.Lock()
	now := time.Now()
	s.purgeLocked(now)
	el, ok := s.byID[id]
	if !ok || el.Value.(*storedEntry).owner != ownerFrom(ctx) {
		s.mu.Unlock()
		return nil, a2apb.ErrTaskNotFound
	}
	e := el.Value.(*storedEntry)
	e.lastUsed = now
	s.recency.MoveToFront(el)
	b, version := e.task, e.version
	s.mu.Unlock()

	t, err := decodeTask(b)
	if err != nil {
		return nil, err
	}
	return &taskstore.StoredTask{Task: t, Version: version}, nil
}

// List implements taskstore.Store: the caller's tasks, most recently updated
// first, filtered as the request asks. Page size defaults to 50 (1 to 100).
func (s *MemoryStore) List(ctx context.Context, req *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	size := req.PageSize
	switch {
	case size == 0:
		size = 50
	case size < 1 || size > 100:
		return nil, fmt.Errorf("page size must be between 1 and 100, got %d: %w", size, a2apb.ErrInvalidParams)
	}
	var after *cursor
	if req.PageToken != "" {
		c, err := parseCursor(req.PageToken)
		if err != nil {
			return nil, err
		}
		after = &c
	}
	owner := ownerFrom(ctx)

	type hit struct {
		c cursor
		b []byte
	}
	s.mu.Lock()
	s.purgeLocked(time.Now())
	var hits []hit
	for _, el := range s.byID {
		e := el.Value.(*storedEntry)
		if e.owner != owner ||
			(req.ContextID != "" && e.context != req.ContextID) ||
			(req.Status != a2apb.TaskStateUnspecified && e.state != req.Status) ||
			(req.StatusTimestampAfter != nil && (e.stamp == nil || e.stamp.Before(*req.StatusTimestampAfter))) {
			continue
		}
		hits = append(hits, hit{cursor{e.updated.UnixNano(), e.id}, e.task})
	}
	s.mu.Unlock()

	slices.SortFunc(hits, func(a, b hit) int { return b.c.compare(a.c) }) // newest first
	total := len(hits)
	if after != nil {
		i, _ := slices.BinarySearchFunc(hits, *after, func(h hit, c cursor) int { return c.compare(h.c) })
		for i < len(hits) && hits[i].c == *after {
			i++
		}
		hits = hits[i:]
	}
	next := ""
	if len(hits) > size {
		hits = hits[:size]
		next = hits[size-1].c.String()
	}
	resp := &a2apb.ListTasksResponse{Tasks: []*a2apb.Task{}, TotalSize: total, PageSize: size, NextPageToken: next}
	for _, h := range hits {
		t, err := decodeTask(h.b)
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
	}
	return resp, nil
}

type cursor struct {
	nanos int64
	id    a2apb.TaskID
}

func (c cursor) compare(o cursor) int {
	return cmp.Or(cmp.Compare(c.nanos, o.nanos), strings.Compare(string(c.id), string(o.id)))
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.nanos, 10) + ":" + string(c.id)))
}

func parseCursor(tok string) (cursor, error) {
	bad := fmt.Errorf("malformed page token: %w", a2apb.ErrInvalidParams)
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return cursor{}, bad
	}
	n, id, ok := strings.Cut(string(b), ":")
	if !ok {
		return cursor{}, bad
	}
	nanos, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return cursor{}, bad
	}
	return cursor{nanos, a2apb.TaskID(id)}, nil
}

// purgeLocked drops tasks unused for the TTL. The recency list is ordered by
// last use, so they are all at its back.
func (s *MemoryStore) purgeLocked(now time.Time) {
	for el := s.recency.Back(); el != nil; {
		e := el.Value.(*storedEntry)
		if now.Sub(e.lastUsed) < s.ttl {
			return
		}
		prev := el.Prev()
		s.recency.Remove(el)
		delete(s.byID, e.id)
		el = prev
	}
}

// evictLocked drops least recently used finished tasks while over the bound.
func (s *MemoryStore) evictLocked() {
	for el := s.recency.Back(); el != nil && len(s.byID) > s.max; {
		prev := el.Prev()
		if e := el.Value.(*storedEntry); e.state.Terminal() {
			s.recency.Remove(el)
			delete(s.byID, e.id)
		}
		el = prev
	}
}
