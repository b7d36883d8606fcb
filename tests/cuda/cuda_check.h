//===- cuda_check.h - CHECK_CUDA for the standalone GPU checks ------------===//
//
// Shared by attention_check.cu and kernels_check.cu: a failed CUDA runtime
// call prints file, line, the call and the driver's message, then exits 2.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_CUDA_CUDA_CHECK_H
#define ENCC_TESTS_CUDA_CUDA_CHECK_H

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(x)                                                                    \
  do {                                                                                   \
    cudaError_t err_ = (x);                                                              \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                    \
                   cudaGetErrorString(err_));                                            \
      std::exit(2);                                                                      \
    }                                                                                    \
  } while (0)

#endif // ENCC_TESTS_CUDA_CUDA_CHECK_H
