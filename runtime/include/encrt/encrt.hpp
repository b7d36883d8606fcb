//===- encrt.hpp - Header-only C++ wrapper over the libencrt C API --------===//
//
// RAII handles over encrt.h; errors are thrown as encrt::Error (code +
// message). Thread safety as in encrt.h: a Model may be shared by threads,
// a Session is used by one thread at a time.
//
//   encrt::Model model("model.encm");
//   encrt::Session session(model);
//   std::vector<float> emb = session.embed({"hello world"});  // count x embedding_dim
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_ENCRT_HPP
#define ENCRT_ENCRT_HPP

#include "encrt/encrt.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace encrt {

class Error : public std::runtime_error {
public:
  Error(encrt_status_code code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  encrt_status_code code() const { return code_; }

private:
  encrt_status_code code_;
};

/// Throws encrt::Error for a non-null status (and frees it).
inline void check(encrt_status *status) {
  if (!status)
    return;
  encrt_status_code code = encrt_status_get_code(status);
  std::string message = encrt_status_message(status);
  encrt_status_free(status);
  throw Error(code, message);
}

struct ModelOptions {
  int32_t numThreads = 0;  ///< 0: all cores
  std::string cpuTarget;   ///< empty: best this CPU runs
  std::string device;      ///< "cpu", "cuda", "cuda:N"; empty or "auto": CUDA when present (encrt.h)
  /// Trust requirements (encrt.h, docs/security.md); empty: not required.
  std::string requireSha256;    ///< 64 hex digits
  std::string trustedPublicKey; ///< 64 hex digits (encc keygen's NAME.pub)
  std::string signaturePath;    ///< empty: the artifact's path + ".sig"
  int32_t maxSeqLength = 0;     ///< texts cut to this many tokens; 0: the compiled maximum
};

class Model {
public:
  explicit Model(const std::string &path, const ModelOptions &options = {}) {
    encrt_model_options o;
    encrt_model_options_initialize(&o);
    o.num_threads = options.numThreads;
    o.cpu_target = options.cpuTarget.empty() ? nullptr : options.cpuTarget.c_str();
    o.device = options.device.empty() ? nullptr : options.device.c_str();
    o.require_sha256 = options.requireSha256.empty() ? nullptr : options.requireSha256.c_str();
    o.trusted_public_key =
        options.trustedPublicKey.empty() ? nullptr : options.trustedPublicKey.c_str();
    o.signature_path = options.signaturePath.empty() ? nullptr : options.signaturePath.c_str();
    o.max_seq_length = options.maxSeqLength;
    check(encrt_model_load(path.c_str(), &o, &model_));
  }
  ~Model() { encrt_model_release(model_); }
  Model(Model &&other) noexcept : model_(std::exchange(other.model_, nullptr)) {}
  Model &operator=(Model &&other) noexcept {
    std::swap(model_, other.model_);
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  encrt_model_info info() const {
    encrt_model_info i;
    encrt_model_get_info(model_, &i, sizeof i);
    return i;
  }

  /// [CLS] ids [SEP], truncated to the model's max_seq. Every byte of `text`
  /// counts (an embedded NUL does not end it).
  std::vector<int32_t> tokenize(std::string_view text) const {
    const encrt_text t{text.data(), static_cast<int64_t>(text.size())};
    int64_t count = 0;
    check(encrt_model_tokenize_text(model_, t, nullptr, 0, &count));
    std::vector<int32_t> ids(static_cast<size_t>(count));
    check(encrt_model_tokenize_text(model_, t, ids.data(), count, &count));
    return ids;
  }

  /// The number of ids `text` gives before truncation (special tokens
  /// included); above info().max_seq, tokenize() cuts it.
  int64_t countTokens(std::string_view text) const {
    int64_t count = 0;
    check(encrt_model_count_tokens(model_, encrt_text{text.data(), static_cast<int64_t>(text.size())}, &count));
    return count;
  }

  /// A sentence-transformers prompt: its name, the text put before a text,
  /// and whether embed() applies it by default.
  struct Prompt {
    std::string name, text;
    bool isDefault = false;
  };
  std::vector<Prompt> prompts() const {
    std::vector<Prompt> out;
    for (int64_t i = 0, n = encrt_model_prompt_count(model_); i < n; ++i) {
      const char *name = nullptr, *text = nullptr;
      int32_t isDefault = 0;
      check(encrt_model_get_prompt(model_, i, &name, &text, &isDefault));
      out.push_back({name, text, isDefault != 0});
    }
    return out;
  }

  /// A multi-vector model's roles (ColBERT's "query", "document"); empty
  /// without.
  std::vector<std::string> roles() const {
    std::vector<std::string> out;
    for (int64_t i = 0, n = encrt_model_role_count(model_); i < n; ++i) {
      const char *name = nullptr;
      check(encrt_model_get_role(model_, i, &name));
      out.emplace_back(name);
    }
    return out;
  }

  /// A classification model's label names (id2label, else LABEL_i); empty
  /// for an embedding model.
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (int32_t i = 0, n = info().num_labels; i < n; ++i) {
      const char *name = nullptr;
      check(encrt_model_get_label(model_, i, &name));
      out.emplace_back(name);
    }
    return out;
  }

  /// Token `id`'s string as the tokenizers library's id_to_token gives it
  /// (encrt_model_get_token).
  std::string token(int32_t id) const {
    const char *text = nullptr;
    int64_t size = 0;
    check(encrt_model_get_token(model_, id, &text, &size));
    return std::string(text, static_cast<size_t>(size));
  }

  /// The tokens of `text` with their offsets (encrt_model_tokenize_offsets):
  /// in the model's template with addSpecialTokens, every piece unless
  /// maxTokens > 0 cuts them.
  std::vector<encrt_token> tokenizeOffsets(std::string_view text, bool addSpecialTokens = true,
                                           int64_t maxTokens = 0) const {
    const encrt_text t{text.data(), static_cast<int64_t>(text.size())};
    int64_t count = 0;
    check(encrt_model_tokenize_offsets(model_, t, addSpecialTokens ? 1 : 0, maxTokens, nullptr, 0, &count));
    std::vector<encrt_token> tokens(static_cast<size_t>(count));
    check(encrt_model_tokenize_offsets(model_, t, addSpecialTokens ? 1 : 0, maxTokens, tokens.data(), count, &count));
    return tokens;
  }

  /// The text of token ids (encrt_model_decode).
  std::string decode(const std::vector<int32_t> &ids, bool skipSpecialTokens = true) const {
    int64_t size = 0;
    const int64_t n = static_cast<int64_t>(ids.size());
    check(encrt_model_decode(model_, ids.data(), n, skipSpecialTokens ? 1 : 0, nullptr, 0, &size));
    std::string text(static_cast<size_t>(size), '\0');
    check(encrt_model_decode(model_, ids.data(), n, skipSpecialTokens ? 1 : 0, text.data(), size, &size));
    return text;
  }

  encrt_model *get() const { return model_; }

private:
  encrt_model *model_ = nullptr;
};

/// One run's outputs: hidden is batch x seq x hidden_size, pooled is
/// batch x embedding_dim, or for a classification model (num_labels > 0) its
/// batch x num_labels logits (empty when not requested or not available).
struct RunResult {
  std::vector<float> hidden;
  std::vector<float> pooled;
};

/// One text's sparse embedding: token ids and their weights, heaviest first.
struct SparseEmbedding {
  std::vector<int32_t> ids;
  std::vector<float> weights;
};

class Session {
public:
  explicit Session(const Model &model, bool enableProfiling = false) {
    encrt_session_options o;
    encrt_session_options_initialize(&o);
    o.enable_profiling = enableProfiling ? 1 : 0;
    check(encrt_session_create(model.get(), &o, &session_));
    encrt_model_get_info(model.get(), &info_, sizeof info_);
  }
  ~Session() { encrt_session_release(session_); }
  Session(Session &&other) noexcept
      : session_(std::exchange(other.session_, nullptr)), info_(other.info_) {}
  Session &operator=(Session &&other) noexcept {
    std::swap(session_, other.session_);
    std::swap(info_, other.info_);
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// ids: batch x seq, right-padded; lengths: batch.
  RunResult run(const std::vector<int32_t> &ids,
                const std::vector<int32_t> &lengths, int64_t seq,
                bool wantHidden = true, bool wantPooled = true) {
    return runTyped(ids, {}, lengths, seq, wantHidden, wantPooled);
  }

  /// run() with token types: typeIds empty (all 0) or batch x seq like ids.
  RunResult runTyped(const std::vector<int32_t> &ids,
                     const std::vector<int32_t> &typeIds,
                     const std::vector<int32_t> &lengths, int64_t seq,
                     bool wantHidden = true, bool wantPooled = true) {
    int64_t batch = static_cast<int64_t>(lengths.size());
    for (const std::vector<int32_t> *v : {&ids, &typeIds})
      if (batch < 1 || seq < 1 ||
          (static_cast<int64_t>(v->size()) != batch * seq && (v == &ids || !v->empty())))
        throw Error(ENCRT_INVALID_ARGUMENT,
                    std::string("encrt::Session::run: ") + (v == &ids ? "ids" : "typeIds") + " has " +
                        std::to_string(v->size()) + " entries, expected batch " +
                        std::to_string(batch) + " x seq " + std::to_string(seq));
    RunResult r;
    const int64_t h = info_.hidden_size;
    if (wantHidden)
      r.hidden.resize(static_cast<size_t>(batch * seq * h));
    if (wantPooled && info_.has_pooled_output)
      r.pooled.resize(static_cast<size_t>(batch * info_.embedding_dim));
    else if (wantPooled && info_.num_labels > 0)
      r.pooled.resize(static_cast<size_t>(batch * info_.num_labels));
    check(encrt_session_run_typed(session_, ids.data(), typeIds.empty() ? nullptr : typeIds.data(),
                                  lengths.data(), batch, seq, wantHidden ? r.hidden.data() : nullptr,
                                  r.pooled.empty() ? nullptr : r.pooled.data()));
    return r;
  }

  /// texts.size() x embedding_dim pooled embeddings, row-major. Every byte of
  /// each text counts (an embedded NUL does not end it). The model's default
  /// prompt, if it has one, goes before each text.
  std::vector<float> embed(const std::vector<std::string> &texts) { return embedWith(nullptr, texts); }
  /// The same with prompt `promptName` before each text ("" none).
  std::vector<float> embed(const std::vector<std::string> &texts, const std::string &promptName) {
    return embedWith(promptName.c_str(), texts);
  }

  /// A SPLADE model's sparse embeddings (encrt_session_embed_sparse): per
  /// text, at most topK (token id, weight) pairs above `threshold`, heaviest
  /// first; promptName as embed's (null: the model's default prompt).
  std::vector<SparseEmbedding> embedSparse(const std::vector<std::string> &texts, int32_t topK,
                                           float threshold = 0.0f, const char *promptName = nullptr) {
    const std::vector<encrt_text> views = textViews(texts);
    const size_t k = topK > 0 ? static_cast<size_t>(topK) : 0;
    std::vector<int32_t> counts(texts.size()), ids(texts.size() * k);
    std::vector<float> weights(texts.size() * k);
    check(encrt_session_embed_sparse(session_, promptName, views.data(), static_cast<int64_t>(views.size()), topK,
                                     threshold, counts.data(), ids.data(), weights.data()));
    std::vector<SparseEmbedding> out(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      out[i].ids.assign(ids.begin() + i * k, ids.begin() + i * k + counts[i]);
      out[i].weights.assign(weights.begin() + i * k, weights.begin() + i * k + counts[i]);
    }
    return out;
  }

  /// What encode() gives: each output asked for, in text order.
  struct Encoded {
    std::vector<float> dense;                ///< texts x embedding_dim
    std::vector<SparseEmbedding> sparse;     ///< per text
    std::vector<std::vector<float>> vectors; ///< per text: rows x multivector_dim
  };
  /// encrt_session_encode: the dense embedding (`dense`), each text's
  /// heaviest sparse entries (sparseTopK > 0: at most that many, above
  /// `threshold`) and its token vectors (`vectors`) from one pass per chunk,
  /// encoded as `role` (a model with roles needs one).
  Encoded encode(const std::vector<std::string> &texts, bool dense, int32_t sparseTopK, bool vectors,
                 float threshold = 0.0f, const char *promptName = nullptr, const char *role = nullptr) {
    const std::vector<encrt_text> views = textViews(texts);
    const int64_t n = static_cast<int64_t>(texts.size());
    encrt_encode_outputs o;
    encrt_encode_outputs_initialize(&o);
    o.role = role;
    Encoded r;
    std::vector<int64_t> counts(texts.size());
    int64_t rows = 0;
    if (vectors) { // the rows first (tokenising only), then the buffer
      o.vector_counts = counts.data();
      check(encrt_session_encode(session_, promptName, views.data(), n, &o));
      for (int64_t c : counts)
        rows += c;
    }
    const size_t k = sparseTopK > 0 ? static_cast<size_t>(sparseTopK) : 0;
    std::vector<int32_t> sparseCounts(k ? texts.size() : 0), ids(texts.size() * k);
    std::vector<float> weights(texts.size() * k), flat(static_cast<size_t>(rows * info_.multivector_dim));
    if (dense) {
      r.dense.resize(texts.size() * static_cast<size_t>(info_.embedding_dim));
      o.dense = r.dense.data();
    }
    if (k) {
      o.sparse_top_k = sparseTopK, o.sparse_threshold = threshold;
      o.sparse_counts = sparseCounts.data(), o.sparse_ids = ids.data(), o.sparse_weights = weights.data();
    }
    if (vectors)
      o.vectors = flat.data(), o.vectors_capacity = rows;
    check(encrt_session_encode(session_, promptName, views.data(), n, &o));
    if (k) {
      r.sparse.resize(texts.size());
      for (size_t i = 0; i < texts.size(); ++i) {
        r.sparse[i].ids.assign(ids.begin() + i * k, ids.begin() + i * k + sparseCounts[i]);
        r.sparse[i].weights.assign(weights.begin() + i * k, weights.begin() + i * k + sparseCounts[i]);
      }
    }
    if (vectors) {
      const size_t w = static_cast<size_t>(info_.multivector_dim);
      size_t at = 0;
      for (int64_t c : counts) {
        r.vectors.emplace_back(flat.begin() + at * w, flat.begin() + (at + size_t(c)) * w);
        at += size_t(c);
      }
    }
    return r;
  }

private:
  static std::vector<encrt_text> textViews(const std::vector<std::string> &texts) {
    std::vector<encrt_text> views;
    views.reserve(texts.size());
    for (const auto &t : texts)
      views.push_back({t.data(), static_cast<int64_t>(t.size())});
    return views;
  }
  std::vector<float> embedWith(const char *promptName, const std::vector<std::string> &texts) {
    const std::vector<encrt_text> views = textViews(texts);
    std::vector<float> out(texts.size() * static_cast<size_t>(info_.embedding_dim));
    check(encrt_session_embed_prompted(session_, promptName, views.data(), static_cast<int64_t>(views.size()),
                                       out.data()));
    return out;
  }

public:
  std::vector<encrt_step_profile> profile() const {
    std::vector<encrt_step_profile> steps(
        static_cast<size_t>(encrt_session_profile_count(session_)));
    for (size_t i = 0; i < steps.size(); ++i)
      encrt_session_profile_get(session_, static_cast<int64_t>(i), &steps[i], sizeof steps[i]);
    return steps;
  }

  encrt_session *get() const { return session_; }

private:
  encrt_session *session_ = nullptr;
  encrt_model_info info_{};
};

} // namespace encrt

#endif // ENCRT_ENCRT_HPP
