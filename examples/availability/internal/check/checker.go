package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/reply"
	"github.com/candorkit/candor/tokenexchange"
)

// ToolGetProduct is the catalog tool the agent calls.
const ToolGetProduct = "get-product"

// Bounds of one question's catalog reads.
const (
	// MaxResponseBytes bounds each MCP response body (a product is a few
	// hundred bytes).
	MaxResponseBytes = 256 << 10
	// MaxSessionBytes bounds every response body read for one question
	// together (the initialize of a session it opens, the call, a
	// re-initialization).
	MaxSessionBytes = 1 << 20
)

// Sentinel causes, matched with errors.Is on a2a.Outcome.Err.
var (
	// ErrNoIdentity: the question came without a token (then the cause also
	// matches a2a.ErrNoToken), or the identity provider refused the caller's
	// token in the exchange. Nothing was read from the catalog.
	ErrNoIdentity = errors.New("availability: no identity")
	// ErrExchange: the agent could not obtain a catalog token for another
	// reason (its own client credentials refused, the provider unreachable,
	// an unusable answer). The tokenexchange error is wrapped.
	ErrExchange = errors.New("availability: token exchange failed")
	// ErrCatalog: the catalog call failed: transport, HTTP status, a
	// JSON-RPC error, or an isError result other than "not found". The
	// mcpclient error is wrapped.
	ErrCatalog = errors.New("availability: catalog call failed")
)

// ProductError is the cause of a failed outcome when get-product succeeded
// but its payload is not a usable product: not a JSON object, a field missing
// or of the wrong type, a negative stock, or another product than the one
// asked for. Raw is the payload exactly as received.
type ProductError struct {
	Code   string
	Reason string
	Raw    []byte
}

func (e *ProductError) Error() string {
	return fmt.Sprintf("availability: unusable get-product answer for %s: %s (%d bytes)", e.Code, e.Reason, len(e.Raw))
}

// Exchanger trades the caller's token for a token of the catalog's audience.
// *tokenexchange.Cache implements it.
type Exchanger interface {
	Token(ctx context.Context, subjectToken string) (*tokenexchange.Token, error)
}

// Config configures a Checker.
type Config struct {
	// Exchanger gets the catalog token for the caller (required).
	Exchanger Exchanger
	// MCPURL is the catalog's streamable HTTP endpoint (required).
	MCPURL string
	// Threshold is the reorder threshold; 0 means DefaultThreshold.
	Threshold int
	// HTTPClient carries the MCP requests (its Transport and Timeout are
	// used); nil means http.DefaultTransport.
	HTTPClient *http.Client
	// Logger receives one line per question (never a token); nil discards.
	Logger *slog.Logger
	// TracerProvider and MeterProvider instrument the catalog's MCP client
	// (mcpclient.WithTracerProvider, WithMeterProvider); nil means the
	// global providers.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// Checker answers "can this product be promised?" for the caller whose token
// comes with the question. It is an a2a.Backend.
type Checker struct {
	cfg  Config
	log  *slog.Logger
	pool *mcpclient.Pool // the catalog sessions, one per caller
}

// New returns a Checker for cfg.
func New(cfg Config) (*Checker, error) {
	if cfg.Exchanger == nil {
		return nil, errors.New("availability: an Exchanger is required")
	}
	if strings.TrimSpace(cfg.MCPURL) == "" {
		return nil, errors.New("availability: the catalog MCP URL is required")
	}
	if cfg.Threshold < 0 {
		return nil, errors.New("availability: the threshold must not be negative")
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = DefaultThreshold
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := []mcpclient.Option{
		mcpclient.WithMaxResponseBytes(MaxResponseBytes),
		mcpclient.WithClientInfo("candor-availability", "1"),
		mcpclient.WithLogger(cfg.Logger),
		mcpclient.WithTracerProvider(cfg.TracerProvider),
		mcpclient.WithMeterProvider(cfg.MeterProvider),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, mcpclient.WithHTTPClient(cfg.HTTPClient))
	}
	pool, err := mcpclient.NewPool(cfg.MCPURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("availability: catalog: %w", err)
	}
	return &Checker{cfg: cfg, log: log, pool: pool}, nil
}

// Close ends the catalog sessions (one DELETE each).
func (c *Checker) Close() error { return c.pool.Close() }

// Threshold is the reorder threshold in use.
func (c *Checker) Threshold() int { return c.cfg.Threshold }

// Ask implements a2a.Backend. Order: identity first (no token, no action),
// then the rule that reads the product code (no code, no network), then the
// token exchange, then exactly one get-product call. A decided answer or
// escalation is a reply.Reply mapped with a2a.MapReply, exactly as the
// webhook facade maps a workflow's reply; a technical failure is a2a.Fail
// with a typed cause. Nothing but a catalog product above the threshold
// completes.
func (c *Checker) Ask(ctx context.Context, q a2a.Question) a2a.Outcome {
	if q.Token == "" {
		return a2a.Fail("no identity: the question came without a bearer token, so nothing was read",
			fmt.Errorf("%w: %w", ErrNoIdentity, a2a.ErrNoToken))
	}
	codes := ProductCodes(q.Text)
	switch len(codes) {
	case 0:
		return c.decided(ctx, "", reply.Reply{Answer: noReferenceText, Escalate: true})
	case 1:
	default:
		return c.decided(ctx, "", reply.Reply{Answer: fmt.Sprintf(severalFormat, len(codes), strings.Join(codes, ", ")), Escalate: true})
	}
	code := codes[0]

	tok, err := c.cfg.Exchanger.Token(ctx, q.Token)
	if err != nil {
		return c.failed(ctx, code, exchangeFailure(err))
	}
	p, err := c.product(ctx, tok, code)
	if err != nil {
		var te *mcpclient.ToolError
		if errors.As(err, &te) && notFound(te.Text) {
			return c.decided(ctx, code, reply.Reply{Answer: fmt.Sprintf(notFoundFormat, code), Escalate: true})
		}
		return c.failed(ctx, code, catalogFailure(code, err))
	}
	return c.decided(ctx, code, Decide(p, c.cfg.Threshold))
}

// decided maps r the way the webhook facade maps a workflow reply.
func (c *Checker) decided(ctx context.Context, code string, r reply.Reply) a2a.Outcome {
	out := a2a.MapReply(r, nil)
	c.log.InfoContext(ctx, "availability answered", "code", code, "state", string(out.State), "escalate", r.Escalate)
	return out
}

func (c *Checker) failed(ctx context.Context, code string, out a2a.Outcome) a2a.Outcome {
	c.log.WarnContext(ctx, "availability failed", "code", code, "reason", out.Text, "error", out.Err)
	return out
}

// exchangeFailure tells a refused caller token (no identity) from a failure
// of the agent's own side of the exchange.
func exchangeFailure(err error) a2a.Outcome {
	var se *tokenexchange.StatusError
	errors.As(err, &se)
	switch tokenexchange.Classify(err) {
	case tokenexchange.KindInvalidRequest, tokenexchange.KindInvalidGrant, tokenexchange.KindAccessDenied:
		return a2a.Fail(fmt.Sprintf("no identity: the identity provider refused the caller's token (%s), so nothing was read", se.ErrorCode),
			fmt.Errorf("%w: %w", ErrNoIdentity, err))
	case tokenexchange.KindInvalidClient, tokenexchange.KindUnauthorizedClient:
		return a2a.Fail(fmt.Sprintf("the identity provider refused the agent's own credentials (%s): the catalog was not called", se.ErrorCode),
			fmt.Errorf("%w: %w", ErrExchange, err))
	case tokenexchange.KindInvalidResponse:
		return a2a.Fail("the identity provider's exchange answer is unusable: the catalog was not called", fmt.Errorf("%w: %w", ErrExchange, err))
	case tokenexchange.KindCanceled, tokenexchange.KindTimeout:
		return a2a.Fail("the token exchange did not finish in time: the catalog was not called", fmt.Errorf("%w: %w", ErrExchange, err))
	default:
		if se != nil {
			return a2a.Fail(fmt.Sprintf("the identity provider refused the token exchange (HTTP %d %s): the catalog was not called", se.StatusCode, se.ErrorCode),
				fmt.Errorf("%w: %w", ErrExchange, err))
		}
	}
	return a2a.Fail("the identity provider could not be reached for the token exchange: the catalog was not called", fmt.Errorf("%w: %w", ErrExchange, err))
}

// notFoundPattern is how the catalog says "no such product": an isError
// result whose text reports an HTTP 404 from the catalog's backend.
var notFoundPattern = regexp.MustCompile(`^HTTP call failed with status 404\b`)

func notFound(text string) bool { return notFoundPattern.MatchString(strings.TrimSpace(text)) }

// catalogFailure names what went wrong with the catalog call, keeping the
// mcpclient error as the cause.
func catalogFailure(code string, err error) a2a.Outcome {
	if de, ok := errors.AsType[*ProductError](err); ok {
		return a2a.Fail(fmt.Sprintf("the catalog's answer for %s is unusable (%s): no answer is given rather than a guess", code, de.Reason), err)
	}
	var why string
	switch mcpclient.Classify(err) {
	case mcpclient.KindToolError:
		te, _ := errors.AsType[*mcpclient.ToolError](err)
		why = "get-product reported an error: " + oneLine(te.Text, 200)
	case mcpclient.KindMalformedResult:
		why = "get-product returned a malformed result"
	case mcpclient.KindDecode:
		ce, _ := errors.AsType[*mcpclient.DecodeError](err)
		why = "get-product's payload is not one JSON value (" + oneLine(ce.Err.Error(), 120) + ")"
	case mcpclient.KindProtocol:
		pe, _ := errors.AsType[*mcpclient.ProtocolError](err)
		why = fmt.Sprintf("get-product answered JSON-RPC error %d: %s", pe.Code, oneLine(pe.Message, 200))
	case mcpclient.KindUnauthorized:
		why = "the catalog refused the agent's token (HTTP 401)"
	case mcpclient.KindForbidden, mcpclient.KindStatus, mcpclient.KindSessionExpired:
		if se, ok := errors.AsType[*mcpclient.StatusError](err); ok {
			why = fmt.Sprintf("the catalog answered HTTP %d", se.StatusCode)
		} else {
			why = "the catalog ended the session"
		}
	case mcpclient.KindBudgetExceeded, mcpclient.KindTooLarge:
		why = "the catalog's answer exceeds the agent's read bound"
	case mcpclient.KindOutcomeUnknown:
		why = "the catalog took the call but its answer was never read"
	case mcpclient.KindCanceled, mcpclient.KindTimeout:
		why = "the catalog did not answer in time"
	default:
		why = "the catalog could not be reached"
	}
	return a2a.Fail(fmt.Sprintf("the stock of %s could not be read: %s", code, why), fmt.Errorf("%w: %w", ErrCatalog, err))
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// product reads code with exactly one get-product call, carrying the
// exchanged token, on the catalog session of the caller the token was
// issued for (opened by the caller's first question, reused by the next).
func (c *Checker) product(ctx context.Context, tok *tokenexchange.Token, code string) (_ Product, err error) {
	run, err := c.pool.Caller(mcpclient.Identity{Subject: sessionKey(tok), Tokens: oauth2.StaticTokenSource(tok.Token)},
		mcpclient.CallerOptions{Budget: mcpclient.Budget{MaxCalls: 1, MaxBytes: MaxSessionBytes}})
	if err != nil {
		return Product{}, err
	}
	raw, err := mcpclient.CallJSON[json.RawMessage](ctx, run, ToolGetProduct, map[string]string{"productCode": code})
	if err != nil {
		return Product{}, err
	}
	return decodeProduct(code, raw)
}

// sessionKey names the caller a catalog session belongs to: the issuer and
// subject of the token the identity provider issued in the exchange (a
// token this agent received from the provider itself), or, when the token
// names no subject (not a JWT), the token itself (hashed), so that a session
// is never shared by two callers. The catalog still verifies every token.
func sessionKey(tok *tokenexchange.Token) string {
	if tok.Subject != "" {
		return "sub\x00" + tok.Issuer + "\x00" + tok.Subject
	}
	sum := sha256.Sum256([]byte(tok.AccessToken))
	return "token\x00" + hex.EncodeToString(sum[:])
}

// decodeProduct reads the product object strictly: every field the answer
// depends on must be present with its type, and the code must be the one
// asked for. A zero value is never taken for a missing one.
func decodeProduct(code string, raw []byte) (Product, error) {
	bad := func(reason string) (Product, error) {
		return Product{}, &ProductError{Code: code, Reason: reason, Raw: bytes.Clone(raw)}
	}
	var v struct {
		Code  *string          `json:"productCode"`
		Name  *string          `json:"productName"`
		Stock *json.RawMessage `json:"quantityInStock"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return bad("not a product object")
	}
	switch {
	case v.Code == nil:
		return bad("productCode is missing")
	case *v.Code != code:
		return bad(fmt.Sprintf("it describes product %q", *v.Code))
	case v.Name == nil || strings.TrimSpace(*v.Name) == "":
		return bad("productName is missing")
	case v.Stock == nil:
		return bad("quantityInStock is missing")
	}
	var stock int
	if err := json.Unmarshal(*v.Stock, &stock); err != nil { // 7305.0, "7305" and 1e3 are refused
		return bad("quantityInStock is not an integer")
	}
	if stock < 0 {
		return bad("quantityInStock is negative")
	}
	return Product{Code: code, Name: strings.TrimSpace(*v.Name), QuantityInStock: stock}, nil
}
