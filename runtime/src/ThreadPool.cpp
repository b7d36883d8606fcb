//===- ThreadPool.cpp - Fork-join pool for plan steps ---------------------===//
#include "ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

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

/// Past its spin, a caller waiting for workers that hold the job's last tasks
/// looks this often at the CPU time they get: one that ran for less than a
/// quarter of the interval has been preempted (see moveHere).
constexpr int kLateCheckMicros = 100;

int64_t nowNanos(clockid_t clock) {
  timespec t;
  if (clock_gettime(clock, &t) != 0)
    return -1;
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

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
  members_ = std::make_unique<Member[]>(numThreads - 1);
  spreadWorkers_ = numThreads <= availableCpus();
  workers_.reserve(numThreads - 1);
  try {
    for (int i = 1; i < numThreads; ++i) {
      workers_.emplace_back([this, i] { workerLoop(members_[i - 1]); });
      Member &m = members_[i - 1];
      m.hasClock = pthread_getcpuclockid(workers_.back().native_handle(), &m.clock) == 0;
    }
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

namespace {
enum : int { kFree, kInJob, kMoving, kMoved };
} // namespace

int64_t ThreadPool::Member::cpuTime() const { return hasClock ? nowNanos(clock) : -1; }

/// Moves `late` (a worker in the current job) onto this thread's core until
/// it leaves the job (leave() gives it its CPUs back), unless it has left.
/// Called by a caller about to sleep until `late` finishes a task while it
/// gets no CPU time: Linux leaves the caller's core idle rather than take a
/// thread it has just preempted from another (it counts as cache-hot), so
/// the late worker would wait out the other process's time slice, and the
/// step with it. With this, and with workers kept off the caller's core
/// (moveOffCpu), all-MiniLM-L6-v2 int8 1 x 128 on 2 threads of a Zen 4 beside
/// one busy process: 9.8 -> 6.8 ms (5.3 alone); either change alone: level
/// (bench/RESULTS.md, 2026-12-06).
void ThreadPool::moveHere(Member &late) {
  const int cpu = sched_getcpu();
  int state = kInJob;
  if (cpu < 0 || cpu >= CPU_SETSIZE || !late.state.compare_exchange_strong(state, kMoving, std::memory_order_acq_rel))
    return;
  const pid_t tid = late.tid.load(std::memory_order_relaxed);
  bool moved = false;
  if (sched_getaffinity(tid, sizeof(cpu_set_t), &late.saved) == 0 && CPU_ISSET(cpu, &late.saved) &&
      CPU_COUNT(&late.saved) > 1) {
    cpu_set_t here;
    CPU_ZERO(&here);
    CPU_SET(cpu, &here);
    moved = sched_setaffinity(tid, sizeof(cpu_set_t), &here) == 0;
  }
  late.state.store(moved ? kMoved : kInJob, std::memory_order_release);
}

/// Ends `self`'s part in the job: if another thread is moving it, waits for
/// that and takes back the CPUs it had (it stays where it runs now).
void ThreadPool::leave(Member &self) {
  int state = kInJob;
  if (self.state.compare_exchange_strong(state, kFree, std::memory_order_acq_rel))
    return;
  while ((state = self.state.load(std::memory_order_acquire)) == kMoving)
    cpuRelax();
  if (state == kMoved)
    sched_setaffinity(0, sizeof(cpu_set_t), &self.saved);
  self.state.store(kFree, std::memory_order_release);
}

/// Moves this thread to another of its CPUs than `cpu`, where it may stay.
void ThreadPool::moveOffCpu(int cpu) {
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof(cpu_set_t), &mine) != 0 || !CPU_ISSET(cpu, &mine) || CPU_COUNT(&mine) < 2)
    return;
  cpu_set_t others = mine;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof(cpu_set_t), &others) == 0)
    sched_setaffinity(0, sizeof(cpu_set_t), &mine);
}

void ThreadPool::workerLoop(Member &self) {
  self.tid.store(static_cast<int>(gettid()), std::memory_order_relaxed);
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
    // Two threads of the pool on one core take turns instead of working
    // side by side (the OS may wake a worker on the core of the caller that
    // woke it, and a worker moved there stays). Before the worker counts as
    // in the job, so that the caller does not move it meanwhile.
    if (const int cpu = sched_getcpu(); spreadWorkers_ && cpu >= 0 && cpu == callerCpu_.load(std::memory_order_relaxed))
      moveOffCpu(cpu);
    self.state.store(kInJob, std::memory_order_release);
    runTasks();
    leave(self); // first: a moved worker has its CPUs back before the caller goes on
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
  callerCpu_.store(sched_getcpu(), std::memory_order_relaxed);
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
  // A worker still in the job runs a long task or was preempted by another
  // process on its core. Look every kLateCheckMicros at the CPU time each
  // gets; the first that ran for less than a quarter of that is moved here
  // (moveHere), and then the caller only waits.
  int64_t wall = nowNanos(CLOCK_MONOTONIC);
  for (size_t w = 0; w < workers_.size(); ++w)
    members_[w].lastCpu = members_[w].state.load(std::memory_order_acquire) == kInJob ? members_[w].cpuTime() : -1;
  const auto isDone = [&] { return left_.load(std::memory_order_seq_cst) == joined; };
  std::unique_lock<std::mutex> lock(mutex_);
  bool moved = false;
  while (!moved && !done_.wait_for(lock, std::chrono::microseconds(kLateCheckMicros), isDone)) {
    lock.unlock();
    if (Member *late = preemptedWorker(wall)) {
      moveHere(*late);
      moved = true;
    }
    lock.lock();
  }
  done_.wait(lock, isDone);
}

ThreadPool::Member *ThreadPool::preemptedWorker(int64_t &wall) {
  const int64_t now = nowNanos(CLOCK_MONOTONIC);
  Member *late = nullptr;
  for (size_t w = 0; w < workers_.size() && !late; ++w) {
    Member &m = members_[w];
    if (m.state.load(std::memory_order_acquire) != kInJob)
      continue;
    const int64_t c = m.cpuTime();
    if (c >= 0 && m.lastCpu >= 0 && 4 * (c - m.lastCpu) < now - wall)
      late = &m;
    m.lastCpu = c;
  }
  wall = now;
  return late;
}

} // namespace encrt::rt
