package a2a

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/limiter"

	"github.com/candorkit/candor/reply"
)

// Defaults of the Server.
const (
	DefaultMaxRequestBytes = 1 << 20
	DefaultMaxConcurrent   = 64
	DefaultAnswerTimeout   = 2 * time.Minute
)

// JSON-RPC error codes the Server writes itself (the others come from a2a-go).
const (
	CodeUnsupportedOperation = -32004
	CodeVersionNotSupported  = -32009
	codeInvalidRequest       = -32600
)

// Server serves A2A for one Backend: JSON-RPC 1.0 and 0.3 on one endpoint,
// the Agent Card, and a bounded task store. It is an http.Handler.
//
// Routing: POST on the path of Agent.URL is JSON-RPC; the A2A-Version header
// (or, without one, the A2A-Version query parameter) selects the wire format:
// "1.0" is spec 1.0 (SendMessage, GetTask, ListTasks, CancelTask...), a
// missing or empty value or "0.3" is spec 0.3 (message/send, tasks/get,
// tasks/cancel...), anything else is answered with -32009
// VersionNotSupported. GET on /.well-known/agent-card.json (at the root and
// under the endpoint's path) is the card.
//
// Every JSON-RPC call needs "Authorization: Bearer <token>" (else -31401
// Unauthenticated); the token is handed to the Backend in Question.Token and
// its SHA-256 fingerprint owns the task. WithNoIdentityTasks makes a
// message without a token a failed task instead of a refusal (the Backend is
// still not asked). Streaming methods answer -32004
// UnsupportedOperation and push-notification methods -32003, as the card
// declares neither capability.
type Server struct {
	endpoint   string
	card       http.Handler
	cardAlt    string
	rpc10      http.Handler
	rpc03      http.Handler
	store      *Store
	log        *slog.Logger
	maxRequest int64
	asking     *inflight
}

type serverConfig struct {
	log           *slog.Logger
	store         *Store
	maxRequest    int64
	maxConcurrent int
	answerTimeout time.Duration
	noIdentity    bool
}

// Option configures a Server.
type Option func(*serverConfig)

// WithLogger sets the logger (slog.Default() otherwise). Tokens are never logged.
func WithLogger(l *slog.Logger) Option { return func(c *serverConfig) { c.log = l } }

// WithStore sets the task store (NewStore(DefaultMaxTasks, DefaultTaskTTL) otherwise).
func WithStore(s *Store) Option { return func(c *serverConfig) { c.store = s } }

// WithMaxRequestBytes bounds a JSON-RPC request body (DefaultMaxRequestBytes otherwise).
func WithMaxRequestBytes(n int64) Option { return func(c *serverConfig) { c.maxRequest = n } }

// WithMaxConcurrent bounds the number of questions being answered at once
// (DefaultMaxConcurrent otherwise); a request over the bound is refused.
func WithMaxConcurrent(n int) Option { return func(c *serverConfig) { c.maxConcurrent = n } }

// WithAnswerTimeout bounds each Backend.Ask (DefaultAnswerTimeout otherwise).
func WithAnswerTimeout(d time.Duration) Option { return func(c *serverConfig) { c.answerTimeout = d } }

// WithNoIdentityTasks answers a message sent without a bearer token with a
// task instead of the -31401 refusal, for agents whose callers expect every
// question to end in a task: SendMessage (0.3 message/send) without a token
// creates a task that fails with the status message "no identity: the request
// carried no bearer token" and status metadata failure "no_identity"; the
// Backend is never called. The message is otherwise checked as usual (text
// parts, no push configuration), so a malformed one is still refused.
//
// Such tasks belong to one shared owner, "no identity", which no bearer
// token's fingerprint can equal: no caller with a token ever reads or lists
// them. Without a token, GetTask (tasks/get) reads a task of that owner by
// its id, so that a caller who sent with returnImmediately can see the final
// state; the id, a random UUID, is the only key. ListTasks and CancelTask
// (tasks/list, tasks/cancel) and every other method without a token keep
// answering -31401, so no one can enumerate the questions of tokenless
// callers. These tasks live in the same Store, under the same bounds (TTL and
// least-recently-used eviction of finished tasks) as every other task.
//
// Without this option a call without a token is refused with -31401 before
// any task exists.
func WithNoIdentityTasks() Option { return func(c *serverConfig) { c.noIdentity = true } }

// NewServer returns a Server for agent, answering with backend.
func NewServer(agent Agent, backend Backend, opts ...Option) (*Server, error) {
	if backend == nil {
		return nil, errors.New("a2a: a backend is required")
	}
	u, err := agent.validate()
	if err != nil {
		return nil, err
	}
	cfg := serverConfig{maxRequest: DefaultMaxRequestBytes, maxConcurrent: DefaultMaxConcurrent, answerTimeout: DefaultAnswerTimeout}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.Default()
	}
	if cfg.store == nil {
		cfg.store = NewStore(DefaultMaxTasks, DefaultTaskTTL)
	}
	if cfg.maxRequest <= 0 || cfg.maxConcurrent <= 0 || cfg.answerTimeout <= 0 {
		return nil, errors.New("a2a: request bound, concurrency and answer timeout must be positive")
	}
	cardBytes, err := agent.cardJSON()
	if err != nil {
		return nil, fmt.Errorf("a2a: rendering the agent card: %w", err)
	}
	caps := agent.Card().Capabilities
	asking := &inflight{}
	handler := a2asrv.NewHandler(
		&executor{backend: backend, log: cfg.log, timeout: cfg.answerTimeout, asking: asking},
		a2asrv.WithTaskStore(cfg.store),
		a2asrv.WithCapabilityChecks(&caps),
		a2asrv.WithCallInterceptors(callerInterceptor{noIdentity: cfg.noIdentity}),
		a2asrv.WithConcurrencyConfig(limiter.ConcurrencyConfig{MaxExecutions: cfg.maxConcurrent}),
		a2asrv.WithLogger(cfg.log),
	)
	endpoint := u.Path
	if endpoint == "" {
		endpoint = "/"
	}
	return &Server{
		endpoint:   endpoint,
		card:       cardHandler(cardBytes),
		cardAlt:    path.Join(endpoint, CardPath),
		rpc10:      a2asrv.NewJSONRPCHandler(handler),
		rpc03:      a2av0.NewJSONRPCHandler(handler),
		store:      cfg.store,
		log:        cfg.log,
		maxRequest: cfg.maxRequest,
		asking:     asking,
	}, nil
}

// Store returns the server's task store.
func (s *Server) Store() *Store { return s.store }

// Drain waits until no question is being answered, or until ctx ends (it
// then returns ctx.Err()). Call it after http.Server.Shutdown to stop
// gracefully: Shutdown waits for the requests in flight, but a task sent with
// returnImmediately (0.3: blocking false) is answered after its request has
// ended, and only Drain waits for that answer. Each wait is bounded by the
// answer timeout.
func (s *Server) Drain(ctx context.Context) error { return s.asking.wait(ctx) }

// inflight counts the questions being answered, for Drain.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls back to 0
}

func (f *inflight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		close(f.idle)
	}
}

func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	n, idle := f.n, f.idle
	f.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == CardPath || p == s.cardAlt:
		s.card.ServeHTTP(w, r)
	case p == s.endpoint || strings.TrimSuffix(p, "/") == strings.TrimSuffix(s.endpoint, "/"):
		s.serveRPC(w, r)
	default:
		http.NotFound(w, r)
	}
}

// isStreaming reports the streaming methods of both versions: not declared
// on the card, so refused with a plain JSON-RPC error rather than an event
// stream.
func isStreaming(method string) bool {
	switch method {
	case "message/stream", "tasks/resubscribe", // 0.3
		"SendStreamingMessage", "SubscribeToTask": // 1.0
		return true
	}
	return false
}

func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "A2A JSON-RPC accepts POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxRequest))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest,
				fmt.Sprintf("request body exceeds %d bytes", s.maxRequest))
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "request body could not be read")
		return
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &env) != nil {
		// a2a-go serves the first JSON value whatever follows it: read the
		// envelope the same way, so that the method checked here is the one
		// it serves. A malformed body is left to a2a-go, which answers -32700.
		_ = json.NewDecoder(bytes.NewReader(body)).Decode(&env)
	}
	id := env.ID
	if len(id) == 0 {
		id = nil
	}

	version := strings.TrimSpace(r.Header.Get(a2apb.SvcParamVersion))
	if _, inHeader := r.Header[http.CanonicalHeaderKey(a2apb.SvcParamVersion)]; !inHeader {
		version = strings.TrimSpace(r.URL.Query().Get(a2apb.SvcParamVersion))
	}
	var h http.Handler
	switch version {
	case Version10:
		h = s.rpc10
	case "", Version03:
		h = s.rpc03
	default:
		writeRPCError(w, http.StatusOK, id, CodeVersionNotSupported,
			fmt.Sprintf("A2A-Version %q is not supported; this agent serves %s and %s", version, Version10, Version03))
		return
	}
	if isStreaming(env.Method) {
		writeRPCError(w, http.StatusOK, id, CodeUnsupportedOperation,
			"streaming is not supported by this agent (capabilities.streaming is false)")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.ServeHTTP(w, r)
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, msg}}
	if resp.ID == nil {
		resp.ID = json.RawMessage("null")
	}
	b, err := json.Marshal(resp)
	if err != nil { // an id that is not valid JSON cannot be echoed
		resp.ID = json.RawMessage("null")
		b, _ = json.Marshal(resp)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// bearerToken extracts the token of "Authorization: Bearer <token>".
func bearerToken(sp *a2asrv.ServiceParams) (string, bool) {
	vals, _ := sp.Get("authorization")
	if len(vals) == 0 {
		return "", false
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}

// fingerprint names the owner of a task without keeping the token.
func fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "bearer-sha256:" + hex.EncodeToString(sum[:16])
}

// textOf joins the text parts of a message; ok is false when there are none.
func textOf(m *a2apb.Message) (string, bool) {
	if m == nil {
		return "", false
	}
	var texts []string
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if t, isText := p.Content.(a2apb.Text); isText {
			texts = append(texts, string(t))
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

func acceptsText(modes []string) bool {
	if len(modes) == 0 {
		return true
	}
	for _, m := range modes {
		switch strings.ToLower(strings.TrimSpace(m)) {
		case "text/plain", "text/*", "*/*", "text":
			return true
		}
	}
	return false
}

// noIdentityOwner owns the tasks made for tokenless messages under
// WithNoIdentityTasks. A fingerprint always starts with "bearer-sha256:", so
// no caller with a token is this owner.
const noIdentityOwner = "no identity"

// noIdentityText is the status message of a task made without a token.
const noIdentityText = "no identity: the request carried no bearer token"

// callerInterceptor refuses calls without a bearer token (except, with
// noIdentity, SendMessage and GetTask, whose user is then the unauthenticated
// noIdentityOwner), makes the token's fingerprint the call's user (the task
// store's owner), and refuses messages the agent cannot answer before any
// task is created.
type callerInterceptor struct {
	a2asrv.PassthroughCallInterceptor
	noIdentity bool
}

func (c callerInterceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if tok, ok := bearerToken(cc.ServiceParams()); ok {
		cc.User = a2asrv.NewAuthenticatedUser(fingerprint(tok), nil)
	} else if c.noIdentity && tokenlessAllowed(req.Payload) {
		cc.User = &a2asrv.User{Name: noIdentityOwner, Authenticated: false}
	} else {
		return ctx, nil, a2apb.NewError(a2apb.ErrUnauthenticated, "an Authorization: Bearer token is required")
	}
	if p, isSend := req.Payload.(*a2apb.SendMessageRequest); isSend && p != nil && p.Message != nil {
		if p.Config != nil && p.Config.ReturnImmediately {
			ctx = context.WithValue(ctx, returnImmediatelyKey{}, true)
		}
		if p.Config != nil && p.Config.PushConfig != nil {
			return ctx, nil, a2apb.NewError(a2apb.ErrPushNotificationNotSupported, "push notifications are not supported by this agent")
		}
		if p.Config != nil && !acceptsText(p.Config.AcceptedOutputModes) {
			return ctx, nil, a2apb.NewError(a2apb.ErrUnsupportedContentType, "this agent answers in text/plain only")
		}
		text, hasText := textOf(p.Message)
		if !hasText {
			return ctx, nil, a2apb.NewError(a2apb.ErrUnsupportedContentType, "this agent accepts text parts only")
		}
		if strings.TrimSpace(text) == "" {
			return ctx, nil, a2apb.NewError(a2apb.ErrInvalidParams, "the message text is blank")
		}
	}
	return ctx, nil, nil
}

// returnImmediatelyKey marks the context of a SendMessage whose caller asked
// for the task back before it ends (returnImmediately; 0.3 blocking: false).
type returnImmediatelyKey struct{}

func returnsImmediately(ctx context.Context) bool {
	v, _ := ctx.Value(returnImmediatelyKey{}).(bool)
	return v
}

// tokenlessAllowed reports whether a call without a token may go on under
// WithNoIdentityTasks: sending a message (which then fails "no identity") and
// reading one such task by id.
func tokenlessAllowed(payload any) bool {
	switch payload.(type) {
	case *a2apb.SendMessageRequest, *a2apb.GetTaskRequest:
		return true
	}
	return false
}

// executor turns one message into one Backend.Ask and the Outcome into task events.
type executor struct {
	backend Backend
	log     *slog.Logger
	timeout time.Duration
	asking  *inflight
}

func (x *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2apb.Event, error] {
	return func(yield func(a2apb.Event, error) bool) {
		x.asking.add()
		defer x.asking.done()
		// a2a-go deep-copies the whole task twice per event (gob), the
		// largest cost of the facade, so events are kept to the minimum: the
		// final task only, preceded by the task in working state when the
		// caller asked to get the task back at once (returnImmediately, 0.3
		// blocking: false), since that first event is what it receives.
		task := ec.StoredTask
		if task == nil {
			task = a2apb.NewSubmittedTask(ec, ec.Message)
		}
		if returnsImmediately(ctx) {
			task.Status = a2apb.TaskStatus{State: a2apb.TaskStateWorking}
			if !yield(task, nil) {
				return
			}
		}
		text, _ := textOf(ec.Message)
		tok, hasToken := bearerToken(ec.ServiceParams)
		q := Question{Text: text, Token: tok, TaskID: string(ec.TaskID), ContextID: ec.ContextID}
		var out Outcome
		if hasToken {
			out = x.ask(ctx, q)
		} else { // only reached with WithNoIdentityTasks: nothing is asked
			out = Fail(noIdentityText, ErrNoToken)
		}
		if out.State == Completed {
			x.log.InfoContext(ctx, "a2a task completed", "question", q)
		} else {
			x.log.WarnContext(ctx, "a2a task failed", "question", q, "failure", failureKind(out.Err), "error", out.Err)
		}
		final := *task
		final.Artifacts = slices.Clone(task.Artifacts)
		final.Status, final.Artifacts = outcomeStatus(ec, out, final.Artifacts)
		yield(&final, nil)
	}
}

// ask calls the backend under the answer timeout, turning a panic or a
// malformed outcome into a failure.
func (x *executor) ask(ctx context.Context, q Question) (out Outcome) {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			out = Fail("the backend failed", fmt.Errorf("%w: panic: %v", ErrInvalidOutcome, r))
		}
	}()
	return normalize(x.backend.Ask(ctx, q))
}

// normalize enforces the Outcome invariants: only a Completed outcome with a
// non-blank answer and no error completes; everything else fails with a cause.
func normalize(o Outcome) Outcome {
	switch o.State {
	case Completed:
		if o.Err == nil && strings.TrimSpace(o.Text) != "" {
			return Outcome{State: Completed, Text: o.Text}
		}
		cause := ErrInvalidOutcome
		if o.Err != nil {
			cause = fmt.Errorf("%w: completed with an error: %w", ErrInvalidOutcome, o.Err)
		}
		return Fail("the backend returned an invalid answer", cause)
	case Failed:
		if o.Err == nil {
			o.Err = fmt.Errorf("%w: failed without a cause", ErrInvalidOutcome)
		}
		if strings.TrimSpace(o.Text) == "" {
			o.Text = "the backend failed"
		}
		return o
	default:
		return Fail("the backend returned an invalid outcome", fmt.Errorf("%w: state %q", ErrInvalidOutcome, o.State))
	}
}

// FailureKey is the status-message metadata key naming why a task failed.
const FailureKey = "failure"

// failureKind classifies a failure cause for the status message metadata.
func failureKind(err error) string {
	var (
		ce *reply.ContractError
		we *WebhookError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrEscalated):
		return "escalated"
	case errors.Is(err, reply.ErrEmpty):
		return "no_reply"
	case errors.As(err, &ce):
		return "off_contract"
	case errors.Is(err, ErrStatus):
		return "http_status"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrNoToken):
		return "no_identity"
	case errors.Is(err, ErrInvalidOutcome):
		return "invalid_outcome"
	case errors.As(err, &we):
		return "unreachable"
	}
	return "backend"
}

// outcomeStatus is the final status for out, and the artifacts with the
// answer added when it completed.
func outcomeStatus(ec *a2asrv.ExecutorContext, out Outcome, artifacts []*a2apb.Artifact) (a2apb.TaskStatus, []*a2apb.Artifact) {
	now := time.Now().UTC()
	if out.State == Completed {
		artifacts = append(artifacts, &a2apb.Artifact{ID: a2apb.NewArtifactID(), Name: "answer", Parts: a2apb.ContentParts{a2apb.NewTextPart(out.Text)}})
		msg := a2apb.NewMessageForTask(a2apb.MessageRoleAgent, ec, a2apb.NewTextPart(out.Text))
		return a2apb.TaskStatus{State: a2apb.TaskStateCompleted, Message: msg, Timestamp: &now}, artifacts
	}
	parts := []*a2apb.Part{a2apb.NewTextPart(out.Text)}
	if out.Raw != nil {
		if utf8.Valid(out.Raw) {
			parts = append(parts, a2apb.NewTextPart(string(out.Raw)))
		} else {
			raw := a2apb.NewRawPart(out.Raw)
			raw.MediaType = "application/octet-stream"
			parts = append(parts, raw)
		}
	}
	msg := a2apb.NewMessageForTask(a2apb.MessageRoleAgent, ec, parts...)
	msg.Metadata = map[string]any{FailureKey: failureKind(out.Err)}
	return a2apb.TaskStatus{State: a2apb.TaskStateFailed, Message: msg, Timestamp: &now}, artifacts
}

// Cancel refuses: once the question is posted the workflow runs to its end,
// and a finished task cannot change, so no task of this agent is cancelable
// (TaskNotCancelable).
func (x *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2apb.Event, error] {
	return func(yield func(a2apb.Event, error) bool) {
		yield(nil, a2apb.NewError(a2apb.ErrTaskNotCancelable, "a question already sent to the workflow cannot be withdrawn"))
	}
}
