//===- ServeOptions.cpp - encc-serve's command line -----------------------===//
#include "ServeOptions.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>

namespace encc::serve {

const char *const kServeUsage = R"(usage: encc-serve MODEL.encm [options]

An embedding and reranking server: Hugging Face text-embeddings-inference's API
(POST /embed, POST /embed_all (each token's hidden state; the only route of a
model compiled with --pooling none), POST /similarity; on a cross-encoder / classifier artifact POST /predict and, with
one label, POST /rerank; POST / and POST /invocations do what the model does, as
TEI answers them; POST /tokenize (tokens with byte offsets), POST /decode, GET /info,
GET /health, GET /ping), OpenAI's
(POST /v1/embeddings, also POST /embeddings) and Prometheus metrics (GET /metrics). Bodies are JSON: another Content-Type gets 415. Requests are merged into packed batches
(no padding work); each text gets the same bits as when embedded alone.

  --host ADDR              address to bind (default 127.0.0.1: this machine only)
  --port N                 port (default 8080; 0 = any free port, printed at start)
  --threads N              compute threads of the model (default 0 = all cores)
  --max-batch-tokens T     tokens in one forward pass (default 8192)
  --max-batch-requests R   texts in one forward pass (default 64)
  --max-queue Q            texts waiting to run; a request that does not fit waits
                           for room (up to --timeout-ms), then gets 429 with
                           Retry-After (default 1024)
  --max-input-texts K      texts (or /predict inputs, /rerank texts) in one request
                           (default 256)
  --max-wait-ms MS         how long a short queue waits for more texts before a
                           pass starts (default 0: at once; under load, texts queue
                           up while a pass runs and the next pass takes them all)
  --timeout-ms MS          a request still unanswered after MS ms gets 503 (default 30000)
  --auto-truncate          cut over-long texts to the model's max_seq by default
                           (else 413; a TEI request's "truncate" overrides it)
  --allow-token-ids        accept token ids as /v1/embeddings input. Refused by default:
                           ids from another model's tokenizer (LangChain's
                           OpenAIEmbeddings sends tiktoken's unless
                           check_embedding_ctx_length=False) give meaningless vectors
  --cors-allow-origin LIST let web pages from these origins (comma-separated, as
                           https://app.example; * for any) call the server from a
                           browser: OPTIONS preflights answered, Access-Control-*
                           headers on answers. Default: none (TEI allows any; a
                           server on this machine should not be callable from
                           every web page its user opens)
  --api-key KEY            require "Authorization: Bearer KEY" on every route but
                           /health (or set ENCC_SERVE_API_KEY, which keeps the key
                           out of the process list)
  --model-id NAME          the model name /info and /v1/embeddings report
                           (default: the artifact's file name)
  --keep-alive-requests N  requests a connection may carry before the server closes
                           it (default 1000)
  --idle-timeout-ms MS     an open connection with no request in progress is closed
                           after MS ms (default 5000)
  --header-timeout-ms MS   a request's line and headers must arrive within MS ms of
                           its first byte, a new connection's first request within
                           MS ms (default 10000; else 408 and closed); a body may
                           pause at most as long
  --max-connections N      connections open at once (default 10000; the open-file
                           limit is raised to fit). More are answered 503 and closed.
                           Connections wait in one event loop: an idle or slow one
                           holds no thread
  --max-connections-per-client N
                           connections from one address (default 0: no limit, as
                           every client of a server behind a proxy or on 127.0.0.1
                           shares one address); more are answered 503 and closed
  --http-threads N         requests handled at once (threads, made as needed; more
                           wait). Default --max-queue + 64 (at most 4096), so that a
                           full queue, not a shortage of threads, holds work back
  --max-body-bytes N       request bodies over N bytes get 413, checked on the wire
                           and again once a gzip / deflate body is decompressed
                           (default 4194304)
  --cpu-target T           CPU code object (default: the best this CPU runs)
  --require-sha256 HEX     refuse the artifact unless its SHA-256 is HEX
  --trusted-key HEX        refuse the artifact unless signed by this key (encc sign)
  --signature PATH         the signature (default: MODEL.encm.sig)
  -h, --help               this text

SIGTERM or SIGINT: drain and exit 0. /health answers 503 at once (a load balancer
stops sending); requests are still served until none has been in flight for 0.5 s
(or --timeout-ms has passed); then the listener closes and the process exits.
)";

namespace {

bool parseInt(const std::string &s, int64_t lo, int64_t hi, int64_t &out) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

} // namespace

std::string parseServeOptions(int argc, const char *const *argv, ServeOptions &o, bool *help) {
  *help = false;
  struct Int {
    int64_t lo, hi;
    std::function<void(int64_t)> set;
  };
  const std::map<std::string, Int> ints = {
      {"port", {0, 65535, [&](int64_t v) { o.port = int(v); }}},
      {"threads", {0, 1024, [&](int64_t v) { o.threads = int(v); }}},
      {"max-batch-tokens", {1, 1 << 24, [&](int64_t v) { o.maxBatchTokens = v; }}},
      {"max-batch-requests", {1, 1 << 16, [&](int64_t v) { o.maxBatchRequests = int(v); }}},
      {"max-queue", {1, 1 << 24, [&](int64_t v) { o.maxQueue = int(v); }}},
      {"max-input-texts", {1, 1 << 20, [&](int64_t v) { o.maxInputTexts = int(v); }}},
      {"max-wait-ms", {0, 10000, [&](int64_t v) { o.maxWaitMs = int(v); }}},
      {"timeout-ms", {1, 3600 * 1000, [&](int64_t v) { o.timeoutMs = int(v); }}},
      {"keep-alive-requests", {1, 1 << 20, [&](int64_t v) { o.keepAliveRequests = int(v); }}},
      {"idle-timeout-ms", {1, 3600 * 1000, [&](int64_t v) { o.idleTimeoutMs = int(v); }}},
      {"header-timeout-ms", {1, 3600 * 1000, [&](int64_t v) { o.headerTimeoutMs = int(v); }}},
      {"max-connections", {16, 1 << 20, [&](int64_t v) { o.maxConnections = int(v); }}},
      {"max-connections-per-client", {0, 1 << 20, [&](int64_t v) { o.maxConnectionsPerClient = int(v); }}},
      {"http-threads", {1, 16384, [&](int64_t v) { o.httpThreads = int(v); }}},
      {"max-body-bytes", {1024, int64_t(1) << 32, [&](int64_t v) { o.maxBodyBytes = v; }}},
  };
  const std::map<std::string, std::string *> strings = {
      {"host", &o.host},           {"api-key", &o.apiKey},      {"cors-allow-origin", &o.corsAllowOrigin},
      {"model-id", &o.modelId},    {"cpu-target", &o.cpuTarget},
      {"require-sha256", &o.requireSha256}, {"trusted-key", &o.trustedKey},
      {"signature", &o.signaturePath}};
  if (const char *key = std::getenv("ENCC_SERVE_API_KEY"))
    o.apiKey = key;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      *help = true;
      return "";
    }
    if (a.rfind("--", 0) != 0) {
      if (!o.artifact.empty())
        return "more than one model given ('" + o.artifact + "', '" + a + "')";
      o.artifact = a;
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    const bool inlineValue = eq != std::string::npos;
    if (inlineValue) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "allow-token-ids" && !inlineValue) {
      o.allowTokenIds = true;
      continue;
    }
    if (name == "auto-truncate" && !inlineValue) {
      o.autoTruncate = true;
      continue;
    }
    const bool known = ints.count(name) || strings.count(name);
    if (!known)
      return "unknown option '--" + name + "'";
    if (!inlineValue) {
      if (i + 1 >= argc)
        return "--" + name + " needs a value";
      value = argv[++i];
    }
    if (auto it = ints.find(name); it != ints.end()) {
      int64_t v = 0;
      if (!parseInt(value, it->second.lo, it->second.hi, v))
        return "--" + name + " expects an integer in [" + std::to_string(it->second.lo) + ", " +
               std::to_string(it->second.hi) + "], got '" + value + "'";
      it->second.set(v);
    } else {
      *strings.at(name) = value;
    }
  }
  if (o.artifact.empty())
    return "no model given (encc-serve MODEL.encm)";
  if (o.host.empty())
    return "--host is empty";
  if (o.maxInputTexts > o.maxQueue)
    return "--max-input-texts (" + std::to_string(o.maxInputTexts) + ") is more than --max-queue (" +
           std::to_string(o.maxQueue) + "): such a request could never be queued";
  if (o.httpThreads == 0)
    o.httpThreads = std::min(o.maxQueue + 64, 4096);
  if (o.modelId.empty()) {
    const size_t slash = o.artifact.find_last_of('/');
    o.modelId = slash == std::string::npos ? o.artifact : o.artifact.substr(slash + 1);
  }
  return "";
}

} // namespace encc::serve
