// Package generate turns an automation idea into an n8n workflow definition:
// the prompt (BuildPrompt), the generators (Ollama, File) and the extraction
// of the one workflow object from a model's reply (ExtractWorkflow).
//
// Ollama calls POST {base}/api/generate with {"model", "prompt", "stream":
// false} (model default llama3.1:8b, 120 s timeout) and reads the documented
// non-streaming answer {"model", "response", "done", "done_reason", …}. The
// reply's "response" text is searched for JSON objects outside and inside
// Markdown fences; exactly one of them must parse and carry "nodes" and
// "connections".
//
// File reads a workflow JSON from a file instead (-generator file:PATH), so the
// pipeline runs without a model; its Describe says so.
//
// Failure taxonomy:
//   - *OllamaError: Ollama answered a non-200 status (keeps status, Ollama's
//     "error" message and the bounded body) or a 200 that is not the documented
//     object.
//   - ErrIncomplete: the answer says done:false or done_reason "length" (the
//     model stopped before finishing).
//   - ErrTooLarge: a body or file over MaxBody (8 MiB).
//   - *ExtractError (matches ErrNoWorkflow): the reply holds no JSON object
//     that parses, none with nodes and connections, or more than one; it keeps
//     the reply (first 64 KiB) as evidence.
//   - Transport errors and context.DeadlineExceeded are wrapped unchanged.
package generate
