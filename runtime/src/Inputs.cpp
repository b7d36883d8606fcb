//===- Inputs.cpp - Argument checks and embed batching shared by sessions -===//
#include "Inputs.h"

#include "Failure.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace encrt::rt {

namespace {
constexpr int64_t kEmbedChunk = 32;
} // namespace

void validateRunInputs(const LoadedModel &model, const int32_t *ids,
                       const int32_t *lengths, int64_t batch, int64_t seq,
                       bool wantPooled, const RunLimits &limits) {
  const encm::Metadata &md = model.metadata();
  if (!ids || !lengths)
    fail(ENCRT_INVALID_ARGUMENT, !ids ? "ids" : "lengths", " is NULL");
  if (batch < 1)
    fail(ENCRT_INVALID_ARGUMENT, "batch is ", batch, " (expected >= 1)");
  if (seq < 1)
    fail(ENCRT_INVALID_ARGUMENT, "sequence length is ", seq,
         " (expected >= 1)");
  if (seq > md.max_seq())
    fail(ENCRT_INVALID_ARGUMENT, "sequence length ", seq,
         " exceeds the compiled maximum ", md.max_seq());
  if (batch > limits.maxBatch)
    fail(ENCRT_INVALID_ARGUMENT, "batch ", batch, " exceeds the ",
         limits.backend, " limit of ", limits.maxBatch, " sequences per run");
  int64_t elements;
  if (__builtin_mul_overflow(batch, seq, &elements) ||
      elements > limits.maxElements)
    fail(ENCRT_OUT_OF_MEMORY, "batch ", batch, " x sequence ", seq,
         " is too large");
  if (wantPooled && !model.hasPooledOutput())
    fail(ENCRT_INVALID_ARGUMENT, "the model has no pooled output (pooling \"",
         model.pooling(), "\"); pass NULL for the pooled output");
  for (int64_t b = 0; b < batch; ++b) {
    if (lengths[b] < 1 || lengths[b] > seq)
      fail(ENCRT_INVALID_ARGUMENT, "lengths[", b, "] is ", lengths[b],
           " (expected 1..", seq, ", the padded sequence length)");
    const int32_t *row = ids + b * seq;
    for (int32_t s = 0; s < lengths[b]; ++s)
      if (row[s] < 0 || row[s] >= md.vocab_size())
        fail(ENCRT_INVALID_ARGUMENT, "ids[", b, "][", s, "] is ", row[s],
             ", outside the vocabulary [0, ", md.vocab_size(), ")");
  }
}

void embedInChunks(const LoadedModel &model, const std::string_view *texts,
                   int64_t count, float *outEmbeddings, const PooledRunFn &run) {
  if (count < 0)
    fail(ENCRT_INVALID_ARGUMENT, "count is ", count, " (expected >= 0)");
  if (count == 0)
    return;
  if (!texts || !outEmbeddings)
    fail(ENCRT_INVALID_ARGUMENT, !texts ? "texts" : "out_embeddings",
         " is NULL");
  if (!model.hasPooledOutput())
    fail(ENCRT_UNSUPPORTED, model.artifact().path(),
         ": the model has no pooled output (pooling \"", model.pooling(),
         "\"); embed needs one (use encrt_session_run for hidden states)");
  const int64_t hidden = model.metadata().hidden_size();
  std::vector<std::vector<int32_t>> encoded;
  std::vector<int32_t> ids, lengths;
  for (int64_t first = 0; first < count; first += kEmbedChunk) {
    int64_t n = std::min(kEmbedChunk, count - first);
    encoded.clear();
    int64_t seq = 1;
    for (int64_t i = 0; i < n; ++i) {
      encoded.push_back(model.encode(texts[first + i], first + i));
      seq = std::max<int64_t>(seq, encoded.back().size());
    }
    ids.assign(static_cast<size_t>(n * seq), 0);
    lengths.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      std::copy(encoded[i].begin(), encoded[i].end(), ids.begin() + i * seq);
      lengths[i] = static_cast<int32_t>(encoded[i].size());
    }
    run(ids.data(), lengths.data(), n, seq, outEmbeddings + first * hidden);
  }
}

int64_t computeOffsets(const int32_t *lengths, int64_t batch, int32_t *offsets) {
  int64_t total = 0;
  offsets[0] = 0;
  for (int64_t b = 0; b < batch; ++b) {
    total += lengths[b];
    if (total > INT32_MAX)
      fail(ENCRT_INVALID_ARGUMENT, "the batch holds more than ", INT32_MAX,
           " tokens");
    offsets[b + 1] = static_cast<int32_t>(total);
  }
  return total;
}

void unpackRows(const float *packed, const int32_t *lengths,
                const int32_t *offsets, int64_t batch, int64_t seq,
                int64_t hidden, float *padded) {
  for (int64_t b = 0; b < batch; ++b) {
    float *dst = padded + b * seq * hidden;
    const int64_t n = lengths[b];
    std::memcpy(dst, packed + int64_t(offsets[b]) * hidden,
                sizeof(float) * static_cast<size_t>(n * hidden));
    std::fill(dst + n * hidden, dst + seq * hidden, 0.0f);
  }
}

} // namespace encrt::rt
