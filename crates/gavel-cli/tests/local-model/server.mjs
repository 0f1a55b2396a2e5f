// A real small model behind the OpenAI Chat Completions wire, for gavel's end-to-end tests
// (issue 35): the tests point `openai-compatible:MODEL@http://127.0.0.1:PORT/v1` at it, so
// gavel's provider runs unchanged against a model that really answers (and really fails to
// follow a template), the way Ollama, llama.cpp's server or vLLM would serve it.
//
//   node server.mjs --node-modules DIR --model FILE.gguf [--name NAME] [--threads 1]
//        [--context-size 4096] [--max-tokens 256] [--seed 42] [--refuse-response-format]
//        [--request-log FILE]
//
// It listens on 127.0.0.1, on a port the system picks, and prints `port=N` on stdout once the
// model is loaded. It exits on SIGTERM, and when its standard input is a pipe that closes (the
// test that started it is gone).
//
// What it serves, in OpenAI's own formats:
// - `POST /v1/chat/completions`, streamed (server-sent events: a role chunk, content chunks, a
//   chunk with `finish_reason`, the usage chunk when `stream_options.include_usage` is set, then
//   `data: [DONE]`) or not (one `chat.completion` object with its usage);
// - `response_format: {type: "json_schema", json_schema: {schema}}` enforced by llama.cpp's
//   grammar (node-llama-cpp's JSON-schema grammar), so the answer is JSON of that schema unless
//   the token cap cuts it (`finish_reason: "length"`); `{type: "json_object"}` too;
// - with `--refuse-response-format`, any `response_format` gets the 400 OpenAI answers for a
//   model without structured outputs (for gavel's ask-plain-once fallback);
// - `GET /v1/models`; OpenAI's error bodies for a bad route, method, body, model or length.
//
// Repeatable: greedy sampling (temperature 0 whatever the request says), a fixed seed, one
// request at a time on one context sequence. One thread by default: llama.cpp's threads meet
// at a spinning barrier after every layer, so on a busy machine (the test suite runs many
// tests at once on 2 cores) two threads lose their turn again and again; measured under a
// load of 10 on 2 cores, 40 tokens took 38 s with 2 threads and 1.9 s with 1. Answers stop at
// the request's `max_tokens` (or `max_completion_tokens`) or `--max-tokens`, whichever is
// smaller.
// `--request-log FILE` appends one JSON line per request (path, model, whether a
// response_format was asked, the status and finish reason, the token counts).

import { appendFileSync, fstatSync, readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    "node-modules": { type: "string" },
    model: { type: "string" },
    name: { type: "string", default: "smollm2-135m-instruct" },
    threads: { type: "string", default: "1" },
    "context-size": { type: "string", default: "4096" },
    "max-tokens": { type: "string", default: "256" },
    seed: { type: "string", default: "42" },
    "refuse-response-format": { type: "boolean", default: false },
    "request-log": { type: "string" },
  },
});

function die(message) {
  process.stderr.write(`local-model server: ${message}\n`);
  process.exit(1);
}

function positive(name) {
  const n = Number(opt[name]);
  if (!Number.isInteger(n) || n < 1) die(`--${name} must be a positive integer, not ${opt[name]}`);
  return n;
}

if (!opt["node-modules"]) die("--node-modules DIR (where node-llama-cpp is installed) is required");
if (!opt.model) die("--model FILE.gguf is required");
const threads = positive("threads");
const contextSize = positive("context-size");
const maxTokensCap = positive("max-tokens");
const seed = positive("seed");

// node-llama-cpp is installed outside the checkout (tools/local-model/provision), and an ES
// module cannot be found through NODE_PATH: load it by its package's own entry point.
async function loadNodeLlamaCpp(nodeModules) {
  const dir = join(nodeModules, "node-llama-cpp");
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  } catch (e) {
    die(`node-llama-cpp is not installed in ${nodeModules}: ${e.message}`);
  }
  let entry = pkg.exports?.["."] ?? pkg.module ?? pkg.main;
  while (entry && typeof entry === "object") entry = entry.import ?? entry.default ?? entry.node;
  if (typeof entry !== "string") die(`cannot find node-llama-cpp's entry point in ${dir}`);
  return import(pathToFileURL(join(dir, entry)).href);
}

const { getLlama, LlamaChat } = await loadNodeLlamaCpp(opt["node-modules"]);
// The prebuilt CPU build only: never a GPU, never a build from source, never a download.
const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, maxThreads: threads, logLevel: "error" });
const model = await llama.loadModel({ modelPath: opt.model, gpuLayers: 0 });
const context = await model.createContext({ contextSize, threads, sequences: 1 });
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence });

// --- OpenAI's error bodies ------------------------------------------------------------------

function error(status, message, type, param = null, code = null) {
  return { status, body: { error: { message, type, param, code } } };
}
const invalid = (message, param = null, code = null) =>
  error(400, message, "invalid_request_error", param, code);

const refusal = invalid(
  "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model. " +
    "Learn more about supported models at the Structured Outputs guide: " +
    "https://platform.openai.com/docs/guides/structured-outputs",
  "response_format",
);

// --- requests -------------------------------------------------------------------------------

/** The chat history node-llama-cpp wants, from OpenAI messages, or an error. */
function history(messages) {
  if (!Array.isArray(messages) || messages.length === 0) {
    return { error: invalid("Missing required parameter: 'messages'.", "messages", "missing_required_parameter") };
  }
  const items = [];
  for (const [i, m] of messages.entries()) {
    const text = typeof m?.content === "string"
      ? m.content
      : Array.isArray(m?.content)
        ? m.content.filter((p) => p?.type === "text").map((p) => p.text).join("")
        : null;
    if (text === null) {
      return { error: invalid(`Invalid type for 'messages[${i}].content'.`, `messages[${i}].content`, "invalid_type") };
    }
    switch (m.role) {
      case "system":
      case "developer":
        items.push({ type: "system", text });
        break;
      case "user":
        items.push({ type: "user", text });
        break;
      case "assistant":
        items.push({ type: "model", response: [text] });
        break;
      default:
        return {
          error: invalid(
            `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
            `messages[${i}].role`,
            "invalid_value",
          ),
        };
    }
  }
  // The answer is generated as the model's next turn.
  items.push({ type: "model", response: [] });
  return { items };
}

/** The grammar a `response_format` asks for (`null`: plain text), or an error. */
async function grammarFor(format) {
  if (format === undefined || format === null || format.type === "text") return { grammar: null };
  if (opt["refuse-response-format"]) return { error: refusal };
  if (format.type === "json_object") return { grammar: await llama.getGrammarFor("json") };
  if (format.type === "json_schema") {
    const schema = format.json_schema?.schema;
    if (typeof schema !== "object" || schema === null) {
      return { error: invalid("Missing required parameter: 'response_format.json_schema.schema'.", "response_format.json_schema.schema", "missing_required_parameter") };
    }
    try {
      return { grammar: await llama.createGrammarForJsonSchema(schema) };
    } catch (e) {
      return { error: invalid(`Invalid schema for response_format '${format.json_schema?.name}': ${e.message}`, "response_format", "invalid_json_schema") };
    }
  }
  return {
    error: invalid(
      `Invalid value: '${format.type}'. Supported values are: 'json_object', 'json_schema', and 'text'.`,
      "response_format.type",
      "invalid_value",
    ),
  };
}

let queue = Promise.resolve();
/** Runs `job` after every earlier one: one generation at a time on the one sequence. */
function serially(job) {
  const run = queue.then(job, job);
  queue = run.catch(() => {});
  return run;
}

function log(entry) {
  if (opt["request-log"]) appendFileSync(opt["request-log"], JSON.stringify(entry) + "\n");
}

function send(res, { status, body }) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function completions(req, res, body) {
  const logged = { path: "/v1/chat/completions", model: body.model, stream: !!body.stream, response_format: body.response_format?.type ?? null };
  const fail = (e) => {
    log({ ...logged, status: e.status, error: e.body.error.message });
    send(res, e);
  };
  if (typeof body.model !== "string") return fail(invalid("Missing required parameter: 'model'.", "model", "missing_required_parameter"));
  if (body.model !== opt.name) {
    return fail(error(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, "invalid_request_error", null, "model_not_found"));
  }
  const { items, error: badMessages } = history(body.messages);
  if (badMessages) return fail(badMessages);
  const { grammar, error: badFormat } = await grammarFor(body.response_format);
  if (badFormat) return fail(badFormat);
  const asked = body.max_completion_tokens ?? body.max_tokens;
  if (asked !== undefined && asked !== null && !(Number.isInteger(asked) && asked > 0)) {
    return fail(invalid(`Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got ${asked} instead.`, "max_tokens", "integer_below_min_value"));
  }
  const maxTokens = Math.min(asked ?? maxTokensCap, maxTokensCap);
  const includeUsage = !!body.stream && body.stream_options?.include_usage === true;
  const id = `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices, usage) => {
    const c = { id, object: "chat.completion.chunk", created, model: opt.name, system_fingerprint: null, choices };
    if (includeUsage) c.usage = usage ?? null;
    return `data: ${JSON.stringify(c)}\n\n`;
  };
  let aborted = false;
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) {
      aborted = true;
      abort.abort();
    }
  });

  await serially(async () => {
    if (aborted) return;
    // As llama.cpp's server does: a prompt that leaves no room for the answer is refused, never
    // cut to fit (node-llama-cpp would shift the context and drop the prompt's beginning).
    const { contextText } = chat.chatWrapper.generateContextState({ chatHistory: items });
    const promptTokens = contextText.tokenize(model.tokenizer).length;
    if (promptTokens + maxTokens > contextSize) {
      return fail(
        invalid(
          `This model's maximum context length is ${contextSize} tokens. However, you requested ${promptTokens + maxTokens} tokens (${promptTokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
          "messages",
          "context_length_exceeded",
        ),
      );
    }
    // A fresh sequence each time: every answer depends on its request alone.
    await sequence.clearHistory();
    const before = sequence.tokenMeter.getState();
    let started = false;
    const start = () => {
      if (started || !body.stream) return;
      started = true;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      res.write(chunk([{ index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null }]));
    };
    let result;
    try {
      result = await chat.generateResponse(items, {
        grammar: grammar ?? undefined,
        maxTokens,
        temperature: 0,
        seed,
        signal: abort.signal,
        stopOnAbortSignal: true,
        onTextChunk: (text) => {
          if (!body.stream || text === "") return;
          start();
          res.write(chunk([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]));
        },
      });
    } catch (e) {
      if (aborted) return;
      const failure = error(500, "The server had an error while processing your request. Sorry about that!", "server_error");
      log({ ...logged, status: failure.status, error: String(e?.message ?? e) });
      if (started) {
        res.end(`data: ${JSON.stringify(failure.body)}\n\n`);
      } else {
        send(res, failure);
      }
      return;
    }
    if (aborted) return;
    const used = sequence.tokenMeter.getState();
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: used.usedOutputTokens - before.usedOutputTokens,
      total_tokens: 0,
      prompt_tokens_details: { cached_tokens: 0 },
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const finish = result.metadata?.stopReason === "maxTokens" ? "length" : "stop";
    log({ ...logged, status: 200, finish_reason: finish, usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens } });
    if (body.stream) {
      start();
      res.write(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]));
      if (includeUsage) res.write(chunk([], usage));
      res.end("data: [DONE]\n\n");
    } else {
      send(res, {
        status: 200,
        body: {
          id,
          object: "chat.completion",
          created,
          model: opt.name,
          system_fingerprint: null,
          choices: [{ index: 0, message: { role: "assistant", content: result.response, refusal: null }, logprobs: null, finish_reason: finish }],
          usage,
        },
      });
    }
  });
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url, "http://localhost").pathname.replace(/\/+$/, "");
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const route = `${req.method} ${path}`;
    if (route === "GET /v1/models") {
      return send(res, { status: 200, body: { object: "list", data: [{ id: opt.name, object: "model", created: 0, owned_by: "gavel-tests" }] } });
    }
    if (route !== "POST /v1/chat/completions") {
      log({ path, status: 404 });
      return send(res, error(404, `Invalid URL (${req.method} ${path})`, "invalid_request_error"));
    }
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("not an object");
    } catch {
      return send(
        res,
        invalid(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
        ),
      );
    }
    completions(req, res, body).catch((e) => {
      process.stderr.write(`local-model server: ${e?.stack ?? e}\n`);
      if (!res.headersSent) send(res, error(500, "The server had an error while processing your request. Sorry about that!", "server_error"));
      else res.end();
    });
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`port=${server.address().port}\n`);
});

// A test that starts this server holds its standard input, a pipe: when the test ends, the
// pipe closes, and so does the server (run by hand, from a terminal, it runs until stopped).
if (fstatSync(0).isFIFO()) {
  process.stdin.on("end", () => process.exit(0));
  process.stdin.on("error", () => process.exit(0));
  process.stdin.resume();
}
process.on("SIGTERM", () => process.exit(0));
