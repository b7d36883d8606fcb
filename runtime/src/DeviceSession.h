//===- DeviceSession.h - One session interface for every device -----------===//
//
// What the C API needs of a session, whatever runs it: the CPU's Session and
// cuda::CudaSession implement run() and their bookkeeping; embedding (tokenise,
// run in chunks, pool) is the same on every device and lives here. A new
// device is one more implementation and one more case in createDeviceSession.
// Not thread-safe: one session per thread.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_DEVICESESSION_H
#define ENCRT_DEVICESESSION_H

#include "Inputs.h"
#include "LoadedModel.h"

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace encrt::rt {

/// Accumulated over a session's runs, per plan step (CUDA: GPU time between
/// events around the step; CPU: wall time of the step's tasks).
struct StepProfile {
  int64_t calls = 0;
  double totalMs = 0;
};

class DeviceSession {
public:
  virtual ~DeviceSession() = default;

  virtual const LoadedModel &model() const = 0;

  /// Throws Failure. See encrt_session_run_typed (typeIds may be null).
  virtual void run(const int32_t *ids, const int32_t *typeIds, const int32_t *lengths, int64_t batch,
                   int64_t seq, float *outHidden, float *outPooled) = 0;

  /// Tokenises `texts`, runs them in chunks padded to their longest and writes
  /// count x hidden pooled floats. Throws Failure. See encrt_session_embed.
  /// Embeddings of `texts`, each tokenised after `prompt` ("" none).
  void embed(const std::string_view *texts, int64_t count, std::string_view prompt, float *outEmbeddings);

  /// run() without the hidden output that also writes each token head k's
  /// rows to outHeads[k] (null: not wanted; one pointer per
  /// model().tokenHeads() entry) as [tokens, width], the texts' rows one
  /// after another. Text b has rows[b] tokens (null: keys[b]), of which the
  /// first keys[b] are attention keys; the rest attend to the text but are
  /// not attended to (ColBERT's query expansion; a padded plan only). Throws
  /// Failure. The default, for devices whose models have no token heads (the
  /// CUDA plan), is run().
  virtual void runWithHeads(const int32_t *ids, const int32_t *keys, const int32_t *rows, int64_t batch, int64_t seq,
                            float *outPooled, float *const *outHeads);

  /// The outputs `outputs` asks for of `texts`, one pass per chunk. Throws
  /// Failure. See encrt_session_encode.
  void encode(const std::string_view *texts, int64_t count, std::string_view prompt, const EncodeOutputs &outputs);
  /// The same outputs of padded token ids [batch, seq], one pass. Throws
  /// Failure. See encrt_session_encode_ids.
  void encodeIds(const int32_t *ids, const int32_t *lengths, int64_t batch, int64_t seq,
                 const EncodeOutputs &outputs);

  /// Tokenises `count` text pairs, runs them with their token types and
  /// writes count x num_labels activated scores. Throws Failure. See
  /// encrt_session_score_pairs.
  void scorePairs(const std::string_view *first, const std::string_view *second, int64_t count,
                  PairTruncation truncation, float *outScores);

  virtual bool profiling() const = 0;
  /// One entry per step of the plan that runs (empty without profiling).
  virtual const std::vector<StepProfile> &profile() const = 0;
  /// Arena bytes currently reserved (device memory on CUDA).
  virtual uint64_t arenaBytes() const = 0;
};

/// The session for the device `model` was loaded for. Throws Failure.
std::unique_ptr<DeviceSession> createDeviceSession(std::shared_ptr<const LoadedModel> model,
                                                   bool profiling);

} // namespace encrt::rt

#endif // ENCRT_DEVICESESSION_H
