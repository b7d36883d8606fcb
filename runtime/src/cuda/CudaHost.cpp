//===- CudaHost.cpp - Host-side pieces of the CUDA backend ----------------===//
#include "cuda/CudaHost.h"

#include "Failure.h"
#include "encrt/cuda_kernel_abi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace encrt::rt::cuda {

DeviceChoice parseDevice(const char *device) {
  DeviceChoice c;
  if (!device || std::strcmp(device, "auto") == 0 || !*device)
    return c;
  if (std::strcmp(device, "cpu") == 0) {
    c.kind = DeviceKind::Cpu;
    return c;
  }
  if (std::strcmp(device, "cuda") == 0) {
    c.kind = DeviceKind::Cuda;
    return c;
  }
  if (std::strncmp(device, "cuda:", 5) == 0) {
    const char *digits = device + 5;
    size_t n = std::strlen(digits);
    bool ok = n >= 1 && n <= 4 &&
              std::all_of(digits, digits + n, [](char ch) { return ch >= '0' && ch <= '9'; });
    if (ok) {
      c.kind = DeviceKind::Cuda;
      c.index = std::atoi(digits);
      return c;
    }
  }
  fail(ENCRT_INVALID_ARGUMENT, "device \"", device,
       "\" is not one of \"auto\" (or NULL), \"cpu\", \"cuda\", \"cuda:N\"");
}

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

LaunchShape launchShape(const int64_t *h, int64_t batch, int64_t seq,
                        int64_t tokens) {
  const int64_t kind = h[0], threads = h[1], shared = h[2], p0 = h[3], p1 = h[4];
  if (threads < 1 || threads > 1024)
    fail(ENCRT_INVALID_ARTIFACT, "launch header: ", threads,
         " threads per block (expected 1..1024)");
  if (shared < 0 || shared > (int64_t(1) << 30))
    fail(ENCRT_INVALID_ARTIFACT, "launch header: ", shared,
         " bytes of dynamic shared memory");
  if (kind < ENC_CUDA_GRID_ROWS || kind >= ENC_CUDA_GRID_GEMM)
    fail(ENCRT_INVALID_ARTIFACT, "launch header: grid kind ", kind,
         kind == ENC_CUDA_GRID_GEMM ? " (a GEMM step) is not a kernel launch"
                                    : " is unknown (expected 0..3)");
  if (p0 < 1)
    fail(ENCRT_INVALID_ARTIFACT, "launch header: grid kind ", kind, " p0 is ",
         p0, " (expected >= 1)");
  if ((kind == ENC_CUDA_GRID_SEQ_HEAD_TILE || kind == ENC_CUDA_GRID_ELEMENTS) &&
      p1 < 1)
    fail(ENCRT_INVALID_ARTIFACT, "launch header: grid kind ", kind, " p1 is ",
         p1, " (expected >= 1)");
  int64_t g[3] = {1, 1, 1};
  switch (kind) {
  case ENC_CUDA_GRID_ROWS: g[0] = ceilDiv(tokens, p0); break;
  case ENC_CUDA_GRID_SEQ_HEAD_TILE:
    g[0] = ceilDiv(seq, p0);
    g[1] = p1;
    g[2] = batch;
    break;
  case ENC_CUDA_GRID_BATCH: g[0] = ceilDiv(batch, p0); break;
  case ENC_CUDA_GRID_ELEMENTS: {
    int64_t elements;
    if (__builtin_mul_overflow(tokens, p1, &elements))
      fail(ENCRT_INVALID_ARTIFACT, "launch header: ", tokens, " x ", p1,
           " elements overflow");
    g[0] = ceilDiv(elements, p0);
    break;
  }
  }
  const int64_t limits[3] = {INT32_MAX, 65535, 65535};
  for (int i = 0; i < 3; ++i)
    if (g[i] < 1 || g[i] > limits[i])
      fail(ENCRT_INVALID_ARTIFACT, "launch header: grid kind ", kind,
           " needs grid dim ", i, " = ", g[i], " (CUDA allows 1..", limits[i],
           ")");
  LaunchShape s;
  for (int i = 0; i < 3; ++i)
    s.grid[i] = static_cast<unsigned>(g[i]);
  s.block = static_cast<unsigned>(threads);
  s.sharedBytes = static_cast<unsigned>(shared);
  return s;
}


} // namespace encrt::rt::cuda
