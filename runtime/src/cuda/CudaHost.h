//===- CudaHost.h - Host-side pieces of the CUDA backend ------------------===//
//
// Pure functions, unit-tested without a GPU: the device option, launch shapes
// from a step's launch header (encrt/cuda_kernel_abi.h), the packed-row
// offsets (cu_seqlens) of a batch, the scatter of packed hidden rows back to
// the caller's padded layout, and symbolic dims.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_CUDAHOST_H
#define ENCRT_CUDA_CUDAHOST_H

#include "Inputs.h"

#include <cstdint>

namespace encrt::rt::cuda {

enum class DeviceKind { Auto, Cpu, Cuda };

struct DeviceChoice {
  DeviceKind kind = DeviceKind::Auto;
  int index = 0; ///< Cuda: the device ordinal
};

/// NULL/"auto", "cpu", "cuda" (= "cuda:0") or "cuda:N"; anything else throws
/// Failure(ENCRT_INVALID_ARGUMENT) listing the valid forms.
DeviceChoice parseDevice(const char *device);

struct LaunchShape {
  unsigned grid[3];
  unsigned block;
  unsigned sharedBytes;
};

/// The launch of a kernel step whose iattrs start with `header`
/// (ENC_CUDA_LAUNCH_HEADER entries). Throws Failure(ENCRT_INVALID_ARTIFACT)
/// for a GEMM or unknown grid kind, a non-positive parameter or a grid
/// beyond CUDA's limits.
LaunchShape launchShape(const int64_t *header, int64_t batch, int64_t seq,
                        int64_t tokens);

// computeOffsets, resolveDim and unpackRows (shared with the CPU session):
// Inputs.h.

} // namespace encrt::rt::cuda

#endif // ENCRT_CUDA_CUDAHOST_H
