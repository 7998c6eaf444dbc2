package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/reply"
	"github.com/candorkit/candor/tokenexchange"
)

// ToolGetProduct is the catalog tool the agent calls.
const ToolGetProduct = "get-product"

// Bounds of one question's MCP session.
const (
	// MaxResponseBytes bounds each MCP response body (a product is a few
	// hundred bytes).
	MaxResponseBytes = 256 << 10
	// MaxSessionBytes bounds every response body of one question's session
	// together (initialize, the call, a re-initialization).
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
}

// Checker answers "can this product be promised?" for the caller whose token
// comes with the question. It is an a2a.Backend.
type Checker struct {
	cfg Config
	log *slog.Logger
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
	return &Checker{cfg: cfg, log: log}, nil
}

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
	body, err := json.Marshal(r)
	if err != nil { // a struct of a string and a bool always encodes
		return c.failed(ctx, code, a2a.Fail("the answer could not be encoded", err))
	}
	out := a2a.MapReply(http.StatusOK, nil, body)
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
	var oe *tokenexchange.Error
	if errors.As(err, &oe) {
		switch oe.Code() {
		case "invalid_request", "invalid_grant", "access_denied", "invalid_token":
			return a2a.Fail(fmt.Sprintf("no identity: the identity provider refused the caller's token (%s), so nothing was read", oe.Code()),
				fmt.Errorf("%w: %w", ErrNoIdentity, err))
		case "invalid_client", "unauthorized_client":
			return a2a.Fail(fmt.Sprintf("the identity provider refused the agent's own credentials (%s): the catalog was not called", oe.Code()),
				fmt.Errorf("%w: %w", ErrExchange, err))
		}
		return a2a.Fail(fmt.Sprintf("the identity provider refused the token exchange (HTTP %d %s): the catalog was not called", oe.StatusCode, oe.Code()),
			fmt.Errorf("%w: %w", ErrExchange, err))
	}
	if errors.Is(err, tokenexchange.ErrInvalidResponse) {
		return a2a.Fail("the identity provider's exchange answer is unusable: the catalog was not called", fmt.Errorf("%w: %w", ErrExchange, err))
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return a2a.Fail("the token exchange did not finish in time: the catalog was not called", fmt.Errorf("%w: %w", ErrExchange, err))
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
	var (
		te *mcpclient.ToolError
		pe *mcpclient.ProtocolError
		se *mcpclient.StatusError
		me *mcpclient.MalformedResultError
		ce *mcpclient.DecodeError
		de *ProductError
	)
	var why string
	switch {
	case errors.As(err, &de):
		return a2a.Fail(fmt.Sprintf("the catalog's answer for %s is unusable (%s): no answer is given rather than a guess", code, de.Reason), err)
	case errors.As(err, &te):
		why = "get-product reported an error: " + oneLine(te.Text, 200)
	case errors.As(err, &me):
		why = "get-product returned a malformed result"
	case errors.As(err, &ce):
		why = "get-product's payload is not one JSON value (" + oneLine(ce.Err.Error(), 120) + ")"
	case errors.As(err, &pe):
		why = fmt.Sprintf("get-product answered JSON-RPC error %d: %s", pe.Code, oneLine(pe.Message, 200))
	case errors.Is(err, mcpclient.ErrUnauthorized):
		why = "the catalog refused the agent's token (HTTP 401)"
	case errors.As(err, &se):
		why = fmt.Sprintf("the catalog answered HTTP %d", se.StatusCode)
	case errors.Is(err, mcpclient.ErrBudgetExceeded), errors.Is(err, mcpclient.ErrResponseTooLarge):
		why = "the catalog's answer exceeds the agent's read bound"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
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

// product reads code with exactly one get-product call in a session of its
// own that carries the exchanged token.
func (c *Checker) product(ctx context.Context, tok *tokenexchange.Token, code string) (_ Product, err error) {
	opts := []mcpclient.Option{
		mcpclient.WithTokenSource(oauth2.StaticTokenSource(tok.Token)),
		mcpclient.WithBudget(mcpclient.Budget{MaxCalls: 1, MaxBytes: MaxSessionBytes}),
		mcpclient.WithMaxResponseBytes(MaxResponseBytes),
		mcpclient.WithClientInfo("candor-availability", "1"),
		mcpclient.WithLogger(c.log),
	}
	if c.cfg.HTTPClient != nil {
		opts = append(opts, mcpclient.WithHTTPClient(c.cfg.HTTPClient))
	}
	mc, err := mcpclient.Dial(ctx, c.cfg.MCPURL, opts...)
	if err != nil {
		return Product{}, err
	}
	defer func() {
		// The answer is already read; a refused session DELETE does not
		// change it, but it is worth a line in the log.
		if cerr := mc.Close(); cerr != nil {
			c.log.WarnContext(ctx, "closing the catalog session", "error", cerr)
		}
	}()
	raw, err := mcpclient.CallJSON[json.RawMessage](ctx, mc, ToolGetProduct, map[string]string{"productCode": code})
	if err != nil {
		return Product{}, err
	}
	return decodeProduct(code, raw)
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
