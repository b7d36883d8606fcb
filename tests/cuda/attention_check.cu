//===- attention_check.cu - The CUDA attention kernels vs a float64 reference =//
//
// Standalone (no gtest) program for a machine with an NVIDIA GPU (sm_80+):
//   nvcc -O3 -std=c++17 -arch=sm_80 -Icompiler/codegen/cuda/kernels
//        -Iruntime/include -o attention_check tests/cuda/attention_check.cu
//   ./attention_check
// Runs both attention kernels, enc_cuda::attention (CUDA cores) and
// enc_cuda::attentionMma (tensor cores), with 12 heads and packed QKV read in
// place, on random packed batches with mixed lengths (including 1) at padded
// seq 32, 128 and 512: fp16 at head dims 32 and 64 (and 16 and 128 on tensor cores),
// bf16 at 64 (and 128 on tensor cores). Every valid output row is compared with a double-precision
// softmax(QK^T * scale) V computed from the same rounded inputs; the output is
// poisoned with NaN first, so an unwritten element fails. Prints the max abs
// error / max |V| per case and exits 1 if one is above the tolerance: 2e-3
// (fp16), 1e-2 (bf16). Then times both (CUDA events, median of 50 after 5
// warm-ups) at BERT-base's shape, 12 heads x 64, seq 128 and 512, batch 1,
// 32 and 128 (all full length).
//
//===----------------------------------------------------------------------===//
#include "enc_cuda_attention.cuh"
#include "enc_cuda_attention_mma.cuh"

#include "cuda_check.h"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

constexpr int kHeads = 12;

/// Which kernel a case runs.
enum class Kind { CudaCores, TensorCores };

template <Kind K, int D> struct KernelShape;
template <int D> struct KernelShape<Kind::CudaCores, D> {
  static constexpr int kRows = enc_cuda::AttnConfig<D>::kBQ, kThreads = enc_cuda::AttnConfig<D>::kThreads;
};
template <int D> struct KernelShape<Kind::TensorCores, D> {
  static constexpr int kRows = enc_cuda::AttnMmaConfig<D>::kBQ,
                       kThreads = enc_cuda::AttnMmaConfig<D>::kThreads;
};



template <Kind K, typename T, int D>
__global__ void __launch_bounds__(KernelShape<K, D>::kThreads) attentionKernel(enc_cuda_args a) {
  constexpr int H = kHeads * D;
  const T *qkv = static_cast<const T *>(a.buffers[0]);
  T *out = static_cast<T *>(a.buffers[1]);
  if constexpr (K == Kind::CudaCores)
    enc_cuda::attention<T, D, kHeads, 3 * H>(a, qkv, qkv + H, qkv + 2 * H, out, a.fattrs[0]);
  else
    enc_cuda::attentionMma<T, D, kHeads, 3 * H>(a, qkv, qkv + H, qkv + 2 * H, out, a.fattrs[0]);
}

template <Kind K, typename T, int D> void launch(const enc_cuda_args &a, cudaStream_t stream = 0) {
  using S = KernelShape<K, D>;
  dim3 grid((a.seq + S::kRows - 1) / S::kRows, kHeads, a.batch);
  attentionKernel<K, T, D><<<grid, S::kThreads, 0, stream>>>(a);
}

template <typename T> T toDevice(float x);
template <> __half toDevice<__half>(float x) { return __float2half_rn(x); }
template <> __nv_bfloat16 toDevice<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
float fromDevice(__half x) { return __half2float(x); }
float fromDevice(__nv_bfloat16 x) { return __bfloat162float(x); }

/// One case; returns max |out - ref| / max |V|.
template <Kind K, typename T, int D>
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
  launch<K, T, D>(a);
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

/// Median ms of one launch at `batch` x `seq` (all full length), fp16.
template <Kind K, int D> float timeKernel(int batch, int seq) {
  constexpr int H = kHeads * D;
  const int tokens = batch * seq;
  std::vector<int> lengths(batch, seq), offsets(batch + 1);
  for (int b = 0; b <= batch; ++b)
    offsets[b] = b * seq;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<__half> qkv(static_cast<size_t>(tokens) * 3 * H);
  for (__half &x : qkv)
    x = __float2half_rn(dist(rng));
  __half *dQkv = nullptr, *dOut = nullptr;
  int32_t *dLen = nullptr, *dOff = nullptr;
  CHECK_CUDA(cudaMalloc(&dQkv, qkv.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&dOut, static_cast<size_t>(tokens) * H * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&dLen, batch * sizeof(int32_t)));
  CHECK_CUDA(cudaMalloc(&dOff, (batch + 1) * sizeof(int32_t)));
  CHECK_CUDA(cudaMemcpy(dQkv, qkv.data(), qkv.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dLen, lengths.data(), batch * sizeof(int32_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dOff, offsets.data(), (batch + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
  enc_cuda_args a = {};
  a.buffers[0] = dQkv;
  a.buffers[1] = dOut;
  a.lengths = dLen;
  a.offsets = dOff;
  a.batch = batch;
  a.seq = seq;
  a.tokens = tokens;
  a.fattrs[0] = 0.125f;
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int i = 0; i < 55; ++i) {
    CHECK_CUDA(cudaEventRecord(e0));
    launch<K, __half, D>(a);
    CHECK_CUDA(cudaEventRecord(e1));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaGetLastError());
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
    if (i >= 5)
      ms.push_back(t);
  }
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  CHECK_CUDA(cudaFree(dQkv));
  CHECK_CUDA(cudaFree(dOut));
  CHECK_CUDA(cudaFree(dLen));
  CHECK_CUDA(cudaFree(dOff));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
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
      {128, {128, 1, 64, 100, 33, 127, 65}},
      {512, {512, 1, 300, 257}},
  };
  bool ok = true;
  uint32_t seed = 1;
  auto report = [&](const char *kernel, const char *type, int d, const Case &c, double rel,
                    double tol) {
    std::printf("%-12s %-5s D=%-3d seq=%-4d lengths=[", kernel, type, d, c.seq);
    for (size_t i = 0; i < c.lengths.size(); ++i)
      std::printf("%s%d", i ? "," : "", c.lengths[i]);
    std::printf("]  max|err|/max|V| = %.3e  (tolerance %.0e) %s\n", rel, tol,
                rel <= tol ? "ok" : "FAIL");
    ok = ok && rel <= tol;
  };
  constexpr Kind CC = Kind::CudaCores, TC = Kind::TensorCores;
  for (const Case &c : cases) {
    report("cuda-core", "fp16", 32, c, runCase<CC, __half, 32>(c.seq, c.lengths, seed++), 2e-3);
    report("cuda-core", "fp16", 64, c, runCase<CC, __half, 64>(c.seq, c.lengths, seed++), 2e-3);
    report("cuda-core", "bf16", 64, c, runCase<CC, __nv_bfloat16, 64>(c.seq, c.lengths, seed++), 1e-2);
    report("tensor-core", "fp16", 16, c, runCase<TC, __half, 16>(c.seq, c.lengths, seed++), 2e-3);
    report("tensor-core", "fp16", 32, c, runCase<TC, __half, 32>(c.seq, c.lengths, seed++), 2e-3);
    report("tensor-core", "fp16", 64, c, runCase<TC, __half, 64>(c.seq, c.lengths, seed++), 2e-3);
    report("tensor-core", "fp16", 128, c, runCase<TC, __half, 128>(c.seq, c.lengths, seed++), 2e-3);
    report("tensor-core", "bf16", 64, c, runCase<TC, __nv_bfloat16, 64>(c.seq, c.lengths, seed++), 1e-2);
    report("tensor-core", "bf16", 128, c, runCase<TC, __nv_bfloat16, 128>(c.seq, c.lengths, seed++), 1e-2);
  }
  std::printf("\nattention kernel time, fp16, 12 heads x 64 (median ms of 50 launches):\n");
  for (int seq : {128, 512})
    for (int batch : {1, 32, 128}) {
      const float cc = timeKernel<CC, 64>(batch, seq), tc = timeKernel<TC, 64>(batch, seq);
      std::printf("  seq %3d batch %4d  cuda-core %.4f  tensor-core %.4f (%.2fx)\n", seq, batch,
                  cc, tc, cc / tc);
    }
  std::printf(ok ? "attention_check: all cases passed\n" : "attention_check: FAILED\n");
  return ok ? 0 : 1;
}
