//===- attention_check.cu - The CUDA attention kernel vs a float64 reference ===//
//
// Standalone (no gtest) program for a machine with an NVIDIA GPU (sm_80+):
//   nvcc -O3 -std=c++17 -arch=sm_80 -Icompiler/codegen/cuda/kernels
//        -Iruntime/include -o attention_check tests/cuda/attention_check.cu
//   ./attention_check
// Runs enc_cuda::attention (head dims 32 and 64, 12 heads, packed QKV read in
// place, fp16; and bf16 for head dim 64) on random packed batches with mixed
// lengths (including 1) at padded seq 32, 128 and 512, and compares every
// valid output row with a double-precision softmax(QK^T * scale) V computed
// from the same rounded inputs. Prints the max abs error / max |V| per case and
// exits 1 if one is above the tolerance: 2e-3 (fp16), 1e-2 (bf16).
//
//===----------------------------------------------------------------------===//
#include "enc_cuda_attention.cuh"

#include "cuda_check.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

constexpr int kHeads = 12;

template <typename T, int D>
__global__ void __launch_bounds__(enc_cuda::AttnConfig<D>::kThreads)
    attentionKernel(enc_cuda_args a) {
  constexpr int H = kHeads * D;
  const T *qkv = static_cast<const T *>(a.buffers[0]);
  enc_cuda::attention<T, D, kHeads, 3 * H>(a, qkv, qkv + H, qkv + 2 * H,
                                           static_cast<T *>(a.buffers[1]), a.fattrs[0]);
}

template <typename T> T toDevice(float x);
template <> __half toDevice<__half>(float x) { return __float2half_rn(x); }
template <> __nv_bfloat16 toDevice<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
float fromDevice(__half x) { return __half2float(x); }
float fromDevice(__nv_bfloat16 x) { return __bfloat162float(x); }

/// One case; returns max |out - ref| / max |V|.
template <typename T, int D>
double runCase(int seq, const std::vector<int> &lengths, uint32_t seed) {
  constexpr int H = kHeads * D, LD = 3 * H;
  const int batch = static_cast<int>(lengths.size());
  std::vector<int> offsets(batch + 1, 0);
  for (int b = 0; b < batch; ++b)
    offsets[b + 1] = offsets[b] + lengths[b];
  const int tokens = offsets[batch];
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<T> qkv(static_cast<size_t>(tokens) * LD);
  std::vector<double> qkvD(qkv.size());
  for (size_t i = 0; i < qkv.size(); ++i) {
    qkv[i] = toDevice<T>(dist(rng) * 1.5f);
    qkvD[i] = fromDevice(qkv[i]);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));

  T *dQkv = nullptr, *dOut = nullptr;
  int32_t *dLen = nullptr, *dOff = nullptr;
  CHECK_CUDA(cudaMalloc(&dQkv, qkv.size() * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&dOut, static_cast<size_t>(tokens) * H * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&dLen, batch * sizeof(int32_t)));
  CHECK_CUDA(cudaMalloc(&dOff, (batch + 1) * sizeof(int32_t)));
  CHECK_CUDA(cudaMemcpy(dQkv, qkv.data(), qkv.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dOut, 0xff, static_cast<size_t>(tokens) * H * sizeof(T))); // NaN fill
  CHECK_CUDA(cudaMemcpy(dLen, lengths.data(), batch * sizeof(int32_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dOff, offsets.data(), (batch + 1) * sizeof(int32_t),
                        cudaMemcpyHostToDevice));

  enc_cuda_args a = {};
  a.buffers[0] = dQkv;
  a.buffers[1] = dOut;
  a.lengths = dLen;
  a.offsets = dOff;
  a.batch = batch;
  a.seq = seq;
  a.tokens = tokens;
  a.fattrs[0] = scale;
  using C = enc_cuda::AttnConfig<D>;
  dim3 grid((seq + C::kBQ - 1) / C::kBQ, kHeads, batch);
  attentionKernel<T, D><<<grid, C::kThreads>>>(a);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<T> out(static_cast<size_t>(tokens) * H);
  CHECK_CUDA(cudaMemcpy(out.data(), dOut, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(dQkv));
  CHECK_CUDA(cudaFree(dOut));
  CHECK_CUDA(cudaFree(dLen));
  CHECK_CUDA(cudaFree(dOff));

  double maxV = 0.0, maxErr = 0.0;
  std::vector<double> p;
  for (int b = 0; b < batch; ++b) {
    const int len = lengths[b];
    for (int h = 0; h < kHeads; ++h)
      for (int i = 0; i < len; ++i) {
        const double *q = &qkvD[static_cast<size_t>(offsets[b] + i) * LD + h * D];
        p.assign(len, 0.0);
        double mx = -INFINITY;
        for (int j = 0; j < len; ++j) {
          const double *k = &qkvD[static_cast<size_t>(offsets[b] + j) * LD + H + h * D];
          double s = 0.0;
          for (int d = 0; d < D; ++d)
            s += q[d] * k[d];
          p[j] = s * static_cast<double>(scale);
          mx = std::max(mx, p[j]);
        }
        double sum = 0.0;
        for (int j = 0; j < len; ++j)
          sum += (p[j] = std::exp(p[j] - mx));
        for (int d = 0; d < D; ++d) {
          double ref = 0.0;
          for (int j = 0; j < len; ++j) {
            const double v = qkvD[static_cast<size_t>(offsets[b] + j) * LD + 2 * H + h * D + d];
            ref += p[j] / sum * v;
            maxV = std::max(maxV, std::fabs(v));
          }
          const double got = fromDevice(out[static_cast<size_t>(offsets[b] + i) * H + h * D + d]);
          const double err = std::fabs(got - ref);
          maxErr = std::isnan(got) ? INFINITY : std::max(maxErr, err);
        }
      }
  }
  return maxErr / std::max(maxV, 1e-30);
}

int main() {
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices < 1) {
    std::fprintf(stderr, "attention_check: no CUDA device\n");
    return 2;
  }
  struct Case {
    int seq;
    std::vector<int> lengths;
  };
  const std::vector<Case> cases = {
      {32, {32, 1, 17, 31}},
      {128, {128, 1, 64, 100, 33, 127}},
      {512, {512, 1, 300, 257}},
  };
  bool ok = true;
  uint32_t seed = 1;
  auto report = [&](const char *type, int d, const Case &c, double rel, double tol) {
    std::printf("%-5s D=%-3d seq=%-4d lengths=[", type, d, c.seq);
    for (size_t i = 0; i < c.lengths.size(); ++i)
      std::printf("%s%d", i ? "," : "", c.lengths[i]);
    std::printf("]  max|err|/max|V| = %.3e  (tolerance %.0e) %s\n", rel, tol,
                rel <= tol ? "ok" : "FAIL");
    ok = ok && rel <= tol;
  };
  for (const Case &c : cases) {
    report("fp16", 32, c, runCase<__half, 32>(c.seq, c.lengths, seed++), 2e-3);
    report("fp16", 64, c, runCase<__half, 64>(c.seq, c.lengths, seed++), 2e-3);
    report("bf16", 64, c, runCase<__nv_bfloat16, 64>(c.seq, c.lengths, seed++), 1e-2);
  }
  std::printf(ok ? "attention_check: all cases passed\n" : "attention_check: FAILED\n");
  return ok ? 0 : 1;
}
