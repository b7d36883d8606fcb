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
// On a machine shared with another process the pool steers its workers
// (never the caller's thread) so the OS's time slices do not stall a step: a
// caller left waiting for a worker that holds one of the job's tasks and gets
// no CPU time moves that worker onto the caller's core until it leaves the
// job, and a worker that finds itself on the caller's core moves to another
// (ThreadPool.cpp says why, and what it measured).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_THREADPOOL_H
#define ENCRT_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <sched.h>
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
  /// A worker as the caller sees it: its thread, its part in the current
  /// job (kFree; kInJob: running the job's tasks; kMoving: the caller is
  /// changing its CPUs; kMoved: it runs on the caller's core until it leaves
  /// the job) and the CPU time it gets.
  struct Member {
    std::atomic<int> tid{0};
    std::atomic<int> state{0};
    cpu_set_t saved;       ///< its CPUs before a move (written while kMoving)
    clockid_t clock{};     ///< its CPU-time clock (pthread_getcpuclockid)
    bool hasClock = false;
    int64_t lastCpu = -1;  ///< its CPU time when the caller last looked (caller only)
    int64_t cpuTime() const; ///< ns; -1 when unknown
  };

  void workerLoop(Member &self);
  void stopWorkers();
  void runTasks();
  /// The first worker in the job that ran for less than a quarter of the
  /// time since the caller last looked (`wall`, updated), or null; records
  /// what each got for the next look. Caller only.
  Member *preemptedWorker(int64_t &wall);
  static void moveHere(Member &late);
  static void leave(Member &self);
  static void moveOffCpu(int cpu);

  const int workerSpin_, callerSpin_; ///< cpuRelax() calls before sleeping (ThreadPool.cpp)
  std::vector<std::thread> workers_;
  std::unique_ptr<Member[]> members_; ///< one per worker
  bool spreadWorkers_ = false;        ///< a core for each thread: keep workers off the caller's
  std::atomic<int> callerCpu_{-1};    ///< where the caller started the current job
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
