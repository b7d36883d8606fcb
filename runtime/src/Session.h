//===- Session.h - Running the plan of a loaded model ---------------------===//
//
// A session owns an arena. For each (batch, seq) it places every Activation
// and Output value (planArena over the live ranges the compiler recorded;
// packed [DIM_TOKENS, ...] values sized for batch * seq tokens), growing the
// arena only when a shape needs more; Input values point at its copies of the
// caller's ids (padding zeroed) and lengths, Weight values into the mapping.
// run() validates its arguments, computes the packed offsets (kernel_abi.h),
// calls every step's kernel for each task on the model's pool, and copies the
// outputs out; a packed hidden output ([DIM_TOKENS, H]) is scattered into the
// caller's padded layout with zero padding rows. Not thread-safe: one session
// per thread.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_SESSION_H
#define ENCRT_SESSION_H

#include "DeviceSession.h"
#include "LoadedModel.h"
#include "MemoryPlan.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace encrt::rt {

/// The tasks a plan step is split into on a pool of numThreads: its work
/// (resultElements written, weightElements read: a Linear over a few rows
/// streams its whole weight) over 4 096 elements a task, at least 1, at most
/// 4 x numThreads; 1 on one thread.
int32_t stepTasks(uint64_t resultElements, uint64_t weightElements, int numThreads);

class Session final : public DeviceSession {
public:
  Session(std::shared_ptr<const LoadedModel> model, bool profiling);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const LoadedModel &model() const override { return *model_; }

  /// Throws Failure. See encrt_session_run.
  void run(const int32_t *ids, const int32_t *typeIds, const int32_t *lengths,
           int64_t batch, int64_t seq, float *outHidden,
           float *outPooled) override;

  void runWithHeads(const int32_t *ids, const int32_t *keys, const int32_t *rows, int64_t batch, int64_t seq,
                    float *outPooled, float *const *outHeads) override;

  bool profiling() const override { return profiling_; }
  const std::vector<StepProfile> &profile() const override { return profile_; }

  uint64_t arenaBytes() const override { return arenaCapacity_; }

private:
  /// run(); rows (null: lengths): text b's ids [lengths[b], rows[b]) are
  /// kept (tokens that attend but are not attended to), not zeroed as
  /// padding.
  void runPlan(const int32_t *ids, const int32_t *typeIds, const int32_t *lengths, const int32_t *rows,
               int64_t batch, int64_t seq, float *outHidden, float *outPooled);

  void plan(int64_t batch, int64_t seq);
  uint64_t valueBytes(const encm::Value &value, int64_t batch, int64_t seq,
                      int64_t tokens) const;

  std::shared_ptr<const LoadedModel> model_;
  bool profiling_;
  std::vector<StepProfile> profile_;

  // Arena and the current placement.
  uint8_t *arena_ = nullptr;
  uint64_t arenaCapacity_ = 0;
  int64_t plannedBatch_ = 0, plannedSeq_ = 0;
  bool packedHidden_ = false;              ///< hidden output is [DIM_TOKENS, H]
  std::vector<uint32_t> arenaValues_;      ///< Activation/Output value ids
  std::vector<ArenaRequest> requests_;     ///< parallel to arenaValues_
  std::vector<uint64_t> offsets_;          ///< parallel to arenaValues_
  std::vector<void *> valuePtrs_;          ///< per value id
  std::vector<void *> operandPtrs_;        ///< all steps' operands, flat
  std::vector<size_t> operandStart_;       ///< per step, into operandPtrs_
  std::vector<uint64_t> stepWeightElements_; ///< per step, the elements of its weight operands
  std::vector<int32_t> ids_, typeIds_, lengths_; ///< validated copies
  std::vector<int32_t> seqOffsets_;        ///< [batch + 1] prefix sum of lengths_
};

} // namespace encrt::rt

#endif // ENCRT_SESSION_H
