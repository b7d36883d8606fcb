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

#include <algorithm>
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

/// The packed layout's row offsets of sequences of these lengths
/// (offsets[b+1] - offsets[b] = lengths[b]).
inline std::vector<int32_t> offsetsOf(const std::vector<int32_t> &lengths) {
  std::vector<int32_t> off(lengths.size() + 1, 0);
  for (size_t b = 0; b < lengths.size(); ++b)
    off[b + 1] = off[b] + lengths[b];
  return off;
}

/// Attention of one sequence in double: for query rows row0 + i (i <
/// queries) and every head h, out row i, columns h*D..h*D+D-1 += the
/// softmax over keys j < keys of scale <q_i, k_j> times v_j; q/k/v rows `ld`
/// floats apart starting at row row0, out rows NH*D doubles apart. `bias`,
/// when given, is added to the scaled score of head h, query i, key j.
/// Grouped key/value heads: k and v rows `ldkv` apart (0: ld), head h reads
/// key/value head h / group.
inline void refAttendSequence(const float *q, const float *k, const float *v,
                              int64_t ld, int64_t row0, int64_t queries,
                              int64_t keys, int NH, int D, float scale,
                              double *out,
                              const std::function<double(int, int64_t, int64_t)> &bias = {},
                              int64_t ldkv = 0, int group = 1) {
  const int64_t H = int64_t(NH) * D;
  if (ldkv == 0)
    ldkv = ld;
  std::vector<double> s(keys);
  for (int h = 0; h < NH; ++h)
    for (int64_t i = 0; i < queries; ++i) {
      const float *qi = q + (row0 + i) * ld + h * D;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        const float *kj = k + (row0 + j) * ldkv + h / group * D;
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += double(qi[d]) * kj[d];
        s[j] = double(scale) * dot + (bias ? bias(h, i, j) : 0.0);
        mx = std::max(mx, s[j]);
      }
      for (int64_t j = 0; j < keys; ++j) {
        s[j] = std::exp(s[j] - mx);
        sum += s[j];
      }
      double *o = out + i * H + h * D;
      for (int64_t j = 0; j < keys; ++j) {
        const float *vj = v + (row0 + j) * ldkv + h / group * D;
        for (int d = 0; d < D; ++d)
          o[d] += s[j] / sum * vj[d];
      }
    }
}

} // namespace kernel_test

#endif // ENCC_TESTS_KERNELS_KERNELTESTUTIL_H
