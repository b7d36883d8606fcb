//===- Session.h - Running the plan of a loaded model ---------------------===//
//
// A session owns an arena. For each (batch, seq) it places every Activation
// and Output value (planArena over the live ranges the compiler recorded),
// growing the arena only when a shape needs more; Input values point at its
// copies of the caller's ids (padding zeroed) and lengths, Weight values into
// the mapping. run() validates its arguments, calls every step's kernel for
// each task on the model's pool, and copies the outputs out. Not thread-safe:
// one session per thread.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_SESSION_H
#define ENCRT_SESSION_H

#include "LoadedModel.h"
#include "MemoryPlan.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace encrt::rt {

struct StepProfile {
  int64_t calls = 0;
  double totalMs = 0;
};

class Session {
public:
  Session(std::shared_ptr<const LoadedModel> model, bool profiling);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const LoadedModel &model() const { return *model_; }

  /// Throws Failure. See encrt_session_run.
  void run(const int32_t *ids, const int32_t *lengths, int64_t batch,
           int64_t seq, float *outHidden, float *outPooled);
  /// Throws Failure. See encrt_session_embed.
  void embed(const char *const *texts, int64_t count, float *outEmbeddings);

  bool profiling() const { return profiling_; }
  const std::vector<StepProfile> &profile() const { return profile_; }

  /// Arena bytes currently reserved (for tests and reports).
  uint64_t arenaBytes() const { return arenaCapacity_; }

private:
  void validate(const int32_t *ids, const int32_t *lengths, int64_t batch,
                int64_t seq, bool wantPooled) const;
  void plan(int64_t batch, int64_t seq);
  uint64_t valueBytes(const encm::Value &value, int64_t batch,
                      int64_t seq) const;

  std::shared_ptr<const LoadedModel> model_;
  bool profiling_;
  std::vector<StepProfile> profile_;

  // Arena and the current placement.
  uint8_t *arena_ = nullptr;
  uint64_t arenaCapacity_ = 0;
  int64_t plannedBatch_ = 0, plannedSeq_ = 0;
  std::vector<uint32_t> arenaValues_;      ///< Activation/Output value ids
  std::vector<ArenaRequest> requests_;     ///< parallel to arenaValues_
  std::vector<uint64_t> offsets_;          ///< parallel to arenaValues_
  std::vector<void *> valuePtrs_;          ///< per value id
  std::vector<void *> operandPtrs_;        ///< all steps' operands, flat
  std::vector<size_t> operandStart_;       ///< per step, into operandPtrs_
  std::vector<int32_t> ids_, lengths_;     ///< validated copies
};

} // namespace encrt::rt

#endif // ENCRT_SESSION_H
