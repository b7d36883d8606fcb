//===- PlanEmulator.cpp - Runs a CUDA plan on the host (test only) --------===//
#include "tests/cuda/PlanEmulator.h"

#include "encrt/float16.h"
#include "compiler/codegen/cuda/CudaCodegen.h"
#include "encrt/cuda_kernel_abi.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace encc;

namespace {

bool startsWith(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string &s, const char *p) { return s.find(p) != std::string::npos; }

float geluErf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
float geluTanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

struct Emulator {
  const Plan &plan;
  const mlir::enc::WeightStore &weights;
  DType act;
  int64_t B, S, T;
  std::vector<int32_t> lengths, offsets;
  std::vector<std::vector<float>> buf;

  float round(float x) const {
    return act == DType::F16 ? encm_f16_to_f32(encm_f32_to_f16(x))
                             : encm_bf16_to_f32(encm_f32_to_bf16(x));
  }
  float store(DType t, float x) const { return t == DType::F16 || t == DType::BF16 ? round(x) : x; }
  int64_t numel(const PlanValue &v) const {
    int64_t n = 1;
    for (int64_t d : v.shape)
      n *= d == kDimBatch ? B : d == kDimSeq ? S : d == kDimTokens ? T : d;
    return n;
  }
  std::vector<float> &out(uint32_t id) {
    buf[id].assign(numel(plan.values[id]), 0.0f);
    return buf[id];
  }
  int64_t lastDim(uint32_t id) const { return plan.values[id].shape.back(); }

  void loadWeight(uint32_t id) {
    const PlanValue &v = plan.values[id];
    const mlir::enc::WeightTensor *t = weights.find(v.name);
    buf[id] = t->floats();
  }

  /// LayerNorm of row v in place; then y (rounded) and optional int8 q/qs.
  void normRow(std::vector<float> &v, const float *g, const float *b, float eps) {
    const int64_t H = v.size();
    float mean = 0, var = 0;
    for (float x : v)
      mean += x;
    mean /= H;
    for (float x : v)
      var += (x - mean) * (x - mean);
    const float rstd = 1.0f / std::sqrt(var / H + eps);
    for (int64_t h = 0; h < H; ++h)
      v[h] = (v[h] - mean) * rstd * g[h] + b[h];
  }
  void quantRow(const std::vector<float> &v, float *q, float *qs, float staticScale) {
    float scale = staticScale;
    if (!(scale > 0)) {
      float amax = 0;
      for (float x : v)
        amax = std::max(amax, std::fabs(x));
      scale = amax / 127.0f;
    }
    const float inv = scale > 0 ? 1.0f / scale : 0.0f;
    for (size_t k = 0; k < v.size(); ++k)
      q[k] = std::clamp(std::nearbyint(v[k] * inv), -127.0f, 127.0f);
    *qs = scale;
  }
  int seqOf(int64_t r) const {
    int b = 0;
    while (b + 1 < B && offsets[b + 1] <= r)
      ++b;
    return b;
  }

  std::string step(const PlanStep &s) {
    const size_t numIn = s.operands.size() - s.numResults;
    auto I = [&](size_t i) -> const std::vector<float> & { return buf[s.operands[i]]; };
    const uint32_t o0 = s.operands[numIn];
    const std::string &k = s.kernel;
    const float *fa = s.fattrs.data();
    if (k == ENC_CUDA_GEMM_KERNEL) {
      const int64_t N = s.iattrs[5], K = s.iattrs[6], epi = s.iattrs[7];
      const bool q8 = plan.values[s.operands[0]].dtype == DType::I8;
      std::vector<float> &y = out(o0);
      const std::vector<float> &x = I(0), &w = I(1);
      for (int64_t m = 0; m < T; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (int64_t kk = 0; kk < K; ++kk)
            acc += static_cast<double>(x[m * K + kk]) * w[n * K + kk];
          float v = static_cast<float>(acc);
          if (!q8) {
            if (epi >= 1)
              v += I(2)[n];
            if (epi == 2)
              v = geluTanh(v);
            v = round(v);
          }
          y[m * N + n] = v;
        }
      return "";
    }
    if (startsWith(k, "enc_cuda_embedding_")) {
      const bool typed = plan.values[s.operands[1]].dtype == DType::I32;
      size_t i = typed ? 2 : 1;
      const bool q8 = plan.values[s.operands[i]].dtype == DType::I8;
      const bool ln = contains(k, "_ln");
      const std::vector<float> &word = I(i++);
      const float *wscale = q8 ? I(i++).data() : nullptr;
      const std::vector<float> &pos = I(i++), &type = I(i++);
      const float *g = ln ? I(i++).data() : nullptr, *bt = ln ? I(i++).data() : nullptr;
      const int64_t H = lastDim(o0), offset = s.iattrs[5];
      std::vector<float> &y = out(o0);
      float *q = s.numResults == 3 ? out(s.operands[numIn + 1]).data() : nullptr;
      float *qs = s.numResults == 3 ? out(s.operands[numIn + 2]).data() : nullptr;
      for (int64_t r = 0; r < T; ++r) {
        const int b = seqOf(r);
        const int64_t sIdx = r - offsets[b];
        const int64_t id = static_cast<int64_t>(buf[plan.inputs[0]][b * S + sIdx]);
        const int64_t t = typed ? static_cast<int64_t>(I(1)[b * S + sIdx]) : 0;
        std::vector<float> v(H);
        for (int64_t h = 0; h < H; ++h)
          v[h] = word[id * H + h] * (wscale ? wscale[id] : 1.0f) + pos[(sIdx + offset) * H + h] +
                 type[t * H + h];
        if (ln)
          normRow(v, g, bt, fa[0]);
        for (int64_t h = 0; h < H; ++h)
          y[r * H + h] = round(v[h]);
        if (q)
          quantRow(v, q + r * H, qs + r, fa[1]);
      }
      return "";
    }
    if (startsWith(k, "enc_cuda_layernorm_") || startsWith(k, "enc_cuda_add_layernorm_")) {
      const bool res = startsWith(k, "enc_cuda_add_");
      const int64_t H = lastDim(o0);
      const float *g = I(res ? 2 : 1).data(), *bt = I(res ? 3 : 2).data();
      std::vector<float> &y = out(o0);
      float *q = s.numResults == 3 ? out(s.operands[numIn + 1]).data() : nullptr;
      float *qs = s.numResults == 3 ? out(s.operands[numIn + 2]).data() : nullptr;
      for (int64_t r = 0; r < T; ++r) {
        std::vector<float> v(H);
        for (int64_t h = 0; h < H; ++h)
          v[h] = I(0)[r * H + h] + (res ? I(1)[r * H + h] : 0.0f);
        normRow(v, g, bt, fa[0]);
        for (int64_t h = 0; h < H; ++h)
          y[r * H + h] = round(v[h]);
        if (q)
          quantRow(v, q + r * H, qs + r, fa[1]);
      }
      return "";
    }
    if (startsWith(k, "enc_cuda_quantize_")) {
      const int64_t K = lastDim(o0);
      float *q = out(o0).data(), *qs = out(s.operands[numIn + 1]).data();
      for (int64_t r = 0; r < T; ++r)
        quantRow(std::vector<float>(I(0).begin() + r * K, I(0).begin() + (r + 1) * K), q + r * K,
                 qs + r, fa[0]);
      return "";
    }
    if (startsWith(k, "enc_cuda_qlinear_quantize_") ||
        startsWith(k, "enc_cuda_qlinear_add_layernorm_")) {
      // int32 rows dequantised (+ epilogue) in fp32, then quantised, or added
      // to the residual, normalised (+ quantised); no float rows in between.
      const bool ln = startsWith(k, "enc_cuda_qlinear_add_layernorm_");
      const bool bias = numIn == (ln ? 7u : 4u);
      const int64_t N = lastDim(s.operands[0]);
      const uint32_t r = bias ? 4 : 3;
      float *q = ln ? (s.numResults == 3 ? out(s.operands[numIn + 1]).data() : nullptr)
                    : out(o0).data();
      float *qs = ln ? (s.numResults == 3 ? out(s.operands[numIn + 2]).data() : nullptr)
                     : out(s.operands[numIn + 1]).data();
      std::vector<float> *y = ln ? &out(o0) : nullptr;
      for (int64_t m = 0; m < T; ++m) {
        std::vector<float> v(N);
        for (int64_t n = 0; n < N; ++n) {
          v[n] = I(0)[m * N + n] * I(1)[m] * I(2)[n] + (bias ? I(3)[n] : 0.0f);
          if (contains(k, "_gelu_tanh"))
            v[n] = geluTanh(v[n]);
          else if (contains(k, "_gelu"))
            v[n] = geluErf(v[n]);
          if (ln)
            v[n] += I(r)[m * N + n];
        }
        if (ln) {
          normRow(v, I(r + 1).data(), I(r + 2).data(), fa[0]);
          for (int64_t n = 0; n < N; ++n)
            (*y)[m * N + n] = round(v[n]);
        }
        if (q)
          quantRow(v, q + m * N, qs + m, fa[ln ? 1 : 0]);
      }
      return "";
    }
    if (startsWith(k, "enc_cuda_dequantize_")) {
      const int64_t N = lastDim(o0);
      const bool bias = numIn == 4;
      std::vector<float> &y = out(o0);
      for (int64_t m = 0; m < T; ++m)
        for (int64_t n = 0; n < N; ++n) {
          float v = I(0)[m * N + n] * I(1)[m] * I(2)[n] + (bias ? I(3)[n] : 0.0f);
          if (contains(k, "_gelu_tanh"))
            v = geluTanh(v);
          else if (contains(k, "_gelu"))
            v = geluErf(v);
          y[m * N + n] = round(v);
        }
      return "";
    }
    if (startsWith(k, "enc_cuda_gelu_")) {
      const bool t = startsWith(k, "enc_cuda_gelu_tanh_");
      std::vector<float> &y = out(o0);
      for (size_t i = 0; i < y.size(); ++i)
        y[i] = round(t ? geluTanh(I(0)[i]) : geluErf(I(0)[i]));
      return "";
    }
    if (startsWith(k, "enc_cuda_attention_")) {
      const int64_t H = lastDim(o0), NH = s.iattrs[4], D = H / NH;
      const bool packed = numIn == 1;
      const int64_t ld = packed ? 3 * H : H;
      const float *qp = I(0).data(), *kp = packed ? qp + H : I(1).data(),
                  *vp = packed ? qp + 2 * H : I(2).data();
      std::vector<float> &y = out(o0);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < NH; ++h)
          for (int64_t i = 0; i < lengths[b]; ++i) {
            const int64_t len = lengths[b], base = offsets[b];
            std::vector<double> p(len);
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < len; ++j) {
              double d = 0;
              for (int64_t e = 0; e < D; ++e)
                d += static_cast<double>(qp[(base + i) * ld + h * D + e]) *
                     kp[(base + j) * ld + h * D + e];
              p[j] = d * fa[0];
              mx = std::max(mx, p[j]);
            }
            for (double &x : p)
              sum += (x = std::exp(x - mx));
            for (int64_t e = 0; e < D; ++e) {
              double acc = 0;
              for (int64_t j = 0; j < len; ++j)
                acc += p[j] * vp[(base + j) * ld + h * D + e];
              y[(base + i) * H + h * D + e] = round(static_cast<float>(acc / sum));
            }
          }
      return "";
    }
    if (startsWith(k, "enc_cuda_pool_")) {
      const int64_t H = lastDim(o0);
      const bool cls = startsWith(k, "enc_cuda_pool_cls"), norm = contains(k, "_l2norm_");
      std::vector<float> &y = out(o0);
      for (int64_t b = 0; b < B; ++b) {
        double sq = 0;
        for (int64_t h = 0; h < H; ++h) {
          float v = 0;
          if (cls) {
            v = I(0)[offsets[b] * H + h];
          } else {
            for (int64_t t = 0; t < lengths[b]; ++t)
              v += I(0)[(offsets[b] + t) * H + h];
            v /= lengths[b];
          }
          y[b * H + h] = v;
          sq += static_cast<double>(v) * v;
        }
        if (norm)
          for (int64_t h = 0; h < H; ++h)
            y[b * H + h] /= std::max(std::sqrt(sq), 1e-12);
      }
      return "";
    }
    if (startsWith(k, "enc_cuda_l2norm_")) {
      const int64_t H = lastDim(o0);
      std::vector<float> &y = out(o0);
      for (int64_t b = 0; b < B; ++b) {
        double sq = 0;
        for (int64_t h = 0; h < H; ++h)
          sq += static_cast<double>(I(0)[b * H + h]) * I(0)[b * H + h];
        for (int64_t h = 0; h < H; ++h)
          y[b * H + h] = I(0)[b * H + h] / std::max(std::sqrt(sq), 1e-12);
      }
      return "";
    }
    if (startsWith(k, "enc_cuda_to_f32_")) {
      out(o0) = I(0);
      return "";
    }
    if (startsWith(k, "enc_cuda_add_")) {
      std::vector<float> &y = out(o0);
      for (size_t i = 0; i < y.size(); ++i)
        y[i] = round(I(0)[i] + I(1)[i]);
      return "";
    }
    if (startsWith(k, "enc_cuda_scale_")) {
      std::vector<float> &y = out(o0);
      for (size_t i = 0; i < y.size(); ++i)
        y[i] = round(I(0)[i] * fa[0]);
      return "";
    }
    if (startsWith(k, "enc_cuda_split_")) {
      const int64_t N = lastDim(o0), P = s.numResults;
      for (int64_t p = 0; p < P; ++p) {
        std::vector<float> &y = out(s.operands[numIn + p]);
        for (int64_t m = 0; m < T; ++m)
          for (int64_t n = 0; n < N; ++n)
            y[m * N + n] = I(0)[m * P * N + p * N + n];
      }
      return "";
    }
    return "no emulation for kernel " + k;
  }
};

} // namespace

testing::EmulatedOutputs encc::testing::emulateCudaPlan(const Plan &plan,
                                                        const mlir::enc::WeightStore &weights,
                                                        DType act, const std::vector<int32_t> &ids,
                                                        const std::vector<int32_t> &typeIds,
                                                        const std::vector<int32_t> &lengths,
                                                        int64_t seq) {
  Emulator e{plan, weights, act, static_cast<int64_t>(lengths.size()), seq, 0, lengths, {}, {}};
  e.offsets.assign(e.B + 1, 0);
  for (int64_t b = 0; b < e.B; ++b)
    e.offsets[b + 1] = e.offsets[b] + lengths[b];
  e.T = e.offsets[e.B];
  e.buf.resize(plan.values.size());
  e.buf[plan.inputs[0]].assign(ids.begin(), ids.end());
  e.buf[plan.inputs[1]].assign(lengths.begin(), lengths.end());
  if (plan.inputs.size() > 2)
    e.buf[plan.inputs[2]].assign(typeIds.begin(), typeIds.end());
  for (uint32_t i = 0; i < plan.values.size(); ++i)
    if (plan.values[i].kind == ValueKind::Weight)
      e.loadWeight(i);
  EmulatedOutputs result;
  for (const PlanStep &s : plan.steps) {
    result.error = e.step(s);
    if (!result.error.empty())
      return result;
  }
  result.hidden = e.buf[plan.outputs[0]];
  if (plan.outputs.size() > 1)
    result.pooled = e.buf[plan.outputs[1]];
  return result;
}
