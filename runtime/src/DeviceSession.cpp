//===- DeviceSession.cpp - Embedding and the device switch -----------------===//
#include "DeviceSession.h"

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
