//===- RunCommands.cpp - encc run / embed / rerank / tokenize -------------===//

#include "compiler/driver/RunCommands.h"
#include "compiler/driver/CommandOutput.h"
#include "compiler/driver/JsonOutput.h"
#include "compiler/driver/SignCommands.h"
#include "compiler/driver/TokenizerText.h"

#include "encrt/artifact_generated.h"
#include "encrt/checksum.h"
#include "encrt/encrt.h"
#include "frontends/RegularFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

using namespace encc;

namespace {

/// Prints and frees a failed status; returns true when `s` is an error.
bool failed(encrt_status *s) {
  if (!s)
    return false;
  llvm::errs() << "encc: error: " << encrt_status_message(s) << "\n";
  encrt_status_free(s);
  return true;
}

struct ModelDeleter {
  void operator()(encrt_model *m) const { encrt_model_release(m); }
};
struct SessionDeleter {
  void operator()(encrt_session *s) const { encrt_session_release(s); }
};
using ModelPtr = std::unique_ptr<encrt_model, ModelDeleter>;
using SessionPtr = std::unique_ptr<encrt_session, SessionDeleter>;

/// Loads the artifact named by the first positional and opens a session.
bool openModel(const Args &args, const char *command, ModelPtr &model, SessionPtr &session) {
  if (args.positionals.empty()) {
    fail(std::string("'encc ") + command + "' needs an artifact (encc " + command + " model.encm ...)");
    return false;
  }
  encrt_model_options mo;
  encrt_model_options_initialize(&mo);
  std::string threads = args.get("threads"), cpu = args.get("cpu-target"), device = args.get("device");
  if (!threads.empty()) {
    char *end = nullptr;
    long n = std::strtol(threads.c_str(), &end, 10);
    if (*end || n < 0 || n > 1024) {
      fail("--threads expects a number of threads (0 = all cores), got '" + threads + "'");
      return false;
    }
    mo.num_threads = static_cast<int32_t>(n);
  }
  if (!cpu.empty())
    mo.cpu_target = cpu.c_str();
  if (!device.empty())
    mo.device = device.c_str();
  std::string sha = args.get("require-sha256"), signature = args.get("signature"), key;
  if (args.has("trusted-key")) {
    std::string error;
    key = readPublicKeyFile(args.get("trusted-key"), error);
    if (key.empty()) {
      fail("--trusted-key: " + error);
      return false;
    }
  } else if (!signature.empty()) {
    fail("--signature needs --trusted-key (the public key to check it with)");
    return false;
  }
  if (args.has("require-sha256"))
    mo.require_sha256 = sha.c_str();
  if (!key.empty())
    mo.trusted_public_key = key.c_str();
  if (!signature.empty())
    mo.signature_path = signature.c_str();
  encrt_model *m = nullptr;
  if (failed(encrt_model_load(args.positionals[0].c_str(), &mo, &m)))
    return false;
  model.reset(m);
  encrt_session_options so;
  encrt_session_options_initialize(&so);
  so.enable_profiling = args.has("profile") ? 1 : 0;
  encrt_session *s = nullptr;
  if (failed(encrt_session_create(m, &so, &s)))
    return false;
  session.reset(s);
  return true;
}

bool parseIds(const std::string &text, std::vector<int32_t> &ids) {
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    for (char &c : tok)
      if (c == ',')
        c = ' ';
    std::istringstream parts(tok);
    std::string p;
    while (parts >> p) {
      char *end = nullptr;
      long long v = std::strtoll(p.c_str(), &end, 10);
      if (*end || v < INT32_MIN || v > INT32_MAX) {
        fail("--ids expects whitespace-separated integer token ids, got '" + p + "'");
        return false;
      }
      ids.push_back(static_cast<int32_t>(v));
    }
  }
  if (ids.empty()) {
    fail("--ids is empty: give at least one token id");
    return false;
  }
  return true;
}

/// The session's accumulated per-step times (ms), in plan order.
std::vector<double> profileSnapshot(encrt_session *s) {
  std::vector<double> ms(static_cast<size_t>(encrt_session_profile_count(s)));
  for (size_t i = 0; i < ms.size(); ++i) {
    encrt_step_profile p;
    encrt_session_profile_get(s, static_cast<int64_t>(i), &p, sizeof p);
    ms[i] = p.total_ms;
  }
  return ms;
}

/// Per-kernel times per run over the runs since `before` (a profileSnapshot;
/// empty: since the session began), most expensive first.
void printProfile(encrt_session *s, const std::vector<double> &before, int64_t runs) {
  int64_t n = encrt_session_profile_count(s);
  if (n == 0)
    return;
  struct Row {
    std::string op, kernel;
    int64_t steps = 0;
    double ms = 0;
  };
  std::map<std::string, Row> byKernel;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    encrt_step_profile p;
    encrt_session_profile_get(s, i, &p, sizeof p);
    const double ms = (p.total_ms - (size_t(i) < before.size() ? before[i] : 0.0)) / double(runs);
    Row &r = byKernel[p.kernel];
    r.op = p.op;
    r.kernel = p.kernel;
    r.steps += 1;
    r.ms += ms;
    total += ms;
  }
  std::vector<Row> rows;
  for (auto &kv : byKernel)
    rows.push_back(kv.second);
  std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.ms > b.ms; });
  llvm::errs() << "profile: " << n << " steps, " << num(total, 3) << " ms in kernels"
               << (runs > 1 ? " per run (mean of " + std::to_string(runs) + " runs)" : std::string()) << "\n";
  llvm::errs() << "  " << llvm::left_justify("op", 16) << " " << llvm::left_justify("kernel", 44) << " steps"
               << "        ms      %\n";
  for (const Row &r : rows)
    llvm::errs() << "  " << llvm::left_justify(r.op, 16) << " " << llvm::left_justify(r.kernel, 44) << " "
                 << llvm::right_justify(std::to_string(r.steps), 5) << " " << llvm::right_justify(num(r.ms, 3), 9)
                 << " " << llvm::right_justify(num(100 * r.ms / (total > 0 ? total : 1), 1), 6) << "\n";
}

/// What the C API does not tell about a (loaded, hence verified) artifact.
struct ArtifactFacts {
  std::optional<uint64_t> randomSeed; ///< WeightsFill seed
  size_t vocabTokens = 0;             ///< 0: no tokenizer vocabulary
};

ArtifactFacts readArtifactFacts(const std::string &path) {
  ArtifactFacts facts;
  auto buf = readRegularFile(path, kMaxArtifactFileBytes, "artifact");
  if (!buf) {
    llvm::consumeError(buf.takeError()); // the load that follows says what is wrong
    return facts;
  }
  if ((*buf)->getBufferSize() < ENCM_TRAILER_SIZE)
    return facts;
  const auto *data = reinterpret_cast<const uint8_t *>((*buf)->getBufferStart());
  flatbuffers::Verifier verifier(data, (*buf)->getBufferSize() - ENCM_TRAILER_SIZE);
  if (!encm::ModelBufferHasIdentifier(data) || !encm::VerifyModelBuffer(verifier))
    return facts;
  const encm::Model *m = encm::GetModel(data);
  if (const encm::WeightsFill *fill = m->weights_fill())
    facts.randomSeed = fill->seed();
  facts.vocabTokens = describeTokenizer(m->tokenizer()).vocabTokens;
  return facts;
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

int encc::runCommand(const Args &args) {
  ModelPtr model;
  SessionPtr session;
  if (!openModel(args, "run", model, session))
    return 1;
  if (args.all("ids").empty())
    return fail("'encc run' needs token ids: --ids \"101 7592 2088 102\" (repeat --ids for a batch)");
  std::vector<std::vector<int32_t>> seqs, typeSeqs;
  for (const std::string &s : args.all("ids")) {
    seqs.emplace_back();
    if (!parseIds(s, seqs.back()))
      return 1;
  }
  for (const std::string &s : args.all("type-ids")) {
    typeSeqs.emplace_back();
    if (!parseIds(s, typeSeqs.back()))
      return 1;
  }
  if (!typeSeqs.empty()) {
    if (typeSeqs.size() != seqs.size())
      return fail("--type-ids given " + std::to_string(typeSeqs.size()) + " times for " +
                  std::to_string(seqs.size()) + " --ids (one per sequence, or none: every type 0)");
    for (size_t b = 0; b < seqs.size(); ++b)
      if (typeSeqs[b].size() != seqs[b].size())
        return fail("--type-ids of sequence " + std::to_string(b) + " has " + std::to_string(typeSeqs[b].size()) +
                    " entries for " + std::to_string(seqs[b].size()) + " ids");
  }
  encrt_model_info info;
  encrt_model_get_info(model.get(), &info, sizeof info);
  std::optional<uint64_t> seed = readArtifactFacts(args.positionals[0]).randomSeed;
  const bool random = info.random_weights != 0 || seed.has_value();
  int64_t batch = static_cast<int64_t>(seqs.size()), seq = 0;
  for (auto &s : seqs)
    seq = std::max<int64_t>(seq, static_cast<int64_t>(s.size()));
  std::vector<int32_t> ids(batch * seq, 0), types(typeSeqs.empty() ? 0 : batch * seq, 0), lengths(batch);
  for (int64_t b = 0; b < batch; ++b) {
    lengths[b] = static_cast<int32_t>(seqs[b].size());
    std::copy(seqs[b].begin(), seqs[b].end(), ids.begin() + b * seq);
    if (!typeSeqs.empty())
      std::copy(typeSeqs[b].begin(), typeSeqs[b].end(), types.begin() + b * seq);
  }
  int64_t runs = 1;
  if (args.has("runs")) {
    const std::string v = args.get("runs");
    char *end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || n < 1 || n > 1000000)
      return fail("--runs expects a number of timed runs from 1 to 1000000, got '" + v + "'");
    runs = n;
  }
  int64_t h = info.hidden_size;
  // The second output: the pooled embedding, or a cross-encoder's logits.
  const bool logits = info.num_labels > 0;
  const int64_t w = logits ? info.num_labels : info.embedding_dim;
  std::vector<float> hidden(batch * seq * h), pooled(info.has_pooled_output || logits ? batch * w : 0);
  auto runOnce = [&] {
    return !failed(encrt_session_run_typed(session.get(), ids.data(), types.empty() ? nullptr : types.data(),
                                           lengths.data(), batch, seq, hidden.data(),
                                           pooled.empty() ? nullptr : pooled.data()));
  };
  // --runs N > 1: one untimed warm-up run (first-touch of the arena, caches),
  // then N timed runs; the latency is their median, the profile their mean.
  if (runs > 1 && !runOnce())
    return 1;
  const std::vector<double> before = runs > 1 ? profileSnapshot(session.get()) : std::vector<double>{};
  std::vector<double> times;
  for (int64_t r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (!runOnce())
      return 1;
    times.push_back(msSince(t0));
  }
  std::sort(times.begin(), times.end());
  auto quantile = [&](double q) { return times[static_cast<size_t>(q * double(times.size() - 1) + 0.5)]; };
  const double ms = quantile(0.5);

  if (args.get("format") == "json") {
    Json j;
    j["batch"] = batch;
    j["seq"] = seq;
    j["hidden_size"] = h;
    j["latency_ms"] = ms;
    if (runs > 1) {
      j["runs"] = runs;
      j["latency_p10_ms"] = quantile(0.1);
      j["latency_p90_ms"] = quantile(0.9);
    }
    j["random_weights"] = random;
    j["lengths"] = lengths;
    Json &out = j["hidden"] = Json::array(); // [batch][valid tokens][hidden]
    for (int64_t b = 0; b < batch; ++b)
      out.push_back(jsonMatrix(hidden.data() + b * seq * h, lengths[b], h));
    if (!pooled.empty())
      j[logits ? "logits" : "pooled"] = jsonMatrix(pooled.data(), batch, w);
    printJson(llvm::outs(), j);
  } else {
    auto &os = llvm::outs();
    if (random)
      os << randomWeightsLine(seed.value_or(0)) << "\n";
    os << "last hidden state: [" << batch << ", " << seq << ", " << h << "] (" << num(ms, 2) << " ms";
    if (runs > 1)
      os << ": median of " << runs << " runs after a warm-up, p10 " << num(quantile(0.1), 2) << ", p90 "
         << num(quantile(0.9), 2);
    os << ")\n";
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < lengths[b] && s < 4; ++s) {
        os << "  [" << b << ", " << s << ", :8] ";
        for (int64_t k = 0; k < std::min<int64_t>(8, h); ++k)
          os << llvm::right_justify(num(hidden[(b * seq + s) * h + k]), 8) << " ";
        os << "\n";
      }
    if (!pooled.empty()) {
      if (logits)
        os << "logits (" << w << (w == 1 ? " label" : " labels") << ", before the " << info.score_activation
           << " that encc rerank applies): [" << batch << ", " << w << "]\n";
      else
        os << "pooled (" << info.pooling << (info.normalize ? ", L2-normalised" : "") << "): [" << batch << ", " << w
           << "]\n";
      for (int64_t b = 0; b < batch; ++b) {
        os << "  [" << b << ", :8] ";
        for (int64_t k = 0; k < std::min<int64_t>(8, w); ++k)
          os << llvm::right_justify(num(pooled[b * w + k]), 8) << " ";
        os << "\n";
      }
    }
  }
  if (args.has("profile"))
    printProfile(session.get(), before, runs);
  return 0;
}

namespace {

/// The texts of embed / tokenize: the positionals after the artifact, then
/// each non-empty line of every --file (every byte is text, NUL included).
/// Fails (returns false, after printing why) when there are none or the
/// artifact has no tokenizer.
/// --truncation (default longest_first); false after printing the error.
bool pairTruncation(const Args &args, encrt_pair_truncation &strategy) {
  const std::string truncation = args.has("truncation") ? args.get("truncation") : "longest_first";
  strategy = truncation == "only_first"    ? ENCRT_TRUNCATE_ONLY_FIRST
             : truncation == "only_second" ? ENCRT_TRUNCATE_ONLY_SECOND
                                           : ENCRT_TRUNCATE_LONGEST_FIRST;
  if (truncation != "longest_first" && truncation != "only_first" && truncation != "only_second")
    return fail("--truncation must be longest_first, only_first or only_second, not '" + truncation + "'"), false;
  return true;
}

bool readTexts(const Args &args, const char *command, std::vector<std::string> &texts) {
  texts.assign(args.positionals.begin() + 1, args.positionals.end());
  for (const std::string &path : args.all("file")) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return fail(path + ": cannot open the text file"), false;
    for (std::string line; std::getline(in, line);)
      if (!line.empty())
        texts.push_back(line);
  }
  if (texts.empty())
    return fail(std::string("'encc ") + command + "' needs at least one text: encc " + command +
                " model.encm \"A sentence.\" [--file lines.txt]"),
           false;
  if (readArtifactFacts(args.positionals[0]).vocabTokens == 0)
    return fail(args.positionals[0] + ": the artifact has no tokenizer (compiled from a folder without a tokenizer "
                                      "encc implements; see the compile notes); use 'encc run --ids' with token ids"),
           false;
  return true;
}

std::vector<encrt_text> textViews(const std::vector<std::string> &texts) {
  std::vector<encrt_text> views;
  for (const std::string &t : texts)
    views.push_back({t.data(), static_cast<int64_t>(t.size())});
  return views;
}

} // namespace

namespace {

/// encc tokenize --offsets: each text's tokens with the bytes they cover
/// (JSON: {"texts", "tokens": [[{"id", "token", "special", "start", "stop"}]]};
/// text: one line per token, its id, string and span, and the span's text).
int printTokenOffsets(encrt_model *model, const std::vector<std::string> &texts,
                      const std::vector<std::vector<encrt_token>> &tokens, bool json) {
  auto tokenString = [&](int32_t id) {
    const char *text = nullptr;
    int64_t size = 0;
    if (encrt_status *st = encrt_model_get_token(model, id, &text, &size)) {
      encrt_status_free(st);
      return std::string("?");
    }
    return std::string(text, static_cast<size_t>(size));
  };
  if (json) {
    Json j;
    j["texts"] = texts;
    Json all = Json::array();
    for (const auto &list : tokens) {
      Json one = Json::array();
      for (const encrt_token &t : list)
        one.push_back({{"id", t.id}, {"token", tokenString(t.id)}, {"special", t.special == 1}, {"start", t.start},
                       {"stop", t.stop}});
      all.push_back(std::move(one));
    }
    j["tokens"] = std::move(all);
    printJson(llvm::outs(), j);
    return 0;
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    llvm::outs() << "[" << i << "] " << tokens[i].size() << " tokens:\n";
    for (const encrt_token &t : tokens[i]) {
      llvm::outs() << "  " << t.id << " " << jsonText(Json(tokenString(t.id)));
      if (t.special)
        llvm::outs() << " special\n";
      else
        llvm::outs() << " " << t.start << ":" << t.stop << " "
                     << jsonText(Json(texts[i].substr(size_t(t.start), size_t(t.stop - t.start)))) << "\n";
    }
  }
  return 0;
}

} // namespace

int encc::tokenizeCommand(const Args &args) {
  ModelPtr model;
  SessionPtr session;
  std::vector<std::string> texts;
  if (!openModel(args, "tokenize", model, session) || !readTexts(args, "tokenize", texts))
    return 1;
  const bool pairs = args.has("pair");
  encrt_pair_truncation strategy;
  if (!pairTruncation(args, strategy))
    return 1;
  if (args.has("truncation") && !pairs)
    return fail("--truncation applies to --pair only (a single text keeps its beginning)");
  if (pairs && texts.size() % 2 != 0)
    return fail("--pair takes the texts two at a time; " + std::to_string(texts.size()) + " is odd");
  const std::vector<encrt_text> views = textViews(texts);
  if (args.has("offsets")) {
    if (pairs)
      return fail("--offsets applies to single texts, not --pair");
    encrt_model_info info;
    encrt_model_get_info(model.get(), &info, sizeof info);
    std::vector<std::vector<encrt_token>> tokens;
    for (const encrt_text &v : views) {
      int64_t count = 0;
      if (failed(encrt_model_tokenize_offsets(model.get(), v, 1, info.max_seq, nullptr, 0, &count)))
        return 1;
      tokens.emplace_back(static_cast<size_t>(count));
      if (failed(encrt_model_tokenize_offsets(model.get(), v, 1, info.max_seq, tokens.back().data(), count, &count)))
        return 1;
    }
    return printTokenOffsets(model.get(), texts, tokens, args.get("format") == "json");
  }
  std::vector<std::vector<int32_t>> ids, types;
  for (size_t i = 0; i < views.size(); i += pairs ? 2 : 1) {
    int64_t count = 0;
    if (pairs) {
      if (failed(encrt_model_tokenize_pair(model.get(), views[i], views[i + 1], strategy, nullptr, nullptr, 0, &count)))
        return 1;
      ids.emplace_back(static_cast<size_t>(count));
      types.emplace_back(static_cast<size_t>(count));
      if (failed(encrt_model_tokenize_pair(model.get(), views[i], views[i + 1], strategy, ids.back().data(),
                                           types.back().data(), count, &count)))
        return 1;
      continue;
    }
    if (failed(encrt_model_tokenize_text(model.get(), views[i], nullptr, 0, &count)))
      return 1;
    ids.emplace_back(static_cast<size_t>(count));
    if (failed(encrt_model_tokenize_text(model.get(), views[i], ids.back().data(), count, &count)))
      return 1;
  }
  if (args.get("format") == "json") {
    Json j;
    j["texts"] = texts;
    j["ids"] = ids;
    if (pairs)
      j["type_ids"] = types;
    printJson(llvm::outs(), j);
    return 0;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    llvm::outs() << "[" << i << "] " << ids[i].size() << " ids:";
    for (int32_t id : ids[i])
      llvm::outs() << " " << id;
    if (pairs) {
      llvm::outs() << "\n    types:";
      for (int32_t t : types[i])
        llvm::outs() << " " << t;
    }
    llvm::outs() << "\n";
  }
  return 0;
}

namespace {

/// The sum over q's rows of each one's best dot product with d's rows:
/// ColBERT's MaxSim (PyLate's colbert_scores; FlagEmbedding divides it by
/// q's rows).
double maxSim(const float *q, int64_t qRows, const float *d, int64_t dRows, int64_t dim) {
  double total = 0;
  for (int64_t a = 0; a < qRows; ++a) {
    double best = -1e300;
    for (int64_t b = 0; b < dRows; ++b) {
      double dot = 0;
      for (int64_t k = 0; k < dim; ++k)
        dot += double(q[a * dim + k]) * d[b * dim + k];
      best = std::max(best, dot);
    }
    total += best;
  }
  return total;
}

/// Each text's token vectors encoded as `role` (null: none): rows[i] per
/// text, rowStart its prefix sums, the rows text after text.
bool encodeVectors(encrt_session *session, const char *role, const std::vector<encrt_text> &views, int64_t dim,
                   std::vector<int64_t> &rows, std::vector<int64_t> &rowStart, std::vector<float> &vectors) {
  const int64_t n = int64_t(views.size());
  rows.assign(size_t(n), 0);
  rowStart.assign(size_t(n) + 1, 0);
  encrt_encode_outputs out;
  encrt_encode_outputs_initialize(&out);
  out.role = role;
  out.vector_counts = rows.data();
  if (failed(encrt_session_encode(session, nullptr, views.data(), n, &out)))
    return false;
  for (int64_t i = 0; i < n; ++i)
    rowStart[i + 1] = rowStart[i] + rows[i];
  vectors.resize(size_t(rowStart[n] * dim));
  out.vectors = vectors.data(), out.vectors_capacity = rowStart[n];
  return !failed(encrt_session_encode(session, nullptr, views.data(), n, &out));
}

/// The model's roles (encrt_model_get_role), in order.
std::vector<std::string> roleNames(encrt_model *model) {
  std::vector<std::string> names;
  for (int64_t i = 0, n = encrt_model_role_count(model); i < n; ++i) {
    const char *name = nullptr;
    if (!encrt_model_get_role(model, i, &name))
      names.emplace_back(name);
  }
  return names;
}

/// encc embed of a multi-vector model without a pooled output (a ColBERT
/// checkpoint): each text's token vectors as --role, and the MaxSim matrix.
int embedVectors(const Args &args, encrt_model *model, encrt_session *session, const std::vector<std::string> &texts,
                 const encrt_model_info &info) {
  for (const char *option : {"truncate-dim", "top-k", "prompt-name"})
    if (args.has(option))
      return fail(std::string("--") + option + " does not apply to a multi-vector model (its output is token vectors)");
  const std::vector<std::string> roles = roleNames(model);
  if (!roles.empty() && !args.has("role"))
    return fail(args.positionals[0] + ": a ColBERT model encodes a text as " + llvm::join(roles, " or ") +
                ": pass --role (encc rerank ranks documents for a query)");
  const std::string role = args.get("role");
  const int64_t n = int64_t(texts.size()), d = info.multivector_dim;
  std::vector<int64_t> rows, rowStart;
  std::vector<float> vectors;
  const auto t0 = std::chrono::steady_clock::now();
  if (!encodeVectors(session, args.has("role") ? role.c_str() : nullptr, textViews(texts), d, rows, rowStart, vectors))
    return 1;
  const double ms = msSince(t0);
  constexpr int64_t kMaxScoredTexts = 64;
  constexpr double kMaxProducts = 4e9;
  const bool scored = n <= kMaxScoredTexts && double(rowStart[n]) * double(rowStart[n]) * d <= kMaxProducts;
  std::vector<double> score(scored ? size_t(n * n) : 0);
  for (int64_t i = 0; scored && i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      score[i * n + j] = maxSim(vectors.data() + rowStart[i] * d, rows[i], vectors.data() + rowStart[j] * d, rows[j], d);
  if (args.get("format") == "json") {
    Json j;
    j["count"] = n;
    j["dim"] = d;
    j["role"] = args.has("role") ? Json(role) : Json();
    j["latency_ms"] = ms;
    j["texts"] = texts;
    j["multi_vector_rows"] = rows;
    Json &all = j["vectors"] = Json::array();
    for (int64_t i = 0; i < n; ++i)
      all.push_back(jsonMatrix(vectors.data() + rowStart[i] * d, rows[i], d));
    if (scored)
      j["maxsim"] = jsonMatrix(score.data(), n, n);
    printJson(llvm::outs(), j);
    return 0;
  }
  auto &os = llvm::outs();
  os << "token vectors: " << n << " texts" << (args.has("role") ? " as " + role : std::string()) << ", " << d
     << " dims (L2-normalised), " << num(ms, 1) << " ms\n";
  for (int64_t i = 0; i < n; ++i) {
    os << "  [" << i << "] " << rows[i] << " vectors; the first:";
    for (int64_t k = 0; k < std::min<int64_t>(4, rows[i] ? d : 0); ++k)
      os << " " << llvm::right_justify(num(vectors[rowStart[i] * d + k]), 8);
    os << " ...  " << texts[i] << "\n";
  }
  if (scored) {
    os << "MaxSim (row text's vectors: the sum of each one's best dot product with the column text's):\n      ";
    for (int64_t j = 0; j < n; ++j)
      os << llvm::right_justify("[" + std::to_string(j) + "]", 8);
    os << "\n";
    for (int64_t i = 0; i < n; ++i) {
      os << llvm::right_justify("[" + std::to_string(i) + "]", 6);
      for (int64_t j = 0; j < n; ++j)
        os << llvm::right_justify(num(score[i * n + j], 3), 8);
      os << "\n";
    }
  } else {
    os << "(the MaxSim matrix is shown for at most " << kMaxScoredTexts << " texts within 4e9 vector products)\n";
  }
  return 0;
}

/// encc rerank of a ColBERT model: the query encoded as a query, the
/// documents as documents, ranked by MaxSim.
int rerankByMaxSim(const Args &args, encrt_model *model, encrt_session *session, const std::vector<std::string> &texts,
                   const encrt_model_info &info) {
  const std::vector<std::string> roles = roleNames(model);
  if (!llvm::is_contained(roles, "query") || !llvm::is_contained(roles, "document"))
    return fail(args.positionals[0] + ": a multi-vector model ranks documents with a 'query' and a 'document' role; "
                "this one has " + (roles.empty() ? std::string("none") : "'" + llvm::join(roles, "', '") + "'"));
  const int64_t n = int64_t(texts.size()) - 1, d = info.multivector_dim;
  const std::vector<encrt_text> views = textViews(texts);
  std::vector<int64_t> qRows, qStart, rows, rowStart;
  std::vector<float> q, vectors;
  const auto t0 = std::chrono::steady_clock::now();
  if (!encodeVectors(session, "query", {views[0]}, d, qRows, qStart, q) ||
      !encodeVectors(session, "document", std::vector<encrt_text>(views.begin() + 1, views.end()), d, rows, rowStart,
                     vectors))
    return 1;
  std::vector<double> scores(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    scores[i] = maxSim(q.data(), qRows[0], vectors.data() + rowStart[i] * d, rows[i], d);
  const double ms = msSince(t0);
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  if (args.get("format") == "json") {
    Json j;
    j["query"] = texts[0];
    j["scoring"] = "maxsim";
    j["query_vectors"] = qRows[0];
    j["latency_ms"] = ms;
    Json &results = j["results"] = Json::array();
    for (int64_t i : order)
      results.push_back(Json{{"index", i}, {"document", texts[i + 1]}, {"score", scores[i]}, {"vectors", rows[i]}});
    printJson(llvm::outs(), j);
    return 0;
  }
  auto &os = llvm::outs();
  os << "query: " << texts[0] << " (" << qRows[0] << " vectors)\n" << n
     << " documents, MaxSim (the sum over the query's vectors of the best dot product with a document's), "
     << num(ms, 1) << " ms; best first:\n";
  for (int64_t i : order)
    os << "  [" << i << "] " << llvm::right_justify(num(scores[i], 4), 9) << "  " << texts[i + 1] << "\n";
  return 0;
}

} // namespace

int encc::embedCommand(const Args &args) {
  ModelPtr model;
  SessionPtr session;
  std::vector<std::string> texts;
  if (!openModel(args, "embed", model, session) || !readTexts(args, "embed", texts))
    return 1;
  encrt_model_info info;
  encrt_model_get_info(model.get(), &info, sizeof info);
  if (info.num_labels > 0)
    return fail(args.positionals[0] + ": a cross-encoder (sequence classification) scores text pairs and has no "
                                      "embeddings; use 'encc rerank'");
  if (!info.has_pooled_output && info.multivector_dim > 0)
    return embedVectors(args, model.get(), session.get(), texts, info);
  if (args.has("role"))
    return fail(args.positionals[0] + ": --role applies to a ColBERT model (query, document); this one has no roles");
  if (!info.has_pooled_output)
    return fail(args.positionals[0] + ": this artifact has no pooled output (compiled with --pooling=none); use "
                                      "'encc run' for hidden states");
  int64_t n = static_cast<int64_t>(texts.size()), h = info.embedding_dim;
  int64_t keep = h; // --truncate-dim: sentence-transformers' truncate_dim (Matryoshka models)
  if (args.has("truncate-dim")) {
    const std::string v = args.get("truncate-dim");
    char *end = nullptr;
    const long long d = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || d < 1 || d > h)
      return fail("--truncate-dim expects a number of dimensions from 1 to the model's " + std::to_string(h) +
                  ", got '" + v + "'");
    keep = d;
  }
  std::vector<encrt_text> views = textViews(texts);
  auto t0 = std::chrono::steady_clock::now();
  const std::optional<std::string> prompt =
      args.has("prompt-name") ? std::optional<std::string>(args.get("prompt-name")) : std::nullopt;
  if (std::string(info.pooling) == "splade") {
    if (args.has("truncate-dim"))
      return fail("--truncate-dim does not apply to a SPLADE model (one weight per vocabulary entry); use --top-k");
    // Every non-zero weight, heaviest first; --top-k of them shown.
    int64_t top = args.get("format") == "json" ? h : 5;
    if (args.has("top-k")) {
      const std::string v = args.get("top-k");
      char *end = nullptr;
      top = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || top < 1 || top > h)
        return fail("--top-k expects a number of entries from 1 to the vocabulary's " + std::to_string(h) + ", got '" +
                    v + "'");
    }
    std::vector<int32_t> counts(n), ids(n * h);
    std::vector<float> weights(n * h);
    if (failed(encrt_session_embed_sparse(session.get(), prompt ? prompt->c_str() : nullptr, views.data(), n,
                                          int32_t(h), 0.0f, counts.data(), ids.data(), weights.data())))
      return 1;
    const double ms = msSince(t0);
    if (args.get("format") == "json") {
      Json j;
      j["count"] = n;
      j["pooling"] = info.pooling;
      j["vocabulary"] = h;
      j["latency_ms"] = ms;
      j["texts"] = texts;
      Json sparse = Json::array();
      for (int64_t i = 0; i < n; ++i) {
        Json entries = Json::array();
        for (int64_t k = 0; k < std::min<int64_t>(top, counts[i]); ++k)
          entries.push_back(Json{{"index", ids[i * h + k]}, {"value", weights[i * h + k]}});
        sparse.push_back(std::move(entries));
      }
      j["non_zero"] = counts;
      j["sparse"] = std::move(sparse);
      printJson(llvm::outs(), j);
      return 0;
    }
    auto &os = llvm::outs();
    os << "sparse embeddings (splade: a weight per token of the " << h << "-entry vocabulary), " << num(ms, 1)
       << " ms (" << num(ms / n, 2) << " ms per text)\n";
    for (int64_t i = 0; i < n; ++i) {
      os << "  [" << i << "] " << counts[i] << " non-zero;";
      for (int64_t k = 0; k < std::min<int64_t>(top, counts[i]); ++k) {
        const int32_t id = ids[i * h + k];
        const char *token = nullptr;
        int64_t size = 0;
        if (failed(encrt_model_get_token(model.get(), id, &token, &size)))
          return 1;
        os << " " << llvm::StringRef(token, size_t(size)) << " " << num(weights[i * h + k], 2);
      }
      os << "  " << texts[i] << "\n";
    }
    return 0;
  }
  // A model with token heads (bge-m3): its sparse and multi-vector outputs from the same pass.
  const bool lexical = info.sparse != 0, multi = info.multivector_dim > 0;
  int64_t shown = 5; // --top-k: the lexical weights listed per text
  if (args.has("top-k")) {
    const std::string v = args.get("top-k");
    char *end = nullptr;
    shown = std::strtoll(v.c_str(), &end, 10);
    if (!lexical)
      return fail("--top-k applies to a model with sparse output (SPLADE, bge-m3's lexical weights)");
    if (v.empty() || *end || shown < 1 || shown > info.vocab_size)
      return fail("--top-k expects a number of entries from 1 to the vocabulary's " + std::to_string(info.vocab_size) +
                  ", got '" + v + "'");
  }
  std::vector<float> emb(n * h);
  const int32_t sparseK = std::min(info.max_seq, info.vocab_size); // every entry a text can have
  std::vector<int32_t> sparseCounts(lexical ? n : 0), sparseIds(lexical ? n * sparseK : 0);
  std::vector<float> sparseWeights(sparseIds.size()), vectors;
  std::vector<int64_t> rows(multi ? n : 0), rowStart(n + 1, 0);
  encrt_encode_outputs out;
  encrt_encode_outputs_initialize(&out);
  if (multi) { // the rows first (tokenising only)
    out.vector_counts = rows.data();
    if (failed(encrt_session_encode(session.get(), prompt ? prompt->c_str() : nullptr, views.data(), n, &out)))
      return 1;
    for (int64_t i = 0; i < n; ++i)
      rowStart[i + 1] = rowStart[i] + rows[i];
    vectors.resize(size_t(rowStart[n] * info.multivector_dim));
    out.vectors = vectors.data(), out.vectors_capacity = rowStart[n];
  }
  if (lexical)
    out.sparse_top_k = sparseK, out.sparse_counts = sparseCounts.data(), out.sparse_ids = sparseIds.data(),
    out.sparse_weights = sparseWeights.data();
  out.dense = emb.data();
  t0 = std::chrono::steady_clock::now();
  if (failed(encrt_session_encode(session.get(), prompt ? prompt->c_str() : nullptr, views.data(), n, &out)))
    return 1;
  double ms = msSince(t0);
  // FlagEmbedding's scores: the lexical matching score (the products of the
  // weights of the ids two texts share, summed) and the ColBERT score (the
  // mean over the first text's vectors of the best dot product with the
  // second's). The n x n matrices are for a few texts: at most
  // kMaxScoredTexts, and ColBERT's only within kMaxColbertProducts products
  // (every vector of every text against every other's).
  constexpr int64_t kMaxScoredTexts = 64;
  constexpr double kMaxColbertProducts = 4e9;
  const bool lexicalScored = lexical && n <= kMaxScoredTexts;
  const bool colbertScored = multi && n <= kMaxScoredTexts &&
                             double(rowStart[n]) * double(rowStart[n]) * info.multivector_dim <= kMaxColbertProducts;
  std::vector<std::vector<std::pair<int32_t, float>>> byId(lexicalScored ? n : 0); // each text's entries by id
  for (int64_t i = 0; i < int64_t(byId.size()); ++i) {
    for (int32_t a = 0; a < sparseCounts[i]; ++a)
      byId[i].emplace_back(sparseIds[i * sparseK + a], sparseWeights[i * sparseK + a]);
    std::sort(byId[i].begin(), byId[i].end());
  }
  std::vector<double> lexicalScore(lexicalScored ? n * n : 0), colbertScore(colbertScored ? n * n : 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (lexicalScored) { // the ids both texts have (each text's ids are distinct)
        double s = 0;
        for (size_t a = 0, b = 0; a < byId[i].size() && b < byId[j].size();) {
          if (byId[i][a].first < byId[j][b].first)
            ++a;
          else if (byId[j][b].first < byId[i][a].first)
            ++b;
          else
            s += double(byId[i][a++].second) * byId[j][b++].second;
        }
        lexicalScore[i * n + j] = s;
      }
      if (colbertScored && rows[i] > 0 && rows[j] > 0) {
        const int64_t d = info.multivector_dim;
        colbertScore[i * n + j] = maxSim(vectors.data() + rowStart[i] * d, rows[i], vectors.data() + rowStart[j] * d,
                                         rows[j], d) /
                                  double(rows[i]);
      }
    }
  if (keep < h) { // the first `keep` of each row, after the model's own normalisation, as sentence-transformers
    for (int64_t i = 0; i < n; ++i)
      std::copy_n(emb.begin() + i * h, keep, emb.begin() + i * keep);
    emb.resize(n * keep);
  }
  const int64_t full = h;
  h = keep;
  std::vector<double> cosine(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0, ni = 0, nj = 0;
      for (int64_t k = 0; k < h; ++k) {
        dot += double(emb[i * h + k]) * emb[j * h + k];
        ni += double(emb[i * h + k]) * emb[i * h + k];
        nj += double(emb[j * h + k]) * emb[j * h + k];
      }
      cosine[i * n + j] = dot / std::max(1e-24, std::sqrt(ni * nj));
    }

  if (args.get("format") == "json") {
    Json j;
    j["count"] = n;
    j["dim"] = h;
    j["pooling"] = info.pooling;
    j["normalized"] = info.normalize != 0;
    j["latency_ms"] = ms;
    j["texts"] = texts;
    j["embeddings"] = jsonMatrix(emb.data(), n, h);
    j["cosine"] = jsonMatrix(cosine.data(), n, n);
    if (lexical) {
      Json sparse = Json::array();
      for (int64_t i = 0; i < n; ++i) {
        Json entries = Json::array();
        for (int32_t k = 0; k < sparseCounts[i]; ++k)
          entries.push_back(Json{{"index", sparseIds[i * sparseK + k]}, {"value", sparseWeights[i * sparseK + k]}});
        sparse.push_back(std::move(entries));
      }
      j["sparse"] = std::move(sparse);
      if (lexicalScored)
        j["lexical_score"] = jsonMatrix(lexicalScore.data(), n, n);
    }
    if (multi) {
      j["multi_vector_rows"] = rows;
      if (colbertScored)
        j["colbert_score"] = jsonMatrix(colbertScore.data(), n, n);
    }
    printJson(llvm::outs(), j);
    return 0;
  }
  auto &os = llvm::outs();
  os << "embeddings: " << n << " x " << h << " (" << info.pooling << " pooling"
     << (info.normalize ? ", L2-normalised" : "")
     << (h < full ? ", the first " + std::to_string(h) + " of " + std::to_string(full) + " dimensions" : "") << "), " << num(ms, 1) << " ms (" << num(ms / n, 2)
     << " ms per text)\n";
  for (int64_t i = 0; i < n; ++i) {
    os << "  [" << i << "] ";
    for (int64_t k = 0; k < std::min<int64_t>(6, h); ++k)
      os << llvm::right_justify(num(emb[i * h + k]), 8) << " ";
    os << "...  " << texts[i] << "\n";
  }
  if (lexical || multi) {
    os << "from the same pass:";
    os << (lexical ? " lexical weights (heaviest " + std::to_string(shown) + " shown)" : "") << (lexical && multi ? "," : "")
       << (multi ? " token vectors (" + std::to_string(info.multivector_dim) + " dims)" : "") << "\n";
    for (int64_t i = 0; i < n; ++i) {
      os << "  [" << i << "]";
      if (multi)
        os << " " << rows[i] << " vectors;";
      if (lexical) {
        os << " " << sparseCounts[i] << " weights;";
        for (int32_t k = 0; k < std::min<int64_t>(sparseCounts[i], shown); ++k) {
          const char *token = nullptr;
          int64_t size = 0;
          if (failed(encrt_model_get_token(model.get(), sparseIds[i * sparseK + k], &token, &size)))
            return 1;
          os << " " << llvm::StringRef(token, size_t(size)) << " " << num(sparseWeights[i * sparseK + k], 3);
        }
      }
      os << "  " << texts[i] << "\n";
    }
  }
  auto matrix = [&](const char *title, const std::vector<double> &m) {
    os << title << ":\n      ";
    for (int64_t j = 0; j < n; ++j)
      os << llvm::right_justify("[" + std::to_string(j) + "]", 7);
    os << "\n";
    for (int64_t i = 0; i < n; ++i) {
      os << llvm::right_justify("[" + std::to_string(i) + "]", 6);
      for (int64_t j = 0; j < n; ++j)
        os << llvm::right_justify(num(m[i * n + j], 3), 7);
      os << "\n";
    }
  };
  matrix("cosine similarity", cosine);
  if (lexicalScored)
    matrix("lexical matching score (shared ids' weights multiplied, summed)", lexicalScore);
  if (colbertScored)
    matrix("ColBERT score (row text's vectors: mean of the best dot product with the column text's)", colbertScore);
  if ((lexical && !lexicalScored) || (multi && !colbertScored))
    os << "(the lexical and ColBERT score matrices are shown for at most " << kMaxScoredTexts
       << " texts, ColBERT's within " << num(kMaxColbertProducts / 1e9, 0) << "e9 vector products)\n";
  return 0;
}

int encc::rerankCommand(const Args &args) {
  ModelPtr model;
  SessionPtr session;
  std::vector<std::string> texts;
  if (!openModel(args, "rerank", model, session) || !readTexts(args, "rerank", texts))
    return 1;
  encrt_pair_truncation strategy;
  if (!pairTruncation(args, strategy))
    return 1;
  encrt_model_info info;
  encrt_model_get_info(model.get(), &info, sizeof info);
  if (info.num_labels == 0 && (info.multivector_dim == 0 || info.has_pooled_output))
    return fail(args.positionals[0] + ": not a cross-encoder (no sequence-classification head) or a ColBERT model; "
                                      "'encc rerank' needs a model compiled from a *ForSequenceClassification folder "
                                      "or a PyLate ColBERT checkpoint");
  if (texts.size() < 2)
    return fail("'encc rerank' needs a query and at least one document: encc rerank model.encm \"query\" "
                "\"doc\"... [--file docs.txt]");
  if (info.num_labels == 0)
    return rerankByMaxSim(args, model.get(), session.get(), texts, info);
  const int64_t n = static_cast<int64_t>(texts.size()) - 1, labels = info.num_labels;
  const std::vector<encrt_text> views = textViews(texts);
  const std::vector<encrt_text> queries(static_cast<size_t>(n), views[0]);
  std::vector<float> scores(static_cast<size_t>(n * labels));
  auto t0 = std::chrono::steady_clock::now();
  if (failed(encrt_session_score_pairs(session.get(), queries.data(), views.data() + 1, n, strategy, scores.data())))
    return 1;
  const double ms = msSince(t0);
  // Best first by the first label's score (one-label rerankers: the relevance).
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return scores[a * labels] > scores[b * labels]; });

  if (args.get("format") == "json") {
    Json j;
    j["query"] = texts[0];
    j["num_labels"] = labels;
    j["activation"] = info.score_activation;
    j["latency_ms"] = ms;
    Json &results = j["results"] = Json::array();
    for (int64_t i : order) {
      Json &r = results.emplace_back();
      r["index"] = i;
      r["document"] = texts[i + 1];
      if (labels == 1)
        r["score"] = scores[i];
      else
        r["scores"] = std::vector<float>(scores.begin() + i * labels, scores.begin() + (i + 1) * labels);
    }
    printJson(llvm::outs(), j);
    return 0;
  }
  auto &os = llvm::outs();
  os << "query: " << texts[0] << "\n" << n << " documents, " << labels << (labels == 1 ? " label" : " labels")
     << " (" << info.score_activation << "), " << num(ms, 1) << " ms; best first:\n";
  for (int64_t i : order) {
    os << "  [" << i << "]";
    for (int64_t k = 0; k < labels; ++k)
      os << " " << llvm::right_justify(num(scores[i * labels + k], 4), 8);
    os << "  " << texts[i + 1] << "\n";
  }
  return 0;
}
