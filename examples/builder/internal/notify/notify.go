package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// Kind is the outcome word of a message.
type Kind string

const (
	KindBuilding Kind = "Building"
	KindFail     Kind = "FAIL"
	KindBlocked  Kind = "BLOCKED"
	KindReady    Kind = "READY"
	KindError    Kind = "ERROR"
	KindSkipped  Kind = "SKIPPED"
)

// Prefix starts every message.
const Prefix = "[N8N Builder]"

// Message is one notification.
type Message struct {
	Kind  Kind
	Title string // short, ASCII: "[N8N Builder] FAIL"
	Body  string // the pattern line
}

func msg(k Kind, body string) Message {
	return Message{Kind: k, Title: Prefix + " " + string(k), Body: Prefix + " " + body}
}

// Building: a build started.
func Building(name string, id int64) Message {
	return msg(KindBuilding, fmt.Sprintf("Building %s (id=%d)", name, id))
}

// OverseerRejected: the overseer said FAIL.
func OverseerRejected(name, reason string) Message {
	return msg(KindFail, fmt.Sprintf("FAIL — Overseer rejected %s: %s", name, reason))
}

// ImportFailed: the sandbox import failed.
func ImportFailed(name string, err error) Message {
	return msg(KindFail, fmt.Sprintf("FAIL — %s failed N8N import: %s", name, errText(err)))
}

// Blocked: credential references did not resolve.
func Blocked(name string, credentials []string) Message {
	return msg(KindBlocked, fmt.Sprintf("BLOCKED — %s needs credentials: %s", name, strings.Join(credentials, ", ")))
}

// LevelFailed: test level n failed.
func LevelFailed(name string, level int, err error) Message {
	return msg(KindFail, fmt.Sprintf("FAIL — %s failed Level %d: %s", name, level, errText(err)))
}

// Ready: all tests passed; a person must approve.
func Ready(name string) Message {
	return msg(KindReady, fmt.Sprintf("READY — %s passed all tests, awaiting your approval", name))
}

// Errored: an unhandled error.
func Errored(name string, err error) Message {
	return msg(KindError, fmt.Sprintf("ERROR — %s: %s", name, errText(err)))
}

// Skipped: another builder holds the claim.
func Skipped(name string, id int64) Message {
	return msg(KindSkipped, fmt.Sprintf("SKIPPED — %s (id=%d) is already claimed by another builder", name, id))
}

func errText(err error) string {
	if err == nil {
		return "(no error text)"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Notifier delivers a message.
type Notifier interface {
	Notify(ctx context.Context, m Message) error
}

// Deliver sends m through n. A failure is logged at warning level and
// returned, so the caller can record it beside the outcome without changing it.
func Deliver(ctx context.Context, n Notifier, logger *slog.Logger, m Message) error {
	err := n.Notify(ctx, m)
	if err != nil && logger != nil {
		logger.Warn("notification not delivered", "title", m.Title, "body", m.Body, "err", err)
	}
	return err
}

// Log is the Notifier used when no ntfy topic is configured: it writes the
// message to the logger.
type Log struct{ Logger *slog.Logger }

// Notify implements Notifier.
func (l Log) Notify(_ context.Context, m Message) error {
	if l.Logger == nil {
		return errors.New("notify: Log notifier without a logger")
	}
	l.Logger.Info("notification", "title", m.Title, "body", m.Body)
	return nil
}

// Bounds.
const (
	MaxBody        = 4000
	MaxAnswer      = 64 << 10
	DefaultTimeout = 10 * time.Second
)

// ErrInvalid reports an unusable ntfy configuration.
var ErrInvalid = errors.New("notify: invalid ntfy configuration")

// DeliveryError is a message ntfy did not accept.
type DeliveryError struct {
	Status  int    // 0 when no answer arrived
	Code    int    // ntfy's "code", e.g. 40301
	Message string // ntfy's "error"
	Body    string // bounded answer
	Err     error
}

func (e *DeliveryError) Error() string {
	switch {
	case e.Err != nil:
		return "notify: ntfy: " + e.Err.Error()
	case e.Message != "":
		return fmt.Sprintf("notify: ntfy answered HTTP %d (code %d): %s", e.Status, e.Code, e.Message)
	default:
		return fmt.Sprintf("notify: ntfy answered HTTP %d with an unexpected body (%d bytes)", e.Status, len(e.Body))
	}
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// Ntfy publishes to one ntfy topic.
type Ntfy struct {
	Server     string        // e.g. https://ntfy.sh
	Topic      string        // [-_A-Za-z0-9]{1,64}
	Token      secret.Secret // optional access token (Authorization: Bearer)
	HTTPClient *http.Client  // default: 10 s timeout
}

var topicRE = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)

// Notify implements Notifier.
func (n Ntfy) Notify(ctx context.Context, m Message) error {
	u, err := url.Parse(strings.TrimRight(n.Server, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: server %q is not an http(s) URL", ErrInvalid, n.Server)
	}
	if !topicRE.MatchString(n.Topic) {
		return fmt.Errorf("%w: topic %q is not [-_A-Za-z0-9]{1,64}", ErrInvalid, n.Topic)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String()+"/"+n.Topic, strings.NewReader(cut(m.Body, MaxBody)))
	if err != nil {
		return &DeliveryError{Err: err}
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", asciiHeader(m.Title))
	if m.Kind == KindFail || m.Kind == KindError || m.Kind == KindBlocked {
		req.Header.Set("Priority", "high")
	}
	if !n.Token.IsZero() {
		req.Header.Set("Authorization", "Bearer "+n.Token.Reveal())
	}
	client := n.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	client = httpx.NoRedirectClient(client)
	resp, err := client.Do(req)
	if err != nil {
		return &DeliveryError{Err: err}
	}
	defer resp.Body.Close()
	// An answer longer than MaxAnswer is judged on its first MaxAnswer bytes.
	raw, err := httpx.ReadAll(resp.Body, MaxAnswer)
	if errors.Is(err, httpx.ErrTooLarge) {
		err = nil
	}
	if err != nil {
		return &DeliveryError{Status: resp.StatusCode, Err: err}
	}
	var ans struct {
		ID    string `json:"id"`
		Event string `json:"event"`
		Code  int    `json:"code"`
		Error string `json:"error"`
	}
	decodeErr := json.Unmarshal(raw, &ans)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &DeliveryError{Status: resp.StatusCode, Code: ans.Code, Message: ans.Error, Body: string(raw)}
	}
	if decodeErr != nil || ans.Event != "message" || ans.ID == "" {
		return &DeliveryError{Status: resp.StatusCode, Body: string(raw)}
	}
	return nil
}

// cut shortens s to at most max bytes on a rune boundary, marking the cut.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max-len("…")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// asciiHeader keeps a header value printable ASCII.
func asciiHeader(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}
