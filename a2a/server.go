package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"mime"
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

	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/otelx"
)

// Defaults of the Server.
const (
	DefaultMaxRequestBytes = 1 << 20
	DefaultAnswerTimeout   = 2 * time.Minute
)

// maxConcurrent bounds the questions being answered at once; a request over
// the bound is refused by a2a-go's limiter.
const maxConcurrent = 64

// JSON-RPC error codes the Server writes itself (the others come from a2a-go).
const (
	CodeUnsupportedOperation    = -32004
	CodeVersionNotSupported     = -32009
	codeContentTypeNotSupported = -32005
	codeInvalidRequest          = -32600
	codeInvalidParams           = -32602
	codeInternal                = -32603
	codeUnauthenticated         = -31401
	codeUnauthorized            = -31403
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
// under the endpoint's path) is the card (see Agent.Card).
//
// Every JSON-RPC call is authenticated before anything else is done for it
// (see the package documentation): "Authorization: Bearer <token>" checked
// by the Verifier, HTTP 401 or 403 with WWW-Authenticate otherwise.
type Server struct {
	endpoint   string
	card       http.Handler
	cardAlt    string
	rpc10      http.Handler
	rpc03      http.Handler
	store      TaskStore
	log        *slog.Logger
	maxRequest int64
	asking     *inflight
	verifier   Verifier
	noIdentity bool
	tel        *telemetry
}

// NewServer returns a Server for agent, answering with backend. It needs
// WithVerifier, or the explicit opt-out WithUnverifiedTokens.
func NewServer(agent Agent, backend Backend, opts ...Option) (*Server, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	if len(o.adapterOnly) > 0 {
		return nil, fmt.Errorf("a2a: %s applies to NewAdapter only", strings.Join(o.adapterOnly, ", "))
	}
	return newServer(agent, backend, o)
}

func newServer(agent Agent, backend Backend, o options) (*Server, error) {
	if backend == nil {
		return nil, errors.New("a2a: a backend is required")
	}
	u, err := agent.validate()
	if err != nil {
		return nil, err
	}
	log := o.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.store == nil {
		if o.store, err = NewMemoryStore(DefaultMaxTasks, DefaultTaskTTL); err != nil {
			return nil, err
		}
	}
	card10, err := agent.cardJSON10()
	if err != nil {
		return nil, fmt.Errorf("a2a: rendering the agent card: %w", err)
	}
	card03, err := agent.cardJSON03()
	if err != nil {
		return nil, fmt.Errorf("a2a: rendering the 0.3 agent card: %w", err)
	}
	caps := agent.Card().Capabilities
	asking := &inflight{}
	tel := newTelemetry(o.tp, o.mp)
	handler := a2asrv.NewHandler(
		&executor{backend: backend, log: log, timeout: o.answerTimeout, asking: asking, tel: tel},
		a2asrv.WithTaskStore(o.store),
		a2asrv.WithCapabilityChecks(&caps),
		a2asrv.WithCallInterceptors(callerInterceptor{store: o.store}),
		a2asrv.WithConcurrencyConfig(limiter.ConcurrencyConfig{MaxExecutions: maxConcurrent}),
		a2asrv.WithLogger(log),
	)
	endpoint := u.Path
	if endpoint == "" {
		endpoint = "/"
	}
	return &Server{
		endpoint:   endpoint,
		card:       cardHandler(card10, card03),
		cardAlt:    path.Join(endpoint, CardPath),
		rpc10:      a2asrv.NewJSONRPCHandler(handler),
		rpc03:      a2av0.NewJSONRPCHandler(handler),
		store:      o.store,
		log:        log,
		maxRequest: o.maxRequest,
		asking:     asking,
		verifier:   o.verifier,
		noIdentity: o.noIdentity,
		tel:        tel,
	}, nil
}

// TaskStore returns the server's task store.
func (s *Server) TaskStore() TaskStore { return s.store }

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
	span, recording := noSpan, false
	if s.tel.tracing() {
		// The request span continues the caller's trace (W3C traceparent).
		var ctx context.Context
		ctx, span = s.tel.tracer.Start(otelx.Extract(r.Context(), r.Header), "a2a", trace.WithSpanKind(trace.SpanKindServer))
		if recording = span.IsRecording(); recording {
			span.SetAttributes(attrRPCSystem.String("jsonrpc"))
		}
		rw := &rpcWriter{ResponseWriter: w}
		defer endRequest(span, rw)
		w, r = rw, r.WithContext(ctx)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "A2A JSON-RPC accepts POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := httpx.ReadAll(r.Body, s.maxRequest)
	if err != nil {
		if errors.Is(err, httpx.ErrTooLarge) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest,
				fmt.Sprintf("request body exceeds %d bytes", s.maxRequest))
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "request body could not be read")
		return
	}
	var env envelope
	if json.Unmarshal(body, &env) != nil {
		// a2a-go serves the first JSON value whatever follows it: read the
		// envelope the same way, so that the method checked here is the one
		// it serves. A malformed body is left to a2a-go, which answers -32700.
		env = envelope{}
		_ = json.NewDecoder(bytes.NewReader(body)).Decode(&env)
	}
	id := env.ID
	if len(id) == 0 || !validID(id) {
		id = nil
	}

	version := strings.TrimSpace(r.Header.Get(a2apb.SvcParamVersion))
	if _, inHeader := r.Header[http.CanonicalHeaderKey(a2apb.SvcParamVersion)]; !inHeader {
		version = strings.TrimSpace(r.URL.Query().Get(a2apb.SvcParamVersion))
	}
	served := version
	if served == "" {
		served = Version03
	}
	if recording {
		if env.Method != "" && utf8.ValidString(env.Method) && len(env.Method) <= 64 {
			span.SetName(env.Method)
			span.SetAttributes(attrRPCMethod.String(env.Method))
		}
		if id != nil {
			span.SetAttributes(attrRPCRequestID.String(string(id)))
		}
		if len(served) <= 16 {
			span.SetAttributes(attrVersion.String(served))
		}
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

	who, ok := s.authenticate(w, r, id, env.Method)
	if !ok {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeRPCError(w, http.StatusUnsupportedMediaType, id, codeContentTypeNotSupported,
				"a JSON-RPC request is Content-Type: application/json")
			return
		}
	}
	if isStreaming(env.Method) {
		writeRPCError(w, http.StatusOK, id, CodeUnsupportedOperation,
			"streaming is not supported by this agent (capabilities.streaming is false)")
		return
	}
	if env.wellFormed() && isSend(env.Method) {
		if msg := checkSendParams(env.Params, version == Version10); msg != "" {
			writeRPCError(w, http.StatusOK, id, codeInvalidParams, msg)
			return
		}
	}
	if env.wellFormed() && isRead(env.Method) {
		if msg := checkHistoryLength(env.Params); msg != "" {
			writeRPCError(w, http.StatusOK, id, codeInvalidParams, msg)
			return
		}
	}
	ctx := context.WithValue(r.Context(), identityKey{}, who)
	if recording {
		ctx = context.WithValue(ctx, versionKey{}, served)
	}
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.ServeHTTP(jsonErrors{w}, r)
}

// envelope is the part of a JSON-RPC request the Server reads itself.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// wellFormed reports an envelope a2a-go would dispatch: version 2.0 and a
// valid id (absent, null, a string or a number). Others are left to a2a-go,
// which answers -32600.
func (e envelope) wellFormed() bool {
	return e.JSONRPC == "2.0" && (len(e.ID) == 0 || validID(e.ID))
}

func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case nil, string, float64:
		return true
	}
	return false
}

func isSend(method string) bool { return method == "message/send" || method == "SendMessage" }

// jsonErrors makes every answer of a2a-go's handlers application/json unless
// the handler chose a type (a2a-go's 0.3 handler writes its errors with none,
// which net/http would sniff as text/plain).
type jsonErrors struct{ http.ResponseWriter }

func (w jsonErrors) WriteHeader(code int) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w jsonErrors) Write(b []byte) (int, error) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	return w.ResponseWriter.Write(b)
}

func (w jsonErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w jsonErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
	if rw, ok := w.(*rpcWriter); ok {
		rw.rpcCode = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
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

// noIdentityText is the status message of a task made without a token.
const noIdentityText = "no identity: the request carried no bearer token"

// callerInterceptor makes the identity the Server authenticated the call's
// user (the task store's owner), and refuses messages the agent cannot
// answer before any task is created.
type callerInterceptor struct {
	a2asrv.PassthroughCallInterceptor
	store TaskStore
}

func (c callerInterceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	who, ok := identityFrom(ctx)
	switch {
	case !ok || who.owner == "":
		return ctx, nil, a2apb.NewError(a2apb.ErrUnauthenticated, "an Authorization: Bearer token is required")
	case who.owner == noIdentityOwner:
		cc.User = &a2asrv.User{Name: noIdentityOwner, Authenticated: false}
	default:
		cc.User = a2asrv.NewAuthenticatedUser(who.owner, nil)
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
		if id := p.Message.TaskID; id != "" {
			// A finished task takes no more messages: UnsupportedOperation
			// (spec 1.0, section 3.1.1, SendMessage errors).
			// cc.User is set above, so the store reads the caller's task only.
			if st, err := c.store.Get(ctx, id); err == nil && st.Task != nil && st.Task.Status.State.Terminal() {
				return ctx, nil, a2apb.NewError(a2apb.ErrUnsupportedOperation,
					fmt.Sprintf("task %s is %s: a finished task takes no more messages", id, stateName(st.Task.Status.State)))
			}
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

func stateName(s a2apb.TaskState) string {
	return strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_"))
}

// returnImmediatelyKey marks the context of a SendMessage whose caller asked
// for the task back before it ends (returnImmediately; 0.3 blocking: false).
type returnImmediatelyKey struct{}

func returnsImmediately(ctx context.Context) bool {
	v, _ := ctx.Value(returnImmediatelyKey{}).(bool)
	return v
}

// executor turns one message into one Backend.Ask and the Outcome into task events.
type executor struct {
	backend Backend
	log     *slog.Logger
	timeout time.Duration
	asking  *inflight
	tel     *telemetry
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
		ctx, span := x.tel.startTask(ctx, string(ec.TaskID), ec.ContextID)
		text, _ := textOf(ec.Message)
		who, _ := identityFrom(ctx)
		q := Question{Text: text, Token: who.token, Caller: who.caller, TaskID: string(ec.TaskID), ContextID: ec.ContextID}
		var out Outcome
		if who.token != "" {
			out = x.ask(ctx, q)
		} else { // only reached with WithNoIdentityTasks: nothing is asked
			out = Fail(noIdentityText, ErrNoToken)
		}
		if out.State == Completed {
			x.log.InfoContext(ctx, "a2a task completed", "question", q)
		} else {
			x.log.WarnContext(ctx, "a2a task failed", "question", q, "failure", string(Classify(out.Err)), "error", out.Err)
		}
		x.tel.endTask(ctx, span, out)
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
	msg.Metadata = map[string]any{FailureKey: string(Classify(out.Err))}
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
