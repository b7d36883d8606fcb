//===- KernelTestUtil.h - Helpers of the CPU kernel tests --------*- C++ -*-===//
//
// Random inputs, and running a kernel as 1 and 3 tasks into sentinel-filled
// buffers: every element must be written by exactly one task, and the
// merged output must match a double-precision reference.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_KERNELS_KERNELTESTUTIL_H
#define ENCC_TESTS_KERNELS_KERNELTESTUTIL_H

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

namespace kernel_test {

inline std::vector<float> randomVec(size_t n, uint32_t seed,
                                    float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

inline constexpr uint32_t kSentinelBits = 0x7fc12345u; // a quiet NaN payload

inline bool isSentinel(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u == kSentinelBits;
}

inline float sentinel() {
  float f;
  std::memcpy(&f, &kSentinelBits, 4);
  return f;
}

using TaskFn = std::function<void(float *y, int32_t task, int32_t numTasks)>;

/// Runs `fn` with numTasks tasks, each into its own sentinel-filled buffer,
/// checks that every element is written by exactly one task, and returns the
/// merged output.
inline std::vector<float> runSplit(size_t n, int32_t numTasks,
                                   const TaskFn &fn) {
  std::vector<float> merged(n, sentinel());
  std::vector<int> writes(n, 0);
  for (int32_t t = 0; t < numTasks; ++t) {
    std::vector<float> y(n, sentinel());
    fn(y.data(), t, numTasks);
    for (size_t i = 0; i < n; ++i)
      if (!isSentinel(y[i])) {
        ++writes[i];
        merged[i] = y[i];
      }
  }
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ(writes[i], 1) << "element " << i << " with " << numTasks
                            << " tasks";
  return merged;
}

/// Checks fn against ref for 1 and 3 tasks: |y - ref| <= atol + rtol*scale[i]
/// (scale defaults to |ref|).
inline void checkKernel(const std::vector<double> &ref, const TaskFn &fn,
                        double atol, double rtol,
                        const std::vector<double> *scale = nullptr) {
  for (int32_t tasks : {1, 3}) {
    std::vector<float> y = runSplit(ref.size(), tasks, fn);
    for (size_t i = 0; i < ref.size(); ++i) {
      const double s = scale ? (*scale)[i] : std::fabs(ref[i]);
      if (std::isinf(ref[i])) {
        ASSERT_EQ(y[i], ref[i]) << "element " << i;
        continue;
      }
      ASSERT_NEAR(y[i], ref[i], atol + rtol * s)
          << "element " << i << " of " << ref.size() << ", " << tasks
          << " tasks";
    }
  }
}

} // namespace kernel_test

#endif // ENCC_TESTS_KERNELS_KERNELTESTUTIL_H
