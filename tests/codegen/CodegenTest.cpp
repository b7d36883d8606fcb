//===- CodegenTest.cpp - enc IR -> plan + shared object, run and compared -===//
//
// Builds small encoder graphs as enc IR text (embedding, layernorm, attention
// with mask/softmax, FFN with gelu epilogues, pooling, l2norm; and the fused
// ops: split, attention, scale_mask_softmax, div, add_layernorm; without the
// unfused attention the plan is packed, [T, ...]), generates and
// compiles their CPU code, dlopens it, runs the plan with buffers allocated
// here (dead activations are poisoned with NaN right after their last step,
// so a wrong lifetime shows up as a wrong result) and compares with a
// double-precision loop implementation: |y - ref| <= 1e-4 + 1e-4 |ref| on
// valid tokens.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/cpu/CpuCodegen.h"
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "runtime/include/encrt/kernel_abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <random>
#include <set>

using namespace encc;
using mlir::enc::WeightStore;
using mlir::enc::WeightTensor;

namespace {

struct Cfg {
  int64_t V = 20, P = 16, H = 8, NH = 2, FF = 12, layers = 1;
  int64_t D() const { return H / NH; }
};

//===----------------------------------------------------------------------===//
// The graph, as enc IR text, and its weights
//===----------------------------------------------------------------------===//

std::string tensor(const std::string &dims) { return "tensor<" + dims + "xf32>"; }

/// The module; returns (hidden, l2norm(mean pool), gelu(cls pool)).
std::string moduleText(const Cfg &c) {
  const std::string H = std::to_string(c.H), FF = std::to_string(c.FF),
                    NH = std::to_string(c.NH), D = std::to_string(c.D());
  const std::string act = tensor("?x?x" + H), actF = tensor("?x?x" + FF),
                    heads = tensor("?x" + NH + "x?x" + D),
                    scores = tensor("?x" + NH + "x?x?"), vec = tensor(H);
  std::string s;
  int tmp = 0;
  auto w = [&](const std::string &name, const std::string &dims) {
    std::string v = "%w" + std::to_string(tmp++);
    s += "  " + v + " = enc.weight \"" + name + "\" : " + tensor(dims) + "\n";
    return v;
  };
  auto val = [&]() { return "%v" + std::to_string(tmp++); };
  auto ln = [&](const std::string &x, const std::string &p, const char *eps) {
    std::string g = w(p + ".g", H), b = w(p + ".b", H), r = val();
    s += "  " + r + " = enc.layernorm " + x + ", " + g + ", " + b +
         " {epsilon = " + eps + " : f32} : (" + act + ", " + vec + ", " + vec +
         ") -> " + act + "\n";
    return r;
  };
  auto linear = [&](const std::string &x, const std::string &p, int64_t k,
                    int64_t n, bool bias, const char *epi) {
    const std::string K = std::to_string(k), N = std::to_string(n);
    std::string wt = w(p + ".w", N + "x" + K), b = bias ? w(p + ".b", N) : "";
    std::string r = val();
    s += "  " + r + " = enc.linear " + x + ", " + wt + (bias ? ", " + b : "") +
         (epi ? std::string(" {epilogue = #enc.epilogue<") + epi + ">}" : "") + " : (" +
         tensor("?x?x" + K) + ", " + tensor(N + "x" + K) +
         (bias ? ", " + tensor(N) : "") + ") -> " + tensor("?x?x" + N) + "\n";
    return r;
  };
  auto unary = [&](const std::string &op, const std::string &x,
                   const std::string &attrs, const std::string &type) {
    std::string r = val();
    s += "  " + r + " = enc." + op + " " + x + attrs + " : " + type + "\n";
    return r;
  };

  s += "func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>) -> (" +
       act + ", " + tensor("?x" + H) + ", " + tensor("?x" + H) + ") {\n";
  std::string word = w("word", std::to_string(c.V) + "x" + H),
              pos = w("pos", std::to_string(c.P) + "x" + H), type = w("type", "2x" + H);
  std::string x = val();
  s += "  " + x + " = enc.embedding %ids, " + word + ", " + pos + ", " + type +
       " {position_offset = 1 : i64} : (tensor<?x?xi32>, " +
       tensor(std::to_string(c.V) + "x" + H) + ", " +
       tensor(std::to_string(c.P) + "x" + H) + ", " + tensor("2x" + H) +
       ") -> " + act + "\n";
  x = ln(x, "emb.ln", "1.0e-05");
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    std::string q = linear(x, p + "q", c.H, c.H, true, nullptr);
    std::string k = linear(x, p + "k", c.H, c.H, true, nullptr);
    std::string v = linear(x, p + "v", c.H, c.H, false, "gelu_tanh");
    auto split = [&](const std::string &t) {
      std::string r = val();
      s += "  " + r + " = enc.split_heads " + t + " {num_heads = " + NH +
           " : i64} : " + act + " -> " + heads + "\n";
      return r;
    };
    std::string qh = split(q), kh = split(k), vh = split(v);
    std::string sc = val();
    s += "  " + sc + " = enc.matmul " + qh + ", " + kh + " {transpose_b} : (" +
         heads + ", " + heads + ") -> " + scores + "\n";
    char factor[32];
    std::snprintf(factor, sizeof(factor), "%.9e", 1.0 / std::sqrt(double(c.D())));
    sc = unary("scale", sc, std::string(" {factor = ") + factor + " : f32}", scores);
    std::string m = val();
    s += "  " + m + " = enc.mask " + sc + ", %lengths : (" + scores +
         ", tensor<?xi32>) -> " + scores + "\n";
    std::string pr = unary("softmax", m, "", scores);
    std::string ctx = val();
    s += "  " + ctx + " = enc.matmul " + pr + ", " + vh + " : (" + scores + ", " +
         heads + ") -> " + heads + "\n";
    std::string merged = val();
    s += "  " + merged + " = enc.merge_heads " + ctx + " : " + heads + " -> " +
         act + "\n";
    std::string o = linear(merged, p + "o", c.H, c.H, true, nullptr);
    std::string r = val();
    s += "  " + r + " = enc.add " + o + ", " + x + " : " + act + "\n";
    std::string y = ln(r, p + "ln1", "9.99999996E-13");
    std::string h1 = linear(y, p + "ff1", c.H, c.FF, true, "gelu");
    std::string h2 = linear(h1, p + "ff2", c.FF, c.H, true, nullptr);
    std::string h3 = unary("gelu", h2, " {approximate = #enc.approximation<tanh>}", act);
    std::string r2 = val();
    s += "  " + r2 + " = enc.add " + h3 + ", " + y + " : " + act + "\n";
    x = ln(r2, p + "ln2", "9.99999996E-13");
  }
  std::string mean = val(), cls = val();
  s += "  " + mean + " = enc.pool " + x + ", %lengths {mode = #enc.pooling<mean>} : (" + act +
       ", tensor<?xi32>) -> " + tensor("?x" + H) + "\n";
  s += "  " + cls + " = enc.pool " + x + ", %lengths {mode = #enc.pooling<cls>} : (" + act +
       ", tensor<?xi32>) -> " + tensor("?x" + H) + "\n";
  std::string n = unary("l2norm", mean, "", tensor("?x" + H));
  std::string g = unary("gelu", cls, " {approximate = #enc.approximation<none>}", tensor("?x" + H));
  s += "  return " + x + ", " + n + ", " + g + " : " + act + ", " +
       tensor("?x" + H) + ", " + tensor("?x" + H) + "\n}\n";
  return s;
}

void addWeight(WeightStore &ws, const std::string &name,
               std::vector<int64_t> shape, std::mt19937 &rng, float lo,
               float hi) {
  WeightTensor t = WeightTensor::allocate(mlir::enc::WeightType::F32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableF32()[i] = d(rng);
  ws.set(name, std::move(t));
}

WeightStore makeWeights(const Cfg &c) {
  WeightStore ws;
  std::mt19937 rng(1234);
  auto ln = [&](const std::string &p) {
    addWeight(ws, p + ".g", {c.H}, rng, 0.8f, 1.2f);
    addWeight(ws, p + ".b", {c.H}, rng, -0.2f, 0.2f);
  };
  auto lin = [&](const std::string &p, int64_t k, int64_t n, bool bias) {
    const float a = 1.5f / std::sqrt(float(k));
    addWeight(ws, p + ".w", {n, k}, rng, -a, a);
    if (bias)
      addWeight(ws, p + ".b", {n}, rng, -0.3f, 0.3f);
  };
  addWeight(ws, "word", {c.V, c.H}, rng, -1, 1);
  addWeight(ws, "pos", {c.P, c.H}, rng, -1, 1);
  addWeight(ws, "type", {2, c.H}, rng, -1, 1);
  ln("emb.ln");
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    lin(p + "q", c.H, c.H, true);
    lin(p + "k", c.H, c.H, true);
    lin(p + "v", c.H, c.H, false);
    lin(p + "o", c.H, c.H, true);
    ln(p + "ln1");
    lin(p + "ff1", c.H, c.FF, true);
    lin(p + "ff2", c.FF, c.H, true);
    ln(p + "ln2");
  }
  return ws;
}

//===----------------------------------------------------------------------===//
// The double-precision reference
//===----------------------------------------------------------------------===//

using Mat = std::vector<double>; // row-major [rows, cols]

const float *W(const WeightStore &ws, const std::string &name) {
  const WeightTensor *t = ws.find(name);
  EXPECT_TRUE(t) << name;
  return t->f32();
}

Mat linearRef(const Mat &x, int64_t rows, int64_t k, int64_t n, const float *w,
              const float *b) {
  Mat y(rows * n);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = b ? b[j] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk)
        s += x[i * k + kk] * w[j * k + kk];
      y[i * n + j] = s;
    }
  return y;
}

Mat layerNormRef(const Mat &x, int64_t rows, int64_t h, const float *g,
                 const float *b, double eps) {
  Mat y(x.size());
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < h; ++j)
      mean += x[i * h + j] / h;
    for (int64_t j = 0; j < h; ++j)
      var += (x[i * h + j] - mean) * (x[i * h + j] - mean) / h;
    for (int64_t j = 0; j < h; ++j)
      y[i * h + j] = (x[i * h + j] - mean) / std::sqrt(var + eps) * g[j] + b[j];
  }
  return y;
}

double geluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

struct Outputs {
  Mat hidden, pooled, cls;
};

Outputs reference(const Cfg &c, const WeightStore &ws,
                  const std::vector<int32_t> &ids,
                  const std::vector<int32_t> &lengths, int64_t B, int64_t S) {
  const int64_t H = c.H, R = B * S, D = c.D();
  Mat x(R * H);
  for (int64_t t = 0; t < R; ++t)
    for (int64_t j = 0; j < H; ++j)
      x[t * H + j] = double(W(ws, "word")[ids[t] * H + j]) +
                     W(ws, "pos")[(t % S + 1) * H + j] + W(ws, "type")[j];
  x = layerNormRef(x, R, H, W(ws, "emb.ln.g"), W(ws, "emb.ln.b"), 1e-5);
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    Mat q = linearRef(x, R, H, H, W(ws, p + "q.w"), W(ws, p + "q.b"));
    Mat k = linearRef(x, R, H, H, W(ws, p + "k.w"), W(ws, p + "k.b"));
    Mat v = linearRef(x, R, H, H, W(ws, p + "v.w"), nullptr);
    for (double &e : v)
      e = geluTanh(e);
    Mat ctx(R * H, 0.0);
    const double scale = double(float(1.0 / std::sqrt(double(D))));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < c.NH; ++h)
        for (int64_t i = 0; i < S; ++i) {
          std::vector<double> sc(S);
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < lengths[b]; ++j) {
            double d = 0;
            for (int64_t e = 0; e < D; ++e)
              d += q[(b * S + i) * H + h * D + e] * k[(b * S + j) * H + h * D + e];
            sc[j] = d * scale;
            mx = std::max(mx, sc[j]);
          }
          for (int64_t j = 0; j < lengths[b]; ++j)
            sum += std::exp(sc[j] - mx);
          for (int64_t j = 0; j < lengths[b]; ++j)
            for (int64_t e = 0; e < D; ++e)
              ctx[(b * S + i) * H + h * D + e] +=
                  std::exp(sc[j] - mx) / sum * v[(b * S + j) * H + h * D + e];
        }
    Mat o = linearRef(ctx, R, H, H, W(ws, p + "o.w"), W(ws, p + "o.b"));
    for (int64_t e = 0; e < R * H; ++e)
      o[e] += x[e];
    Mat y = layerNormRef(o, R, H, W(ws, p + "ln1.g"), W(ws, p + "ln1.b"),
                         double(9.99999996E-13f));
    Mat h1 = linearRef(y, R, H, c.FF, W(ws, p + "ff1.w"), W(ws, p + "ff1.b"));
    for (double &e : h1)
      e = geluErf(e);
    Mat h2 = linearRef(h1, R, c.FF, H, W(ws, p + "ff2.w"), W(ws, p + "ff2.b"));
    for (int64_t e = 0; e < R * H; ++e)
      h2[e] = geluTanh(h2[e]) + y[e];
    x = layerNormRef(h2, R, H, W(ws, p + "ln2.g"), W(ws, p + "ln2.b"),
                     double(9.99999996E-13f));
  }
  Outputs out;
  out.hidden = x;
  out.pooled.assign(B * H, 0.0);
  out.cls.assign(B * H, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    double norm = 0;
    for (int64_t j = 0; j < H; ++j) {
      for (int64_t s = 0; s < lengths[b]; ++s)
        out.pooled[b * H + j] += x[(b * S + s) * H + j] / lengths[b];
      norm += out.pooled[b * H + j] * out.pooled[b * H + j];
      out.cls[b * H + j] = geluErf(x[b * S * H + j]);
    }
    for (int64_t j = 0; j < H; ++j)
      out.pooled[b * H + j] /= std::max(std::sqrt(norm), 1e-12);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Generating, building, loading and running
//===----------------------------------------------------------------------===//

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::enc::EncDialect>();
  auto ctx = std::make_unique<mlir::MLIRContext>(registry);
  ctx->loadAllAvailableDialects();
  return ctx;
}

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

std::string tempDir(const char *prefix) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory(prefix, dir));
  return std::string(dir);
}

struct Loaded {
  void *handle = nullptr;
  ~Loaded() {
    if (handle)
      dlclose(handle);
  }
};

void loadObject(const CodeObject &obj, const std::string &dir, Loaded &out) {
  const std::string path = dir + "/loaded.so";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(obj.bytes.data()), obj.bytes.size());
  out.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(out.handle, nullptr) << dlerror();
}

int64_t elems(const PlanValue &v, int64_t B, int64_t S, int64_t T) {
  int64_t n = 1;
  for (int64_t d : v.shape)
    n *= d == kDimBatch ? B : d == kDimSeq ? S : d == kDimTokens ? T : d;
  return n;
}

/// Runs the plan; returns the outputs in plan order, per-token outputs of a
/// packed plan ([kDimTokens, ...]) scattered to [B, S, ...] with zero padding.
std::vector<std::vector<float>>
runPlan(const Plan &plan, void *handle, const WeightStore &ws,
        std::vector<int32_t> ids, std::vector<int32_t> lengths, int64_t B,
        int64_t S, int32_t numTasks) {
  std::vector<int32_t> offsets(B + 1, 0);
  for (int64_t b = 0; b < B; ++b)
    offsets[b + 1] = offsets[b] + lengths[b];
  const int64_t T = offsets[B];
  std::vector<std::vector<float>> storage(plan.values.size());
  std::vector<void *> ptr(plan.values.size(), nullptr);
  std::vector<WeightTensor> held(plan.values.size()); // packed layouts, produced
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue &v = plan.values[i];
    if (v.kind == ValueKind::Weight)
      held[i] = ws.find(v.name)->read(), ptr[i] = const_cast<uint8_t *>(held[i].data());
    else if (v.kind == ValueKind::Activation || v.kind == ValueKind::Output) {
      storage[i].assign(elems(v, B, S, T), NAN);
      ptr[i] = storage[i].data();
    }
  }
  ptr[plan.inputs[0]] = ids.data();
  ptr[plan.inputs[1]] = lengths.data();
  for (size_t si = 0; si < plan.steps.size(); ++si) {
    const PlanStep &step = plan.steps[si];
    auto fn = reinterpret_cast<enc_kernel_fn>(dlsym(handle, step.kernel.c_str()));
    EXPECT_NE(fn, nullptr) << step.kernel;
    if (!fn)
      return {};
    std::vector<void *> bufs;
    for (uint32_t id : step.operands)
      bufs.push_back(ptr[id]);
    enc_step_ctx ctx{bufs.data(),        lengths.data(),
                     B,                  S,
                     step.iattrs.data(), int32_t(step.iattrs.size()),
                     step.fattrs.data(), int32_t(step.fattrs.size()),
                     offsets.data(),     T};
    for (int32_t t = numTasks - 1; t >= 0; --t)
      fn(&ctx, t, numTasks);
    // Poison what dies here: a too-short lifetime becomes a NaN downstream.
    for (size_t i = 0; i < plan.values.size(); ++i)
      if (plan.values[i].kind == ValueKind::Activation &&
          plan.values[i].lastStep == int32_t(si))
        std::fill(storage[i].begin(), storage[i].end(), NAN);
  }
  std::vector<std::vector<float>> outs;
  for (uint32_t id : plan.outputs) {
    const PlanValue &v = plan.values[id];
    if (v.shape.empty() || v.shape[0] != kDimTokens) {
      outs.push_back(storage[id]);
      continue;
    }
    const int64_t row = elems(v, B, S, T) / std::max<int64_t>(T, 1);
    std::vector<float> padded(B * S * row, 0.0f);
    for (int64_t b = 0; b < B; ++b)
      std::copy(storage[id].begin() + offsets[b] * row,
                storage[id].begin() + offsets[b + 1] * row,
                padded.begin() + b * S * row);
    outs.push_back(std::move(padded));
  }
  return outs;
}

void checkPlanInvariants(const Plan &plan, const WeightStore &ws) {
  const int32_t numSteps = plan.steps.size();
  ASSERT_EQ(plan.inputs.size(), 2u);
  for (uint32_t id : plan.inputs) {
    ASSERT_LT(id, plan.values.size());
    EXPECT_EQ(plan.values[id].kind, ValueKind::Input);
    EXPECT_EQ(plan.values[id].dtype, DType::I32);
  }
  EXPECT_EQ(plan.values[plan.inputs[0]].shape, (std::vector<int64_t>{kDimBatch, kDimSeq}));
  EXPECT_EQ(plan.values[plan.inputs[1]].shape, (std::vector<int64_t>{kDimBatch}));
  for (uint32_t id : plan.outputs) {
    ASSERT_LT(id, plan.values.size());
    EXPECT_EQ(plan.values[id].kind, ValueKind::Output);
    EXPECT_EQ(plan.values[id].lastStep, numSteps - 1);
  }
  std::vector<int> producers(plan.values.size(), 0);
  for (int32_t si = 0; si < numSteps; ++si) {
    const PlanStep &s = plan.steps[si];
    ASSERT_EQ(s.numResults, s.op == "enc.split" ? 3u : 1u) << s.op;
    ASSERT_GE(s.operands.size(), s.numResults + 1) << s.op;
    EXPECT_EQ(s.kernel.rfind("enc_", 0), 0u) << s.kernel;
    for (size_t k = 0; k < s.operands.size(); ++k) {
      const uint32_t id = s.operands[k];
      ASSERT_LT(id, plan.values.size());
      const PlanValue &v = plan.values[id];
      if (k + s.numResults >= s.operands.size()) {
        EXPECT_TRUE(v.kind == ValueKind::Activation || v.kind == ValueKind::Output);
        EXPECT_EQ(v.firstStep, si) << v.name;
        ++producers[id];
      } else if (v.kind == ValueKind::Activation || v.kind == ValueKind::Output) {
        EXPECT_LT(v.firstStep, si) << v.name << " read before written";
        EXPECT_GE(v.lastStep, si) << v.name << " read after its last step";
      }
    }
  }
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue &v = plan.values[i];
    if (v.kind == ValueKind::Activation || v.kind == ValueKind::Output) {
      EXPECT_EQ(producers[i], 1) << v.name;
      EXPECT_LE(v.firstStep, v.lastStep) << v.name;
    }
    if (v.kind == ValueKind::Weight) {
      ASSERT_TRUE(ws.find(v.name)) << v.name;
      EXPECT_EQ(ws.find(v.name)->shape, v.shape) << v.name;
    }
  }
}

void expectClose(const std::vector<float> &got, const Mat &want,
                 const std::vector<bool> &valid, const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << what << "[" << i << "] = " << got[i];
    if (valid[i])
      ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i]))
          << what << "[" << i << "]";
  }
}

struct Built {
  Cfg cfg;
  WeightStore weights;
  CpuCodegenResult code;
  CodeObject object;
  std::string dir;
  Loaded loaded;
  double buildSeconds = 0;
  ~Built() {
    if (loaded.handle)
      dlclose(loaded.handle);
    loaded.handle = nullptr;
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }
};

void buildGraph(const Cfg &c, CpuLevel level, Built &out) {
  out.cfg = c;
  out.weights = makeWeights(c);
  auto ctx = makeContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(moduleText(c), ctx.get());
  ASSERT_TRUE(module) << moduleText(c);
  auto code = generateCpuCode(*module, out.weights);
  ASSERT_TRUE(bool(code)) << errorText(code.takeError());
  out.code = std::move(*code);
  out.dir = tempDir("encc-codegen-test");
  auto t0 = std::chrono::steady_clock::now();
  auto obj = buildCpuCodeObject(out.code.source, level, out.dir);
  out.buildSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(bool(obj)) << errorText(obj.takeError());
  out.object = std::move(*obj);
  loadObject(out.object, out.dir, out.loaded);
}

void runAndCompare(Built &g, int64_t B, int64_t S, std::vector<int32_t> lengths,
                   int32_t numTasks) {
  SCOPED_TRACE("B=" + std::to_string(B) + " S=" + std::to_string(S) +
               " tasks=" + std::to_string(numTasks));
  std::mt19937 rng(99 + B * 31 + S);
  std::vector<int32_t> ids(B * S);
  for (auto &id : ids)
    id = std::uniform_int_distribution<int32_t>(0, g.cfg.V - 1)(rng);
  auto outs = runPlan(g.code.plan, g.loaded.handle, g.weights, ids, lengths, B,
                      S, numTasks);
  ASSERT_EQ(outs.size(), 3u);
  Outputs ref = reference(g.cfg, g.weights, ids, lengths, B, S);
  std::vector<bool> validTok(B * S * g.cfg.H), all(B * g.cfg.H, true);
  for (int64_t i = 0; i < B * S * g.cfg.H; ++i)
    validTok[i] = (i / g.cfg.H) % S < lengths[(i / g.cfg.H) / S];
  expectClose(outs[0], ref.hidden, validTok, "hidden");
  expectClose(outs[1], ref.pooled, all, "pooled");
  expectClose(outs[2], ref.cls, all, "cls");
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

class SmallGraph : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    built_ = new Built();
    buildGraph(Cfg(), CpuLevel::X86_64_V3, *built_);
  }
  static void TearDownTestSuite() {
    delete built_;
    built_ = nullptr;
  }
  static Built *built_;
};
Built *SmallGraph::built_ = nullptr;

TEST_F(SmallGraph, PlanInvariants) {
  ASSERT_TRUE(built_->loaded.handle);
  const Plan &plan = built_->code.plan;
  checkPlanInvariants(plan, built_->weights);
  ASSERT_EQ(plan.outputs.size(), 3u);
  // q/k/o share enc_linear_f32_BxS_k8_n8; the split_heads share one symbol.
  std::set<std::string> symbols;
  for (const PlanStep &s : plan.steps)
    symbols.insert(s.kernel);
  EXPECT_LT(symbols.size(), plan.steps.size());
  EXPECT_TRUE(symbols.count("enc_linear_f32_BxS_k8_n8"));
  EXPECT_TRUE(symbols.count("enc_linear_f32_BxS_k8_n8_nobias_gelutanh"));
  EXPECT_TRUE(symbols.count("enc_linear_f32_BxS_k8_n12_gelu"));
  EXPECT_TRUE(symbols.count("enc_matmul_nt_f32_Bx2xSx4_Bx2xSx4"));
  EXPECT_TRUE(symbols.count("enc_softmax_f32_Bx2xSxS"));
  // Attributes travel in the steps.
  for (const PlanStep &s : plan.steps) {
    if (s.op == "enc.scale") {
      ASSERT_EQ(s.fattrs.size(), 1u);
      EXPECT_FLOAT_EQ(s.fattrs[0], 0.5f);
    }
    if (s.op == "enc.embedding") {
      EXPECT_EQ(s.iattrs, (std::vector<int64_t>{1, -1})); // position offset, no position_pad_id
      EXPECT_EQ(s.operands.size(), 5u);
    }
    // Linears read only their weight as packed at compile time
    // (enc_sgemm.h): 16-column panels, [ceil(N/16), K, 16].
    if (s.op == "enc.linear") {
      const PlanValue &w = plan.values[s.operands[1]];
      EXPECT_EQ(w.kind, ValueKind::Weight);
      EXPECT_TRUE(llvm::StringRef(w.name).ends_with(".sgemm")) << w.name;
      ASSERT_EQ(w.shape.size(), 3u) << w.name;
      EXPECT_EQ(w.shape[2], 16) << w.name;
      const std::string raw = w.name.substr(0, w.name.size() - 6);
      for (const PlanValue &v : plan.values)
        EXPECT_NE(v.name, raw) << "the unpacked weight is in the plan too";
    }
    if (s.op == "enc.layernorm")
      ASSERT_EQ(s.fattrs.size(), 1u);
  }
}

TEST_F(SmallGraph, CodeObject) {
  const CodeObject &obj = built_->object;
  EXPECT_EQ(obj.target, "cpu-x86-64-v3");
  EXPECT_NE(std::find(obj.features.begin(), obj.features.end(), "avx2"),
            obj.features.end());
  ASSERT_GT(obj.bytes.size(), 4u);
  EXPECT_EQ(std::string(obj.bytes.begin(), obj.bytes.begin() + 4), "\x7f" "ELF");
  ASSERT_TRUE(built_->loaded.handle);
  const auto *info = static_cast<const enc_code_info_t *>(
      dlsym(built_->loaded.handle, "enc_code_info"));
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->abi_version, uint32_t(ENC_KERNEL_ABI_VERSION));
  EXPECT_STREQ(info->target, "cpu-x86-64-v3");
  // One contract per distinct kernel, each exactly its steps' operands.
  std::set<std::string> kernels;
  for (const PlanStep &s : built_->code.plan.steps)
    kernels.insert(s.kernel);
  ASSERT_EQ(info->num_kernels, kernels.size());
  for (const PlanStep &s : built_->code.plan.steps) {
    const enc_kernel_contract *c = nullptr;
    for (uint32_t k = 0; k < info->num_kernels; ++k)
      if (s.kernel == info->kernels[k].name)
        c = &info->kernels[k];
    ASSERT_NE(c, nullptr) << s.kernel;
    std::vector<int64_t> expected = {int64_t(s.operands.size()), s.numResults,
                                     int64_t(s.iattrs.size()), int64_t(s.fattrs.size())};
    expected.insert(expected.end(), s.iattrs.begin(), s.iattrs.end());
    for (uint32_t id : s.operands) {
      const PlanValue &v = built_->code.plan.values[id];
      expected.push_back(int64_t(v.dtype));
      expected.push_back(int64_t(v.shape.size()));
      expected.insert(expected.end(), v.shape.begin(), v.shape.end());
    }
    EXPECT_EQ(std::vector<int64_t>(c->signature, c->signature + c->signature_len), expected)
        << s.kernel;
  }
  // Linked without start files: nothing runs when the object is loaded.
  EXPECT_EQ(dlsym(built_->loaded.handle, "_init"), nullptr);
  // Kernel internals stay hidden.
  EXPECT_EQ(dlsym(built_->loaded.handle, "fattr"), nullptr);
}

TEST_F(SmallGraph, MatchesReference) {
  ASSERT_TRUE(built_->loaded.handle);
  for (int32_t tasks : {1, 3}) {
    runAndCompare(*built_, 3, 5, {5, 2, 1}, tasks);
    runAndCompare(*built_, 1, 1, {1}, tasks);
    runAndCompare(*built_, 2, 14, {14, 9}, tasks);
  }
}

TEST(CpuCodegen, OtherLevelsBuildAndRun) {
  // v2 lowers the 8-lane vectors to SSE; v4 uses AVX-512 where present.
  for (CpuLevel level : {CpuLevel::X86_64_V2, CpuLevel::X86_64_V4}) {
    if (level == CpuLevel::X86_64_V4 && !__builtin_cpu_supports("avx512f"))
      continue;
    Built g;
    buildGraph(Cfg(), level, g);
    ASSERT_TRUE(g.loaded.handle);
    EXPECT_EQ(g.object.target, "cpu-" + cpuLevelName(level));
    runAndCompare(g, 2, 6, {6, 3}, 2);
  }
}

TEST(CpuCodegen, BertLayerSizedGraph) {
  // MiniLM dims (H 384, 12 heads, FF 1536), two layers: the second layer
  // adds steps but no new kernel symbols.
  Cfg c;
  c.V = 100;
  c.P = 64;
  c.H = 384;
  c.NH = 12;
  c.FF = 1536;
  c.layers = 2;
  Built g;
  buildGraph(c, CpuLevel::X86_64_V3, g);
  ASSERT_TRUE(g.loaded.handle);
  std::set<std::string> symbols;
  for (const PlanStep &s : g.code.plan.steps)
    symbols.insert(s.kernel);
  std::cout << "[ timing ] BERT-layer graph: " << g.code.plan.steps.size()
            << " steps, " << symbols.size() << " kernel symbols, "
            << g.code.source.size() << " bytes of source, buildCpuCodeObject "
            << g.buildSeconds << " s, .so " << g.object.bytes.size()
            << " bytes\n";
  // Same symbols as the one-layer graph: instantiated per shape, not per layer.
  Cfg one = c;
  one.layers = 1;
  WeightStore oneWeights = makeWeights(one);
  auto ctx = makeContext();
  auto oneModule = mlir::parseSourceString<mlir::ModuleOp>(moduleText(one), ctx.get());
  ASSERT_TRUE(oneModule);
  auto oneCode = generateCpuCode(*oneModule, oneWeights);
  ASSERT_TRUE(bool(oneCode)) << errorText(oneCode.takeError());
  std::set<std::string> oneSymbols;
  for (const PlanStep &s : oneCode->plan.steps)
    oneSymbols.insert(s.kernel);
  EXPECT_EQ(symbols, oneSymbols);
  EXPECT_EQ(oneCode->source, g.code.source);
  checkPlanInvariants(g.code.plan, g.weights);
  runAndCompare(g, 2, 9, {9, 4}, 4);
}

//===----------------------------------------------------------------------===//
// The fused ops: split, attention (both forms), scale_mask_softmax, div,
// add_layernorm
//===----------------------------------------------------------------------===//

struct FusedCfg {
  int64_t V = 20, P = 80, H = 8, NH = 2;
  int64_t D() const { return H / NH; }
};

constexpr float kFusedDivisor = 3.0f;

/// qkv = linear(embedding); q, k, v = split(qkv);
/// a = attention(q, k, v); ap = attention(qkv);
/// m = merge_heads(scale_mask_softmax(split_heads(q) · split_heads(k)ᵀ)
///                 · split_heads(v));
/// returns (add_layernorm(m, div(ap, 3)), a, m). Without `unfused` (no
/// split_heads / matmul / scale_mask_softmax, so the plan is packed) m is a
/// and the third result is ap.
std::string fusedModuleText(const FusedCfg &c, bool unfused = true) {
  const std::string H = std::to_string(c.H), H3 = std::to_string(3 * c.H),
                    NH = std::to_string(c.NH), D = std::to_string(c.D()),
                    V = std::to_string(c.V), P = std::to_string(c.P);
  const std::string act = tensor("?x?x" + H), act3 = tensor("?x?x" + H3),
                    heads = tensor("?x" + NH + "x?x" + D),
                    scores = tensor("?x" + NH + "x?x?"), lens = "tensor<?xi32>";
  char scale[32];
  std::snprintf(scale, sizeof(scale), "%.9e", 1.0 / std::sqrt(double(c.D())));
  const std::string attnAttrs = " {num_heads = " + NH +
                                " : i64, padding = #enc.padding<right>, scale = " +
                                scale + " : f32}";
  std::string s;
  s += "func.func @forward(%ids: tensor<?x?xi32>, %lengths: " + lens +
       ") -> (" + act + ", " + act + ", " + act + ") {\n";
  s += "  %word = enc.weight \"word\" : " + tensor(V + "x" + H) + "\n";
  s += "  %pos = enc.weight \"pos\" : " + tensor(P + "x" + H) + "\n";
  s += "  %type = enc.weight \"type\" : " + tensor("2x" + H) + "\n";
  s += "  %x = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : "
       "i64} : (tensor<?x?xi32>, " + tensor(V + "x" + H) + ", " +
       tensor(P + "x" + H) + ", " + tensor("2x" + H) + ") -> " + act + "\n";
  s += "  %wqkv = enc.weight \"qkv.w\" : " + tensor(H3 + "x" + H) + "\n";
  s += "  %bqkv = enc.weight \"qkv.b\" : " + tensor(H3) + "\n";
  s += "  %qkv = enc.linear %x, %wqkv, %bqkv : (" + act + ", " +
       tensor(H3 + "x" + H) + ", " + tensor(H3) + ") -> " + act3 + "\n";
  s += "  %q, %k, %v = enc.split %qkv {parts = 3 : i64} : " + act3 + " -> (" +
       act + ", " + act + ", " + act + ")\n";
  s += "  %a = enc.attention %q, %k, %v, %lengths" + attnAttrs + " : (" + act +
       ", " + act + ", " + act + ", " + lens + ") -> " + act + "\n";
  s += "  %ap = enc.attention %qkv, %lengths" + attnAttrs + " : (" + act3 +
       ", " + lens + ") -> " + act + "\n";
  for (const char *t : {"q", "k", "v"})
    if (unfused)
      s += std::string("  %") + t + "h = enc.split_heads %" + t +
         " {num_heads = " + NH + " : i64} : " + act + " -> " + heads + "\n";
  if (unfused) {
    s += "  %s = enc.matmul %qh, %kh {transpose_b} : (" + heads + ", " + heads +
         ") -> " + scores + "\n";
    s += "  %p = enc.scale_mask_softmax %s, %lengths {padding = #enc.padding<right>, "
         "scale = " + std::string(scale) + " : f32} : (" + scores + ", " + lens +
         ") -> " + scores + "\n";
    s += "  %c = enc.matmul %p, %vh : (" + scores + ", " + heads + ") -> " +
         heads + "\n";
    s += "  %m = enc.merge_heads %c : " + heads + " -> " + act + "\n";
  }
  const std::string m = unfused ? "%m" : "%a";
  s += "  %d = enc.div %ap {divisor = 3.0 : f32} : " + act + "\n";
  s += "  %g = enc.weight \"ln.g\" : " + tensor(H) + "\n";
  s += "  %b = enc.weight \"ln.b\" : " + tensor(H) + "\n";
  s += "  %y = enc.add_layernorm " + m + ", %d, %g, %b {epsilon = 1.0e-05 : f32} : (" +
       act + ", " + act + ", " + tensor(H) + ", " + tensor(H) + ") -> " + act +
       "\n";
  s += std::string("  return %y, %a, ") + (unfused ? "%m" : "%ap") + " : " + act + ", " +
       act + ", " + act + "\n}\n";
  return s;
}

WeightStore fusedWeights(const FusedCfg &c) {
  WeightStore ws;
  std::mt19937 rng(4321);
  addWeight(ws, "word", {c.V, c.H}, rng, -1, 1);
  addWeight(ws, "pos", {c.P, c.H}, rng, -1, 1);
  addWeight(ws, "type", {2, c.H}, rng, -1, 1);
  const float a = 2.0f / std::sqrt(float(c.H));
  addWeight(ws, "qkv.w", {3 * c.H, c.H}, rng, -a, a);
  addWeight(ws, "qkv.b", {3 * c.H}, rng, -0.3f, 0.3f);
  addWeight(ws, "ln.g", {c.H}, rng, 0.8f, 1.2f);
  addWeight(ws, "ln.b", {c.H}, rng, -0.2f, 0.2f);
  return ws;
}

/// (y, attention) in double precision; all rows, padded queries included.
std::pair<Mat, Mat> fusedReference(const FusedCfg &c, const WeightStore &ws,
                                   const std::vector<int32_t> &ids,
                                   const std::vector<int32_t> &lengths,
                                   int64_t B, int64_t S) {
  const int64_t H = c.H, R = B * S, D = c.D();
  Mat x(R * H);
  for (int64_t t = 0; t < R; ++t)
    for (int64_t j = 0; j < H; ++j)
      x[t * H + j] = double(W(ws, "word")[ids[t] * H + j]) +
                     W(ws, "pos")[(t % S) * H + j] + W(ws, "type")[j];
  Mat qkv = linearRef(x, R, H, 3 * H, W(ws, "qkv.w"), W(ws, "qkv.b"));
  auto at = [&](int64_t tok, int part, int64_t col) {
    return qkv[tok * 3 * H + part * H + col];
  };
  const double scale = double(float(1.0 / std::sqrt(double(D))));
  Mat attn(R * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < c.NH; ++h)
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> sc(lengths[b]);
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < lengths[b]; ++j) {
          double d = 0;
          for (int64_t e = 0; e < D; ++e)
            d += at(b * S + i, 0, h * D + e) * at(b * S + j, 1, h * D + e);
          sc[j] = d * scale;
          mx = std::max(mx, sc[j]);
        }
        for (int64_t j = 0; j < lengths[b]; ++j)
          sum += std::exp(sc[j] - mx);
        for (int64_t j = 0; j < lengths[b]; ++j)
          for (int64_t e = 0; e < D; ++e)
            attn[(b * S + i) * H + h * D + e] +=
                std::exp(sc[j] - mx) / sum * at(b * S + j, 2, h * D + e);
      }
  Mat sum(R * H);
  for (int64_t e = 0; e < R * H; ++e)
    sum[e] = attn[e] + attn[e] / kFusedDivisor;
  Mat y = layerNormRef(sum, R, H, W(ws, "ln.g"), W(ws, "ln.b"),
                       double(1.0e-05f));
  return {y, attn};
}

/// `unfused`: the graph with the unfused attention branch (a padded plan);
/// else without it, a packed plan.
void checkFusedGraph(const FusedCfg &c, CpuLevel level, bool unfused = true) {
  SCOPED_TRACE("H=" + std::to_string(c.H) + " NH=" + std::to_string(c.NH) +
               " " + cpuLevelName(level) + (unfused ? " padded" : " packed"));
  WeightStore ws = fusedWeights(c);
  auto ctx = makeContext();
  const std::string text = fusedModuleText(c, unfused);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, ctx.get());
  ASSERT_TRUE(module) << text;
  auto code = generateCpuCode(*module, ws);
  ASSERT_TRUE(bool(code)) << errorText(code.takeError());
  const Plan &plan = code->plan;
  checkPlanInvariants(plan, ws);
  EXPECT_EQ(code->packed, !unfused);
  // Packed: every per-token value is [T, ...]; padded: [B, S, ...].
  const std::vector<int64_t> tokenDims =
      unfused ? std::vector<int64_t>{kDimBatch, kDimSeq} : std::vector<int64_t>{kDimTokens};
  for (uint32_t id : plan.outputs) {
    std::vector<int64_t> want = tokenDims;
    want.push_back(c.H);
    EXPECT_EQ(plan.values[id].shape, want) << plan.values[id].name;
  }

  // Symbols, attributes and the three-result split step.
  const std::string H = std::to_string(c.H), NH = std::to_string(c.NH);
  const std::string tok = unfused ? "BxS" : "T";
  std::set<std::string> symbols;
  for (const PlanStep &st : plan.steps) {
    symbols.insert(st.kernel);
    if (st.op == "enc.attention") {
      ASSERT_EQ(st.fattrs.size(), 1u);
      EXPECT_FLOAT_EQ(st.fattrs[0], float(1.0 / std::sqrt(double(c.D()))));
    }
    if (st.op == "enc.scale_mask_softmax") {
      ASSERT_EQ(st.fattrs.size(), 1u);
      EXPECT_FLOAT_EQ(st.fattrs[0], float(1.0 / std::sqrt(double(c.D()))));
      EXPECT_EQ(st.operands.size(), 3u);
    }
    if (st.op == "enc.div")
      EXPECT_EQ(st.fattrs, (std::vector<float>{kFusedDivisor}));
    if (st.op == "enc.add_layernorm") {
      EXPECT_EQ(st.fattrs, (std::vector<float>{1.0e-05f}));
      EXPECT_EQ(st.operands.size(), 5u);
    }
    if (st.op == "enc.split") {
      EXPECT_EQ(st.numResults, 3u);
      ASSERT_EQ(st.operands.size(), 4u);
      for (int i = 1; i <= 3; ++i) {
        std::vector<int64_t> want = tokenDims;
        want.push_back(c.H);
        EXPECT_EQ(plan.values[st.operands[i]].shape, want);
      }
    }
  }
  std::vector<std::string> wantSymbols = {
      "enc_split_f32_" + tok + "x" + std::to_string(3 * c.H) + "_p3",
      "enc_attention_f32_" + tok + "x" + H + "_h" + NH,
      "enc_attention_packed_f32_" + tok + "x" + H + "_h" + NH,
      "enc_div_f32_" + tok + "x" + H, "enc_add_layernorm_f32_" + tok + "x" + H};
  if (unfused)
    wantSymbols.push_back("enc_scale_mask_softmax_f32_Bx" + NH + "xSxS");
  for (const std::string &sym : wantSymbols)
    EXPECT_TRUE(symbols.count(sym)) << sym << " in\n" << code->source;

  const std::string dir = tempDir("encc-codegen-fused");
  auto obj = buildCpuCodeObject(code->source, level, dir);
  ASSERT_TRUE(bool(obj)) << errorText(obj.takeError());
  Loaded loaded;
  loadObject(*obj, dir, loaded);
  ASSERT_TRUE(loaded.handle);

  struct Run {
    int64_t B, S;
    std::vector<int32_t> lengths;
  };
  for (const Run &run : {Run{3, 5, {5, 2, 1}}, Run{1, 1, {1}},
                         Run{2, 20, {20, 9}}, Run{2, 70, {33, 70}}})
    for (int32_t tasks : {1, 3}) {
      SCOPED_TRACE("B=" + std::to_string(run.B) + " S=" +
                   std::to_string(run.S) + " tasks=" + std::to_string(tasks));
      std::mt19937 rng(7 + run.B * 31 + run.S);
      std::vector<int32_t> ids(run.B * run.S);
      for (auto &id : ids)
        id = std::uniform_int_distribution<int32_t>(0, c.V - 1)(rng);
      auto outs = runPlan(plan, loaded.handle, ws, ids, run.lengths, run.B,
                          run.S, tasks);
      ASSERT_EQ(outs.size(), 3u);
      auto [y, attn] = fusedReference(c, ws, ids, run.lengths, run.B, run.S);
      std::vector<bool> valid(run.B * run.S * c.H);
      for (size_t i = 0; i < valid.size(); ++i)
        valid[i] = int64_t(i / c.H) % run.S < run.lengths[(i / c.H) / run.S];
      expectClose(outs[0], y, valid, "add_layernorm(m, div(attention(qkv)))");
      expectClose(outs[1], attn, valid, "attention(q, k, v)");
      expectClose(outs[2], attn, valid,
                  unfused ? "merge_heads(sms(...) . v)" : "attention(qkv)");
      if (!unfused) // packed outputs are scattered with zero padding rows
        for (size_t i = 0; i < valid.size(); ++i)
          if (!valid[i])
            ASSERT_EQ(outs[0][i], 0.0f) << i;
    }
  llvm::sys::fs::remove_directories(dir);
}

TEST(CpuCodegenFused, SmallHeads) {
  checkFusedGraph(FusedCfg{}, CpuLevel::X86_64_V3);
}

TEST(CpuCodegenFused, HeadDim32) {
  FusedCfg c;
  c.H = 64;
  c.NH = 2;
  checkFusedGraph(c, CpuLevel::X86_64_V3);
  checkFusedGraph(c, CpuLevel::X86_64_V2); // 8-lane vectors as SSE pairs
}

TEST(CpuCodegenFused, PackedPlan) {
  checkFusedGraph(FusedCfg{}, CpuLevel::X86_64_V3, /*unfused=*/false);
  FusedCfg c;
  c.H = 64;
  c.NH = 2;
  checkFusedGraph(c, CpuLevel::X86_64_V3, /*unfused=*/false);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

std::string generateError(const std::string &text, WeightStore ws,
                          bool unregistered = false) {
  auto ctx = makeContext();
  ctx->allowUnregisteredDialects(unregistered);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, ctx.get());
  EXPECT_TRUE(module);
  if (!module)
    return "";
  auto code = generateCpuCode(*module, ws);
  EXPECT_FALSE(bool(code));
  return code ? "" : errorText(code.takeError());
}

const char *kOneLinear = R"(
func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>) -> tensor<?x?x4xf32> {
  %w = enc.weight "emb" : tensor<10x4xf32>
  %p = enc.weight "pos" : tensor<8x4xf32>
  %t = enc.weight "type" : tensor<2x4xf32>
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x4xf32>, tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<?x?x4xf32>
  %lw = enc.weight "lin" : tensor<4x4xf32>
  %y = enc.linear %e, %lw : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}
)";

/// The CPU code of the module `text`, with random weights of the given
/// names and shapes (drawn from `seed`).
llvm::Expected<CpuCodegenResult>
generateFrom(const char *text, const std::vector<std::pair<std::string, std::vector<int64_t>>> &weights,
             uint32_t seed) {
  auto ctx = makeContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, ctx.get());
  if (!module)
    return llvm::createStringError("the test module does not parse");
  WeightStore ws;
  std::mt19937 rng(seed);
  for (const auto &[name, shape] : weights)
    addWeight(ws, name, shape, rng, -1, 1);
  return generateCpuCode(*module, ws);
}

TEST(CpuCodegen, RotaryAndGatedLinearUnitAreOneRowwiseStepEach) {
  // enc.rotary and enc.glu lower to one packed-capable step each, theta a
  // float attribute (their numbers: KernelsTest's KernelRotary and
  // GatedLinearUnits against double loops).
  const char *text = R"(
func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>) -> tensor<?x?x4xf32> {
  %w = enc.weight "emb" : tensor<10x4xf32>
  %p = enc.weight "pos" : tensor<8x4xf32>
  %t = enc.weight "type" : tensor<2x4xf32>
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x4xf32>, tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<?x?x4xf32>
  %lw = enc.weight "lin" : tensor<8x4xf32>
  %h = enc.linear %e, %lw : (tensor<?x?x4xf32>, tensor<8x4xf32>) -> tensor<?x?x8xf32>
  %r = enc.rotary %h {layout = #enc.rotary<half>, num_heads = 2 : i64, rotary_dim = 4 : i64, theta = 1.6e5 : f32} : tensor<?x?x8xf32>
  %y = enc.glu %r {kind = #enc.glu<swiglu>} : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}
)";
  auto code = generateFrom(text, {{"emb", {10, 4}}, {"pos", {8, 4}}, {"type", {2, 4}}, {"lin", {8, 4}}}, 3);
  ASSERT_TRUE(bool(code)) << errorText(code.takeError());
  EXPECT_TRUE(code->packed);
  ASSERT_EQ(code->plan.steps.size(), 4u);
  EXPECT_EQ(code->plan.steps[2].op, "enc.rotary");
  EXPECT_EQ(code->plan.steps[2].fattrs, std::vector<float>{160000.0f});
  EXPECT_NE(code->source.find("enc_kernels::rotaryPacked<2, 4, 4, enc_kernels::kRotaryHalf>"), std::string::npos);
  EXPECT_EQ(code->plan.steps[3].op, "enc.glu");
  EXPECT_EQ(code->plan.steps[3].kernel.rfind("enc_glu_swiglu_f32_", 0), 0u) << code->plan.steps[3].kernel;
  // The generated calls compile against the kernel headers.
  auto object = buildCpuCodeObject(code->source, CpuLevel::X86_64_V2, tempDir("encc-rotary-glu"));
  ASSERT_TRUE(bool(object)) << errorText(object.takeError());
  EXPECT_GT(object->bytes.size(), 1000u);
  EXPECT_NE(code->source.find("enc_kernels::glu<4, enc_kernels::kSwiglu>"), std::string::npos);
}

TEST(CpuCodegen, SlidingWindowAttentionPassesItsBand) {
  // enc.attention {window} lowers to the attention kernel with the band (its
  // numbers: PackedKernelsTest's SlidingWindowAttention against a double loop).
  const char *text = R"(
func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>) -> tensor<?x?x16xf32> {
  %w = enc.weight "emb" : tensor<10x16xf32>
  %p = enc.weight "pos" : tensor<8x16xf32>
  %t = enc.weight "type" : tensor<2x16xf32>
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x16xf32>, tensor<8x16xf32>, tensor<2x16xf32>) -> tensor<?x?x16xf32>
  %lw = enc.weight "qkv" : tensor<48x16xf32>
  %qkv = enc.linear %e, %lw : (tensor<?x?x16xf32>, tensor<48x16xf32>) -> tensor<?x?x48xf32>
  %a = enc.attention %qkv, %lengths {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.35 : f32, window = 3 : i64} : (tensor<?x?x48xf32>, tensor<?xi32>) -> tensor<?x?x16xf32>
  return %a : tensor<?x?x16xf32>
}
)";
  auto code = generateFrom(text, {{"emb", {10, 16}}, {"pos", {8, 16}}, {"type", {2, 16}}, {"qkv", {48, 16}}}, 4);
  ASSERT_TRUE(bool(code)) << errorText(code.takeError());
  ASSERT_EQ(code->plan.steps.size(), 3u);
  EXPECT_NE(code->plan.steps[2].kernel.find("_band3_3"), std::string::npos) << code->plan.steps[2].kernel;
  EXPECT_NE(code->source.find("enc_kernels::RelativeBias{}, enc_kernels::AttnBand{3, 3});"), std::string::npos);
  auto object = buildCpuCodeObject(code->source, CpuLevel::X86_64_V2, tempDir("encc-window"));
  ASSERT_TRUE(bool(object)) << errorText(object.takeError());
}

TEST(CpuCodegenErrors, MissingWeight) {
  WeightStore ws;
  std::mt19937 rng(1);
  addWeight(ws, "emb", {10, 4}, rng, -1, 1);
  addWeight(ws, "pos", {8, 4}, rng, -1, 1);
  addWeight(ws, "type", {2, 4}, rng, -1, 1);
  std::string e = generateError(kOneLinear, ws);
  EXPECT_NE(e.find("\"lin\" is not in the weight store"), std::string::npos) << e;
  EXPECT_NE(e.find("enc.weight"), std::string::npos) << e;
}

TEST(CpuCodegenErrors, WeightShapeMismatch) {
  WeightStore ws;
  std::mt19937 rng(1);
  addWeight(ws, "emb", {10, 4}, rng, -1, 1);
  addWeight(ws, "pos", {8, 4}, rng, -1, 1);
  addWeight(ws, "type", {2, 4}, rng, -1, 1);
  addWeight(ws, "lin", {4, 5}, rng, -1, 1);
  std::string e = generateError(kOneLinear, ws);
  EXPECT_NE(e.find("\"lin\" has shape [4, 5]"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor<4x4xf32>"), std::string::npos) << e;
}

TEST(CpuCodegenErrors, UnsupportedOpNamesOpAndLocation) {
  const char *text = R"(
func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>) -> tensor<?xi32> {
  %y = "test.frobnicate"(%lengths) : (tensor<?xi32>) -> tensor<?xi32>
  return %y : tensor<?xi32>
}
)";
  std::string e = generateError(text, WeightStore(), /*unregistered=*/true);
  EXPECT_NE(e.find("'test.frobnicate'"), std::string::npos) << e;
  EXPECT_NE(e.find(":3:"), std::string::npos) << e; // line 3 of the text
  EXPECT_NE(e.find("unsupported op"), std::string::npos) << e;
}

TEST(CpuCodegenErrors, NoForward) {
  auto ctx = makeContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      "func.func @other() { return }", ctx.get());
  ASSERT_TRUE(module);
  WeightStore empty;
  auto code = generateCpuCode(*module, empty);
  ASSERT_FALSE(bool(code));
  EXPECT_NE(errorText(code.takeError()).find("@forward"), std::string::npos);
}

TEST(CpuCodegenErrors, CompilerFailureAndMissingCompiler) {
  const std::string dir = tempDir("encc-codegen-err");
  auto obj = buildCpuCodeObject("this is not C++;\n", CpuLevel::X86_64_V3, dir);
  ASSERT_FALSE(bool(obj));
  std::string e = errorText(obj.takeError());
  EXPECT_NE(e.find("command failed"), std::string::npos) << e;
  EXPECT_NE(e.find("-march=x86-64-v3"), std::string::npos) << e;
  EXPECT_NE(e.find("error"), std::string::npos) << e; // the compiler's stderr

  const char *old = std::getenv("CXX");
  std::string saved = old ? old : "";
  setenv("CXX", "encc-no-such-compiler-xyz", 1);
  auto obj2 = buildCpuCodeObject("int x;\n", CpuLevel::X86_64_V3, dir);
  if (old)
    setenv("CXX", saved.c_str(), 1);
  else
    unsetenv("CXX");
  ASSERT_FALSE(bool(obj2));
  e = errorText(obj2.takeError());
  EXPECT_NE(e.find("encc-no-such-compiler-xyz"), std::string::npos) << e;
  llvm::sys::fs::remove_directories(dir);
}

TEST(CpuCodegen, ParseCpuLevel) {
  for (const char *n : {"x86-64-v2", "x86-64-v3", "x86-64-v4", "native"}) {
    auto l = parseCpuLevel(n);
    ASSERT_TRUE(bool(l)) << n;
    EXPECT_EQ(cpuLevelName(*l), n);
  }
  auto bad = parseCpuLevel("pentium");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(errorText(bad.takeError()).find("pentium"), std::string::npos);
}

} // namespace
