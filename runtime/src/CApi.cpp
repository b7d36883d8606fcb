//===- CApi.cpp - The C API of encrt.h over the C++ implementation --------===//
//
// Every entry point catches everything: no C++ exception crosses the C ABI.
//
//===----------------------------------------------------------------------===//
#include "encrt/encrt.h"

#include "DeviceSession.h"
#include "Failure.h"
#include "LoadedModel.h"
#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace encrt::rt;

struct encrt_status {
  encrt_status_code code;
  std::string message;
};

struct encrt_model {
  std::shared_ptr<LoadedModel> impl;
};

/// The session of whichever device the model runs on. `busy` is set for the
/// length of a run or embed: a second thread calling meanwhile gets an error
/// instead of corrupting the session's buffers.
struct encrt_session {
  std::unique_ptr<DeviceSession> impl;
  std::atomic<bool> busy{false};
};

namespace {

encrt_status *makeStatus(encrt_status_code code, std::string message) {
  try {
    return new encrt_status{code, std::move(message)};
  } catch (...) {
    // Out of memory while reporting an error: a static status would have to
    // survive encrt_status_free, so allocate a minimal one or give up.
    return new (std::nothrow) encrt_status{code, std::string()};
  }
}

/// Runs `body`, mapping every exception to a status whose message starts
/// with `where` (unless it already names the artifact).
template <typename Body>
encrt_status *guard(const char *where, bool prefix, Body &&body) {
  try {
    body();
    return nullptr;
  } catch (const Failure &f) {
    return makeStatus(f.code(), prefix ? std::string(where) + ": " + f.what()
                                       : std::string(f.what()));
  } catch (const std::bad_alloc &) {
    return makeStatus(ENCRT_OUT_OF_MEMORY, std::string(where) + ": out of memory");
  } catch (const std::exception &e) {
    return makeStatus(ENCRT_INTERNAL, std::string(where) + ": " + e.what());
  } catch (...) {
    return makeStatus(ENCRT_INTERNAL, std::string(where) + ": unknown error");
  }
}

encrt_status *nullArgument(const char *where, const char *what) {
  return makeStatus(ENCRT_INVALID_ARGUMENT,
                    std::string(where) + ": " + what + " is NULL");
}

/// Struct sizes above this are garbage, not a newer caller.
constexpr uint32_t kMaxStructSize = 1 << 16;

/// `out` = defaults (`initialize`), then the fields of the caller's `in` that
/// fit in its struct_size. `v1Size` is the size of the first version of T:
/// smaller is a struct that was never initialised.
template <typename T>
encrt_status *readOptions(const char *where, const char *type, const T *in, size_t v1Size,
                          void (*initialize)(T *), T &out) {
  initialize(&out);
  if (!in)
    return nullptr;
  if (in->struct_size < v1Size || in->struct_size > kMaxStructSize)
    return makeStatus(ENCRT_INVALID_ARGUMENT,
                      std::string(where) + ": " + type + ".struct_size is " +
                          std::to_string(in->struct_size) + " (call " + type +
                          "_initialize first)");
  std::memcpy(&out, in, std::min<size_t>(in->struct_size, sizeof(T)));
  out.struct_size = sizeof(T);
  return nullptr;
}

/// Copies the first `size` bytes of the library's `full` to the caller's
/// `out` (a caller built against an older header passes a smaller size).
template <typename T> void writeOut(const T &full, T *out, size_t size) {
  if (out)
    std::memcpy(out, &full, std::min(size, sizeof(T)));
}

/// Views of `count` C strings; throws Failure for a NULL one. Empty when
/// there is nothing to view (the embed checks report count/texts errors).
std::vector<std::string_view> viewTexts(const char *const *texts, int64_t count) {
  std::vector<std::string_view> views;
  for (int64_t i = 0; texts && i < count; ++i) {
    if (!texts[i])
      fail(ENCRT_INVALID_ARGUMENT, "texts[", i, "] is NULL");
    views.emplace_back(texts[i]);
  }
  return views;
}

/// Throws Failure unless `t` is a valid text; `what` names it in the error.
std::string_view viewText(const encrt_text &t, const std::string &what) {
  if (t.size < 0)
    fail(ENCRT_INVALID_ARGUMENT, what, ".size is ", t.size, " (expected >= 0)");
  if (!t.data && t.size != 0)
    fail(ENCRT_INVALID_ARGUMENT, what, ".data is NULL");
  return t.size == 0 ? std::string_view() : std::string_view(t.data, static_cast<size_t>(t.size));
}

std::vector<std::string_view> viewTexts(const encrt_text *texts, int64_t count,
                                        const char *name = "texts") {
  std::vector<std::string_view> views;
  for (int64_t i = 0; texts && i < count; ++i)
    views.push_back(viewText(texts[i], std::string(name) + "[" + std::to_string(i) + "]"));
  return views;
}

/// The frame of the tokenize calls: `encode()` gives the ids.
template <class Encode>
encrt_status *tokenizeWith(const char *where, const encrt_model *model, int32_t *out_ids, int64_t capacity,
                           int64_t *out_count, const Encode &encode) {
  if (!model)
    return nullArgument(where, "model");
  if (!out_count)
    return nullArgument(where, "out_count");
  *out_count = 0;
  if (!out_ids && capacity != 0)
    return nullArgument(where, "out_ids");
  return guard(where, true, [&] {
    std::vector<int32_t> ids = encode();
    int64_t n = static_cast<int64_t>(ids.size());
    *out_count = n;
    if (!out_ids && capacity == 0)
      return; // size query
    if (capacity < n)
      fail(ENCRT_INVALID_ARGUMENT, "the buffer holds ", capacity, " ids, the text needs ", n);
    std::copy(ids.begin(), ids.end(), out_ids);
  });
}

encrt_status *tokenize(const char *where, const encrt_model *model, const encrt_text *text,
                       int32_t *out_ids, int64_t capacity, int64_t *out_count) {
  return tokenizeWith(where, model, out_ids, capacity, out_count,
                      [&] { return model->impl->encode(viewText(*text, "text")); });
}

/// Holds `session` for one call (see encrt_session::busy).
class SessionUse {
public:
  explicit SessionUse(encrt_session &s)
      : session_(s), held_(!s.busy.exchange(true, std::memory_order_acquire)) {}
  ~SessionUse() {
    if (held_)
      session_.busy.store(false, std::memory_order_release);
  }
  SessionUse(const SessionUse &) = delete;
  SessionUse &operator=(const SessionUse &) = delete;

  /// Null when held; else the error for `where`.
  encrt_status *refusal(const char *where) const {
    if (held_)
      return nullptr;
    return makeStatus(ENCRT_INVALID_ARGUMENT,
                      std::string(where) +
                          ": the session is in use by another thread (a session is not "
                          "thread-safe: create one per thread)");
  }

private:
  encrt_session &session_;
  bool held_;
};

/// Every session call's frame: a session (not NULL) that no other thread is
/// using for the length of `body`, whose failures become a status prefixed
/// by `where`.
template <typename Body>
encrt_status *inSession(const char *where, encrt_session *session, Body &&body) {
  if (!session)
    return nullArgument(where, "session");
  SessionUse use(*session);
  if (encrt_status *busy = use.refusal(where))
    return busy;
  return guard(where, true, std::forward<Body>(body));
}

/// `prompt`: a prompt name, NULL for the model's default prompt, "" none.
template <typename Texts>
encrt_status *embed(const char *where, encrt_session *session, const char *prompt, Texts texts, int64_t count,
                    float *out_embeddings) {
  return inSession(where, session, [&] {
    const std::string_view promptText = session->impl->model().promptText(prompt);
    std::vector<std::string_view> views = viewTexts(texts, count);
    session->impl->embed(texts ? views.data() : nullptr, count, promptText, out_embeddings);
  });
}

/// The runtime's form of `o`; `sparse`: its sparse output is asked for.
EncodeOutputs toEncodeOutputs(const encrt_encode_outputs &o, bool sparse) {
  EncodeOutputs out;
  out.dense = o.dense;
  out.sparse = sparse;
  out.sparseTopK = o.sparse_top_k;
  out.sparseThreshold = o.sparse_threshold;
  out.sparseCounts = o.sparse_counts;
  out.sparseIds = o.sparse_ids;
  out.sparseWeights = o.sparse_weights;
  out.vectors = o.vectors;
  out.vectorsCapacity = o.vectors_capacity;
  out.vectorCounts = o.vector_counts;
  out.attendedLengths = o.attended_lengths;
  return out;
}

/// encrt_encode_outputs.role of `model`, resolved (LoadedModel::role).
const TokenRoleInfo *roleOf(const LoadedModel &model, const encrt_encode_outputs &o) {
  return model.role(o.role);
}

/// encrt_session_encode's frame: `outputs` (already read in full) for
/// `count` texts after prompt `prompt_name`; `sparse`: its sparse output is
/// asked for.
encrt_status *encode(const char *where, encrt_session *session, const char *prompt_name,
                            const encrt_text *texts, int64_t count, const encrt_encode_outputs &o, bool sparse) {
  return inSession(where, session, [&] {
    const LoadedModel &model = session->impl->model();
    const std::string_view prompt = model.promptText(prompt_name);
    const std::vector<std::string_view> views = viewTexts(texts, count);
    EncodeOutputs out = toEncodeOutputs(o, sparse);
    out.role = roleOf(model, o);
    session->impl->encode(texts ? views.data() : nullptr, count, prompt, out);
  });
}

/// The caller's `outputs` read in full into `o` (null: refused, as a
/// struct_size never initialised).
encrt_status *readEncodeOutputs(const char *where, const encrt_encode_outputs *outputs,
                                       encrt_encode_outputs &o) {
  if (!outputs)
    return nullArgument(where, "outputs");
  // API 10's struct ended before `role`.
  return readOptions(where, "encrt_encode_outputs", outputs, offsetof(encrt_encode_outputs, role),
                     encrt_encode_outputs_initialize, o);
}

/// Whether `o` asks for the sparse output.
bool wantsSparse(const encrt_encode_outputs &o) {
  return o.sparse_top_k != 0 || o.sparse_counts || o.sparse_ids || o.sparse_weights;
}

} // namespace

extern "C" {

encrt_status_code encrt_status_get_code(const encrt_status *status) {
  return status ? status->code : ENCRT_OK;
}

const char *encrt_status_message(const encrt_status *status) {
  return status ? status->message.c_str() : "";
}

void encrt_status_free(encrt_status *status) { delete status; }

void encrt_model_options_initialize(encrt_model_options *options) {
  if (!options)
    return;
  options->struct_size = sizeof(encrt_model_options);
  options->num_threads = 0;
  options->cpu_target = nullptr;
  options->device = nullptr;
  options->max_text_bytes = 0;
  options->require_sha256 = nullptr;
  options->trusted_public_key = nullptr;
  options->signature_path = nullptr;
  options->max_seq_length = 0;
}

encrt_status *encrt_model_load(const char *path,
                               const encrt_model_options *options,
                               encrt_model **out_model) {
  const char *where = "encrt_model_load";
  if (!out_model)
    return nullArgument(where, "out_model");
  *out_model = nullptr;
  if (!path)
    return nullArgument(where, "path");
  encrt_model_options opts;
  if (encrt_status *st =
          readOptions(where, "encrt_model_options", options,
                      offsetof(encrt_model_options, device) + sizeof(const char *),
                      encrt_model_options_initialize, opts))
    return st;
  if (opts.num_threads < 0 || opts.num_threads > ThreadPool::maxThreads())
    return makeStatus(ENCRT_INVALID_ARGUMENT,
                      std::string(where) + ": num_threads is " +
                          std::to_string(opts.num_threads) + " (expected 0 = all cores, up to " +
                          std::to_string(ThreadPool::maxThreads()) + ")");
  if (opts.max_text_bytes < 0)
    return makeStatus(ENCRT_INVALID_ARGUMENT,
                      std::string(where) + ": max_text_bytes is " +
                          std::to_string(opts.max_text_bytes) + " (expected >= 0, 0 = 1 MiB)");
  // A trust requirement given as "" is a mistake, not "none" (fail closed).
  for (auto [name, value] : {std::pair{"require_sha256", opts.require_sha256},
                             std::pair{"trusted_public_key", opts.trusted_public_key},
                             std::pair{"signature_path", opts.signature_path}})
    if (value && !*value)
      return makeStatus(ENCRT_INVALID_ARGUMENT, std::string(where) + ": " + name +
                                                    " is empty (NULL means not required)");
  // Load errors already start with the path.
  return guard(where, false, [&] {
    LoadOptions o;
    o.numThreads = opts.num_threads;
    o.cpuTarget = opts.cpu_target;
    o.device = opts.device;
    if (opts.max_text_bytes > 0)
      o.maxTextBytes = opts.max_text_bytes;
    o.maxSeqLength = opts.max_seq_length;
    o.trust.sha256 = opts.require_sha256 ? opts.require_sha256 : "";
    if (opts.trusted_public_key)
      o.trust.publicKeys = {opts.trusted_public_key};
    o.trust.signaturePath = opts.signature_path ? opts.signature_path : "";
    applyEnvironmentTrust(o.trust); // only where the caller required nothing
    auto impl = LoadedModel::load(path, o);
    *out_model = new encrt_model{std::move(impl)};
  });
}

void encrt_model_release(encrt_model *model) { delete model; }

void encrt_model_get_info(const encrt_model *model, encrt_model_info *out_info,
                          size_t info_size) {
  encrt_model_info info{};
  if (model) {
    const LoadedModel &m = *model->impl;
    const encm::Metadata &md = m.metadata();
    info.architecture = m.architecture().c_str();
    info.hidden_size = md.hidden_size();
    info.num_layers = md.num_layers();
    info.num_heads = md.num_heads();
    info.max_seq = md.max_seq();
    info.vocab_size = md.vocab_size();
    info.pooling = m.pooling().c_str();
    info.normalize = md.normalize() ? 1 : 0;
    info.has_pooled_output = m.hasPooledOutput() ? 1 : 0;
    info.cpu_target = m.onCuda() ? "" : m.code().target().c_str();
    info.num_steps = m.numSteps();
    info.weight_bytes = m.model().weights_size();
    info.device = m.device().c_str();
    info.random_weights = m.artifact().randomWeights() ? 1 : 0;
    info.type_vocab_size = std::max(1, m.metadata().type_vocab_size());
    info.num_labels = m.numLabels();
    info.embedding_dim = m.classifies() || !m.hasPooledOutput() ? 0 : static_cast<int32_t>(m.embeddingDim());
    info.score_activation = m.scoreActivation().c_str();
    info.precision = m.precision().c_str();
    info.similarity = similarityName(md.similarity()); // checked at load
    info.sparse = m.hasSparseOutput() ? 1 : 0;
    info.multivector_dim = static_cast<int32_t>(m.multivectorDim()); // at most ENCM_MAX_EMBEDDING_DIM
  }
  writeOut(info, out_info, info_size);
}

encrt_status *encrt_model_tokenize(const encrt_model *model, const char *text,
                                   int32_t *out_ids, int64_t capacity,
                                   int64_t *out_count) {
  if (!model)
    return nullArgument("encrt_model_tokenize", "model");
  if (!text)
    return nullArgument("encrt_model_tokenize", "text");
  const encrt_text t{text, static_cast<int64_t>(std::strlen(text))};
  return tokenize("encrt_model_tokenize", model, &t, out_ids, capacity, out_count);
}

encrt_status *encrt_model_tokenize_text(const encrt_model *model, encrt_text text,
                                        int32_t *out_ids, int64_t capacity,
                                        int64_t *out_count) {
  return tokenize("encrt_model_tokenize_text", model, &text, out_ids, capacity, out_count);
}

int64_t encrt_model_prompt_count(const encrt_model *model) {
  return model ? static_cast<int64_t>(model->impl->prompts().size()) : 0;
}

encrt_status *encrt_model_get_prompt(const encrt_model *model, int64_t index, const char **out_name,
                                     const char **out_text, int32_t *out_is_default) {
  const char *where = "encrt_model_get_prompt";
  if (!model)
    return nullArgument(where, "model");
  const auto &prompts = model->impl->prompts();
  if (index < 0 || index >= static_cast<int64_t>(prompts.size()))
    return guard(where, false, [&] {
      fail(ENCRT_INVALID_ARGUMENT, "prompt index ", index, " is out of range (the model has ", prompts.size(),
           " prompts)");
    });
  const auto &[name, text] = prompts[static_cast<size_t>(index)];
  if (out_name)
    *out_name = name.c_str();
  if (out_text)
    *out_text = text.c_str();
  if (out_is_default)
    *out_is_default = model->impl->metadata().default_prompt() &&
                      model->impl->metadata().default_prompt()->string_view() == name;
  return nullptr;
}

encrt_status *encrt_model_tokenize_role(const encrt_model *model, const char *role, encrt_text text,
                                        int32_t *out_ids, int64_t capacity, int64_t *out_count,
                                        int32_t *out_attended) {
  const char *where = "encrt_model_tokenize_role";
  if (!role)
    return nullArgument(where, "role");
  if (!out_attended)
    return nullArgument(where, "out_attended");
  *out_attended = 0;
  return tokenizeWith(where, model, out_ids, capacity, out_count, [&] {
    RoleEncoding e = model->impl->encode(viewText(text, "text"), -1, {}, *model->impl->role(role));
    *out_attended = e.attended;
    return std::move(e.ids);
  });
}

int64_t encrt_model_role_count(const encrt_model *model) {
  return model ? static_cast<int64_t>(model->impl->roles().size()) : 0;
}

encrt_status *encrt_model_get_role(const encrt_model *model, int64_t index, const char **out_name) {
  const char *where = "encrt_model_get_role";
  if (!model)
    return nullArgument(where, "model");
  const auto &roles = model->impl->roles();
  if (index < 0 || index >= static_cast<int64_t>(roles.size()))
    return guard(where, false, [&] {
      fail(ENCRT_INVALID_ARGUMENT, "role index ", index, " is out of range (the model has ", roles.size(), " roles)");
    });
  if (out_name)
    *out_name = roles[static_cast<size_t>(index)].name.c_str();
  return nullptr;
}

encrt_status *encrt_model_count_tokens(const encrt_model *model, encrt_text text, int64_t *out_count) {
  const char *where = "encrt_model_count_tokens";
  if (!model)
    return nullArgument(where, "model");
  if (!out_count)
    return nullArgument(where, "out_count");
  *out_count = 0;
  return guard(where, true, [&] { *out_count = model->impl->countTokens(viewText(text, "text")); });
}

encrt_status *encrt_model_tokenize_pair(const encrt_model *model, encrt_text a, encrt_text b,
                                        int32_t truncation, int32_t *out_ids,
                                        int32_t *out_type_ids, int64_t capacity, int64_t *out_count) {
  const char *where = "encrt_model_tokenize_pair";
  if (!model)
    return nullArgument(where, "model");
  if (!out_count)
    return nullArgument(where, "out_count");
  *out_count = 0;
  if ((!out_ids || !out_type_ids) && capacity != 0)
    return nullArgument(where, !out_ids ? "out_ids" : "out_type_ids");
  if (truncation < ENCRT_TRUNCATE_LONGEST_FIRST || truncation > ENCRT_TRUNCATE_ONLY_SECOND)
    return makeStatus(ENCRT_INVALID_ARGUMENT, std::string(where) + ": truncation is " +
                                                  std::to_string(truncation) +
                                                  " (expected an encrt_pair_truncation)");
  return guard(where, true, [&] {
    encrt::PairEncoding e = model->impl->encodePair(viewText(a, "a"), viewText(b, "b"),
                                                    static_cast<encrt::PairTruncation>(truncation));
    const int64_t n = static_cast<int64_t>(e.ids.size());
    *out_count = n;
    if (!out_ids && capacity == 0)
      return; // size query
    if (capacity < n)
      fail(ENCRT_INVALID_ARGUMENT, "the buffers hold ", capacity, " ids, the pair needs ", n);
    std::copy(e.ids.begin(), e.ids.end(), out_ids);
    std::copy(e.typeIds.begin(), e.typeIds.end(), out_type_ids);
  });
}

void encrt_session_options_initialize(encrt_session_options *options) {
  if (!options)
    return;
  options->struct_size = sizeof(encrt_session_options);
  options->enable_profiling = 0;
}

encrt_status *encrt_session_create(encrt_model *model,
                                   const encrt_session_options *options,
                                   encrt_session **out_session) {
  const char *where = "encrt_session_create";
  if (!out_session)
    return nullArgument(where, "out_session");
  *out_session = nullptr;
  if (!model)
    return nullArgument(where, "model");
  encrt_session_options opts;
  if (encrt_status *st =
          readOptions(where, "encrt_session_options", options,
                      offsetof(encrt_session_options, enable_profiling) + sizeof(int32_t),
                      encrt_session_options_initialize, opts))
    return st;
  return guard(where, true, [&] {
    auto session = std::make_unique<encrt_session>();
    session->impl = createDeviceSession(model->impl, opts.enable_profiling != 0);
    *out_session = session.release();
  });
}

void encrt_session_release(encrt_session *session) { delete session; }

namespace {
encrt_status *run(const char *where, encrt_session *session, const int32_t *ids,
                  const int32_t *typeIds, const int32_t *lengths, int64_t batch,
                  int64_t seq, float *outHidden, float *outPooled) {
  return inSession(where, session,
                   [&] { session->impl->run(ids, typeIds, lengths, batch, seq, outHidden, outPooled); });
}
} // namespace

encrt_status *encrt_session_run(encrt_session *session, const int32_t *ids,
                                const int32_t *lengths, int64_t batch,
                                int64_t seq, float *out_hidden,
                                float *out_pooled) {
  return run("encrt_session_run", session, ids, nullptr, lengths, batch, seq,
             out_hidden, out_pooled);
}

encrt_status *encrt_session_run_typed(encrt_session *session,
                                      const int32_t *ids,
                                      const int32_t *type_ids,
                                      const int32_t *lengths, int64_t batch,
                                      int64_t seq, float *out_hidden,
                                      float *out_pooled) {
  return run("encrt_session_run_typed", session, ids, type_ids, lengths, batch,
             seq, out_hidden, out_pooled);
}

encrt_status *encrt_session_score_pairs(encrt_session *session,
                                        const encrt_text *first,
                                        const encrt_text *second, int64_t count,
                                        int32_t truncation, float *out_scores) {
  const char *where = "encrt_session_score_pairs";
  if (!session)
    return nullArgument(where, "session");
  if (truncation < ENCRT_TRUNCATE_LONGEST_FIRST || truncation > ENCRT_TRUNCATE_ONLY_SECOND)
    return makeStatus(ENCRT_INVALID_ARGUMENT, std::string(where) + ": truncation is " +
                                                  std::to_string(truncation) +
                                                  " (expected an encrt_pair_truncation)");
  return inSession(where, session, [&] {
    std::vector<std::string_view> a = viewTexts(first, count, "first");
    std::vector<std::string_view> b = viewTexts(second, count, "second");
    session->impl->scorePairs(first ? a.data() : nullptr, second ? b.data() : nullptr, count,
                              static_cast<encrt::PairTruncation>(truncation), out_scores);
  });
}

encrt_status *encrt_session_embed(encrt_session *session,
                                  const char *const *texts, int64_t count,
                                  float *out_embeddings) {
  return embed("encrt_session_embed", session, nullptr, texts, count, out_embeddings);
}

encrt_status *encrt_session_embed_texts(encrt_session *session,
                                        const encrt_text *texts, int64_t count,
                                        float *out_embeddings) {
  return embed("encrt_session_embed_texts", session, nullptr, texts, count, out_embeddings);
}

encrt_status *encrt_session_embed_prompted(encrt_session *session, const char *prompt_name,
                                           const encrt_text *texts, int64_t count, float *out_embeddings) {
  return embed("encrt_session_embed_prompted", session, prompt_name, texts, count,
               out_embeddings);
}

void encrt_encode_outputs_initialize(encrt_encode_outputs *outputs) {
  if (!outputs)
    return;
  *outputs = encrt_encode_outputs{};
  outputs->struct_size = sizeof(encrt_encode_outputs);
}

encrt_status *encrt_session_encode(encrt_session *session, const char *prompt_name, const encrt_text *texts,
                                   int64_t count, const encrt_encode_outputs *outputs) {
  const char *where = "encrt_session_encode";
  encrt_encode_outputs o;
  if (encrt_status *bad = readEncodeOutputs(where, outputs, o))
    return bad;
  return encode(where, session, prompt_name, texts, count, o, wantsSparse(o));
}

encrt_status *encrt_session_encode_ids(encrt_session *session, const int32_t *ids, const int32_t *lengths,
                                       int64_t batch, int64_t seq, const encrt_encode_outputs *outputs) {
  const char *where = "encrt_session_encode_ids";
  encrt_encode_outputs o;
  if (encrt_status *bad = readEncodeOutputs(where, outputs, o))
    return bad;
  return inSession(where, session, [&] {
    EncodeOutputs out = toEncodeOutputs(o, wantsSparse(o));
    out.role = roleOf(session->impl->model(), o);
    session->impl->encodeIds(ids, lengths, batch, seq, out);
  });
}

encrt_status *encrt_session_embed_sparse(encrt_session *session, const char *prompt_name,
                                         const encrt_text *texts, int64_t count, int32_t top_k, float threshold,
                                         int32_t *out_counts, int32_t *out_ids, float *out_weights) {
  const char *where = "encrt_session_embed_sparse";
  encrt_encode_outputs o;
  encrt_encode_outputs_initialize(&o);
  o.sparse_top_k = top_k;
  o.sparse_threshold = threshold;
  o.sparse_counts = out_counts;
  o.sparse_ids = out_ids;
  o.sparse_weights = out_weights;
  return encode(where, session, prompt_name, texts, count, o, /*sparse=*/true);
}

int64_t encrt_session_profile_count(const encrt_session *session) {
  if (!session || !session->impl->profiling())
    return 0;
  return static_cast<int64_t>(session->impl->profile().size());
}

void encrt_session_profile_get(const encrt_session *session, int64_t index,
                               encrt_step_profile *out, size_t out_size) {
  encrt_step_profile p{};
  if (index >= 0 && index < encrt_session_profile_count(session)) {
    const encm::Step &step = session->impl->model().step(static_cast<uint32_t>(index));
    p.kernel = step.kernel()->c_str();
    p.op = step.op() ? step.op()->c_str() : "";
    p.calls = session->impl->profile()[index].calls;
    p.total_ms = session->impl->profile()[index].totalMs;
  }
  writeOut(p, out, out_size);
}

uint64_t encrt_session_arena_bytes(const encrt_session *session) {
  return session ? session->impl->arenaBytes() : 0;
}

const char *encrt_version(void) { return ENCRT_VERSION_STRING; }

encrt_status *encrt_model_get_label(const encrt_model *model, int32_t index, const char **out_name) {
  const char *where = "encrt_model_get_label";
  if (!model)
    return nullArgument(where, "model");
  if (!out_name)
    return nullArgument(where, "out_name");
  const auto &labels = model->impl->labels();
  if (index < 0 || index >= static_cast<int32_t>(labels.size()))
    return guard(where, false, [&] {
      fail(ENCRT_INVALID_ARGUMENT, "label index ", index, " is out of range (the model has ", labels.size(),
           " labels)");
    });
  *out_name = labels[static_cast<size_t>(index)].c_str();
  return nullptr;
}

encrt_status *encrt_model_get_token(const encrt_model *model, int32_t id, const char **out_text,
                                    int64_t *out_size) {
  const char *where = "encrt_model_get_token";
  if (!model)
    return nullArgument(where, "model");
  if (!out_text)
    return nullArgument(where, "out_text");
  return guard(where, true, [&] {
    const encrt::Tokenizer *tokenizer = model->impl->tokenizer();
    if (!tokenizer)
      fail(ENCRT_UNSUPPORTED, "the artifact has no tokenizer");
    const std::string *token = tokenizer->token(id);
    if (!token)
      fail(ENCRT_INVALID_ARGUMENT, "token id ", id, " is not in the vocabulary (", model->impl->metadata().vocab_size(),
           " entries) or the added tokens");
    *out_text = token->c_str();
    if (out_size)
      *out_size = static_cast<int64_t>(token->size());
  });
}

encrt_status *encrt_model_tokenize_offsets(const encrt_model *model, encrt_text text, int32_t add_special_tokens,
                                           int64_t max_tokens, encrt_token *out_tokens, int64_t capacity,
                                           int64_t *out_count) {
  const char *where = "encrt_model_tokenize_offsets";
  if (!model)
    return nullArgument(where, "model");
  if (!out_count)
    return nullArgument(where, "out_count");
  *out_count = 0;
  if (!out_tokens && capacity != 0)
    return nullArgument(where, "out_tokens");
  if (add_special_tokens != 0 && add_special_tokens != 1)
    return makeStatus(ENCRT_INVALID_ARGUMENT, std::string(where) + ": add_special_tokens is " +
                                                  std::to_string(add_special_tokens) + " (expected 0 or 1)");
  if (max_tokens < 0)
    return makeStatus(ENCRT_INVALID_ARGUMENT, std::string(where) + ": max_tokens is " + std::to_string(max_tokens) +
                                                  " (expected 0 for every token, or a limit > 0)");
  return guard(where, true, [&] {
    const std::vector<encrt::EncodedToken> tokens =
        model->impl->encodeTokens(viewText(text, "text"), static_cast<uint64_t>(max_tokens), add_special_tokens == 1);
    const int64_t n = static_cast<int64_t>(tokens.size());
    *out_count = n;
    if (!out_tokens && capacity == 0)
      return; // size query
    if (capacity < n)
      fail(ENCRT_INVALID_ARGUMENT, "the buffer holds ", capacity, " tokens, the text has ", n);
    for (int64_t i = 0; i < n; ++i) {
      const encrt::EncodedToken &t = tokens[static_cast<size_t>(i)];
      out_tokens[i] = {t.id, t.special ? 1 : 0, t.span.start, t.span.end};
    }
  });
}

encrt_status *encrt_model_decode(const encrt_model *model, const int32_t *ids, int64_t count,
                                 int32_t skip_special_tokens, char *out_text, int64_t capacity, int64_t *out_size) {
  const char *where = "encrt_model_decode";
  if (!model)
    return nullArgument(where, "model");
  if (!out_size)
    return nullArgument(where, "out_size");
  *out_size = 0;
  if (!ids && count != 0)
    return nullArgument(where, "ids");
  if (!out_text && capacity != 0)
    return nullArgument(where, "out_text");
  if (count < 0)
    return makeStatus(ENCRT_INVALID_ARGUMENT, std::string(where) + ": count is " + std::to_string(count));
  if (skip_special_tokens != 0 && skip_special_tokens != 1)
    return makeStatus(ENCRT_INVALID_ARGUMENT, std::string(where) + ": skip_special_tokens is " +
                                                  std::to_string(skip_special_tokens) + " (expected 0 or 1)");
  return guard(where, true, [&] {
    const std::string text = model->impl->decode(ids, static_cast<size_t>(count), skip_special_tokens == 1);
    const int64_t n = static_cast<int64_t>(text.size());
    *out_size = n;
    if (!out_text && capacity == 0)
      return; // size query
    if (capacity < n)
      fail(ENCRT_INVALID_ARGUMENT, "the buffer holds ", capacity, " bytes, the text has ", n);
    std::memcpy(out_text, text.data(), text.size());
  });
}

int32_t encrt_api_version(void) { return ENCRT_API_VERSION; }

} // extern "C"
