//===- MockCuda.cpp - A host-only libcuda.so.1 for the CUDA backend tests -===//
//
// Test double of the CUDA driver: built as libcuda.so.1 in its own directory
// and found through LD_LIBRARY_PATH by runtime_cuda_mock_test only. "Device"
// memory is host memory; kernels are host functions looked up by name (the
// "fatbin" must start with MOCKFATBIN); work runs at once on enqueue, or is
// recorded while a stream captures and replayed by cuGraphLaunch. Counters
// (mock_cuda_stats) let the tests see what the runtime did.
//
//===----------------------------------------------------------------------===//
#include "encrt/cuda_kernel_abi.h"
#include "encrt/float16.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kOk = 0, kInvalidValue = 1, kOutOfMemory = 2,
                   kInvalidImage = 200, kNotFound = 500,
                   kCaptureUnsupported = 900;

using Kernel = void (*)(const enc_cuda_args &, const unsigned grid[3]);

struct Op {
  std::function<void()> run;
};
struct Stream {
  bool capturing = false;
  std::vector<Op> captured;
};
struct Graph {
  std::vector<Op> ops;
};

struct Stats {
  long kernelLaunches;  // direct
  long graphLaunches;
  long captures;
  long liveGraphExecs;
  long liveAllocs;      // device + host
  long liveStreams;
  long liveEvents;
  long badLaunches;     // a grid that does not match the header's rule
};

std::mutex mu;
Stats stats;
std::map<void *, size_t> allocs;
uint64_t allocLimit = ~uint64_t(0);

bool enqueue(void *stream, std::function<void()> f) {
  auto *s = static_cast<Stream *>(stream);
  if (s && s->capturing) {
    s->captured.push_back({std::move(f)});
    return true;
  }
  f();
  return false;
}

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The kernels of tests/runtime/CudaTestPlan.h (and MockCudaTest.cpp).
// test_cuda_embed [ids, table, bias, hidden(-3,H)], iattrs [H], rows grid, p0 4.
void embedKernel(const enc_cuda_args &a, const unsigned grid[3]) {
  const int64_t H = a.iattrs[0];
  if (grid[0] != ceilDiv(a.tokens, 4))
    ++stats.badLaunches;
  auto *ids = static_cast<const int32_t *>(a.buffers[0]);
  auto *table = static_cast<const float *>(a.buffers[1]);
  auto *bias = static_cast<const float *>(a.buffers[2]);
  auto *out = static_cast<float *>(a.buffers[3]);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int32_t s = 0; s < a.lengths[b]; ++s) {
      int32_t id = ids[b * a.seq + s];
      float *row = out + (a.offsets[b] + s) * H;
      for (int64_t h = 0; h < H; ++h)
        row[h] = 1.5f * (table[id * H + h] + bias[h]);
    }
}

// test_cuda_pool [hidden(-3,H), pooled(-1,H)], iattrs [H], batch grid, p0 1.
void poolKernel(const enc_cuda_args &a, const unsigned grid[3]) {
  const int64_t H = a.iattrs[0];
  if (grid[0] != a.batch)
    ++stats.badLaunches;
  auto *in = static_cast<const float *>(a.buffers[0]);
  auto *out = static_cast<float *>(a.buffers[1]);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t h = 0; h < H; ++h) {
      double sum = 0;
      for (int32_t s = 0; s < a.lengths[b]; ++s)
        sum += in[(a.offsets[b] + s) * H + h];
      out[b * H + h] = static_cast<float>(sum / a.lengths[b]);
    }
}

// test_cuda_quant [x(-3,H) f32, q(-3,H) i8], iattrs [H], fattrs [scale]:
// q = clamp(round(x / scale)).
void quantKernel(const enc_cuda_args &a, const unsigned grid[3]) {
  const int64_t H = a.iattrs[0];
  if (grid[0] != ceilDiv(a.tokens, 4))
    ++stats.badLaunches;
  auto *x = static_cast<const float *>(a.buffers[0]);
  auto *q = static_cast<int8_t *>(a.buffers[1]);
  for (int64_t i = 0; i < a.tokens * H; ++i)
    q[i] = static_cast<int8_t>(std::fmax(-127.f, std::fmin(127.f, std::nearbyint(x[i] / a.fattrs[0]))));
}

// test_cuda_dequant [acc(-3,N) i32, hidden(-3,N) f32], iattrs [N], fattrs [scale].
void dequantKernel(const enc_cuda_args &a, const unsigned grid[3]) {
  const int64_t N = a.iattrs[0];
  if (grid[0] != ceilDiv(a.tokens, 4))
    ++stats.badLaunches;
  auto *acc = static_cast<const int32_t *>(a.buffers[0]);
  auto *y = static_cast<float *>(a.buffers[1]);
  for (int64_t i = 0; i < a.tokens * N; ++i)
    y[i] = static_cast<float>(acc[i]) * a.fattrs[0];
}

// test_cuda_tohalf [x(-3,H) f32, y(-3,H) f16] / test_cuda_tofloat (the
// reverse), iattrs [H].
void toHalfKernel(const enc_cuda_args &a, const unsigned grid[3]) {
  if (grid[0] != ceilDiv(a.tokens, 4))
    ++stats.badLaunches;
  auto *x = static_cast<const float *>(a.buffers[0]);
  auto *y = static_cast<uint16_t *>(a.buffers[1]);
  for (int64_t i = 0; i < a.tokens * a.iattrs[0]; ++i)
    y[i] = encm_f32_to_f16(x[i]);
}
void toFloatKernel(const enc_cuda_args &a, const unsigned grid[3]) {
  if (grid[0] != ceilDiv(a.tokens, 4))
    ++stats.badLaunches;
  auto *x = static_cast<const uint16_t *>(a.buffers[0]);
  auto *y = static_cast<float *>(a.buffers[1]);
  for (int64_t i = 0; i < a.tokens * a.iattrs[0]; ++i)
    y[i] = encm_f16_to_f32(x[i]);
}

const std::map<std::string, Kernel> kKernels = {
    {"test_cuda_tohalf", toHalfKernel},
    {"test_cuda_tofloat", toFloatKernel},
    {"test_cuda_embed", embedKernel},
    {"test_cuda_pool", poolKernel},
    {"test_cuda_quant", quantKernel},
    {"test_cuda_dequant", dequantKernel},
};

} // namespace

extern "C" {

__attribute__((visibility("default"))) const Stats *mock_cuda_stats() { return &stats; }
__attribute__((visibility("default"))) void mock_cuda_set_alloc_limit(uint64_t bytes) {
  allocLimit = bytes;
}
/// For the mock cuBLASLt: run `f` on `stream` (or record it while capturing).
__attribute__((visibility("default"))) void mock_cuda_enqueue(void *stream,
                                                              std::function<void()> *f) {
  enqueue(stream, *f);
}

CUresult cuInit(unsigned) { return kOk; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return kOk; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? kOk : 101; }
CUresult cuDeviceGetCount(int *c) { *c = 1; return kOk; }
CUresult cuDeviceGetName(char *name, int len, int) {
  std::snprintf(name, static_cast<size_t>(len), "Mock GPU");
  return kOk;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int) {
  *v = attr == 75 ? 9 : attr == 76 ? 0 : 0;
  return kOk;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) { *ctx = reinterpret_cast<void *>(0x10); return kOk; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return kOk; }
CUresult cuCtxSetCurrent(void *) { return kOk; }
CUresult cuModuleLoadData(void **m, const void *image) {
  if (std::memcmp(image, "MOCKFATBIN", 10) != 0)
    return kInvalidImage;
  *m = reinterpret_cast<void *>(0x20);
  return kOk;
}
CUresult cuModuleUnload(void *) { return kOk; }
CUresult cuModuleGetFunction(void **f, void *, const char *name) {
  auto it = kKernels.find(name);
  if (it == kKernels.end())
    return kNotFound;
  *f = reinterpret_cast<void *>(it->second);
  return kOk;
}
CUresult cuFuncSetAttribute(void *, int, int) { return kOk; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned,
                        void *stream, void **params, void **extra) {
  if (!f || !params || extra || bx == 0 || by != 1 || bz != 1 || gx == 0 || gy == 0 || gz == 0)
    return kInvalidValue;
  enc_cuda_args args;
  std::memcpy(&args, params[0], sizeof(args)); // by value, as the driver does
  unsigned grid[3] = {gx, gy, gz};
  auto kernel = reinterpret_cast<Kernel>(f);
  if (!enqueue(stream, [=] { kernel(args, grid); }))
    ++stats.kernelLaunches;
  return kOk;
}
CUresult cuMemAlloc_v2(unsigned long long *p, size_t bytes) {
  if (bytes == 0)
    return kInvalidValue;
  if (bytes > allocLimit)
    return kOutOfMemory;
  void *m = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  std::memset(m, 0xCD, bytes); // garbage, like fresh device memory
  std::lock_guard<std::mutex> lock(mu);
  allocs[m] = bytes;
  ++stats.liveAllocs;
  *p = reinterpret_cast<unsigned long long>(m);
  return kOk;
}
CUresult cuMemFree_v2(unsigned long long p) {
  std::lock_guard<std::mutex> lock(mu);
  void *m = reinterpret_cast<void *>(p);
  if (!allocs.erase(m))
    return kInvalidValue;
  --stats.liveAllocs;
  std::free(m);
  return kOk;
}
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned) {
  unsigned long long d;
  CUresult r = cuMemAlloc_v2(&d, bytes);
  *p = reinterpret_cast<void *>(d);
  return r;
}
CUresult cuMemFreeHost(void *p) { return cuMemFree_v2(reinterpret_cast<unsigned long long>(p)); }
CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n) {
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return kOk;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *stream) {
  enqueue(stream, [=] { std::memcpy(reinterpret_cast<void *>(dst), src, n); });
  return kOk;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *stream) {
  enqueue(stream, [=] { std::memcpy(dst, reinterpret_cast<const void *>(src), n); });
  return kOk;
}
CUresult cuStreamCreate(void **s, unsigned) {
  *s = new Stream();
  ++stats.liveStreams;
  return kOk;
}
CUresult cuStreamSynchronize(void *s) {
  return s && static_cast<Stream *>(s)->capturing ? kCaptureUnsupported : kOk;
}
CUresult cuStreamDestroy_v2(void *s) {
  delete static_cast<Stream *>(s);
  --stats.liveStreams;
  return kOk;
}
CUresult cuStreamBeginCapture_v2(void *s, int mode) {
  auto *st = static_cast<Stream *>(s);
  if (!st || st->capturing || mode != 1)
    return kInvalidValue;
  st->capturing = true;
  st->captured.clear();
  return kOk;
}
CUresult cuStreamEndCapture(void *s, void **graph) {
  auto *st = static_cast<Stream *>(s);
  if (!st->capturing)
    return kInvalidValue;
  st->capturing = false;
  *graph = new Graph{std::move(st->captured)};
  st->captured.clear();
  ++stats.captures;
  return kOk;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  *exec = new Graph(*static_cast<Graph *>(graph));
  ++stats.liveGraphExecs;
  return kOk;
}
CUresult cuGraphLaunch(void *exec, void *) {
  for (const Op &op : static_cast<Graph *>(exec)->ops)
    op.run();
  ++stats.graphLaunches;
  return kOk;
}
CUresult cuGraphExecDestroy(void *exec) {
  delete static_cast<Graph *>(exec);
  --stats.liveGraphExecs;
  return kOk;
}
CUresult cuGraphDestroy(void *graph) {
  delete static_cast<Graph *>(graph);
  return kOk;
}
CUresult cuEventCreate(void **e, unsigned) {
  *e = new int(0);
  ++stats.liveEvents;
  return kOk;
}
CUresult cuEventRecord(void *, void *) { return kOk; }
CUresult cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 0.25f;
  return kOk;
}
CUresult cuEventDestroy_v2(void *e) {
  delete static_cast<int *>(e);
  --stats.liveEvents;
  return kOk;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
  case kOutOfMemory: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return kOk;
  case kInvalidImage: *s = "CUDA_ERROR_INVALID_IMAGE"; return kOk;
  case kInvalidValue: *s = "CUDA_ERROR_INVALID_VALUE"; return kOk;
  case kNotFound: *s = "CUDA_ERROR_NOT_FOUND"; return kOk;
  }
  *s = nullptr;
  return kInvalidValue;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  switch (r) {
  case kOutOfMemory: *s = "out of memory"; return kOk;
  case kInvalidImage: *s = "device kernel image is invalid"; return kOk;
  }
  *s = nullptr;
  return kInvalidValue;
}

} // extern "C"
