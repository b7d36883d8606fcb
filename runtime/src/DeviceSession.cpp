//===- DeviceSession.cpp - Embedding and the device switch -----------------===//
#include "DeviceSession.h"

#include "Failure.h"
#include "Inputs.h"
#include "Session.h"
#include "cuda/CudaSession.h"

namespace encrt::rt {

void DeviceSession::embed(const std::string_view *texts, int64_t count, std::string_view prompt,
                          float *outEmbeddings) {
  embedInChunks(model(), texts, count, prompt, outEmbeddings,
                [this](const int32_t *ids, const int32_t *lengths, int64_t n, int64_t seq,
                       float *outPooled) { run(ids, nullptr, lengths, n, seq, nullptr, outPooled); });
}

void DeviceSession::runWithHeads(const int32_t *ids, const int32_t *keys, const int32_t *rows, int64_t batch,
                                 int64_t seq, float *outPooled, float *const *) {
  if (!model().tokenHeads().empty() || rows)
    fail(ENCRT_UNSUPPORTED, model().artifact().path(), ": token heads run on the CPU plan only");
  run(ids, nullptr, keys, batch, seq, nullptr, outPooled);
}

void DeviceSession::encode(const std::string_view *texts, int64_t count, std::string_view prompt,
                           const EncodeOutputs &outputs) {
  encodeInChunks(model(), texts, count, prompt, outputs,
                 [this](const int32_t *ids, const int32_t *keys, const int32_t *rows, int64_t n, int64_t seq,
                        float *outPooled, float *const *outHeads) {
                   runWithHeads(ids, keys, rows, n, seq, outPooled, outHeads);
                 });
}

void DeviceSession::encodeIds(const int32_t *ids, const int32_t *lengths, int64_t batch, int64_t seq,
                              const EncodeOutputs &outputs) {
  rt::encodeIds(model(), ids, lengths, batch, seq, outputs,
                [this](const int32_t *chunkIds, const int32_t *keys, const int32_t *rows, int64_t n, int64_t s,
                       float *outPooled, float *const *outHeads) {
                  runWithHeads(chunkIds, keys, rows, n, s, outPooled, outHeads);
                });
}

void DeviceSession::scorePairs(const std::string_view *first, const std::string_view *second, int64_t count,
                               PairTruncation truncation, float *outScores) {
  scorePairsInChunks(model(), first, second, count, truncation, outScores,
                     [this](const int32_t *ids, const int32_t *typeIds, const int32_t *lengths, int64_t n,
                            int64_t seq, float *outLogits) { run(ids, typeIds, lengths, n, seq, nullptr, outLogits); });
}

std::unique_ptr<DeviceSession> createDeviceSession(std::shared_ptr<const LoadedModel> model,
                                                   bool profiling) {
  if (model->onCuda())
    return std::make_unique<cuda::CudaSession>(std::move(model), profiling);
  return std::make_unique<Session>(std::move(model), profiling);
}

} // namespace encrt::rt
