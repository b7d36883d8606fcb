//===- ThreadPool.h - Fork-join pool for plan steps -----------------------===//
//
// numThreads - 1 workers plus the calling thread. parallelFor(n, fn) runs
// fn(task) for every task in [0, n) and returns when all are done; it
// allocates nothing and creates no thread. Workers spin briefly between jobs
// (plan steps follow each other closely: while the caller is seen starting
// steps, see ThreadPool.cpp) and then sleep. Calls from
// different threads are serialised (sessions of one model take turns).
//
// A job waits only for the workers that joined it: tasks are claimed one by
// one, and once the caller has claimed the last one it closes the job, so a
// worker the OS has descheduled (another process on its core) and that wakes
// late finds the job closed and skips it instead of holding up every step.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_THREADPOOL_H
#define ENCRT_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace encrt::rt {

class ThreadPool {
public:
  /// `numThreads` <= 0: the CPUs this process may use.
  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int numThreads() const { return static_cast<int>(workers_.size()) + 1; }

  /// The most threads a pool may be asked for: 8 x the CPUs this process may
  /// use, at least 64 (more only oversubscribes the cores).
  static int maxThreads();

  /// A task function: a plain pointer + context so nothing is allocated.
  using TaskFn = void (*)(void *context, int32_t task, int32_t numTasks);
  void parallelFor(int32_t numTasks, TaskFn fn, void *context);

private:
  void workerLoop();
  void stopWorkers();
  void runTasks();

  const int workerSpin_, callerSpin_; ///< cpuRelax() calls before sleeping (ThreadPool.cpp)
  std::vector<std::thread> workers_;
  std::mutex callMutex_; ///< one parallelFor at a time

  std::mutex mutex_; ///< guards sleeping and waking
  std::condition_variable wake_, done_;
  int sleepers_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> steps_{0};   ///< parallelFor calls, those run inline too
  /// The current job: its generation (bits 63..33), closed (bit 32: no worker
  /// may join any more) and the workers that joined (bits 31..0). A worker
  /// joins by a compare-exchange while the job is open.
  std::atomic<uint64_t> state_{0};
  std::atomic<uint32_t> left_{0}; ///< joined workers that have left the job

  // The current job's fields (published by the state_ release store).
  TaskFn fn_ = nullptr;
  void *context_ = nullptr;
  int32_t numTasks_ = 0;
  std::atomic<int32_t> next_{0};
};

} // namespace encrt::rt

#endif // ENCRT_THREADPOOL_H
