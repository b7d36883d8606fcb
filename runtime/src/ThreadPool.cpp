//===- ThreadPool.cpp - Fork-join pool for plan steps ---------------------===//
#include "ThreadPool.h"

#include <algorithm>
#include <sched.h>

namespace encrt::rt {

namespace {

constexpr int kSpinIterations = 4000;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// CPUs this process may run on (honours taskset and cpusets).
int availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

} // namespace

int ThreadPool::maxThreads() { return std::max(64, 8 * availableCpus()); }

ThreadPool::ThreadPool(int numThreads) {
  if (numThreads <= 0)
    numThreads = availableCpus();
  if (numThreads <= 0)
    numThreads = 1;
  workers_.reserve(numThreads - 1);
  try {
    for (int i = 1; i < numThreads; ++i)
      workers_.emplace_back([this] { workerLoop(); });
  } catch (...) {
    // Threads already started must be joined before the vector dies.
    stopWorkers();
    throw;
  }
}

void ThreadPool::stopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto &t : workers_)
    t.join();
  workers_.clear();
}

ThreadPool::~ThreadPool() { stopWorkers(); }

void ThreadPool::runTasks() {
  for (;;) {
    int32_t task = next_.fetch_add(1, std::memory_order_relaxed);
    if (task >= numTasks_)
      return;
    fn_(context_, task, numTasks_);
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    bool ready = false;
    for (int i = 0; i < kSpinIterations; ++i) {
      if (generation_.load(std::memory_order_acquire) != seen ||
          stop_.load(std::memory_order_relaxed)) {
        ready = true;
        break;
      }
      cpuRelax();
    }
    if (!ready) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleepers_;
      wake_.wait(lock, [&] {
        return stop_.load() || generation_.load() != seen;
      });
      --sleepers_;
    }
    if (stop_.load())
      return;
    seen = generation_.load(std::memory_order_acquire);
    runTasks();
    if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int32_t numTasks, TaskFn fn, void *context) {
  if (numTasks <= 0)
    return;
  if (workers_.empty() || numTasks == 1) {
    for (int32_t t = 0; t < numTasks; ++t)
      fn(context, t, numTasks);
    return;
  }
  std::lock_guard<std::mutex> call(callMutex_);
  fn_ = fn;
  context_ = context;
  numTasks_ = numTasks;
  next_.store(0, std::memory_order_relaxed);
  active_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  bool wakeSleepers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
    wakeSleepers = sleepers_ > 0;
  }
  if (wakeSleepers)
    wake_.notify_all();
  runTasks();
  // Every worker must leave the job before its fields are reused.
  for (int i = 0; i < kSpinIterations; ++i) {
    if (active_.load(std::memory_order_acquire) == 0)
      return;
    cpuRelax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return active_.load(std::memory_order_acquire) == 0; });
}

} // namespace encrt::rt
