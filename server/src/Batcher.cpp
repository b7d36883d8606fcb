//===- Batcher.cpp - Dynamic packed batching over one runtime session -----===//
#include "Batcher.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace encc::serve {

using Clock = std::chrono::steady_clock;

bool Job::waitUntil(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return remaining_ == 0; });
}

Batcher::Batcher(encrt_model *model, int width, BatcherOptions options, Metrics &metrics)
    : width_(width), options_(options), metrics_(metrics) {
  encrt_model_info info;
  encrt_model_get_info(model, &info, sizeof info);
  hidden_ = info.hidden_size;
  multivectorDim_ = info.multivector_dim;
  vocab_ = info.vocab_size;
  if (encrt_status *st = encrt_session_create(model, nullptr, &session_)) {
    std::string msg = encrt_status_message(st);
    encrt_status_free(st);
    throw std::runtime_error(msg);
  }
  thread_ = std::thread([this] { loop(); });
}

Batcher::~Batcher() {
  drainAndStop();
  encrt_session_release(session_);
}

Batcher::Submit Batcher::submit(const std::shared_ptr<Job> &job, std::chrono::steady_clock::time_point deadline) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (job->ids.size() > size_t(options_.maxQueue))
      return Submit::TooLarge;
    // Backpressure: wait for a pass to make room rather than refuse at once.
    if (!room_.wait_until(lock, deadline, [&] {
          return stopping_ || queue_.size() + job->ids.size() <= size_t(options_.maxQueue);
        }))
      return Submit::QueueFull;
    if (stopping_)
      return Submit::Stopped;
    if (job->wantTokenStates)
      job->tokenStates.assign(job->ids.size(), {});
    else
      job->outputs.assign(job->ids.size() * size_t(width_), 0.0f);
    if (job->wantSparse)
      job->sparse.assign(job->ids.size(), {});
    if (job->wantVectors)
      job->vectors.assign(job->ids.size(), {});
    job->remaining_ = job->ids.size();
    for (size_t i = 0; i < job->ids.size(); ++i)
      queue_.push_back(Row{job, i});
    metrics_.setQueueDepth(int64_t(queue_.size()));
  }
  cv_.notify_one();
  return Submit::Queued;
}

void Batcher::drainAndStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  room_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

std::vector<Batcher::Row> Batcher::takePass() {
  std::vector<Row> rows;
  int64_t tokens = 0;
  while (!queue_.empty() && rows.size() < size_t(options_.maxBatchTexts)) {
    Row &r = queue_.front();
    if (r.job->abandoned.load(std::memory_order_relaxed)) {
      queue_.pop_front(); // nobody waits for it any more
      continue;
    }
    const int64_t n = int64_t(r.job->ids[r.index].size());
    if (!rows.empty() && (tokens + n > options_.maxBatchTokens || r.job->role != rows.front().job->role))
      break; // a pass encodes one role
    tokens += n;
    rows.push_back(std::move(r));
    queue_.pop_front();
  }
  metrics_.setQueueDepth(int64_t(queue_.size()));
  if (!rows.empty())
    room_.notify_all(); // requests waiting for room may fit now
  return rows;
}

void Batcher::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stopping, and everything queued has run
    // A short queue waits a little for company: a pass costs per token, but
    // a fuller one shares the per-pass overheads (threads waking, small GEMMs).
    if (options_.maxWait.count() > 0 && !stopping_) {
      const Clock::time_point until = Clock::now() + options_.maxWait;
      cv_.wait_until(lock, until, [&] {
        if (stopping_ || queue_.size() >= size_t(options_.maxBatchTexts))
          return true;
        int64_t tokens = 0;
        for (const Row &r : queue_)
          if ((tokens += int64_t(r.job->ids[r.index].size())) >= options_.maxBatchTokens)
            return true;
        return false;
      });
    }
    std::vector<Row> rows = takePass();
    if (rows.empty())
      continue;
    lock.unlock();
    runPass(rows);
    rows.clear(); // drop the job references outside the lock
    lock.lock();
  }
}

void Batcher::runPass(std::vector<Row> &rows) {
  const int64_t batch = int64_t(rows.size());
  int64_t seq = 0, tokens = 0;
  for (const Row &r : rows) {
    const int64_t n = int64_t(r.job->ids[r.index].size());
    seq = std::max(seq, n);
    tokens += n;
  }
  ids_.assign(size_t(batch * seq), 0);
  types_.assign(size_t(batch * seq), 0);
  lengths_.resize(size_t(batch));
  attended_.resize(size_t(batch));
  bool typed = false, states = false, sparse = false, vectors = false;
  for (int64_t b = 0; b < batch; ++b) {
    states |= rows[size_t(b)].job->wantTokenStates;
    sparse |= rows[size_t(b)].job->wantSparse;
    vectors |= rows[size_t(b)].job->wantVectors;
    const Job &job = *rows[size_t(b)].job;
    const size_t index = rows[size_t(b)].index;
    std::copy(job.ids[index].begin(), job.ids[index].end(), ids_.begin() + b * seq);
    if (!job.types.empty()) {
      std::copy(job.types[index].begin(), job.types[index].end(), types_.begin() + b * seq);
      typed = true;
    }
    lengths_[size_t(b)] = int32_t(job.ids[index].size());
    attended_[size_t(b)] = job.attended.empty() ? lengths_[size_t(b)] : job.attended[index];
  }
  const std::string &role = rows.front().job->role;
  pooled_.resize(size_t(batch * width_));
  // The last hidden state only for a pass that holds a job asking for it (batch x seq x hidden floats).
  if (states)
    states_.resize(size_t(batch * seq * hidden_));
  const Clock::time_point start = Clock::now();
  encrt_status *st = nullptr;
  if (sparse || vectors) {
    // The heads' outputs with the pooled rows, one pass (token states, if a job
    // of the pass asks for them too, from a second).
    encrt_encode_outputs o;
    encrt_encode_outputs_initialize(&o);
    o.dense = width_ > 0 ? pooled_.data() : nullptr; // a ColBERT model has no pooled output
    if (!role.empty())
      o.role = role.c_str(), o.attended_lengths = attended_.data();
    const int32_t topK = int32_t(std::min<int64_t>(seq, vocab_)); // every entry a text can have
    if (sparse) {
      sparseCounts_.resize(size_t(batch));
      sparseIds_.resize(size_t(batch * topK));
      sparseWeights_.resize(size_t(batch * topK));
      o.sparse_top_k = topK, o.sparse_counts = sparseCounts_.data(), o.sparse_ids = sparseIds_.data(),
      o.sparse_weights = sparseWeights_.data();
    }
    if (vectors) {
      vectorCounts_.resize(size_t(batch));
      vectors_.resize(size_t(tokens * multivectorDim_));
      o.vectors = vectors_.data(), o.vectors_capacity = tokens, o.vector_counts = vectorCounts_.data();
    }
    st = encrt_session_encode_ids(session_, ids_.data(), lengths_.data(), batch, seq, &o);
    if (!st && states)
      st = encrt_session_run(session_, ids_.data(), lengths_.data(), batch, seq, states_.data(), nullptr);
  } else {
    st = encrt_session_run_typed(session_, ids_.data(), typed ? types_.data() : nullptr, lengths_.data(), batch, seq,
                                 states ? states_.data() : nullptr, width_ > 0 ? pooled_.data() : nullptr);
  }
  const Clock::time_point end = Clock::now();
  metrics_.batch(batch, tokens, std::chrono::duration<double>(end - start).count());
  const std::string error = st ? encrt_status_message(st) : "";
  encrt_status_free(st);
  int64_t vectorRow = 0;
  for (int64_t b = 0; b < batch; ++b) {
    Job &job = *rows[size_t(b)].job;
    std::lock_guard<std::mutex> lock(job.mu_);
    const size_t index = rows[size_t(b)].index;
    if (error.empty() && job.wantSparse) {
      const int32_t topK = int32_t(std::min<int64_t>(seq, vocab_));
      auto &entries = job.sparse[index];
      for (int32_t k = 0; k < sparseCounts_[size_t(b)]; ++k)
        entries.emplace_back(sparseIds_[size_t(b * topK + k)], sparseWeights_[size_t(b * topK + k)]);
      std::sort(entries.begin(), entries.end()); // by token id, as TEI lists them
    }
    if (vectors) {
      if (error.empty() && job.wantVectors)
        job.vectors[index].assign(vectors_.begin() + vectorRow * multivectorDim_,
                                  vectors_.begin() + (vectorRow + vectorCounts_[size_t(b)]) * multivectorDim_);
      if (error.empty())
        vectorRow += vectorCounts_[size_t(b)];
    }
    if (!error.empty())
      job.error = error;
    else if (job.wantTokenStates)
      job.tokenStates[index].assign(states_.begin() + b * seq * hidden_,
                                    states_.begin() + (b * seq + lengths_[size_t(b)]) * hidden_);
    else
      std::memcpy(job.outputs.data() + index * size_t(width_), pooled_.data() + b * width_,
                  size_t(width_) * sizeof(float));
    if (job.firstPass == Clock::time_point{})
      job.firstPass = start;
    job.lastPass = end;
    if (--job.remaining_ == 0)
      job.cv_.notify_all();
  }
}

} // namespace encc::serve
