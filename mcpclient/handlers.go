package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Methods of the requests a server may send to the client.
const (
	MethodElicitation = "elicitation/create"
	MethodSampling    = "sampling/createMessage"
	MethodRoots       = "roots/list"
)

// ServerRequest is a request the server sent to the client, in the middle
// of a call (on its event stream) or on the session's standalone stream.
type ServerRequest struct {
	// Method is MethodElicitation, MethodSampling or MethodRoots.
	Method string
	// Params are the request's params exactly as mcp-go decoded them
	// (re-encoded; nil when the request had none).
	Params json.RawMessage
}

// RequestHandler answers a server request with the JSON result object of
// its method (an ElicitResult, a CreateMessageResult, a ListRootsResult).
// A *ProtocolError answers with its Code and Message; any other error
// answers an internal error (-32603) whose message does not quote it. ctx
// is the call's context for a request on a call's stream, a context of the
// client's for one on the standalone stream; it ends after 30 s.
type RequestHandler func(ctx context.Context, req ServerRequest) (json.RawMessage, error)

func withHandler(name, method, capability string, h RequestHandler) Option {
	return func(o *options) {
		if h == nil {
			o.bad("%s: nil handler", name)
			return
		}
		if o.handlers == nil {
			o.handlers = map[string]handler{}
		}
		o.handlers[method] = handler{capability: capability, h: h}
	}
}

// handler is a RequestHandler and the capability it declares.
type handler struct {
	capability string
	h          RequestHandler
}

// WithElicitationHandler declares the elicitation capability and answers
// elicitation/create with h. Giving any handler also makes the client open
// the session's standalone GET stream, on which servers send the requests
// that belong to no call.
func WithElicitationHandler(h RequestHandler) Option {
	return withHandler("WithElicitationHandler", MethodElicitation, "elicitation", h)
}

// WithSamplingHandler declares the sampling capability and answers
// sampling/createMessage with h (see WithElicitationHandler for the
// standalone stream).
func WithSamplingHandler(h RequestHandler) Option {
	return withHandler("WithSamplingHandler", MethodSampling, "sampling", h)
}

// WithRootsHandler declares the roots capability (without listChanged) and
// answers roots/list with h (see WithElicitationHandler for the standalone
// stream).
func WithRootsHandler(h RequestHandler) Option {
	return withHandler("WithRootsHandler", MethodRoots, "roots", h)
}

// capabilities is the capabilities object of initialize: one member per
// handler given, none otherwise.
func (o *options) capabilities() map[string]any {
	caps := map[string]any{}
	for _, h := range o.handlers {
		caps[h.capability] = map[string]any{}
	}
	return caps
}

// serve answers one server request: ping always, a method with a handler
// by the handler, anything else with "method not found", so that the
// server never waits for an answer that will not come.
func (c *Client) serve(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if req.Method == "ping" {
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
	}
	h, ok := c.cfg.handlers[req.Method]
	if !ok {
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "method not found: the client declared no handler for "+req.Method, nil), nil
	}
	var params json.RawMessage
	if req.Params != nil {
		b, err := json.Marshal(req.Params)
		if err != nil {
			return transport.NewJSONRPCErrorResponse(req.ID, mcp.INVALID_PARAMS, "params do not encode", nil), nil
		}
		params = b
	}
	res, err := h.h(ctx, ServerRequest{Method: req.Method, Params: params})
	if err != nil {
		c.log.DebugContext(ctx, "mcp: server request handler failed", "method", req.Method, "error", err)
		if pe, ok := errors.AsType[*ProtocolError](err); ok {
			return transport.NewJSONRPCErrorResponse(req.ID, pe.Code, pe.Message, nil), nil
		}
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, "the client's handler failed", nil), nil
	}
	if !isObject(res) {
		c.log.DebugContext(ctx, "mcp: server request handler answered no JSON object", "method", req.Method)
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, fmt.Sprintf("the client's %s handler gave no result object", req.Method), nil), nil
	}
	return transport.NewJSONRPCResultResponse(req.ID, res), nil
}
