//===- Routes.cpp - encc-serve's HTTP API: TEI, OpenAI, health, metrics ---===//
//
// TEI (text-embeddings-inference): POST /embed {"inputs": str | [str],
// "normalize": bool, "truncate": bool} -> [[float]]; POST /embed_all ->
// [[[float]]] (texts x tokens x hidden); POST /similarity -> [cosine]; on a classifier POST
// /predict -> [{"score", "label"}] and POST /rerank {"query", "texts"} ->
// [{"index", "text"?, "score"}]; POST /tokenize -> [[{"id", "text", "special", "start",
// "stop"}]] (byte offsets); POST /decode {"ids", "skip_special_tokens"} -> [text]; GET /info;
// GET /health. Errors {"error": msg, "error_type": kind}; 422 for a
// malformed field, 413 for too much (texts, tokens, bytes), 429 when the queue
// is full, 503 when shutting down or timed out.
// OpenAI: POST /v1/embeddings {"input": str | [str] | [int] | [[int]],
// "model", "encoding_format": "float" | "base64", "dimensions"} with OpenAI's
// response and error shapes ({"error": {"message", "type", "param", "code"}},
// 400 for a malformed field).
//
//===----------------------------------------------------------------------===//
#include "Routes.h"

#include "JsonText.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace encc::serve {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

bool isOpenAi(const std::string &path) { return path.rfind("/v1/", 0) == 0 || path == "/embeddings"; }

/// The metrics label of a path: known routes by name, anything else "other"
/// (a client must not be able to grow the metrics with made-up paths).
std::string routeLabel(const std::string &path) {
  for (const char *r : {"/embed", "/embed_all", "/embed_sparse", "/embed_multi_vector", "/", "/invocations", "/predict", "/rerank", "/similarity", "/tokenize", "/decode", "/info", "/health", "/ping", "/metrics",
                        "/v1/embeddings", "/embeddings"})
    if (path == r)
      return r;
  return "other";
}

/// Each text's rows of `width` floats as [[[float]]] (texts x rows x width); `tokens`: the rows in all (the
/// reservation).
std::string tokenRowsJson(const std::vector<std::vector<float>> &texts, size_t width, int64_t tokens) {
  std::string out;
  out.reserve(size_t(tokens) * width * 12 + 16);
  out += '[';
  for (size_t i = 0; i < texts.size(); ++i) {
    out += i ? ",[" : "[";
    for (size_t t = 0; t * width < texts[i].size(); ++t) {
      if (t)
        out += ',';
      appendFloatArray(out, texts[i].data() + t * width, width);
    }
    out += ']';
  }
  out += ']';
  return out;
}

void sendError(http::Response &res, const std::string &path, const ApiError &e) {
  res.status = e.status;
  std::string body;
  if (isOpenAi(path)) {
    body = "{\"error\":{\"message\":";
    appendJsonString(body, e.message);
    body += ",\"type\":";
    appendJsonString(body, e.status == 401 ? "authentication_error"
                           : e.status == 429 ? "rate_limit_error"
                           : e.status >= 500 ? "server_error"
                                             : "invalid_request_error");
    body += ",\"param\":";
    if (e.field.empty())
      body += "null";
    else
      appendJsonString(body, e.field);
    body += ",\"code\":";
    appendJsonString(body, e.kind);
    body += "}}";
  } else {
    body = "{\"error\":";
    appendJsonString(body, e.field.empty() ? e.message : e.field + ": " + e.message);
    body += ",\"error_type\":";
    appendJsonString(body, e.kind);
    body += "}";
  }
  if (e.status == 429 || e.status == 503) {
    res.setHeader("Retry-After", "1");
    // An overloaded server closes the connection: a client that retries
    // may reach another replica.
    res.setHeader("Connection", "close");
  }
  res.setContent(body, "application/json");
}

bool constantTimeEqual(const std::string &a, const std::string &b) {
  size_t diff = a.size() ^ b.size();
  for (size_t i = 0, n = std::max(a.size(), b.size()); i < n; ++i)
    diff |= size_t(static_cast<unsigned char>(i < a.size() ? a[i] : 0) ^
                   static_cast<unsigned char>(i < b.size() ? b[i] : 0));
  return diff == 0;
}

/// A client's path as it may appear in a message: printable ASCII, at most
/// 100 characters.
std::string printable(const std::string &path) { return http::printable(path, 100); }

} // namespace

Routes::Routes(encrt_model *model, const ServeOptions &options, Batcher &batcher, Metrics &metrics)
    : model_(model), options_(options), batcher_(batcher), metrics_(metrics) {
  encrt_model_get_info(model_, &info_, sizeof info_);
  for (int32_t i = 0; i < info_.num_labels; ++i) {
    const char *name = nullptr;
    encrt_status *st = encrt_model_get_label(model_, i, &name);
    labels_.push_back(st ? "LABEL_" + std::to_string(i) : name);
    encrt_status_free(st);
  }
  if (info_.num_labels > 0) {
    const encrt_text empty{"", 0};
    encrt_status_free(encrt_model_count_tokens(model_, empty, &singleSpecials_));
    if (encrt_status *st = encrt_model_tokenize_pair(model_, empty, empty, ENCRT_TRUNCATE_LONGEST_FIRST, nullptr,
                                                     nullptr, 0, &pairSpecials_)) {
      pairSpecials_ = -1; // no pair template: pairs are refused
      encrt_status_free(st);
    }
  }
  install();
}

namespace {

/// A failed tokenisation as the answer to the client: a bad text is 422.
[[noreturn]] void throwTokenizerStatus(encrt_status *st, const std::string &field) {
  std::string msg = encrt_status_message(st);
  const bool bad = encrt_status_get_code(st) == ENCRT_INVALID_ARGUMENT;
  encrt_status_free(st);
  throw ApiError{bad ? 422 : 500, msg, field, bad ? "tokenizer" : "backend"};
}

[[noreturn]] void throwTooLong(int64_t tokens, int32_t maxSeq, const std::string &field) {
  throw ApiError{413,
                 "has " + std::to_string(tokens) + " tokens, more than the model's " + std::to_string(maxSeq) +
                     " (send \"truncate\": true, or start the server with --auto-truncate, to cut it)",
                 field, "validation"};
}

encrt_text textOf(std::string_view s) { return encrt_text{s.data(), int64_t(s.size())}; }

/// Characters of UTF-8 `s` (bytes that start one).
int64_t characters(std::string_view s) {
  int64_t n = 0;
  for (char c : s)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

/// What the request being handled on this thread computed, for TEI's
/// x-compute-* / x-*-time headers: Routes::run adds each job to it.
struct ComputeTimes {
  Clock::time_point start, mark; ///< the request's start; the end of its last job

  bool computed = false;
  int64_t characters = 0, tokens = 0;
  Clock::duration tokenization{}, queue{}, inference{};
};
thread_local ComputeTimes *currentRequest = nullptr;

int64_t millis(Clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

} // namespace

std::vector<int32_t> Routes::tokenize(std::string_view text, bool truncate, const std::string &field) const {
  std::vector<int32_t> ids(size_t(info_.max_seq));
  int64_t count = 0;
  const encrt_text t = textOf(text);
  encrt_status *st = encrt_model_tokenize_text(model_, t, ids.data(), int64_t(ids.size()), &count);
  if (!st && count == info_.max_seq && !truncate) {
    int64_t full = 0;
    st = encrt_model_count_tokens(model_, t, &full);
    if (!st && full > info_.max_seq)
      throwTooLong(full, info_.max_seq, field);
  }
  if (st)
    throwTokenizerStatus(st, field);
  ids.resize(size_t(count));
  return ids;
}

std::vector<int32_t> Routes::tokenizeRole(const std::string &role, std::string_view text, const std::string &field,
                                          int32_t &attended) const {
  std::vector<int32_t> ids(size_t(info_.max_seq));
  int64_t count = 0;
  if (encrt_status *st = encrt_model_tokenize_role(model_, role.c_str(), textOf(text), ids.data(),
                                                   int64_t(ids.size()), &count, &attended))
    throwTokenizerStatus(st, field);
  ids.resize(size_t(count));
  return ids;
}

void Routes::appendTokens(std::string &out, std::string_view text, bool addSpecialTokens, bool truncate,
                          const std::string &field) const {
  const encrt_text t = textOf(text);
  const int64_t limit = truncate ? info_.max_seq : 0; // TEI's /tokenize never cuts
  int64_t count = 0;
  std::vector<encrt_token> tokens;
  encrt_status *st = encrt_model_tokenize_offsets(model_, t, addSpecialTokens, limit, nullptr, 0, &count);
  if (!st) {
    tokens.resize(size_t(count));
    st = encrt_model_tokenize_offsets(model_, t, addSpecialTokens, limit, tokens.data(), count, &count);
  }
  if (st)
    throwTokenizerStatus(st, field);
  out += '[';
  for (size_t i = 0; i < tokens.size(); ++i) {
    const encrt_token &k = tokens[i];
    out += i ? ",{\"id\":" : "{\"id\":";
    out += std::to_string(k.id);
    out += ",\"text\":";
    if (k.special) { // the token's own string, as TEI gives it
      const char *token = nullptr;
      int64_t size = 0;
      if (encrt_status *e = encrt_model_get_token(model_, k.id, &token, &size))
        throwTokenizerStatus(e, field);
      appendJsonString(out, std::string_view(token, size_t(size)));
      out += ",\"special\":true,\"start\":null,\"stop\":null}";
    } else { // the bytes of the text it covers (whole characters)
      appendJsonString(out, text.substr(size_t(k.start), size_t(k.stop - k.start)));
      out += ",\"special\":false,\"start\":" + std::to_string(k.start) + ",\"stop\":" + std::to_string(k.stop) + '}';
    }
  }
  out += ']';
}

std::shared_ptr<Job> Routes::classifierJob(const PredictRequest &r) const {
  auto job = std::make_shared<Job>();
  const bool typed = info_.type_vocab_size >= 2; // else every token is type 0 (RobertaProcessing does so)
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    const std::string field = r.field(i);
    std::string_view a = r.inputs[i].first;
    std::optional<std::string_view> b = r.inputs[i].second;
    if (r.query) {
      a = *r.query;
      b = r.inputs[i].first;
    }
    job->characters += characters(a) + (b ? characters(*b) : 0);
    if (!b) {
      job->ids.push_back(tokenize(a, r.truncate, field));
      if (typed)
        job->types.emplace_back(job->ids.back().size(), 0);
      continue;
    }
    if (pairSpecials_ < 0)
      throw ApiError{422, "the model's tokenizer has no pair template (send single texts)", field, "tokenizer"};
    std::vector<int32_t> ids(size_t(info_.max_seq)), types(size_t(info_.max_seq));
    int64_t count = 0;
    encrt_status *st = encrt_model_tokenize_pair(model_, textOf(a), textOf(*b), ENCRT_TRUNCATE_LONGEST_FIRST,
                                                 ids.data(), types.data(), int64_t(ids.size()), &count);
    if (!st && count == info_.max_seq && !r.truncate) {
      int64_t ca = 0, cb = 0;
      st = encrt_model_count_tokens(model_, textOf(a), &ca);
      if (!st)
        st = encrt_model_count_tokens(model_, textOf(*b), &cb);
      if (!st && ca + cb - 2 * singleSpecials_ + pairSpecials_ > info_.max_seq)
        throwTooLong(ca + cb - 2 * singleSpecials_ + pairSpecials_, info_.max_seq, field);
    }
    if (st)
      throwTokenizerStatus(st, field);
    ids.resize(size_t(count));
    types.resize(size_t(count));
    job->ids.push_back(std::move(ids));
    if (typed)
      job->types.push_back(std::move(types));
  }
  return job;
}

std::vector<float> Routes::scores(const Job &job, size_t i, bool raw) const {
  const size_t n = size_t(info_.num_labels);
  std::vector<float> s(job.outputs.begin() + i * n, job.outputs.begin() + (i + 1) * n);
  for (float v : s)
    if (std::isnan(v))
      throw ApiError{500, "score is NaN", "", "backend"};
  if (raw)
    return s;
  if (n == 1) { // as encrt_session_score_pairs computes it
    s[0] = 1.0f / (1.0f + std::exp(-s[0]));
    return s;
  }
  const float top = *std::max_element(s.begin(), s.end());
  double sum = 0;
  for (float v : s)
    sum += std::exp(double(v) - double(top));
  for (float &v : s)
    v = float(std::exp(double(v) - double(top)) / sum);
  return s;
}

std::string Routes::promptText(const std::optional<std::string> &name) const {
  std::string names;
  for (int64_t i = 0, n = encrt_model_prompt_count(model_); i < n; ++i) {
    const char *promptName = nullptr, *text = nullptr;
    int32_t isDefault = 0;
    if (encrt_status *st = encrt_model_get_prompt(model_, i, &promptName, &text, &isDefault)) {
      encrt_status_free(st);
      continue;
    }
    if (name ? *name == promptName : isDefault != 0)
      return text;
    names += (names.empty() ? "" : ", ") + std::string(promptName);
  }
  if (!name || name->empty())
    return "";
  throw ApiError{422,
                 "'" + *name + "' is not one of the model's prompts (" +
                     (names.empty() ? std::string("it has none") : names) + ")",
                 "prompt_name", "validation"};
}

void Routes::run(const std::shared_ptr<Job> &job, Clock::time_point deadline) const {
  const Clock::time_point submitted = Clock::now(); // the texts are tokenised by now
  switch (batcher_.submit(job, deadline)) {
  case Batcher::Submit::Queued: break;
  case Batcher::Submit::QueueFull:
    throw ApiError{429,
                   "the queue stayed full (" + std::to_string(options_.maxQueue) + " texts, --max-queue) for " +
                       std::to_string(options_.timeoutMs) + " ms (--timeout-ms); retry later",
                   "", "overloaded"};
  case Batcher::Submit::TooLarge:
    throw ApiError{429,
                   "the request's " + std::to_string(job->ids.size()) + " texts are more than the queue holds (" +
                       std::to_string(options_.maxQueue) + ", --max-queue)",
                   "", "overloaded"};
  case Batcher::Submit::Stopped: throw ApiError{503, "the server is shutting down", "", "unhealthy"};
  }
  if (!job->waitUntil(deadline)) {
    job->abandoned.store(true);
    throw ApiError{503, "not answered within " + std::to_string(options_.timeoutMs) + " ms (--timeout-ms)", "",
                   "timeout"};
  }
  if (!job->error.empty())
    throw ApiError{500, job->error, "", "backend"};
  if (ComputeTimes *t = currentRequest) {
    t->computed = true;
    t->characters += job->characters;
    for (const auto &ids : job->ids)
      t->tokens += int64_t(ids.size());
    const Clock::time_point first = job->firstPass == Clock::time_point{} ? submitted : job->firstPass;
    t->tokenization += submitted - t->mark; // parsing and tokenising since the last job
    t->queue += first - submitted;
    t->inference += (job->lastPass == Clock::time_point{} ? first : job->lastPass) - first;
    t->mark = Clock::now();
  }
}

const float *Routes::row(Job &job, size_t i, bool normalize, int dims) const {
  float *r = job.outputs.data() + i * size_t(info_.embedding_dim);
  if (normalize && (!info_.normalize || dims < info_.embedding_dim)) { // a shortened vector is renormalised
    double sq = 0;
    for (int k = 0; k < dims; ++k)
      sq += double(r[k]) * double(r[k]);
    const double inv = 1.0 / std::max(std::sqrt(sq), 1e-12); // torch.nn.functional.normalize's eps
    for (int k = 0; k < dims; ++k)
      r[k] = float(double(r[k]) * inv);
  }
  return r;
}

void Routes::install() {
  // A POST handler reads the body the HTTP layer decoded (and held to --max-body-bytes, also once decompressed).
  auto guardedPost = [](auto fn) {
    return Handler([fn](const http::Request &req, http::Response &res) { fn(req, res, req.body); });
  };
  auto guarded = [](auto fn) { return Handler(fn); };

  auto limits = [this] {
    RequestLimits l;
    l.maxInputTexts = options_.maxInputTexts;
    l.maxSeq = info_.max_seq;
    l.vocabSize = info_.vocab_size;
    l.hidden = info_.embedding_dim;
    l.autoTruncate = options_.autoTruncate;
    l.allowTokenIds = options_.allowTokenIds;
    return l;
  }();

  // The request's texts tokenised (token id input taken as it is).
  auto jobOf = [this](EmbedRequest &r) {
    auto job = std::make_shared<Job>();
    if (!r.ids.empty()) {
      job->ids = std::move(r.ids);
      return job;
    }
    job->ids.reserve(r.texts.size());
    const std::string prompt = promptText(r.promptName);
    if (r.role)
      job->role = *r.role;
    for (size_t i = 0; i < r.texts.size(); ++i) {
      const std::string &text = prompt.empty() ? r.texts[i] : prompt + r.texts[i];
      if (r.role) // a role cuts a text to its own length, as PyLate does
        job->ids.push_back(tokenizeRole(*r.role, text, r.field(i), job->attended.emplace_back()));
      else
        job->ids.push_back(tokenize(text, r.truncate, r.field(i)));
      job->characters += characters(r.texts[i]);
    }
    return job;
  };

  // A job of per-token answers (/embed_all, /embed_multi_vector): its token count, at most
  // --max-batch-tokens (413 beyond: the answer is ~12 bytes per float as text).
  auto tokensWithinLimit = [this](const Job &job, const char *route) {
    int64_t tokens = 0;
    for (const auto &ids : job.ids)
      tokens += int64_t(ids.size());
    if (tokens > options_.maxBatchTokens)
      throw ApiError{413,
                     "has " + std::to_string(tokens) + " tokens in all, more than --max-batch-tokens (" +
                         std::to_string(options_.maxBatchTokens) + "), the most one " + route +
                         " request is answered for",
                     "inputs", "validation"};
    return tokens;
  };

  // A route of the other kind of model: TEI's 424 and words.
  const bool classifier = info_.num_labels > 0;
  const bool pooled = info_.has_pooled_output != 0;
  const bool sparse = std::string(info_.pooling) == "splade"; // SPLADE: one weight per vocabulary entry
  const bool lexical = info_.sparse && !sparse;               // a lexical-weights head (bge-m3)
  const int multiVector = info_.multivector_dim;              // a multi-vector head's width (bge-m3's ColBERT)
  std::vector<std::string> roleNames; // a ColBERT model's ("query", "document")
  for (int64_t i = 0, n = encrt_model_role_count(model_); i < n; ++i) {
    const char *name = nullptr;
    if (!encrt_model_get_role(model_, i, &name))
      roleNames.emplace_back(name);
  }
  std::string roles; // as errors quote them: "query", "document"
  for (const std::string &r : roleNames)
    roles += (roles.empty() ? "\"" : ", \"") + r + "\"";
  auto requireEmbedder = [classifier, pooled, multiVector] {
    if (classifier)
      throw ApiError{424, "Model is not an embedding model (a classifier: POST /predict, or /rerank with one label)",
                     "", "backend"};
    if (!pooled && multiVector)
      throw ApiError{424, "the model's output is token vectors (a ColBERT model): POST /embed_multi_vector with a "
                          "\"role\"", "", "backend"};
    if (!pooled)
      throw ApiError{424, "the model has no pooled output (compiled with --pooling none): POST /embed_all gives "
                          "each token's hidden state", "", "backend"};
  };

  // TEI's embed: also at / (huggingface_hub's InferenceClient(model=URL).feature_extraction posts there) and
  // /invocations (SageMaker), as TEI routes them for an embedding model.
  const auto embedBody = [=](const http::Request &, http::Response &res, const std::string &body) {
    requireEmbedder();
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    EmbedRequest r = parseTeiEmbed(body, limits);
    if (sparse && r.normalize) // TEI's words and status
      throw ApiError{424, "`normalize` is not available for SPLADE models (POST /embed_sparse gives their weights)",
                     "", "backend"};
    if (!r.normalize && info_.normalize)
      throw invalidField(Api::Tei, "normalize",
                         "false is not available: this model L2-normalises inside its compiled graph "
                         "(sentence-transformers' Normalize module); recompile it with encc compile --no-normalize "
                         "to serve raw embeddings (\"normalize\": true, the default, then normalises them here)");
    std::shared_ptr<Job> job = jobOf(r);
    run(job, deadline);
    std::string out;
    out.reserve(job->ids.size() * size_t(info_.embedding_dim) * 12 + 2);
    out += '[';
    const int dims = r.dimensions ? r.dimensions : info_.embedding_dim;
    for (size_t i = 0; i < job->ids.size(); ++i) {
      if (i)
        out += ',';
      appendFloatArray(out, row(*job, i, r.normalize, dims), size_t(dims));
    }
    out += ']';
    res.setContent(out, "application/json");
  };
  post_["/embed"] = guardedPost(embedBody);

  // TEI's similarity: the cosine of inputs.source_sentence's embedding with each of inputs.sentences'.
  const auto similarityBody = [=](const http::Request &, http::Response &res, const std::string &body) {
    requireEmbedder();
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    EmbedRequest r = parseTeiSimilarity(body, limits);
    std::shared_ptr<Job> job = jobOf(r);
    run(job, deadline);
    const size_t dims = size_t(info_.embedding_dim);
    const float *source = job->outputs.data();
    std::vector<float> cosines;
    for (size_t i = 1; i < job->ids.size(); ++i) {
      const float *v = job->outputs.data() + i * dims;
      double dot = 0, ns = 0, nv = 0;
      for (size_t k = 0; k < dims; ++k) {
        dot += double(source[k]) * double(v[k]);
        ns += double(source[k]) * double(source[k]);
        nv += double(v[k]) * double(v[k]);
      }
      cosines.push_back(float(dot / std::max(std::sqrt(ns * nv), 1e-12)));
    }
    std::string out;
    appendFloatArray(out, cosines.data(), cosines.size());
    res.setContent(out, "application/json");
  };
  post_["/similarity"] = guardedPost(similarityBody);
  // An embedding model's / and /invocations: TEI's embed, or its similarity for a body shaped as one
  // (TEI routes them there only when started with TASK=sentence-similarity; huggingface_hub's
  // InferenceClient(model=URL).sentence_similarity posts such a body to /).
  const auto teiEmbed = guardedPost([=](const http::Request &req, http::Response &res, const std::string &body) {
    if (isTeiSimilarity(body))
      similarityBody(req, res, body);
    else
      embedBody(req, res, body);
  });

  // TEI's embed_sparse (SPLADE models; bge-m3's lexical weights): each text's non-zero weights,
  // [[{"index": token id, "value"}]] by index.
  const auto teiEmbedSparse = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    if (!sparse && !lexical)
      throw ApiError{424, "Model is not an embedding model with SPLADE pooling or a lexical-weights head", "",
                     "backend"};
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    EmbedRequest r = parseTeiEmbed(body, limits); // inputs, truncate, prompt_name (TEI ignores the rest)
    std::shared_ptr<Job> job = jobOf(r);
    job->wantSparse = lexical;
    run(job, deadline);
    std::string out = "[";
    if (lexical) {
      for (size_t i = 0; i < job->sparse.size(); ++i) {
        out += i ? ",[" : "[";
        for (size_t k = 0; k < job->sparse[i].size(); ++k) {
          out += k ? ",{\"index\":" : "{\"index\":";
          out += std::to_string(job->sparse[i][k].first) + ",\"value\":";
          appendFloat(out, job->sparse[i][k].second);
          out += '}';
        }
        out += ']';
      }
      out += ']';
      res.setContent(out, "application/json");
      return;
    }
    for (size_t i = 0; i < job->ids.size(); ++i) {
      out += i ? ",[" : "[";
      const float *v = job->outputs.data() + i * size_t(info_.embedding_dim);
      bool first = true;
      for (int k = 0; k < info_.embedding_dim; ++k) {
        if (v[k] == 0.0f)
          continue;
        out += first ? "{\"index\":" : ",{\"index\":";
        out += std::to_string(k) + ",\"value\":";
        appendFloat(out, v[k]);
        out += '}';
        first = false;
      }
      out += ']';
    }
    out += ']';
    res.setContent(out, "application/json");
  });
  post_["/embed_sparse"] = teiEmbedSparse;

  // A multi-vector model's token vectors (bge-m3's ColBERT output; TEI has no such route): /embed's body,
  // [[[float]]] (texts x vectors x multivector_dim, [CLS]'s left out as the model says). At most
  // --max-batch-tokens tokens per request, as /embed_all.
  post_["/embed_multi_vector"] = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    if (multiVector == 0)
      throw ApiError{424, "Model has no multi-vector output (a ColBERT head such as bge-m3's)", "", "backend"};
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    EmbedRequest r = parseTeiEmbed(body, limits);
    if (!roles.empty() && !r.role)
      throw invalidField(Api::Tei, "role", "is required: a ColBERT model encodes a text as one of " + roles);
    if (roles.empty() && r.role)
      throw invalidField(Api::Tei, "role", "applies to a ColBERT model; this one has no roles");
    std::shared_ptr<Job> job = jobOf(r);
    const int64_t tokens = tokensWithinLimit(*job, "/embed_multi_vector");
    job->wantVectors = true;
    run(job, deadline);
    res.setContent(tokenRowsJson(job->vectors, size_t(multiVector), tokens), "application/json");
  });

  // TEI's embed_all: each text's last hidden state, special tokens included: [[[float]]] (texts x tokens x
  // hidden). At most --max-batch-tokens tokens per request: the answer is ~12 bytes per float as text.
  post_["/embed_all"] = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    if (classifier)
      throw ApiError{424, "Model is not an embedding model", "", "backend"};
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    EmbedRequest r = parseTeiEmbed(body, limits);
    std::shared_ptr<Job> job = jobOf(r);
    const int64_t tokens = tokensWithinLimit(*job, "/embed_all");
    job->wantTokenStates = true;
    run(job, deadline);
    res.setContent(tokenRowsJson(job->tokenStates, size_t(info_.hidden_size), tokens), "application/json");
  });

  // TEI's predict: every input's labels by descending score. One input
  // answers [{"score", "label"}, ...], a list of inputs a list of those.
  const auto teiPredict = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    if (!classifier)
      throw ApiError{424, "Model is not a classifier model", "", "backend"};
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    const PredictRequest r = parseTeiPredict(body, limits);
    std::shared_ptr<Job> job = classifierJob(r);
    run(job, deadline);
    std::string out = r.batch ? "[" : "";
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      const std::vector<float> s = scores(*job, i, r.rawScores);
      std::vector<size_t> order(s.size());
      for (size_t k = 0; k < order.size(); ++k)
        order[k] = k;
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return s[x] > s[y]; });
      out += i ? ",[" : "[";
      for (size_t k = 0; k < order.size(); ++k) {
        out += k ? ",{\"score\":" : "{\"score\":";
        appendFloat(out, s[order[k]]);
        out += ",\"label\":";
        appendJsonString(out, labels_[order[k]]);
        out += '}';
      }
      out += ']';
    }
    if (r.batch)
      out += ']';
    res.setContent(out, "application/json");
  });
  post_["/predict"] = teiPredict;

  // TEI's rerank (a classifier with one label): the texts by descending
  // score of (query, text), [{"index", "text"?, "score"}, ...].
  const auto teiRerank = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    if (info_.num_labels != 1)
      throw ApiError{424,
                     classifier ? "model is not a re-ranker model (it has " + std::to_string(info_.num_labels) +
                                      " labels: POST /predict)"
                                : std::string("model is not a re-ranker model"),
                     "", "backend"};
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    const PredictRequest r = parseTeiRerank(body, limits);
    std::shared_ptr<Job> job = classifierJob(r);
    run(job, deadline);
    std::vector<std::pair<float, size_t>> ranks;
    for (size_t i = 0; i < r.inputs.size(); ++i)
      ranks.emplace_back(scores(*job, i, r.rawScores)[0], i);
    std::stable_sort(ranks.begin(), ranks.end(), [](const auto &x, const auto &y) { return x.first > y.first; });
    std::string out = "[";
    for (const auto &[score, i] : ranks) {
      out += out.size() > 1 ? ",{\"index\":" : "{\"index\":";
      out += std::to_string(i);
      if (r.returnText) {
        out += ",\"text\":";
        appendJsonString(out, r.inputs[i].first);
      }
      out += ",\"score\":";
      appendFloat(out, score);
      out += '}';
    }
    out += ']';
    res.setContent(out, "application/json");
  });
  post_["/rerank"] = teiRerank;
  // / and /invocations: what the model does, as TEI routes them (a classifier with one label is a reranker).
  for (const char *path : {"/", "/invocations"})
    post_[path] = sparse ? teiEmbedSparse : !classifier ? teiEmbed : info_.num_labels == 1 ? teiRerank : teiPredict;

  post_["/tokenize"] = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    const EmbedRequest r = parseTeiTokenize(body, limits);
    const std::string prompt = promptText(r.promptName); // offsets are into prompt + text, as TEI's
    std::string out = "[";
    for (size_t i = 0; i < r.texts.size(); ++i) {
      if (i)
        out += ',';
      appendTokens(out, prompt + r.texts[i], r.addSpecialTokens, r.truncate, r.field(i));
    }
    out += ']';
    res.setContent(out, "application/json");
  });

  // TEI's /decode: each id list's text, as the tokenizer.json decoder makes it.
  post_["/decode"] = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    const DecodeRequest r = parseTeiDecode(body, limits);
    std::string out = "[";
    for (size_t i = 0; i < r.ids.size(); ++i) {
      const std::vector<int32_t> &ids = r.ids[i];
      int64_t size = 0;
      encrt_status *st =
          encrt_model_decode(model_, ids.data(), int64_t(ids.size()), r.skipSpecialTokens, nullptr, 0, &size);
      std::string text;
      if (!st) {
        text.resize(size_t(size));
        st = encrt_model_decode(model_, ids.data(), int64_t(ids.size()), r.skipSpecialTokens, text.data(), size,
                                &size);
      }
      if (st)
        throwTokenizerStatus(st, r.field(i));
      if (i)
        out += ',';
      appendJsonString(out, text);
    }
    out += ']';
    res.setContent(out, "application/json");
  });

  // OpenAI's embeddings, also at /embeddings (TEI's alias).
  const auto openAiEmbed = guardedPost([=](const http::Request &, http::Response &res, const std::string &body) {
    requireEmbedder();
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
    EmbedRequest r = parseOpenAiEmbeddings(body, limits);
    std::shared_ptr<Job> job = jobOf(r);
    run(job, deadline);
    int64_t tokens = 0;
    for (const auto &ids : job->ids)
      tokens += int64_t(ids.size());
    std::string out = "{\"object\":\"list\",\"data\":[";
    out.reserve(job->ids.size() * size_t(info_.embedding_dim) * 12 + 256);
    for (size_t i = 0; i < job->ids.size(); ++i) {
      out += i ? ",{" : "{";
      out += "\"object\":\"embedding\",\"index\":" + std::to_string(i) + ",\"embedding\":";
      const int dims = r.dimensions ? r.dimensions : info_.embedding_dim;
      const float *v = row(*job, i, true, dims);
      if (r.base64) {
        out += '"';
        appendBase64(out, v, size_t(dims) * sizeof(float));
        out += '"';
      } else {
        appendFloatArray(out, v, size_t(dims));
      }
      out += '}';
    }
    out += "],\"model\":";
    appendJsonString(out, options_.modelId);
    out += ",\"usage\":{\"prompt_tokens\":" + std::to_string(tokens) + ",\"total_tokens\":" +
           std::to_string(tokens) + "}}";
    res.setContent(out, "application/json");
  });
  for (const char *path : {"/v1/embeddings", "/embeddings"})
    post_[path] = openAiEmbed;

  get_["/info"] = guarded([=](const http::Request &, http::Response &res) {
    json modelType = {{"embedding", {{"pooling", info_.pooling}}}};
    if (classifier) { // TEI: a reranker has one label, a classifier more
      json id2label = json::object(), label2id = json::object();
      for (size_t i = 0; i < labels_.size(); ++i) {
        id2label[std::to_string(i)] = labels_[i];
        label2id[labels_[i]] = i;
      }
      modelType = {{info_.num_labels == 1 ? "reranker" : "classifier",
                    {{"id2label", id2label}, {"label2id", label2id}}}};
    }
    json out = {{"model_id", options_.modelId},
                {"served_model_name", options_.modelId}, // what /v1/embeddings answers as "model"
                {"model_dtype", info_.precision ? info_.precision : "fp32"},
                {"model_type", modelType},
                {"architecture", info_.architecture},
                {"hidden_size", info_.hidden_size},
                {"embedding_dim", info_.embedding_dim},
                {"normalizes", bool(info_.normalize)},
                {"max_input_length", info_.max_seq},
                {"max_batch_tokens", options_.maxBatchTokens},
                {"max_batch_requests", options_.maxBatchRequests},
                {"max_client_batch_size", options_.maxInputTexts},
                {"max_concurrent_requests", options_.maxQueue},
                {"auto_truncate", options_.autoTruncate},
                {"tokenization_workers", options_.httpThreads}, // texts are tokenised on the handler threads
                {"device", info_.device},
                {"cpu_target", info_.cpu_target},
                {"version", encrt_version()}};
    if (multiVector) { // encc's: a multi-vector model's width and roles (/embed_multi_vector)
      out["multivector_dim"] = multiVector;
      out["roles"] = roleNames;
    }
    res.setContent(out.dump(), "application/json");
  });

  const auto health = [this](const http::Request &, http::Response &res) {
    const bool draining = draining_.load();
    res.status = draining ? 503 : 200;
    res.setContent(draining ? "{\"status\":\"draining\"}" : "{\"status\":\"ok\"}", "application/json");
  };
  for (const char *path : {"/health", "/ping"}) // /ping: SageMaker's health check, as TEI answers it
    get_[path] = health;

  get_["/metrics"] = [this](const http::Request &, http::Response &res) {
    res.setContent(metrics_.render(), "text/plain; version=0.0.4");
  };
}


namespace {

/// Whether `origin` is one of the comma-separated `allowed` ("*": any).
bool originAllowed(const std::string &allowed, std::string_view origin) {
  if (origin.empty() || allowed.empty())
    return false;
  size_t from = 0;
  while (from <= allowed.size()) {
    const size_t comma = std::min(allowed.find(',', from), allowed.size());
    std::string entry = allowed.substr(from, comma - from);
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    if (entry == "*" || entry == origin)
      return true;
    from = comma + 1;
  }
  return false;
}

} // namespace

void Routes::route(const http::Request &req, http::Response &res) {
  // Bodies are JSON: another declared type (curl -d's form encoding, text/plain) gets TEI's 415.
  if (req.method == "POST" && req.has("Content-Type")) {
    std::string type(req.header("Content-Type"));
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ')
      type.pop_back();
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (type != "application/json")
      throw ApiError{415, "Expected request with `Content-Type: application/json` (got " + printable(type) + ")", "",
                     "unsupported_media_type"};
  }
  // CORS (--cors-allow-origin): a browser's preflight, for the listed origins only.
  if (req.method == "OPTIONS" && !options_.corsAllowOrigin.empty()) {
    if (!originAllowed(options_.corsAllowOrigin, req.header("Origin"))) {
      res.status = 403;
      return;
    }
    res.status = 204;
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", "Content-Type, Authorization");
    res.setHeader("Access-Control-Max-Age", "600");
    return;
  }
  if (!options_.apiKey.empty() && req.path != "/health" && req.path != "/ping") {
    const std::string auth(req.header("Authorization"));
    if (!constantTimeEqual(auth, "Bearer " + options_.apiKey)) {
      res.setHeader("WWW-Authenticate", "Bearer");
      throw ApiError{401, auth.empty() ? "missing API key (Authorization: Bearer KEY)" : "wrong API key", "",
                     "unauthorized"};
    }
  }
  const auto &table = req.method == "POST" ? post_ : get_;
  if (auto it = table.find(req.path); it != table.end() && (req.method == "POST" || req.method == "GET")) {
    it->second(req, res);
    return;
  }
  const auto &other = req.method == "POST" ? get_ : post_;
  if (other.count(req.path)) {
    res.setHeader("Allow", req.method == "POST" ? "GET" : "POST");
    throw ApiError{405, "no route " + printable(req.method) + " " + printable(req.path) + " (it is a " +
                            (req.method == "POST" ? "GET" : "POST") + " route)", "", "method_not_allowed"};
  }
  throw ApiError{404, "no route " + printable(req.method) + " " + printable(req.path) +
                          " (routes: POST /embed (also / and /invocations), POST /embed_all, POST /embed_sparse, "
                          "POST /embed_multi_vector, "
                          "POST /predict, POST /rerank, POST /similarity, POST /tokenize, POST /decode, POST /v1/embeddings (also "
                          "/embeddings), GET /info, GET /health, GET /ping, GET /metrics)",
                 "", "not_found"};
}

void Routes::handle(const http::Request &req, http::Response &res) {
  const Clock::time_point start = Clock::now();
  ++inFlight_;
  ComputeTimes times;
  times.start = times.mark = start;
  currentRequest = &times;
  // Errors thrown by a handler become their JSON answer.
  try {
    route(req, res);
    if (times.computed && res.status == 200) { // TEI's headers on what ran the model
      const std::string device = info_.device ? info_.device : "cpu";
      res.setHeader("x-compute-type", device.rfind("cuda", 0) == 0 ? "gpu" : "cpu");
      res.setHeader("x-compute-time", std::to_string(millis(Clock::now() - start)));
      res.setHeader("x-compute-characters", std::to_string(times.characters));
      res.setHeader("x-compute-tokens", std::to_string(times.tokens));
      res.setHeader("x-total-time", std::to_string(millis(Clock::now() - start)));
      res.setHeader("x-tokenization-time", std::to_string(millis(times.tokenization)));
      res.setHeader("x-queue-time", std::to_string(millis(times.queue)));
      res.setHeader("x-inference-time", std::to_string(millis(times.inference)));
    }
  } catch (const ApiError &e) {
    sendError(res, req.path, e);
  } catch (const std::bad_alloc &) {
    sendError(res, req.path, ApiError{503, "out of memory", "", "backend"});
  } catch (const std::exception &e) {
    sendError(res, req.path, ApiError{500, e.what(), "", "backend"});
  }
  if (originAllowed(options_.corsAllowOrigin, req.header("Origin"))) {
    res.setHeader("Access-Control-Allow-Origin", std::string(req.header("Origin")));
    res.setHeader("Vary", "Origin");
  }
  currentRequest = nullptr;
  --inFlight_;
  metrics_.request(routeLabel(req.path), res.status, std::chrono::duration<double>(Clock::now() - start).count());
}

void Routes::refuse(const http::Request &req, int status, const std::string &message, http::Response &res) {
  sendError(res, req.path,
            ApiError{status, message, "",
                     status == 408   ? "timeout"
                     : status == 503 ? "overloaded"
                     : status == 415 ? "unsupported_media_type"
                                     : "validation"});
  metrics_.request(routeLabel(req.path), status, 0.0);
}

} // namespace encc::serve
