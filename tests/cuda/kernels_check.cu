//===- kernels_check.cu - Row/elementwise/pool CUDA kernels vs float64 ----===//
//
// Standalone (no gtest) program for a machine with an NVIDIA GPU (sm_80+),
// the companion of attention_check.cu:
//   nvcc -O3 -std=c++17 -arch=sm_80 -Icompiler/codegen/cuda/kernels
//        -Iruntime/include -o kernels_check tests/cuda/kernels_check.cu
//   ./kernels_check
// Checks, on a packed batch with mixed lengths (including 1), the embedding
// gather (+ int8 word table) + LayerNorm, add + LayerNorm + int8 quantise,
// dequantise + bias + GELU, GELU alone, an int8 GEMM's rows dequantised into a
// quantisation and into a residual LayerNorm + quantisation, and mean/cls
// pooling + L2 norm against double
// references computed from the same rounded inputs. Prints the max error per
// kernel and exits 1 if one is above its stated tolerance.
//
//===----------------------------------------------------------------------===//
#include "enc_cuda_kernels.cuh"

#include "cuda_check.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

constexpr int H = 384, N = 1536, V = 50, P = 64;

__global__ void embedKernel(enc_cuda_args a) {
  enc_cuda::embedding<__half, int8_t, H, true, false>(
      a, static_cast<const int32_t *>(a.buffers[0]), nullptr, 1, static_cast<const int8_t *>(a.buffers[1]),
      static_cast<const float *>(a.buffers[2]), static_cast<const __half *>(a.buffers[3]),
      static_cast<const __half *>(a.buffers[4]), static_cast<const float *>(a.buffers[5]),
      static_cast<const float *>(a.buffers[6]), static_cast<__half *>(a.buffers[7]), nullptr,
      nullptr, a.iattrs[0], /*padId=*/-1, a.fattrs[0], 0.0f);
}
__global__ void addLnQuantKernel(enc_cuda_args a) {
  enc_cuda::layerNorm<__half, H, true, true>(
      a, static_cast<const __half *>(a.buffers[0]), static_cast<const __half *>(a.buffers[1]),
      static_cast<const float *>(a.buffers[2]), static_cast<const float *>(a.buffers[3]),
      static_cast<__half *>(a.buffers[4]), static_cast<int8_t *>(a.buffers[5]),
      static_cast<float *>(a.buffers[6]), a.fattrs[0], 0.0f);
}
__global__ void geluKernel(enc_cuda_args a) {
  enc_cuda::activation<__half, N, enc_cuda::kEpiGelu>(a, static_cast<const __half *>(a.buffers[0]),
                                                      static_cast<__half *>(a.buffers[1]));
}
__global__ void dequantKernel(enc_cuda_args a) {
  enc_cuda::dequantize<__half, N, enc_cuda::kEpiGelu, true>(
      a, static_cast<const int32_t *>(a.buffers[0]), static_cast<const float *>(a.buffers[1]),
      static_cast<const float *>(a.buffers[2]), static_cast<const float *>(a.buffers[3]),
      static_cast<__half *>(a.buffers[4]));
}
template <int NN> __global__ void qlinearQuantizeKernel(enc_cuda_args a) {
  enc_cuda::qlinearQuantize<NN, enc_cuda::kEpiGelu, true>(
      a, static_cast<const int32_t *>(a.buffers[0]), static_cast<const float *>(a.buffers[1]),
      static_cast<const float *>(a.buffers[2]), static_cast<const float *>(a.buffers[3]),
      static_cast<int8_t *>(a.buffers[4]), static_cast<float *>(a.buffers[5]), 0.0f);
}
__global__ void qlinearAddLnKernel(enc_cuda_args a) {
  enc_cuda::qlinearAddLayerNorm<__half, H, enc_cuda::kEpiNone, true, true>(
      a, static_cast<const int32_t *>(a.buffers[0]), static_cast<const float *>(a.buffers[1]),
      static_cast<const float *>(a.buffers[2]), static_cast<const float *>(a.buffers[3]),
      static_cast<const __half *>(a.buffers[4]), static_cast<const float *>(a.buffers[5]),
      static_cast<const float *>(a.buffers[6]), static_cast<__half *>(a.buffers[7]),
      static_cast<int8_t *>(a.buffers[8]), static_cast<float *>(a.buffers[9]), a.fattrs[0], 0.0f);
}
template <int Mode> __global__ void poolKernel(enc_cuda_args a) {
  enc_cuda::pool<__half, H, Mode, true>(a, static_cast<const __half *>(a.buffers[0]),
                                        static_cast<float *>(a.buffers[1]));
}

template <typename T> T *upload(const std::vector<T> &v) {
  T *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, v.size() * sizeof(T) + 16));
  CHECK_CUDA(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> std::vector<T> download(const T *d, size_t n) {
  std::vector<T> v(n);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

std::vector<__half> halves(size_t n, std::mt19937 &rng, float sd) {
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<__half> v(n);
  for (auto &x : v)
    x = __float2half_rn(d(rng));
  return v;
}
double f(__half x) { return __half2float(x); }

void layerNormRef(std::vector<double> &v, const std::vector<float> &g,
                  const std::vector<float> &b, double eps) {
  double mean = 0, var = 0;
  for (double x : v)
    mean += x;
  mean /= v.size();
  for (double x : v)
    var += (x - mean) * (x - mean);
  const double rstd = 1.0 / std::sqrt(var / v.size() + eps);
  for (size_t h = 0; h < v.size(); ++h)
    v[h] = (v[h] - mean) * rstd * g[h] + b[h];
}

int main() {
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices < 1) {
    std::fprintf(stderr, "kernels_check: no CUDA device\n");
    return 2;
  }
  bool ok = true;
  auto report = [&](const char *what, double err, double tol) {
    std::printf("%-42s max error %.3e (tolerance %.0e) %s\n", what, err, tol,
                err <= tol ? "ok" : "FAIL");
    ok = ok && err <= tol;
  };
  std::mt19937 rng(42);
  const std::vector<int> lengths = {9, 1, 33, 16};
  const int B = lengths.size(), S = 33;
  std::vector<int> offsets(B + 1, 0);
  for (int b = 0; b < B; ++b)
    offsets[b + 1] = offsets[b] + lengths[b];
  const int T = offsets[B];

  enc_cuda_args base = {};
  base.lengths = upload(lengths);
  base.offsets = upload(offsets);
  base.batch = B;
  base.seq = S;
  base.tokens = T;
  const dim3 rowGrid((T + enc_cuda::kRowsPerBlock - 1) / enc_cuda::kRowsPerBlock);
  std::uniform_real_distribution<float> uni(0.5f, 1.5f);
  std::vector<float> gamma(H), beta(H);
  for (int h = 0; h < H; ++h)
    gamma[h] = uni(rng), beta[h] = uni(rng) - 1.0f;
  float *dGamma = upload(gamma), *dBeta = upload(beta);
  const float eps = 1e-12f;

  { // embedding: int8 word table + position (offset 2) + type row 0, LayerNorm
    std::vector<int32_t> ids(B * S, 0);
    std::uniform_int_distribution<int> tok(0, V - 1);
    for (int b = 0; b < B; ++b)
      for (int s = 0; s < lengths[b]; ++s)
        ids[b * S + s] = tok(rng);
    std::vector<int8_t> word(V * H);
    std::uniform_int_distribution<int> q(-127, 127);
    for (auto &w : word)
      w = static_cast<int8_t>(q(rng));
    std::vector<float> wscale(V);
    for (auto &s : wscale)
      s = uni(rng) / 127.0f;
    std::vector<__half> pos = halves(P * H, rng, 0.5f), type = halves(2 * H, rng, 0.5f);
    __half *dOut = nullptr;
    CHECK_CUDA(cudaMalloc(&dOut, T * H * sizeof(__half)));
    enc_cuda_args a = base;
    a.buffers[0] = upload(ids);
    a.buffers[1] = upload(word);
    a.buffers[2] = upload(wscale);
    a.buffers[3] = upload(pos);
    a.buffers[4] = upload(type);
    a.buffers[5] = dGamma;
    a.buffers[6] = dBeta;
    a.buffers[7] = dOut;
    a.iattrs[0] = 2;
    a.fattrs[0] = eps;
    embedKernel<<<rowGrid, enc_cuda::kRowThreads>>>(a);
    CHECK_CUDA(cudaGetLastError());
    std::vector<__half> got = download(dOut, T * H);
    double err = 0;
    for (int b = 0; b < B; ++b)
      for (int s = 0; s < lengths[b]; ++s) {
        const int id = ids[b * S + s];
        std::vector<double> v(H);
        for (int h = 0; h < H; ++h)
          v[h] = word[id * H + h] * static_cast<double>(wscale[id]) + f(pos[(s + 2) * H + h]) +
                 f(type[h]);
        layerNormRef(v, gamma, beta, eps);
        for (int h = 0; h < H; ++h)
          err = std::max(err, std::fabs(f(got[(offsets[b] + s) * H + h]) - v[h]));
      }
    report("embedding(int8 word)+layernorm", err, 5e-3); // |y| <~ 5: fp16 half ulp 2e-3
  }

  { // add + LayerNorm + int8 quantise
    std::vector<__half> x = halves(T * H, rng, 1.0f), r = halves(T * H, rng, 1.0f);
    __half *dY = nullptr;
    int8_t *dQ = nullptr;
    float *dS = nullptr;
    CHECK_CUDA(cudaMalloc(&dY, T * H * sizeof(__half)));
    CHECK_CUDA(cudaMalloc(&dQ, T * H));
    CHECK_CUDA(cudaMalloc(&dS, T * sizeof(float)));
    enc_cuda_args a = base;
    a.buffers[0] = upload(x);
    a.buffers[1] = upload(r);
    a.buffers[2] = dGamma;
    a.buffers[3] = dBeta;
    a.buffers[4] = dY;
    a.buffers[5] = dQ;
    a.buffers[6] = dS;
    a.fattrs[0] = eps;
    addLnQuantKernel<<<rowGrid, enc_cuda::kRowThreads>>>(a);
    CHECK_CUDA(cudaGetLastError());
    std::vector<__half> y = download(dY, T * H);
    std::vector<int8_t> q = download(dQ, T * H);
    std::vector<float> qs = download(dS, T);
    double err = 0, qerr = 0, serr = 0;
    for (int m = 0; m < T; ++m) {
      std::vector<double> v(H);
      for (int h = 0; h < H; ++h)
        v[h] = f(x[m * H + h]) + f(r[m * H + h]);
      layerNormRef(v, gamma, beta, eps);
      double amax = 0;
      for (int h = 0; h < H; ++h) {
        err = std::max(err, std::fabs(f(y[m * H + h]) - v[h]));
        amax = std::max(amax, std::fabs(v[h]));
      }
      serr = std::max(serr, std::fabs(qs[m] - amax / 127) / (amax / 127));
      for (int h = 0; h < H; ++h) // within one quantisation step
        qerr = std::max(qerr, std::fabs(q[m * H + h] * static_cast<double>(qs[m]) - v[h]) / qs[m]);
    }
    report("add+layernorm", err, 5e-3);
    report("add+layernorm int8 scale (relative)", serr, 1e-4);
    report("add+layernorm int8 values (steps)", qerr, 0.51);
  }

  { // dequantise + bias + GELU (erf)
    std::vector<int32_t> acc(T * N);
    std::uniform_int_distribution<int> ai(-200000, 200000);
    for (auto &v : acc)
      v = ai(rng);
    std::vector<float> xs(T), ws(N), bias(N);
    for (auto &s : xs)
      s = uni(rng) * 1e-2f;
    for (auto &s : ws)
      s = uni(rng) * 1e-3f;
    for (auto &s : bias)
      s = uni(rng) - 1.0f;
    __half *dOut = nullptr;
    CHECK_CUDA(cudaMalloc(&dOut, T * N * sizeof(__half)));
    CHECK_CUDA(cudaMemset(dOut, 0xff, T * N * sizeof(__half))); // NaN: unwritten fails
    enc_cuda_args a = base;
    a.buffers[0] = upload(acc);
    a.buffers[1] = upload(xs);
    a.buffers[2] = upload(ws);
    a.buffers[3] = upload(bias);
    a.buffers[4] = dOut;
    constexpr int perBlock = enc_cuda::kElemThreads * enc_cuda::elemVec<N>();
    dequantKernel<<<(T * N + perBlock - 1) / perBlock, enc_cuda::kElemThreads>>>(a);
    CHECK_CUDA(cudaGetLastError());
    std::vector<__half> got = download(dOut, T * N);
    double err = 0;
    for (int m = 0; m < T; ++m)
      for (int n = 0; n < N; ++n) {
        const double v = acc[m * N + n] * static_cast<double>(xs[m]) * ws[n] + bias[n];
        const double g = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        const double gotV = f(got[m * N + n]);
        err = std::isnan(gotV) ? INFINITY
                               : std::max(err, std::fabs(gotV - g) / std::max(1.0, std::fabs(g)));
      }
    report("dequantize+bias+gelu (relative)", err, 1e-3);
  }

  { // GELU (erf) after a GEMM's bias epilogue: 8 elements per thread
    std::vector<__half> x = halves(T * N, rng, 3.0f);
    __half *dOut = nullptr;
    CHECK_CUDA(cudaMalloc(&dOut, T * N * sizeof(__half)));
    CHECK_CUDA(cudaMemset(dOut, 0xff, T * N * sizeof(__half)));
    enc_cuda_args a = base;
    a.buffers[0] = upload(x);
    a.buffers[1] = dOut;
    constexpr int perBlock = enc_cuda::kElemThreads * enc_cuda::elemVec<N>();
    geluKernel<<<(T * N + perBlock - 1) / perBlock, enc_cuda::kElemThreads>>>(a);
    CHECK_CUDA(cudaGetLastError());
    std::vector<__half> got = download(dOut, T * N);
    double err = 0;
    for (int i = 0; i < T * N; ++i) {
      const double v = f(x[i]), g = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      const double gotV = f(got[i]);
      err = std::isnan(gotV) ? INFINITY : std::max(err, std::fabs(gotV - g) / std::max(1.0, std::fabs(g)));
    }
    report("gelu erf (relative)", err, 1e-3);
  }

  // An int8 GEMM's int32 rows, their scales and a bias, for the two fused
  // row kernels below.
  auto int8Result = [&](int n, std::vector<int32_t> &acc, std::vector<float> &xs,
                        std::vector<float> &ws, std::vector<float> &bias) {
    acc.resize(static_cast<size_t>(T) * n);
    std::uniform_int_distribution<int> ai(-200000, 200000);
    for (auto &v : acc)
      v = ai(rng);
    xs.resize(T);
    ws.resize(n);
    bias.resize(n);
    for (auto &v : xs)
      v = uni(rng) * 1e-2f;
    for (auto &v : ws)
      v = uni(rng) * 1e-3f;
    for (auto &v : bias)
      v = uni(rng) - 1.0f;
  };
  auto checkQuantRow = [&](const std::vector<double> &v, const int8_t *q, float qs, double &qerr,
                           double &serr) {
    double amax = 0;
    for (double x : v)
      amax = std::max(amax, std::fabs(x));
    if (!std::isfinite(qs)) { // unwritten (poisoned with NaN)
      serr = qerr = INFINITY;
      return;
    }
    serr = std::max(serr, std::fabs(qs - amax / 127) / (amax / 127));
    for (size_t i = 0; i < v.size(); ++i) // within one quantisation step
      qerr = std::max(qerr, std::fabs(q[i] * static_cast<double>(qs) - v[i]) / qs);
  };

  // qlinear + quantize: dequantise + bias + GELU, quantised per row; no float
  // rows. N = 1536: a block per row; H = 384: a warp per row.
  auto checkQlinearQuantize = [&](auto width) {
    constexpr int NN = decltype(width)::value;
    std::vector<int32_t> acc;
    std::vector<float> xs, ws, bias;
    int8Result(NN, acc, xs, ws, bias);
    int8_t *dQ = nullptr;
    float *dS = nullptr;
    CHECK_CUDA(cudaMalloc(&dQ, T * NN));
    CHECK_CUDA(cudaMalloc(&dS, T * sizeof(float)));
    CHECK_CUDA(cudaMemset(dS, 0xff, T * sizeof(float)));
    enc_cuda_args a = base;
    a.buffers[0] = upload(acc);
    a.buffers[1] = upload(xs);
    a.buffers[2] = upload(ws);
    a.buffers[3] = upload(bias);
    a.buffers[4] = dQ;
    a.buffers[5] = dS;
    constexpr int rows = enc_cuda::qlinearQuantizeRows<NN>();
    qlinearQuantizeKernel<NN><<<(T + rows - 1) / rows, enc_cuda::kRowThreads>>>(a);
    CHECK_CUDA(cudaGetLastError());
    std::vector<int8_t> q = download(dQ, T * NN);
    std::vector<float> qs = download(dS, T);
    double qerr = 0, serr = 0;
    for (int m = 0; m < T; ++m) {
      std::vector<double> v(NN);
      for (int n = 0; n < NN; ++n) {
        const double x = acc[m * NN + n] * static_cast<double>(xs[m]) * ws[n] + bias[n];
        v[n] = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
      }
      checkQuantRow(v, &q[m * NN], qs[m], qerr, serr);
    }
    const std::string what = "qlinear+quantize N=" + std::to_string(NN);
    report((what + " scale (rel.)").c_str(), serr, 1e-4);
    report((what + " values (steps)").c_str(), qerr, 0.51);
  };
  checkQlinearQuantize(std::integral_constant<int, N>());
  checkQlinearQuantize(std::integral_constant<int, H>());

  { // qlinear + add_layernorm + quantize: dequantise + bias + residual, LayerNorm, quantised
    std::vector<int32_t> acc;
    std::vector<float> xs, ws, bias;
    int8Result(H, acc, xs, ws, bias);
    std::vector<__half> r = halves(T * H, rng, 1.0f);
    __half *dY = nullptr;
    int8_t *dQ = nullptr;
    float *dS = nullptr;
    CHECK_CUDA(cudaMalloc(&dY, T * H * sizeof(__half)));
    CHECK_CUDA(cudaMemset(dY, 0xff, T * H * sizeof(__half)));
    CHECK_CUDA(cudaMalloc(&dQ, T * H));
    CHECK_CUDA(cudaMalloc(&dS, T * sizeof(float)));
    CHECK_CUDA(cudaMemset(dS, 0xff, T * sizeof(float)));
    enc_cuda_args a = base;
    a.buffers[0] = upload(acc);
    a.buffers[1] = upload(xs);
    a.buffers[2] = upload(ws);
    a.buffers[3] = upload(bias);
    a.buffers[4] = upload(r);
    a.buffers[5] = dGamma;
    a.buffers[6] = dBeta;
    a.buffers[7] = dY;
    a.buffers[8] = dQ;
    a.buffers[9] = dS;
    a.fattrs[0] = eps;
    qlinearAddLnKernel<<<rowGrid, enc_cuda::kRowThreads>>>(a);
    CHECK_CUDA(cudaGetLastError());
    std::vector<__half> y = download(dY, T * H);
    std::vector<int8_t> q = download(dQ, T * H);
    std::vector<float> qs = download(dS, T);
    double err = 0, qerr = 0, serr = 0;
    for (int m = 0; m < T; ++m) {
      std::vector<double> v(H);
      for (int h = 0; h < H; ++h)
        v[h] = acc[m * H + h] * static_cast<double>(xs[m]) * ws[h] + bias[h] + f(r[m * H + h]);
      layerNormRef(v, gamma, beta, eps);
      for (int h = 0; h < H; ++h) {
        const double got = f(y[m * H + h]);
        err = std::isnan(got) ? INFINITY : std::max(err, std::fabs(got - v[h]));
      }
      checkQuantRow(v, &q[m * H], qs[m], qerr, serr);
    }
    report("qlinear+add+layernorm", err, 5e-3);
    report("qlinear+add+layernorm int8 scale (rel.)", serr, 1e-4);
    report("qlinear+add+layernorm int8 values (steps)", qerr, 0.51);
  }

  for (int mode : {enc_cuda::kPoolMean, enc_cuda::kPoolCls}) { // pooling + L2 norm
    std::vector<__half> x = halves(T * H, rng, 1.0f);
    float *dOut = nullptr;
    CHECK_CUDA(cudaMalloc(&dOut, B * H * sizeof(float)));
    enc_cuda_args a = base;
    a.buffers[0] = upload(x);
    a.buffers[1] = dOut;
    if (mode == enc_cuda::kPoolMean)
      poolKernel<enc_cuda::kPoolMean><<<B, enc_cuda::kPoolThreads>>>(a);
    else
      poolKernel<enc_cuda::kPoolCls><<<B, enc_cuda::kPoolThreads>>>(a);
    CHECK_CUDA(cudaGetLastError());
    std::vector<float> got = download(dOut, B * H);
    double err = 0;
    for (int b = 0; b < B; ++b) {
      std::vector<double> v(H, 0.0);
      double sq = 0;
      for (int h = 0; h < H; ++h) {
        if (mode == enc_cuda::kPoolCls) {
          v[h] = f(x[offsets[b] * H + h]);
        } else {
          for (int t = 0; t < lengths[b]; ++t)
            v[h] += f(x[(offsets[b] + t) * H + h]);
          v[h] /= lengths[b];
        }
        sq += v[h] * v[h];
      }
      for (int h = 0; h < H; ++h)
        err = std::max(err, std::fabs(got[b * H + h] - v[h] / std::sqrt(sq)));
    }
    report(mode == enc_cuda::kPoolMean ? "pool mean+l2norm" : "pool cls+l2norm", err, 1e-5);
  }
  std::printf(ok ? "kernels_check: all kernels passed\n" : "kernels_check: FAILED\n");
  return ok ? 0 : 1;
}
