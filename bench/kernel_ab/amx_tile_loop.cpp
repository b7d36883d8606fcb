// What bounds the AMX tile loop (issue 40, item 2): enc_amx.h's amxTiles over
// synthetic operands, one core, in four settings, GOP/s (int8 tdpbusd):
//   - rows / cols: row blocks or column pairs outermost;
//   - +epilogue: a three-operation epilogue (int32 to float, zero-point term,
//     scale) writing y, as the real ones do at minimum;
//   - dram: the weights cycled through ~200 MB of copies, as in a whole model.
// The tile-data permission is requested first. Not part of the build:
//
//   c++ -O3 -std=c++17 -march=native -I compiler/codegen/cpu/kernels -I tests/kernels \
//       bench/kernel_ab/amx_tile_loop.cpp -o amx_tile_loop && ./amx_tile_loop
#include "AmxPermission.h"
#include "enc_amx.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

using namespace enc_kernels;

namespace {

/// 64-byte aligned bytes, all 1: a tile row of 64 bytes then lies in one
/// cache line, as in the runtime's arena (kArenaAlign); a std::vector's
/// 16-byte alignment made the loop 2-3x slower.
struct Bytes {
  uint8_t *p;
  explicit Bytes(size_t n) : p(static_cast<uint8_t *>(std::aligned_alloc(64, (n + 63) / 64 * 64))) {
    std::memset(p, 1, n);
  }
  Bytes(const Bytes &) = delete;
  ~Bytes() { std::free(p); }
};

struct Operands {
  int M, K, N;
  Bytes a;
  std::vector<std::unique_ptr<Bytes>> weights; // one copy, or enough to pass L3
  std::vector<float> y, scale;
  std::vector<int32_t> colSum;
  Operands(int M, int K, int N, bool dram)
      : M(M), K(K), N(N), a(size_t(M) * K), y(size_t(M) * N), scale(N, 1.0f), colSum(N, 3) {
    const size_t bytes = size_t(K) * N, copies = dram ? (size_t(200) << 20) / bytes + 1 : 1;
    for (size_t c = 0; c < copies; ++c)
      weights.push_back(std::make_unique<Bytes>(bytes));
  }
};

/// GOP/s of `reps` GEMMs of o (panel b: 16 columns x K bytes).
double run(Operands &o, bool colsOuter, bool epilogue, int reps) {
  const int64_t panel = int64_t(o.K) * 16;
  size_t copy = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    const uint8_t *w = o.weights[copy]->p;
    copy = (copy + 1) % o.weights.size();
    amxTiles</*Int8=*/true>(o.a.p, o.K, o.M, w, panel, o.N / 16, o.K / 64, colsOuter,
                            [&](const AmxTileAt &t, const int32_t *c) {
                              if (!epilogue)
                                return;
                              const int32_t *cs = o.colSum.data() + t.b * 16;
                              const float *s = o.scale.data() + t.b * 16;
                              for (int i = 0; i < t.m; ++i) {
                                float *yr = o.y.data() + (t.i + i) * o.N + t.b * 16;
                                for (int j = 0; j < 32; ++j)
                                  yr[j] = float(c[i * 32 + j] - 128 * cs[j]) * s[j];
                              }
                            });
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * o.M * o.N * double(o.K) * reps / s / 1e9;
}

} // namespace

int main() {
  if (!kernel_test::amxUsable(25)) {
    std::puts("this CPU (or kernel) gives no AMX-INT8 tile state");
    return 1;
  }
  const int shapes[][3] = {{128, 384, 384}, {128, 768, 768}, {128, 768, 3072}, {128, 3072, 768}, {1024, 768, 3072}};
  std::printf("%-22s %8s %8s %10s %10s %8s %8s  (GOP/s)\n", "M x K x N", "rows", "cols", "rows+epi", "cols+epi",
              "dram", "dram+epi");
  for (const auto &sh : shapes) {
    const int reps = int(1e10 / (2.0 * sh[0] * sh[1] * sh[2])) + 1;
    Operands l3(sh[0], sh[1], sh[2], false), dram(sh[0], sh[1], sh[2], true);
    char name[32];
    std::snprintf(name, sizeof name, "%d x %d x %d", sh[0], sh[1], sh[2]);
    std::printf("%-22s %8.0f %8.0f %10.0f %10.0f %8.0f %8.0f\n", name, run(l3, false, false, reps),
                run(l3, true, false, reps), run(l3, false, true, reps), run(l3, true, true, reps),
                run(dram, true, false, reps), run(dram, true, true, reps));
  }
}
