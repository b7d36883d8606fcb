//===- InternalsTest.cpp - Memory plan, thread pool, CPU features ---------===//
#include "CpuFeatures.h"
#include "ElfCheck.h"
#include "MemoryPlan.h"
#include "Session.h"
#include "ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <sched.h>
#include <thread>
#include <unistd.h>

using namespace encrt::rt;

TEST(MemoryPlan, LiveBuffersNeverOverlap) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<ArenaRequest> reqs;
    int n = 1 + rng() % 40;
    uint64_t maxLive = 0;
    for (int i = 0; i < n; ++i) {
      int32_t first = rng() % 30;
      int32_t last = first + rng() % 6;
      reqs.push_back({1 + rng() % 5000, first, last});
    }
    std::vector<uint64_t> offsets;
    uint64_t total = planArena(reqs, offsets);
    ASSERT_EQ(offsets.size(), reqs.size());
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(offsets[i] % kArenaAlign, 0u);
      EXPECT_LE(offsets[i] + reqs[i].bytes, total);
      for (int j = i + 1; j < n; ++j) {
        bool liveTogether = reqs[i].first <= reqs[j].last && reqs[j].first <= reqs[i].last;
        bool overlap = offsets[i] < offsets[j] + reqs[j].bytes &&
                       offsets[j] < offsets[i] + reqs[i].bytes;
        ASSERT_FALSE(liveTogether && overlap) << "round " << round << " " << i << "," << j;
      }
    }
    // Never worse than giving every buffer its own space.
    uint64_t sum = 0;
    for (auto &r : reqs)
      sum += (r.bytes + 63) / 64 * 64;
    EXPECT_LE(total, sum);
    for (int s = 0; s < 36; ++s) {
      uint64_t live = 0;
      for (auto &r : reqs)
        if (r.first <= s && s <= r.last)
          live += r.bytes;
      maxLive = std::max(maxLive, live);
    }
    EXPECT_GE(total, maxLive);
  }
}

TEST(MemoryPlan, ReusesDeadBuffers) {
  // A chain a -> b -> c -> d: each buffer dies after the next is written, so
  // two slots suffice.
  std::vector<ArenaRequest> reqs = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  std::vector<uint64_t> offsets;
  EXPECT_EQ(planArena(reqs, offsets), 2 * 1024u);
  EXPECT_EQ(offsets[0], offsets[2]);
  EXPECT_NE(offsets[0], offsets[1]);
  EXPECT_EQ(planArena({}, offsets), 0u);
}

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  // 16 threads oversubscribe the cores: workers are often descheduled and
  // wake after the job they were woken for has closed (they must skip it,
  // not run a task of the next job with the old one's context).
  for (int threads : {1, 2, 5, 16}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.numThreads(), threads);
    for (int32_t n : {1, 2, 3, 7, 64, 1000}) {
      for (int rep = 0; rep < 20; ++rep) {
        std::vector<std::atomic<int>> hits(n);
        pool.parallelFor(
            n,
            [](void *ctx, int32_t t, int32_t num) {
              auto *h = static_cast<std::vector<std::atomic<int>> *>(ctx);
              if (num == static_cast<int32_t>(h->size()))
                (*h)[t].fetch_add(1);
            },
            &hits);
        for (int32_t t = 0; t < n; ++t)
          ASSERT_EQ(hits[t].load(), 1) << threads << " threads, n " << n;
        if (rep % 3 == 0) // a pause between runs: the workers fall asleep, the next job wakes them
          std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  }
}

namespace {
/// Two tasks: the caller's waits until the other has started on a worker;
/// the worker's sleeps `sleepMs` (it gets no CPU time, as if preempted) and
/// then records the CPUs its thread may use.
struct HeldTask {
  pid_t caller = 0;
  int sleepMs = 0;
  std::atomic<bool> workerStarted{false};
  cpu_set_t workerCpus;
  int callerCpu = -1;
  static void run(void *ctx, int32_t, int32_t) {
    auto *h = static_cast<HeldTask *>(ctx);
    if (gettid() == h->caller) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!h->workerStarted.load() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
      h->callerCpu = sched_getcpu();
      return;
    }
    h->workerStarted.store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(h->sleepMs));
    sched_getaffinity(0, sizeof(cpu_set_t), &h->workerCpus);
  }
};
} // namespace

TEST(ThreadPool, MovesAWorkerWithoutCpuTimeOntoTheCallersCoreAndBack) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpu_set_t), &all), 0);
  if (CPU_COUNT(&all) < 2)
    GTEST_SKIP() << "needs two CPUs";
  if (sched_setaffinity(0, sizeof(cpu_set_t), &all) != 0)
    GTEST_SKIP() << "sched_setaffinity is refused here (the pool then moves no thread)";
  ThreadPool pool(2);
  // The worker sleeps through its task: the waiting caller (it looks every
  // 100 us) moves it onto its own core; the worker finishes there.
  HeldTask held;
  held.caller = gettid();
  held.sleepMs = 200;
  pool.parallelFor(2, HeldTask::run, &held);
  ASSERT_TRUE(held.workerStarted.load());
  EXPECT_EQ(CPU_COUNT(&held.workerCpus), 1);
  // Once it has left the job it has every CPU back.
  HeldTask next;
  next.caller = gettid();
  next.sleepMs = 0;
  pool.parallelFor(2, HeldTask::run, &next);
  ASSERT_TRUE(next.workerStarted.load());
  EXPECT_TRUE(CPU_EQUAL(&next.workerCpus, &all));
}

TEST(StepTasks, CountTheWeightsAStepReads) {
  // MiniLM's FFN-down at 1 x 16: 16 x 384 outputs, a 1536 x 384 weight.
  EXPECT_EQ(stepTasks(16 * 384, 0, 2), 1);
  EXPECT_EQ(stepTasks(16 * 384, 1536 * 384, 2), 8);
  EXPECT_EQ(stepTasks(16 * 384, 1536 * 384, 1), 1);
  // A row-wise step: results alone, 4 096 a task, at most 4 per thread.
  EXPECT_EQ(stepTasks(3 * 4096 + 5, 0, 2), 3);
  EXPECT_EQ(stepTasks(1 << 20, 0, 3), 12);
  EXPECT_EQ(stepTasks(0, 0, 4), 1);
  EXPECT_EQ(stepTasks(4095, 1, 2), 1);
  EXPECT_EQ(stepTasks(4095, 4097, 2), 2);
}

TEST(ThreadPool, ConcurrentCallersAreSerialised) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int i = 0; i < 200; ++i)
        pool.parallelFor(
            16,
            [](void *ctx, int32_t t, int32_t) {
              static_cast<std::atomic<int64_t> *>(ctx)->fetch_add(t);
            },
            &total);
    });
  for (auto &t : callers)
    t.join();
  EXPECT_EQ(total.load(), 4 * 200 * (15 * 16 / 2));
}

TEST(CpuFeatures, KnownAndUnknown) {
#if defined(__x86_64__)
  EXPECT_TRUE(cpuSupports("sse2")); // baseline x86-64
#endif
  EXPECT_FALSE(cpuSupports("avx9000"));
  EXPECT_FALSE(cpuSupports(""));
  // avx512bw implies avx512f; avx2 and fma come with any AVX-512 CPU.
  if (cpuSupports("avx512bw")) {
    EXPECT_TRUE(cpuSupports("avx512f"));
  }
  if (cpuSupports("avx512f")) {
    EXPECT_TRUE(cpuSupports("avx2"));
  }
  if (cpuSupports("avxvnni")) {
    EXPECT_TRUE(cpuSupports("avx2"));
  }
}

/// cpuSupports reads CPUID/XCR0 itself (clang lacks some of the builtin's
/// names); under GCC the builtin is an independent reference for every name
/// the two share.
TEST(CpuFeatures, AgreesWithGccBuiltin) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
#define ENCRT_EXPECT_SAME(name) EXPECT_EQ(cpuSupports(name), bool(__builtin_cpu_supports(name))) << name;
  ENCRT_EXPECT_SAME("sse2")
  ENCRT_EXPECT_SAME("sse3")
  ENCRT_EXPECT_SAME("ssse3")
  ENCRT_EXPECT_SAME("sse4.1")
  ENCRT_EXPECT_SAME("sse4.2")
  ENCRT_EXPECT_SAME("popcnt")
  ENCRT_EXPECT_SAME("movbe")
  ENCRT_EXPECT_SAME("bmi")
  ENCRT_EXPECT_SAME("bmi2")
  ENCRT_EXPECT_SAME("avx")
  ENCRT_EXPECT_SAME("fma")
  ENCRT_EXPECT_SAME("f16c")
  ENCRT_EXPECT_SAME("avx2")
  ENCRT_EXPECT_SAME("avx512f")
  ENCRT_EXPECT_SAME("avx512dq")
  ENCRT_EXPECT_SAME("avx512cd")
  ENCRT_EXPECT_SAME("avx512bw")
  ENCRT_EXPECT_SAME("avx512vl")
  ENCRT_EXPECT_SAME("avx512vnni")
  ENCRT_EXPECT_SAME("avx512bf16")
#undef ENCRT_EXPECT_SAME
#else
  GTEST_SKIP() << "needs GCC's __builtin_cpu_supports as the reference";
#endif
}

TEST(ElfLayout, PointersReadFromALoadedObjectStayInsideIt) {
  // Issue 45, item 3: the kernel contracts are read through pointers the
  // object itself holds; each is checked against its segments first.
  encrt::rt::ElfLayout layout;
  layout.segments = {{0x0, 0x100}, {0x1000, 0x40}};
  alignas(16) static char image[0x1100] = {};
  const uintptr_t base = reinterpret_cast<uintptr_t>(image);
  EXPECT_TRUE(layout.contains(base, image, 0x100));
  EXPECT_FALSE(layout.contains(base, image, 0x101));        // past the first segment
  EXPECT_FALSE(layout.contains(base, image + 0x200, 1));    // between the segments
  EXPECT_TRUE(layout.contains(base, image + 0x1010, 0x30));
  EXPECT_FALSE(layout.contains(base, image + 0x1010, 0x31));
  EXPECT_FALSE(layout.contains(base, reinterpret_cast<void *>(base - 1), 1));
  EXPECT_FALSE(layout.contains(base, reinterpret_cast<void *>(base + (uint64_t(1) << 40)), 8));
  std::memcpy(image + 0x10, "kernel", 7);
  EXPECT_TRUE(layout.containsString(base, image + 0x10, 64));
  EXPECT_FALSE(layout.containsString(base, image + 0x10, 4)); // longer than allowed
  std::memset(image + 0xf0, 'x', 0x10);                      // runs to the segment's end
  EXPECT_FALSE(layout.containsString(base, image + 0xf0, 4096));
}
