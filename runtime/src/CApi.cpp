//===- CApi.cpp - The C API of encrt.h over the C++ implementation --------===//
//
// Every entry point catches everything: no C++ exception crosses the C ABI.
//
//===----------------------------------------------------------------------===//
#include "encrt/encrt.h"

#include "Failure.h"
#include "LoadedModel.h"
#include "Session.h"
#include "cuda/CudaSession.h"

#include <new>
#include <string>

using namespace encrt::rt;

struct encrt_status {
  encrt_status_code code;
  std::string message;
};

struct encrt_model {
  std::shared_ptr<LoadedModel> impl;
};

/// Exactly one of the two backends' sessions.
struct encrt_session {
  std::unique_ptr<Session> cpu;
  std::unique_ptr<encrt::rt::cuda::CudaSession> cuda;
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
  options->num_threads = 0;
  options->cpu_target = nullptr;
  options->device = nullptr;
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
  if (options && options->num_threads < 0)
    return makeStatus(ENCRT_INVALID_ARGUMENT,
                      std::string(where) + ": num_threads is " +
                          std::to_string(options->num_threads) +
                          " (expected >= 0, 0 = all cores)");
  // Load errors already start with the path.
  return guard(where, false, [&] {
    LoadOptions o;
    if (options) {
      o.numThreads = options->num_threads;
      o.cpuTarget = options->cpu_target;
      o.device = options->device;
    }
    auto impl = LoadedModel::load(path, o);
    *out_model = new encrt_model{std::move(impl)};
  });
}

void encrt_model_release(encrt_model *model) { delete model; }

void encrt_model_get_info(const encrt_model *model, encrt_model_info *out_info) {
  if (!out_info)
    return;
  *out_info = encrt_model_info{};
  if (!model)
    return;
  const LoadedModel &m = *model->impl;
  const encm::Metadata &md = m.metadata();
  out_info->architecture = m.architecture().c_str();
  out_info->hidden_size = md.hidden_size();
  out_info->num_layers = md.num_layers();
  out_info->num_heads = md.num_heads();
  out_info->max_seq = md.max_seq();
  out_info->vocab_size = md.vocab_size();
  out_info->pooling = m.pooling().c_str();
  out_info->normalize = md.normalize() ? 1 : 0;
  out_info->has_pooled_output = m.hasPooledOutput() ? 1 : 0;
  out_info->cpu_target = m.onCuda() ? "" : m.code().target().c_str();
  out_info->num_steps = m.numSteps();
  out_info->weight_bytes = m.model().weights_size();
  out_info->device = m.device().c_str();
  out_info->random_weights = m.artifact().randomWeights() ? 1 : 0;
}

encrt_status *encrt_model_tokenize(const encrt_model *model, const char *text,
                                   int32_t *out_ids, int64_t capacity,
                                   int64_t *out_count) {
  const char *where = "encrt_model_tokenize";
  if (!model)
    return nullArgument(where, "model");
  if (!text)
    return nullArgument(where, "text");
  if (!out_count)
    return nullArgument(where, "out_count");
  *out_count = 0;
  if (!out_ids && capacity != 0)
    return nullArgument(where, "out_ids");
  return guard(where, true, [&] {
    std::vector<int32_t> ids = model->impl->encode(text);
    int64_t n = static_cast<int64_t>(ids.size());
    *out_count = n;
    if (!out_ids && capacity == 0)
      return; // size query
    if (capacity < n)
      fail(ENCRT_INVALID_ARGUMENT, "the buffer holds ", capacity,
           " ids, the text needs ", n);
    std::copy(ids.begin(), ids.end(), out_ids);
  });
}

void encrt_session_options_initialize(encrt_session_options *options) {
  if (options)
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
  return guard(where, true, [&] {
    bool profiling = options && options->enable_profiling;
    auto session = std::make_unique<encrt_session>();
    if (model->impl->onCuda())
      session->cuda = std::make_unique<encrt::rt::cuda::CudaSession>(model->impl, profiling);
    else
      session->cpu = std::make_unique<Session>(model->impl, profiling);
    *out_session = session.release();
  });
}

void encrt_session_release(encrt_session *session) { delete session; }

encrt_status *encrt_session_run(encrt_session *session, const int32_t *ids,
                                const int32_t *lengths, int64_t batch,
                                int64_t seq, float *out_hidden,
                                float *out_pooled) {
  const char *where = "encrt_session_run";
  if (!session)
    return nullArgument(where, "session");
  return guard(where, true, [&] {
    if (session->cuda)
      session->cuda->run(ids, lengths, batch, seq, out_hidden, out_pooled);
    else
      session->cpu->run(ids, lengths, batch, seq, out_hidden, out_pooled);
  });
}

encrt_status *encrt_session_embed(encrt_session *session,
                                  const char *const *texts, int64_t count,
                                  float *out_embeddings) {
  const char *where = "encrt_session_embed";
  if (!session)
    return nullArgument(where, "session");
  return guard(where, true, [&] {
    if (session->cuda)
      session->cuda->embed(texts, count, out_embeddings);
    else
      session->cpu->embed(texts, count, out_embeddings);
  });
}

int64_t encrt_session_profile_count(const encrt_session *session) {
  if (!session)
    return 0;
  if (session->cuda)
    return session->cuda->profiling()
               ? static_cast<int64_t>(session->cuda->profile().size())
               : 0;
  if (!session->cpu->profiling())
    return 0;
  return static_cast<int64_t>(session->cpu->profile().size());
}

void encrt_session_profile_get(const encrt_session *session, int64_t index,
                               encrt_step_profile *out) {
  if (!out)
    return;
  *out = encrt_step_profile{};
  if (index < 0 || index >= encrt_session_profile_count(session))
    return;
  const LoadedModel &m = session->cuda ? session->cuda->model()
                                       : session->cpu->model();
  const auto &steps = session->cuda ? *m.model().cuda()->steps() : *m.model().steps();
  const encm::Step &step = *steps.Get(static_cast<flatbuffers::uoffset_t>(index));
  out->kernel = step.kernel()->c_str();
  out->op = step.op() ? step.op()->c_str() : "";
  if (session->cuda) {
    out->calls = session->cuda->profile()[index].calls;
    out->total_ms = session->cuda->profile()[index].totalMs;
  } else {
    out->calls = session->cpu->profile()[index].calls;
    out->total_ms = session->cpu->profile()[index].totalMs;
  }
}

uint64_t encrt_session_arena_bytes(const encrt_session *session) {
  if (!session)
    return 0;
  return session->cuda ? session->cuda->arenaBytes() : session->cpu->arenaBytes();
}

const char *encrt_version(void) { return ENCRT_VERSION_STRING; }

} // extern "C"
