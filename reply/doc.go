// Package reply owns the webhook contract that candor's workflows answer: the
// request (a JSON POST carrying the caller's subject token in the
// X-Subject-Token header, never in the body or URL), the status rule, the
// reply's shape — exactly one JSON object holding a string "answer" and a
// boolean "escalate", and nothing else — the size cap and the time bound.
//
// The contract exists once in the module. Packages a2a and n8n both call
// webhooks through a Client, so a body that one accepts the other accepts
// too.
//
// # Calling a webhook
//
//	c, err := reply.NewClient(webhookURL, reply.WithTimeout(time.Minute))
//	r, err := c.Call(ctx, subjectToken, map[string]string{"text": question})
//
// NewClient does no I/O. Call POSTs the body as JSON with the token in
// SubjectTokenHeader and decodes the answer:
//
//   - Only HTTP 200 carries a reply (n8n's Respond to Webhook answers 200).
//     Another 2xx is off-contract; a 1xx, 3xx, 4xx or 5xx is a status error.
//     Redirects are never followed, so the token is never re-sent elsewhere.
//   - The body is read up to exactly DefaultMaxResponseBytes (1 MiB) unless
//     WithMaxResponseBytes; a body of exactly the cap is read, one byte more
//     is too large.
//   - The whole call, from dialling to the last byte, is bounded by
//     DefaultTimeout (30 s) unless WithTimeout, on top of the caller's
//     context and of the client's own Timeout.
//   - WithHTTPClient sets the client; WithRootCAs sets the TLS roots on a
//     clone of its transport, whichever of the two comes first.
//   - WithLogger logs one record per call; without it nothing is logged.
//
// Decode applies the same strict decoding to a body the caller already read
// and bounded.
//
// # Failure taxonomy
//
// Every error names the webhook by scheme and host only: its path and query
// (the secret part of an n8n webhook URL) never appear in an Error(), an
// excerpt or a log record.
//
//   - ErrNoToken (Kind "no_identity"): the subject token was empty; nothing
//     was sent.
//   - ErrEmpty ("no_reply"): a 2xx body of only white space. n8n answers 200
//     with an empty body when a node fails before its Respond node.
//   - *ContractError ("off_contract"): a 2xx answer other than 200, or a
//     200 body that is not exactly the contract (not JSON, another type, a
//     missing, repeated, extra or differently-cased key, a blank answer,
//     trailing data). Raw keeps the bytes, so drift in a workflow is
//     visible instead of being read as an answer.
//   - *StatusError ("http_status"): a status outside 2xx. Body keeps the
//     bytes up to the cap; Error and Excerpt quote at most a short excerpt
//     with the webhook's path and query redacted, because an error page may
//     name the secret path (n8n's 404 does) or hold a stack trace.
//   - *TooLargeError ("too_large", errors.Is(err, ErrTooLarge)): a 2xx body
//     over the cap.
//   - *TransportError ("timeout", "canceled" or "unreachable"): no complete
//     answer: connection, TLS verification, read failure, deadline.
//   - "other": the body given to Call could not be encoded.
//
// A reply with "escalate": true is not an error: Call returns it, and the
// caller decides (package a2a fails the task as escalated).
//
// Classify(err) returns these kinds for callers that branch on them.
//
// # Telemetry
//
// WithTracerProvider and WithMeterProvider set the OpenTelemetry providers
// (the global ones when absent, no-ops unless the program installed an
// SDK); the instrumentation scope is this package's import path. With no
// provider given and none installed globally, no span is started.
// WithTransportWrapper wraps the transport after WithRootCAs, so an
// instrumented transport and a CA bundle combine.
//
// Span "POST", kind client, one per Call, a child of the caller's span:
//
//	http.request.method        "POST"
//	server.address             the webhook's host
//	server.port                its port (80 or 443 when the URL has none)
//	url.scheme                 "http" or "https"
//	http.response.status_code  the answer's status, when there was one
//	error.type                 the Kind, on failure (status Error, described by the Kind)
//
// The W3C traceparent (and tracestate) of that span is sent to the webhook
// in the request headers (the global propagator when the program set one).
// The URL's path and query, the subject token and the bodies never appear
// in a span or a metric.
//
// Metric MetricWebhookDuration ("candor.webhook.duration"), a histogram in
// seconds, one measurement per Call that sent a request (not for
// "no_identity" or an unencodable body), with the attributes
// http.request.method, server.address, server.port, url.scheme,
// http.response.status_code (when answered) and error.type (on failure).
// An escalating reply is a success here: escalating is the workflow's
// answer.
package reply
