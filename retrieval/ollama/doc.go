// Package ollama embeds texts with an Ollama server (POST /api/embed), for
// use as a retrieval.Embedder.
//
// It is a package of its own so that importing retrieval does not compile
// an HTTP client, and a program that embeds elsewhere does not carry it. It
// imports no other library package of the module.
//
// [New] takes the server's base URL and the model, and options:
// [WithHTTPClient], [WithTimeout] (per request, default [DefaultTimeout]),
// [WithBatch] (texts per request, default [DefaultBatch], at most
// [MaxBatch]), [WithMaxResponseBytes] (the exact cap on a response body,
// default [DefaultMaxResponseBytes]), [WithDimensions] (at most
// [MaxDimensions]) and [WithTruncate] (off by default: a too-long input is
// an error, not a vector of part of it). The base URL defaults to
// [DefaultURL]. Redirects are
// never followed. The package logs nothing.
//
// # Telemetry
//
// [WithTracerProvider] (default: the global provider) gives each request
// to the server an HTTP client span named "POST", carrying the W3C trace
// context to the server in traceparent. Attributes: http.request.method,
// server.address and server.port (never the URL's path or query),
// url.scheme, http.response.status_code (when a response came),
// gen_ai.operation.name ("embeddings"), gen_ai.request.model,
// gen_ai.request.inputs (the texts in the request; never a text), and on
// failure error.type: the status code of a *StatusError ("404"),
// "invalid_response" for a *ResponseError, "canceled", "timeout" or
// "request_failed" for a *RequestError. With no provider given and none
// installed, no span is started.
//
// # Failures
//
// Every error of [Embedder.Embed] matches [ErrEmbed], and no vectors come
// with it: there is no fallback to other vectors.
//
//   - *[StatusError] (StatusCode, Header, Body up to [MaxErrorBody] bytes,
//     Message): the server answered with a status other than 200, for
//     example 404 for a model that is not pulled.
//   - *[ResponseError] (Reason, Body, Err): a 200 answer that cannot be
//     used: over the size cap, not the expected JSON, an "error" field, a
//     vector count or dimension that does not match, a component that is
//     not a finite float32.
//   - *[RequestError] (Err): no answer: the request failed, the context
//     ended or the timeout passed. Its text never holds the server's URL.
package ollama
