//===- ThreadPool.cpp - Fork-join pool for plan steps ---------------------===//
#include "ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <sched.h>

namespace encrt::rt {

namespace {

/// A worker waiting for the next job spins while the caller is seen starting
/// steps (parallelFor calls, those it runs alone too), until kWorkerSpinMicros
/// pass without one; then it sleeps. The caller spins kCallerSpinMicros for
/// the joined workers to leave a job. A spinning worker holds a core that, on
/// a machine shared with another process, the threads doing the work need:
/// all-MiniLM-L6-v2 int8 1 x 128, 2 threads, beside a busy process, Zen 4:
/// 10.6-11.4 ms when workers spun 100 us after every job, 8.6-10.1 ms with
/// this. A fixed 10 us spin did as well there but slept through the steps the
/// caller ran alone (1 x 16 idle: 0.79 ms against 0.68-0.70), and sleeping at
/// the end of each run cost a wake-up per run (bench/RESULTS.md, 2026-12-06).
constexpr double kWorkerSpinMicros = 25.0;
constexpr double kCallerSpinMicros = 100.0;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// cpuRelax() calls that take about `micros`: pause takes 10-40 ns on AMD
/// CPUs and up to ~140 cycles on recent Intel ones, so a spin counted in
/// iterations would last 10x longer on one than on the other. Measured once,
/// the fastest of four probes of 256 (a probe the OS interrupted reads long),
/// bounded to [16, 1 << 20].
int spinIterations(double micros) {
  static const double nsPerRelax = [] {
    constexpr int kProbe = 256;
    double best = 1e9;
    for (int probe = 0; probe < 4; ++probe) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kProbe; ++i)
        cpuRelax();
      best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
    }
    return std::max(best / kProbe, 0.1);
  }();
  return static_cast<int>(std::clamp(micros * 1000.0 / nsPerRelax, 16.0, double(1 << 20)));
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

ThreadPool::ThreadPool(int numThreads)
    : workerSpin_(spinIterations(kWorkerSpinMicros)), callerSpin_(spinIterations(kCallerSpinMicros)) {
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

namespace {
constexpr uint64_t kClosed = uint64_t(1) << 32;
constexpr uint64_t kJoinedMask = kClosed - 1;
inline uint64_t generationOf(uint64_t state) { return state >> 33; }
} // namespace

void ThreadPool::workerLoop() {
  uint64_t seen = 0; // the last generation this worker joined or skipped
  for (;;) {
    // Wait for a job this worker has not seen.
    // Spin while the caller is seen starting steps (a step it runs alone
    // counts), at most kWorkerSpinMicros since the last one.
    uint64_t s = state_.load(std::memory_order_acquire);
    uint32_t beat = steps_.load(std::memory_order_relaxed);
    for (int quiet = 0; quiet < workerSpin_ && generationOf(s) == seen && !stop_.load(std::memory_order_relaxed);
         ++quiet) {
      cpuRelax();
      s = state_.load(std::memory_order_acquire);
      if (const uint32_t b = steps_.load(std::memory_order_relaxed); b != beat) {
        beat = b;
        quiet = 0;
      }
    }
    if (generationOf(s) == seen && !stop_.load()) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleepers_;
      wake_.wait(lock, [&] { return stop_.load() || generationOf(state_.load()) != seen; });
      --sleepers_;
    }
    if (stop_.load())
      return;
    // Join it unless it is already closed (then its fields are not read).
    s = state_.load(std::memory_order_acquire);
    seen = generationOf(s);
    bool joined = false;
    while (!(s & kClosed) && generationOf(s) == seen)
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        joined = true;
        break;
      }
    if (!joined)
      continue;
    runTasks();
    // Leave; the caller waits for as many leavers as joined the closed job.
    // seq_cst here and at the close: of "leave, then look for the close" and
    // "close, then count the leavers" at least one sees the other's write, so
    // the caller never sleeps on a job whose last leaver did not notify it.
    const uint32_t left = left_.fetch_add(1, std::memory_order_seq_cst) + 1;
    const uint64_t now = state_.load(std::memory_order_seq_cst);
    if ((now & kClosed) && generationOf(now) == seen && left == (now & kJoinedMask)) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int32_t numTasks, TaskFn fn, void *context) {
  if (numTasks <= 0)
    return;
  if (workers_.empty()) {
    for (int32_t t = 0; t < numTasks; ++t)
      fn(context, t, numTasks);
    return;
  }
  steps_.fetch_add(1, std::memory_order_relaxed); // the waiting workers' sign that a run goes on
  if (numTasks == 1) {
    fn(context, 0, 1);
    return;
  }
  std::lock_guard<std::mutex> call(callMutex_);
  fn_ = fn;
  context_ = context;
  numTasks_ = numTasks;
  next_.store(0, std::memory_order_relaxed);
  left_.store(0, std::memory_order_relaxed);
  bool wakeSleepers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t generation = generationOf(state_.load(std::memory_order_relaxed)) + 1;
    state_.store((generation & ((uint64_t(1) << 31) - 1)) << 33, std::memory_order_release);
    wakeSleepers = sleepers_ > 0;
  }
  if (wakeSleepers)
    wake_.notify_all();
  runTasks();
  // Every task is claimed: close the job, then wait for the workers that
  // joined it to leave before its fields are reused.
  const uint32_t joined = uint32_t(state_.fetch_or(kClosed, std::memory_order_seq_cst) & kJoinedMask);
  for (int i = 0; i < callerSpin_; ++i) {
    if (left_.load(std::memory_order_seq_cst) == joined)
      return;
    cpuRelax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return left_.load(std::memory_order_seq_cst) == joined; });
}

} // namespace encrt::rt
