//===- Batcher.h - Dynamic packed batching over one runtime session -------===//
//
// HTTP threads submit jobs (a request's texts, already tokenised); one batcher
// thread takes texts from the queue in arrival order into packed forward
// passes of at most maxBatchTokens tokens and maxBatchTexts texts, waiting at
// most maxWait for more when the queue is short, runs each pass on its session
// and writes every text's pooled row into its job. The packed plan makes the
// mix of lengths free and every row independent of the others (the same bits
// as alone: tests/e2e/PackedTest.cpp, BatchInvariance).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_SERVER_BATCHER_H
#define ENCC_SERVER_BATCHER_H

#include "Metrics.h"

#include "encrt/encrt.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace encc::serve {

/// One request's texts (or text pairs) and, once done, their outputs.
struct Job {
  std::vector<std::vector<int32_t>> ids; ///< per text, 1..max_seq ids
  /// Per text, its ids' token types (a pair's second text: 1); empty: all 0.
  std::vector<std::vector<int32_t>> types;
  /// texts x the batcher's width, written by the batcher: pooled embeddings,
  /// or a classifier's logits (not written for a job of token states).
  std::vector<float> outputs;
  /// Set before submitting: the batcher writes each text's last hidden state
  /// (its tokens x hidden, TEI's /embed_all) into tokenStates instead.
  bool wantTokenStates = false;
  std::vector<std::vector<float>> tokenStates;
  /// Set before submitting: the batcher also writes each text's outputs of
  /// the model's token heads (encrt_session_encode_ids): its lexical weights
  /// as (token id, weight) by id, and its token vectors (rows x
  /// multivector_dim).
  bool wantSparse = false, wantVectors = false;
  /// A multi-vector model's role the ids were tokenised as ("" none; a
  /// pass holds texts of one role), and per text how many of its ids are
  /// attention keys (empty: all; encrt_model_tokenize_role's out_attended).
  std::string role;
  std::vector<int32_t> attended;
  std::vector<std::vector<std::pair<int32_t, float>>> sparse;
  std::vector<std::vector<float>> vectors;
  std::string error;                     ///< set when a pass failed
  std::atomic<bool> abandoned{false};    ///< its HTTP thread gave up (timeout)
  int64_t characters = 0;                ///< of the texts tokenised (TEI's x-compute-characters)
  /// Written by the batcher (under the job's lock, read after waitUntil):
  /// when the first pass holding one of its texts started and the last one
  /// ended (TEI's queue and inference times).
  std::chrono::steady_clock::time_point firstPass{}, lastPass{};

  /// Waits until every text is done or `deadline`; true when done.
  bool waitUntil(std::chrono::steady_clock::time_point deadline);

private:
  friend class Batcher;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t remaining_ = 0;
};

struct BatcherOptions {
  int64_t maxBatchTokens = 8192;
  int maxBatchTexts = 64;
  int maxQueue = 1024;
  std::chrono::milliseconds maxWait{0};
};

class Batcher {
public:
  enum class Submit { Queued, QueueFull, TooLarge, Stopped };

  /// Runs on its own session of `model` (which must outlive it), writing
  /// `width` floats per text (the hidden size, or a classifier's labels; 0:
  /// the model has no pooled output and serves token states only). Throws
  /// std::runtime_error when the session cannot be created.
  Batcher(encrt_model *model, int width, BatcherOptions options, Metrics &metrics);
  ~Batcher();
  Batcher(const Batcher &) = delete;
  Batcher &operator=(const Batcher &) = delete;

  /// Queues every text of `job` (all or none), waiting until `deadline` for
  /// room when the queue is full (backpressure; QueueFull if none came). A
  /// job with more texts than the queue holds is TooLarge at once.
  Submit submit(const std::shared_ptr<Job> &job, std::chrono::steady_clock::time_point deadline);
  /// Runs what is queued, then stops the thread; later submits get Stopped.
  void drainAndStop();

private:
  struct Row {
    std::shared_ptr<Job> job;
    size_t index;
  };
  void loop();
  void runPass(std::vector<Row> &rows);
  /// Pops rows for one pass; called with mu_ held.
  std::vector<Row> takePass();

  encrt_session *session_ = nullptr;
  const int width_;
  int hidden_ = 0; ///< the last hidden state's width (token states)
  const BatcherOptions options_;
  Metrics &metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable room_; ///< a pass took rows from the queue, or stopping
  std::deque<Row> queue_;
  bool stopping_ = false;
  std::thread thread_;
  // Buffers of the pass, reused.
  std::vector<int32_t> ids_, types_, lengths_, attended_;
  std::vector<float> pooled_, states_;
  // A pass with token heads (encrt_session_encode_ids).
  int multivectorDim_ = 0, vocab_ = 0;
  std::vector<int32_t> sparseCounts_, sparseIds_;
  std::vector<float> sparseWeights_, vectors_;
  std::vector<int64_t> vectorCounts_;
};

} // namespace encc::serve

#endif
