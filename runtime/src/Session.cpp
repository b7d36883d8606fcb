//===- Session.cpp - Running the plan of a loaded model -------------------===//
#include "Session.h"

#include "Failure.h"
#include "Inputs.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace encrt::rt {

namespace {

/// Largest single buffer the arena accepts; keeps every offset sum far from
/// overflow.
constexpr uint64_t kMaxValueBytes = uint64_t(1) << 48;
/// Elements of work (results written, weights read) per task below which a
/// step is not worth splitting.
constexpr uint64_t kElementsPerTask = 4096;

struct KernelJob {
  enc_kernel_fn fn;
  const enc_step_ctx *ctx;
};

void runKernelTask(void *context, int32_t task, int32_t numTasks) {
  auto *job = static_cast<const KernelJob *>(context);
  job->fn(job->ctx, task, numTasks);
}

} // namespace

int32_t stepTasks(uint64_t resultElements, uint64_t weightElements, int numThreads) {
  if (numThreads <= 1)
    return 1;
  // At 1 x 16 MiniLM's FFN-down writes 6 144 outputs and reads 590 000
  // weights: by its results alone it was one task while the other cores waited.
  const uint64_t work = resultElements + weightElements;
  const uint64_t maxTasks = 4 * static_cast<uint64_t>(numThreads);
  return static_cast<int32_t>(std::clamp<uint64_t>(work / kElementsPerTask, 1, maxTasks));
}

Session::Session(std::shared_ptr<const LoadedModel> model, bool profiling)
    : model_(std::move(model)), profiling_(profiling) {
  const encm::Model &m = model_->model();
  const auto &values = *m.values();
  const auto &steps = *m.steps();
  valuePtrs_.assign(values.size(), nullptr);
  for (uint32_t i = 0; i < values.size(); ++i) {
    const encm::Value &v = *values.Get(i);
    switch (v.kind()) {
    case encm::ValueKind::Weight:
      valuePtrs_[i] = const_cast<void *>(model_->artifact().weightData(v));
      break;
    case encm::ValueKind::Activation:
    case encm::ValueKind::Output:
      arenaValues_.push_back(i);
      requests_.push_back({0, v.first_step(), model_->artifact().liveEnd(v)});
      break;
    case encm::ValueKind::Input:
      break;
    }
  }
  size_t total = 0;
  operandStart_.reserve(steps.size() + 1);
  stepWeightElements_.reserve(steps.size());
  for (const encm::Step *step : steps) {
    operandStart_.push_back(total);
    total += step->operands() ? step->operands()->size() : 0;
    uint64_t weightElements = 0;
    if (const auto *ops = step->operands())
      for (uint32_t id : *ops) {
        const encm::Value &v = *values.Get(id);
        if (v.kind() == encm::ValueKind::Weight)
          weightElements += v.weight_bytes() / std::max<size_t>(1, dtypeSize(v.dtype()));
      }
    stepWeightElements_.push_back(weightElements);
  }
  operandStart_.push_back(total);
  operandPtrs_.assign(total, nullptr);
  if (profiling_)
    profile_.assign(steps.size(), StepProfile{});
  if (m.outputs() && m.outputs()->size() > 0) {
    const encm::Value &hidden = *values.Get(m.outputs()->Get(0));
    packedHidden_ = hidden.shape() && hidden.shape()->size() > 0 &&
                    hidden.shape()->Get(0) == kDimTokens;
  }
}

Session::~Session() { std::free(arena_); }

uint64_t Session::valueBytes(const encm::Value &value, int64_t batch,
                             int64_t seq, int64_t tokens) const {
  uint64_t bytes = dtypeSize(value.dtype());
  for (int64_t d : *value.shape()) {
    const uint64_t dim = uint64_t(resolveDim(d, batch, seq, tokens));
    if (__builtin_mul_overflow(bytes, dim, &bytes) || bytes > kMaxValueBytes)
      fail(ENCRT_OUT_OF_MEMORY, "batch ", batch, " x sequence ", seq,
           " is too large: value ", value.id(), " would exceed ",
           kMaxValueBytes, " bytes");
  }
  return bytes;
}

void Session::plan(int64_t batch, int64_t seq) {
  if (batch == plannedBatch_ && seq == plannedSeq_)
    return;
  // Packed values ([DIM_TOKENS, ...]) get room for the most tokens a run of
  // this shape can hold, batch * seq: one placement serves every mix of
  // lengths, so runs that differ only in their lengths never re-plan or
  // allocate.
  const auto &values = *model_->model().values();
  for (size_t k = 0; k < arenaValues_.size(); ++k)
    requests_[k].bytes =
        valueBytes(*values.Get(arenaValues_[k]), batch, seq, batch * seq);
  uint64_t needed = planArena(requests_, offsets_);
  needed = std::max<uint64_t>(needed, kArenaAlign);
  if (needed > arenaCapacity_) {
    std::free(arena_);
    arena_ = nullptr;
    arenaCapacity_ = 0;
    plannedBatch_ = plannedSeq_ = 0;
    if (needed > SIZE_MAX - kArenaAlign)
      throw std::bad_alloc();
    arena_ = static_cast<uint8_t *>(std::aligned_alloc(kArenaAlign, needed));
    if (!arena_)
      fail(ENCRT_OUT_OF_MEMORY, "cannot allocate a ", needed,
           "-byte arena for batch ", batch, " x sequence ", seq);
    arenaCapacity_ = needed;
  }
  for (size_t k = 0; k < arenaValues_.size(); ++k)
    valuePtrs_[arenaValues_[k]] = arena_ + offsets_[k];
  plannedBatch_ = batch;
  plannedSeq_ = seq;
}

void Session::run(const int32_t *ids, const int32_t *typeIds,
                  const int32_t *lengths, int64_t batch, int64_t seq,
                  float *outHidden, float *outPooled) {
  runPlan(ids, typeIds, lengths, nullptr, batch, seq, outHidden, outPooled);
}

void Session::runPlan(const int32_t *ids, const int32_t *typeIds, const int32_t *lengths, const int32_t *rows,
                      int64_t batch, int64_t seq, float *outHidden, float *outPooled) {
  validateRunInputs(*model_, ids, typeIds, lengths, batch, seq,
                    outPooled != nullptr, {/*maxElements=*/int64_t(1) << 40});
  const encm::Model &m = model_->model();
  const int64_t hidden = model_->metadata().hidden_size();

  // Inputs: copies with the padding zeroed; the packed layout's offsets.
  ids_.resize(static_cast<size_t>(batch * seq));
  copyPadded(ids, rows ? rows : lengths, batch, seq, ids_.data());
  lengths_.assign(lengths, lengths + batch);
  seqOffsets_.resize(static_cast<size_t>(batch + 1));
  // A packed plan's rows are each text's tokens; its attention reads the
  // lengths input as the keys (fewer where tokens are not attended to).
  const int64_t tokens = computeOffsets(rows ? rows : lengths, batch, seqOffsets_.data());
  plan(batch, seq);
  valuePtrs_[m.inputs()->Get(0)] = ids_.data();
  valuePtrs_[m.inputs()->Get(1)] = lengths_.data();
  if (m.inputs()->size() > 2) {
    typeIds_.resize(static_cast<size_t>(batch * seq));
    copyPadded(typeIds, lengths, batch, seq, typeIds_.data());
    valuePtrs_[m.inputs()->Get(2)] = typeIds_.data();
  }

  const auto &steps = *m.steps();
  for (uint32_t s = 0; s < steps.size(); ++s) {
    const encm::Step &step = *steps.Get(s);
    void **ptrs = operandPtrs_.data() + operandStart_[s];
    uint64_t resultElements = 0;
    if (const auto *ops = step.operands()) {
      for (uint32_t o = 0; o < ops->size(); ++o)
        ptrs[o] = valuePtrs_[ops->Get(o)];
      const auto &values = *m.values();
      for (uint32_t o = ops->size() - step.num_results(); o < ops->size(); ++o) {
        const encm::Value &v = *values.Get(ops->Get(o));
        resultElements +=
            valueBytes(v, batch, seq, tokens) / dtypeSize(v.dtype());
      }
    }
    enc_step_ctx ctx;
    ctx.buffers = ptrs;
    ctx.lengths = lengths_.data();
    ctx.batch = batch;
    ctx.seq = seq;
    ctx.iattrs = step.iattrs() ? step.iattrs()->data() : nullptr;
    ctx.num_iattrs = step.iattrs() ? static_cast<int32_t>(step.iattrs()->size()) : 0;
    ctx.fattrs = step.fattrs() ? step.fattrs()->data() : nullptr;
    ctx.num_fattrs = step.fattrs() ? static_cast<int32_t>(step.fattrs()->size()) : 0;
    ctx.offsets = seqOffsets_.data();
    ctx.tokens = tokens;

    ThreadPool &pool = model_->pool();
    const int32_t numTasks = stepTasks(resultElements, stepWeightElements_[s], pool.numThreads());
    KernelJob job{model_->code().kernel(s), &ctx};
    if (profiling_) {
      auto t0 = std::chrono::steady_clock::now();
      pool.parallelFor(numTasks, runKernelTask, &job);
      auto t1 = std::chrono::steady_clock::now();
      profile_[s].calls += 1;
      profile_[s].totalMs +=
          std::chrono::duration<double, std::milli>(t1 - t0).count();
    } else {
      pool.parallelFor(numTasks, runKernelTask, &job);
    }
  }

  if (outHidden && packedHidden_) {
    // [tokens, H] -> [batch, seq, H]; padding rows are zero.
    unpackRows(static_cast<const float *>(valuePtrs_[m.outputs()->Get(0)]),
               lengths_.data(), seqOffsets_.data(), batch, seq, hidden, outHidden);
  } else if (outHidden) {
    std::memcpy(outHidden, valuePtrs_[m.outputs()->Get(0)],
                sizeof(float) * static_cast<size_t>(batch * seq * hidden));
  }
  if (outPooled)
    std::memcpy(outPooled, valuePtrs_[m.outputs()->Get(1)],
                sizeof(float) * static_cast<size_t>(batch * model_->secondOutputWidth()));
}

void Session::runWithHeads(const int32_t *ids, const int32_t *keys, const int32_t *rows, int64_t batch, int64_t seq,
                           float *outPooled, float *const *outHeads) {
  if (rows)
    for (int64_t b = 0; b < batch; ++b) {
      if (rows[b] < keys[b] || rows[b] > seq) // the callers' (Inputs.cpp) guarantee
        fail(ENCRT_INTERNAL, "rows[", b, "] is ", rows[b], ", outside [", keys[b], ", ", seq, "]");
    }
  runPlan(ids, nullptr, keys, rows, batch, seq, nullptr, outPooled);
  const int32_t *lengths = rows ? rows : keys;
  const encm::Model &m = model_->model();
  const std::vector<TokenHeadInfo> &heads = model_->tokenHeads();
  for (size_t k = 0; k < heads.size(); ++k) {
    if (!outHeads[k])
      continue;
    const uint32_t id = m.outputs()->Get(heads[k].output);
    const encm::Value &v = *m.values()->Get(id);
    const auto *src = static_cast<const float *>(valuePtrs_[id]);
    const size_t width = static_cast<size_t>(heads[k].width);
    if (v.shape()->Get(0) == kDimTokens) { // packed: already [tokens, width]
      std::memcpy(outHeads[k], src, sizeof(float) * width * static_cast<size_t>(seqOffsets_[batch]));
      continue;
    }
    size_t at = 0; // padded [batch, seq, width]: each text's rows
    for (int64_t b = 0; b < batch; ++b) {
      std::memcpy(outHeads[k] + at * width, src + static_cast<size_t>(b * seq) * width,
                  sizeof(float) * width * static_cast<size_t>(lengths[b]));
      at += static_cast<size_t>(lengths[b]);
    }
  }
}

} // namespace encrt::rt
