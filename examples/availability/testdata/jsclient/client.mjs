// Asks the served availability agent one question with the @a2a-js/sdk
// client and prints one JSON line describing what happened.
//
//   node client.mjs <base URL> <token file, or "" for no token> <mode> <question>
//
// mode: "default"  the SDK's default client (A2A 1.0);
//       "legacy"   legacyCompat enabled, the card fetched as the SDK does;
//       "legacy03" legacyCompat enabled, the card fetched with A2A-Version: 0.3.
//
// The token is read from the file and sent only in the Authorization
// header; it is never printed.
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { SendMessageRequest, taskStateToJSON } from "@a2a-js/sdk";

const [base, tokenFile, mode, question] = process.argv.slice(2);
const token = tokenFile ? readFileSync(tokenFile, "utf8").trim() : "";
const out = { mode, requests: [] };

// The fetch the SDK uses for every request: it adds the bearer token (not to
// the public card), asks for the 0.3 card in mode "legacy03" (the SDK itself
// always announces 1.0 when it reads the card), and records each request's
// path, A2A-Version, JSON-RPC method and HTTP status, never other headers.
async function wireFetch(input, init = {}) {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  const isCard = url.pathname.endsWith("/.well-known/agent-card.json");
  if (isCard && mode === "legacy03") {
    headers.set("A2A-Version", "0.3");
  }
  if (token && !isCard) {
    headers.set("Authorization", `Bearer ${token}`);
  }
  let method = "";
  if (typeof init.body === "string") {
    try {
      method = JSON.parse(init.body).method ?? "";
    } catch {
      method = "";
    }
  }
  const res = await fetch(input, { ...init, headers });
  out.requests.push({
    path: url.pathname,
    a2aVersion: headers.get("A2A-Version") ?? "",
    method,
    status: res.status,
  });
  return res;
}

const legacyCompat = { enabled: mode !== "default" };
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [
      new JsonRpcTransportFactory({ fetchImpl: wireFetch, legacyCompat }),
      new RestTransportFactory({ fetchImpl: wireFetch, legacyCompat }),
    ],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: wireFetch, legacyCompat }),
  }),
);

try {
  const client = await factory.createFromUrl(base);
  out.wireVersion = client.protocolVersion ?? "";
  const result = await client.sendMessage(
    SendMessageRequest.fromJSON({
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: question }] },
    }),
  );
  // A Task (or a Message, which this agent never answers with).
  if (result && "status" in result) {
    out.taskId = result.id ?? "";
    out.state = taskStateToJSON(result.status?.state);
    const texts = (parts) => (parts ?? []).filter((p) => p.content?.$case === "text").map((p) => p.content.value).join("\n");
    out.statusText = texts(result.status?.message?.parts);
    out.artifactText = (result.artifacts ?? []).map((a) => texts(a.parts)).join("\n");
  } else {
    out.message = result;
  }
} catch (err) {
  out.error = { name: err?.name ?? "", code: err?.envelopeCode ?? 0, message: String(err?.message ?? err) };
}
console.log(JSON.stringify(out));
