//===- Int8CodegenTest.cpp - int8 enc ops: generated code vs double math --===//
//
// A small graph using every int8 form the codegen lowers: an int8 word table
// (enc.embedding word_scale), layernorm + quantize and add_layernorm +
// quantize (fused into one step), a stand-alone dynamic quantize (input from
// a qlinear), a static-scale quantize, and qlinear with and without bias and
// with the none / gelu / gelu_tanh epilogues, at K and N that are not
// multiples of 4 / 16. The plan is run step by step with every intermediate
// kept, and each step is checked against double-precision loops applied to
// that step's actual inputs:
//  - quantised bytes: the double formula q = rne(x * 127 / max|x|) + 128
//    (at most 1 apart, and in at most 0.5% of the elements: float rounding
//    at .5 ties), scales to 1e-6 relative;
//  - qlinear: the exact integer dot products of those bytes with the
//    weights' int8 values (independently quantised here), dequantised in
//    double: |y - ref| <= 1e-5 + 1e-5 |ref|;
//  - embedding / layernorm floats: 1e-5 + 1e-5 |ref|.
// The whole graph also runs against a float (unquantised) double reference:
// the int8 output must be close (max abs error <= 0.1, stated for this graph)
// but measurably different (> 1e-4), so the step checks do test quantised
// math. Each ISA level this CPU runs is checked, including the int8 path
// named by the object's enc_q8_path().
//
//===----------------------------------------------------------------------===//
#include "tests/support/NanAware.h"
#include "compiler/codegen/cpu/CpuCodegen.h"
#include "ir/EncDialect.h"
#include "runtime/include/encrt/kernel_abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <random>

using namespace encc;
using mlir::enc::WeightStore;
using mlir::enc::WeightTensor;
using mlir::enc::WeightType;

namespace {

constexpr int64_t V = 23, P = 16, H = 22, FF = 37;

std::string t(const std::string &dims, const char *et = "f32") {
  return "tensor<" + dims + "x" + et + ">";
}

/// ids -> emb (int8 table) -> ln+q -> qlinear gelu (FF) -> q -> qlinear
/// nobias (H) -> q static -> qlinear gelu_tanh (H) -> add_layernorm(+x) + q
/// -> qlinear (FF); returns (last, r). The two layernorm + quantize pairs are
/// enc.fusion groups, as enc-form-fusion-groups leaves them.
std::string moduleText() {
  const std::string h = std::to_string(H), ff = std::to_string(FF);
  const std::string act = t("?x?x" + h), actF = t("?x?x" + ff);
  const std::string qa = t("?x?x" + h, "ui8"), qf = t("?x?x" + ff, "ui8"),
                    sc = t("?x?");
  std::string s =
      "func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>) -> (" +
      actF + ", " + act + ") {\n";
  auto w = [&](const std::string &v, const std::string &name,
               const std::string &type) {
    s += "  " + v + " = enc.weight \"" + name + "\" : " + type + "\n";
  };
  w("%word", "word.q8", t(std::to_string(V) + "x" + h, "i8"));
  w("%wscale", "word.q8scale", t(std::to_string(V)));
  w("%pos", "pos", t(std::to_string(P) + "x" + h));
  w("%type", "type", t("2x" + h));
  w("%g", "ln.g", t(h));
  w("%b", "ln.b", t(h));
  auto lin = [&](const std::string &p, int64_t n, int64_t k, bool bias) {
    const std::string N = std::to_string(n), K = std::to_string(k);
    w("%" + p + "q", p + ".q8", t(N + "x" + K, "i8"));
    w("%" + p + "s", p + ".q8scale", t(N));
    if (bias)
      w("%" + p + "b", p + ".b", t(N));
  };
  lin("f1", FF, H, true);
  lin("f2", H, FF, false);
  lin("f3", H, H, true);
  lin("f4", FF, H, true);
  s += "  %e = enc.embedding %ids, %word, %pos, %type word_scale %wscale "
       "{position_offset = 1 : i64} : (tensor<?x?xi32>, " +
       t(std::to_string(V) + "x" + h, "i8") + ", " +
       t(std::to_string(P) + "x" + h) + ", " + t("2x" + h) + ", " +
       t(std::to_string(V)) + ") -> " + act + "\n";
  auto quant = [&](const std::string &q, const std::string &x,
                   const std::string &type, const std::string &qtype,
                   const std::string &attr) {
    s += "  %" + q + "q, %" + q + "s = enc.quantize %" + x + attr + " : " +
         type + " -> (" + qtype + ", " + sc + ")\n";
  };
  // %y, %yq, %ys: the layernorm `norm` (its result %yn) and its quantisation.
  auto group = [&](const std::string &y, const std::string &norm) {
    s += "  %" + y + ", %" + y + "q, %" + y + "s = enc.fusion -> (" + act + ", " + qa + ", " + sc + ") {\n";
    s += "  %" + y + "n = " + norm + "\n";
    quant(y + "n", y + "n", act, qa, "");
    s += "  enc.yield %" + y + "n, %" + y + "nq, %" + y + "ns : " + act + ", " + qa + ", " + sc + "\n  }\n";
  };
  group("x", "enc.layernorm %e, %g, %b {epsilon = 1.0e-05 : f32} : (" + act + ", " + t(h) + ", " + t(h) + ") -> " +
                 act);
  auto qlin = [&](const std::string &y, const std::string &q,
                  const std::string &p, int64_t n, int64_t k, bool bias,
                  const char *epi) {
    const std::string N = std::to_string(n), K = std::to_string(k);
    s += "  %" + y + " = enc.qlinear %" + q + "q, %" + q + "s, %" + p + "q, %" +
         p + "s" + (bias ? ", %" + p + "b" : "") +
         (epi ? std::string(" {epilogue = #enc.epilogue<") + epi + ">}" : "") + " : (" +
         t("?x?x" + K, "ui8") + ", " + sc + ", " + t(N + "x" + K, "i8") + ", " +
         t(N) + (bias ? ", " + t(N) : "") + ") -> " + t("?x?x" + N) + "\n";
  };
  qlin("h1", "x", "f1", FF, H, true, "gelu");
  quant("h", "h1", actF, qf, "");
  qlin("h2", "h", "f2", H, FF, false, nullptr);
  quant("z", "h2", act, qa, " {static_scale = 2.000000e-02 : f32}");
  qlin("h3", "z", "f3", H, H, true, "gelu_tanh");
  group("r", "enc.add_layernorm %h3, %x, %g, %b {epsilon = 1.0e-05 : f32} : (" + act + ", " + act + ", " + t(h) +
                 ", " + t(h) + ") -> " + act);
  qlin("o", "r", "f4", FF, H, true, nullptr);
  s += "  return %o, %r : " + actF + ", " + act + "\n}\n";
  return s;
}

/// Float weights (kept for the float reference) and their int8 forms.
struct Weights {
  std::map<std::string, std::vector<float>> f; ///< by base name
  std::map<std::string, std::vector<int>> q;
  std::map<std::string, std::vector<double>> s;
  WeightStore store;
};

void quantizeRowsRef(const std::vector<float> &w, int64_t rows, int64_t cols,
                     std::vector<int> &q, std::vector<double> &s) {
  q.assign(rows * cols, 0);
  s.assign(rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double amax = 0;
    for (int64_t c = 0; c < cols; ++c)
      amax = std::max(amax, std::fabs(double(w[r * cols + c])));
    s[r] = double(float(amax / 127));
    for (int64_t c = 0; c < cols; ++c)
      q[r * cols + c] = amax > 0 ? int(std::nearbyint(w[r * cols + c] * 127 / amax)) : 0;
  }
}

Weights makeWeights() {
  Weights W;
  std::mt19937 rng(77);
  auto f32 = [&](const std::string &name, std::vector<int64_t> shape, float lo,
                 float hi) {
    WeightTensor wt = WeightTensor::allocate(WeightType::F32, shape);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(wt.numElements());
    for (float &e : v)
      e = d(rng);
    std::memcpy(wt.mutableData(), v.data(), wt.byteSize());
    W.store.set(name, std::move(wt));
    W.f[name] = v;
  };
  auto q8 = [&](const std::string &base, int64_t rows, int64_t cols, float a) {
    std::uniform_real_distribution<float> d(-a, a);
    std::vector<float> v(rows * cols);
    for (float &e : v)
      e = d(rng);
    W.f[base] = v;
    quantizeRowsRef(v, rows, cols, W.q[base], W.s[base]);
    WeightTensor wq = WeightTensor::allocate(WeightType::I8, {rows, cols});
    WeightTensor ws = WeightTensor::allocate(WeightType::F32, {rows});
    for (size_t e = 0; e < W.q[base].size(); ++e)
      wq.mutableData()[e] = static_cast<uint8_t>(static_cast<int8_t>(W.q[base][e]));
    for (int64_t r = 0; r < rows; ++r)
      ws.mutableF32()[r] = float(W.s[base][r]);
    W.store.set(base + ".q8", std::move(wq));
    W.store.set(base + ".q8scale", std::move(ws));
  };
  q8("word", V, H, 1.0f);
  f32("pos", {P, H}, -1, 1);
  f32("type", {2, H}, -1, 1);
  f32("ln.g", {H}, 0.8f, 1.2f);
  f32("ln.b", {H}, -0.2f, 0.2f);
  q8("f1", FF, H, 1.5f / std::sqrt(float(H)));
  f32("f1.b", {FF}, -0.3f, 0.3f);
  q8("f2", H, FF, 1.5f / std::sqrt(float(FF)));
  q8("f3", H, H, 1.5f / std::sqrt(float(H)));
  f32("f3.b", {H}, -0.3f, 0.3f);
  q8("f4", FF, H, 1.5f / std::sqrt(float(H)));
  f32("f4.b", {FF}, -0.3f, 0.3f);
  return W;
}

//===----------------------------------------------------------------------===//
// Double-precision pieces
//===----------------------------------------------------------------------===//

using Vec = std::vector<double>;
double geluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

Vec layerNorm(const Vec &x, int64_t rows, const std::vector<float> &g,
              const std::vector<float> &b) {
  Vec y(x.size());
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < H; ++j)
      mean += x[i * H + j] / H;
    for (int64_t j = 0; j < H; ++j)
      var += (x[i * H + j] - mean) * (x[i * H + j] - mean) / H;
    for (int64_t j = 0; j < H; ++j)
      y[i * H + j] = (x[i * H + j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
  }
  return y;
}

/// Dynamic (staticScale = 0) or static quantisation of rows of width k.
void quantize(const Vec &x, int64_t rows, int64_t k, double staticScale,
              std::vector<int> &q, Vec &s) {
  q.assign(rows * k, 128);
  s.assign(rows, 0);
  for (int64_t i = 0; i < rows; ++i) {
    double amax = 0;
    for (int64_t j = 0; j < k; ++j)
      amax = std::max(amax, std::fabs(x[i * k + j]));
    const double scale = staticScale > 0 ? staticScale : amax / 127;
    s[i] = scale;
    for (int64_t j = 0; j < k; ++j)
      q[i * k + j] = scale > 0 ? std::clamp(int(std::nearbyint(x[i * k + j] / scale)) + 128, 0, 255)
                               : 128;
  }
}

enum Epi { kNone, kGelu, kGeluTanh };

Vec qlinear(const std::vector<int> &xq, const Vec &xs, int64_t rows, int64_t k,
            const std::vector<int> &wq, const Vec &ws, int64_t n,
            const std::vector<float> *bias, Epi epi) {
  Vec y(rows * n);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        acc += int64_t(xq[i * k + kk] - 128) * wq[j * k + kk];
      double v = double(acc) * xs[i] * ws[j] + (bias ? (*bias)[j] : 0.0);
      y[i * n + j] = epi == kGelu ? geluErf(v) : epi == kGeluTanh ? geluTanh(v) : v;
    }
  return y;
}

Vec linear(const Vec &x, int64_t rows, int64_t k, const std::vector<float> &w,
           int64_t n, const std::vector<float> *bias, Epi epi) {
  Vec y(rows * n);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v = bias ? (*bias)[j] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk)
        v += x[i * k + kk] * w[j * k + kk];
      y[i * n + j] = epi == kGelu ? geluErf(v) : epi == kGeluTanh ? geluTanh(v) : v;
    }
  return y;
}

//===----------------------------------------------------------------------===//
// Running the plan with every intermediate kept
//===----------------------------------------------------------------------===//

size_t dtypeBytes(DType d) { return d == DType::U8 || d == DType::I8 ? 1 : 4; }

struct PlanRun {
  std::vector<std::vector<float>> storage; ///< per value (byte buffers)
  std::vector<WeightTensor> weights;       ///< per value (packed layouts, produced)
  std::vector<void *> ptr;
};

PlanRun runPlan(const Plan &plan, void *handle, WeightStore &ws,
            std::vector<int32_t> &ids, std::vector<int32_t> &lengths,
            int64_t B, int64_t S, int32_t numTasks) {
  std::vector<int32_t> offsets(B + 1, 0);
  for (int64_t b = 0; b < B; ++b)
    offsets[b + 1] = offsets[b] + lengths[b];
  const int64_t T = offsets[B];
  PlanRun run;
  run.storage.resize(plan.values.size());
  run.ptr.assign(plan.values.size(), nullptr);
  run.weights.resize(plan.values.size());
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue &v = plan.values[i];
    if (v.kind == ValueKind::Weight) {
      run.weights[i] = ws.find(v.name)->read();
      run.ptr[i] = const_cast<uint8_t *>(run.weights[i].data());
    } else if (v.kind == ValueKind::Activation || v.kind == ValueKind::Output) {
      int64_t n = dtypeBytes(v.dtype);
      for (int64_t d : v.shape)
        n *= d == kDimBatch ? B : d == kDimSeq ? S : d == kDimTokens ? T : d;
      run.storage[i].assign((n + 3) / 4, NAN);
      run.ptr[i] = run.storage[i].data();
    }
  }
  run.ptr[plan.inputs[0]] = ids.data();
  run.ptr[plan.inputs[1]] = lengths.data();
  for (const PlanStep &step : plan.steps) {
    auto fn = reinterpret_cast<enc_kernel_fn>(dlsym(handle, step.kernel.c_str()));
    EXPECT_NE(fn, nullptr) << step.kernel;
    if (!fn)
      return run;
    std::vector<void *> bufs;
    for (uint32_t id : step.operands)
      bufs.push_back(run.ptr[id]);
    enc_step_ctx ctx{bufs.data(),        lengths.data(),
                     B,                  S,
                     step.iattrs.data(), int32_t(step.iattrs.size()),
                     step.fattrs.data(), int32_t(step.fattrs.size()),
                     offsets.data(),     T};
    for (int32_t task = numTasks - 1; task >= 0; --task)
      fn(&ctx, task, numTasks);
  }
  return run;
}

Vec floats(const void *p, int64_t n) {
  const float *f = static_cast<const float *>(p);
  return Vec(f, f + n);
}

/// Bytes of rows with stride ld -> ints [rows, k].
std::vector<int> bytes(const void *p, int64_t rows, int64_t k, int64_t ld) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  std::vector<int> out(rows * k);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < k; ++j)
      out[i * k + j] = b[i * ld + j];
  return out;
}

void expectNear(const Vec &got, const Vec &want, double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol + tol * std::fabs(want[i])) << what << "[" << i << "]";
}

/// Quantised bytes and scales of step output vs the double formula applied to
/// the step's own float input.
void expectQuantized(const Vec &x, int64_t rows, int64_t k, double staticScale,
                     const void *qBuf, const void *sBuf, const std::string &what) {
  std::vector<int> q;
  Vec s;
  quantize(x, rows, k, staticScale, q, s);
  const int64_t ld = (k + 3) & ~int64_t(3);
  std::vector<int> got = bytes(qBuf, rows, k, ld);
  int64_t off = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - q[i]), 1) << what << " byte " << i;
    off += got[i] != q[i];
  }
  EXPECT_LE(off, int64_t(q.size() / 200 + 1)) << what << ": bytes off by one";
  for (int64_t i = 0; i < rows; ++i) {
    // Padding bytes hold the zero point.
    for (int64_t j = k; j < ld; ++j)
      EXPECT_EQ(static_cast<const uint8_t *>(qBuf)[i * ld + j], 128) << what;
    EXPECT_NEAR(static_cast<const float *>(sBuf)[i], s[i], 1e-6 * s[i] + 1e-12) << what;
  }
}

class Int8Codegen : public ::testing::TestWithParam<CpuLevel> {};

TEST_P(Int8Codegen, EveryStepMatchesQuantisedDoubleMath) {
  const CpuLevel level = GetParam();
  if ((level == CpuLevel::X86_64_V4_VNNI &&
       !(__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))) ||
      (level != CpuLevel::X86_64_V2 && !__builtin_cpu_supports("avx2")))
    GTEST_SKIP() << cpuLevelName(level) << " does not run on this CPU";
  if (level == CpuLevel::X86_64_V3_VNNI) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(1));
    if (!(a & (1u << 4)))
      GTEST_SKIP() << "no AVX-VNNI on this CPU";
  }
  Weights W = makeWeights();
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::enc::EncDialect>();
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(moduleText(), &ctx);
  ASSERT_TRUE(module) << moduleText();
  auto code = generateCpuCode(*module, W.store);
  ASSERT_TRUE(bool(code)) << llvm::toString(code.takeError());
  const Plan &plan = code->plan;
  EXPECT_TRUE(code->packed) << "every op of the graph has a packed kernel";

  // The artifact carries the packed weights, never the unpacked int8 ones;
  // both quantize ops after a (add_)layernorm are fused into it.
  std::vector<std::string> ops;
  for (const PlanStep &s : plan.steps)
    ops.push_back(s.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"enc.embedding", "enc.layernorm+enc.quantize", "enc.qlinear",
                                           "enc.quantize", "enc.qlinear", "enc.quantize", "enc.qlinear",
                                           "enc.add_layernorm+enc.quantize", "enc.qlinear"}));
  for (const PlanValue &v : plan.values) {
    if (v.kind != ValueKind::Weight)
      continue;
    EXPECT_FALSE(llvm::StringRef(v.name).starts_with("f") && llvm::StringRef(v.name).ends_with(".q8")) << v.name;
    if (llvm::StringRef(v.name).ends_with(".q8packed")) {
      ASSERT_TRUE(W.store.find(v.name)) << v.name;
      EXPECT_EQ(v.dtype, DType::I8);
    }
  }
  ASSERT_TRUE(W.store.find("f2.q8packed"));

  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("encc-int8-codegen", dir));
  auto obj = buildCpuCodeObject(code->source, level, std::string(dir));
  ASSERT_TRUE(bool(obj)) << llvm::toString(obj.takeError());
  const std::string so = std::string(dir) + "/loaded.so";
  std::ofstream(so, std::ios::binary).write(reinterpret_cast<const char *>(obj->bytes.data()), obj->bytes.size());
  void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto path = reinterpret_cast<const char *(*)()>(dlsym(handle, "enc_q8_path"));
  ASSERT_NE(path, nullptr);
  const char *want = level == CpuLevel::X86_64_V4_VNNI   ? "avx512vnni"
                     : level == CpuLevel::X86_64_V3_VNNI ? "avxvnni"
                     : level == CpuLevel::X86_64_V2      ? "scalar"
                                                         : "avx2";
  EXPECT_STREQ(path(), want);

  struct Shape {
    int64_t B, S;
    std::vector<int32_t> lengths;
    int32_t tasks;
  };
  for (const Shape &sh : {Shape{1, 1, {1}, 1}, Shape{2, 9, {9, 4}, 3}, Shape{3, 13, {13, 1, 7}, 7},
                          Shape{1, 15, {15}, 16}}) {
    SCOPED_TRACE("B=" + std::to_string(sh.B) + " S=" + std::to_string(sh.S) + " tasks=" +
                 std::to_string(sh.tasks));
    std::mt19937 rng(5 + sh.B * sh.S);
    std::vector<int32_t> ids(sh.B * sh.S), lengths = sh.lengths;
    for (auto &id : ids)
      id = std::uniform_int_distribution<int32_t>(0, V - 1)(rng);
    // The plan's rows: the packed plan holds the valid tokens only (row r is
    // token padIndex[r] of the padded [B, S] ids), the padded one every slot.
    std::vector<int64_t> padIndex;
    for (int64_t b = 0; b < sh.B; ++b)
      for (int64_t t = 0; t < sh.S; ++t)
        if (!code->packed || t < lengths[b])
          padIndex.push_back(b * sh.S + t);
    const int64_t R = padIndex.size();
    PlanRun run = runPlan(plan, handle, W.store, ids, lengths, sh.B, sh.S, sh.tasks);
    auto buf = [&](size_t step, size_t operand) {
      return run.ptr[plan.steps[step].operands[operand]];
    };

    // Step 0: embedding with the int8 table.
    Vec e(R * H);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < H; ++j)
        e[r * H + j] = W.q["word"][ids[padIndex[r]] * H + j] * W.s["word"][ids[padIndex[r]]] +
                       W.f["pos"][(padIndex[r] % sh.S + 1) * H + j] + W.f["type"][j];
    expectNear(floats(buf(0, 5), R * H), e, 1e-5, "embedding");
    // Step 1: layernorm + quantize (inputs: e, g, b; results x, xq, xs).
    Vec x = layerNorm(floats(buf(1, 0), R * H), R, W.f["ln.g"], W.f["ln.b"]);
    expectNear(floats(buf(1, 3), R * H), x, 1e-5, "layernorm");
    Vec xk = floats(buf(1, 3), R * H);
    expectQuantized(xk, R, H, 0, buf(1, 4), buf(1, 5), "layernorm quantize");
    // qlinear steps: (x bytes, x scales) -> y.
    auto checkQLinear = [&](size_t step, const std::string &w, int64_t k, int64_t n, bool bias,
                            Epi epi) {
      const int64_t ld = (k + 3) & ~int64_t(3);
      std::vector<int> xq = bytes(buf(step, 0), R, k, ld);
      Vec xs = floats(buf(step, 1), R);
      const std::vector<float> *b = bias ? &W.f[w + ".b"] : nullptr;
      Vec want = qlinear(xq, xs, R, k, W.q[w], W.s[w], n, b, epi);
      expectNear(floats(buf(step, bias ? 5 : 4), R * n), want, 1e-5, "qlinear " + w);
    };
    checkQLinear(2, "f1", H, FF, true, kGelu);
    expectQuantized(floats(buf(3, 0), R * FF), R, FF, 0, buf(3, 1), buf(3, 2), "quantize");
    checkQLinear(4, "f2", FF, H, false, kNone);
    expectQuantized(floats(buf(5, 0), R * H), R, H, 0.02, buf(5, 1), buf(5, 2), "static quantize");
    checkQLinear(6, "f3", H, H, true, kGeluTanh);
    // add_layernorm + quantize (inputs h3, x, g, b; results r, rq, rs).
    Vec sum = floats(buf(7, 0), R * H), res = floats(buf(7, 1), R * H);
    for (int64_t i = 0; i < R * H; ++i)
      sum[i] += res[i];
    Vec rr = layerNorm(sum, R, W.f["ln.g"], W.f["ln.b"]);
    expectNear(floats(buf(7, 4), R * H), rr, 1e-5, "add_layernorm");
    expectQuantized(floats(buf(7, 4), R * H), R, H, 0, buf(7, 5), buf(7, 6), "add_layernorm quantize");
    checkQLinear(8, "f4", H, FF, true, kNone);

    // The whole graph vs float (unquantised) math.
    Vec ef(R * H);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < H; ++j)
        ef[r * H + j] = W.f["word"][ids[padIndex[r]] * H + j] +
                        W.f["pos"][(padIndex[r] % sh.S + 1) * H + j] + W.f["type"][j];
    Vec xf = layerNorm(ef, R, W.f["ln.g"], W.f["ln.b"]);
    Vec h1 = linear(xf, R, H, W.f["f1"], FF, &W.f["f1.b"], kGelu);
    Vec h2 = linear(h1, R, FF, W.f["f2"], H, nullptr, kNone);
    Vec h3 = linear(h2, R, H, W.f["f3"], H, &W.f["f3.b"], kGeluTanh);
    for (int64_t i = 0; i < R * H; ++i)
      h3[i] += xf[i];
    Vec rf = layerNorm(h3, R, W.f["ln.g"], W.f["ln.b"]);
    Vec of = linear(rf, R, H, W.f["f4"], FF, &W.f["f4.b"], kNone);
    Vec got = floats(run.ptr[plan.outputs[0]], R * FF);
    double maxErr = 0;
    for (int64_t i = 0; i < R * FF; ++i)
      maxErr = encc::testing::errorMax(maxErr, std::fabs(got[i] - of[i]));
    EXPECT_LE(maxErr, 0.1) << "int8 vs float graph";
    EXPECT_GT(maxErr, 1e-4) << "int8 output equals the float one: not quantised?";
  }
  dlclose(handle);
  llvm::sys::fs::remove_directories(dir);
}

INSTANTIATE_TEST_SUITE_P(Levels, Int8Codegen,
                         ::testing::Values(CpuLevel::X86_64_V3, CpuLevel::X86_64_V4_VNNI,
                                           CpuLevel::X86_64_V3_VNNI, CpuLevel::X86_64_V2),
                         [](const ::testing::TestParamInfo<CpuLevel> &info) {
                           std::string n = cpuLevelName(info.param);
                           for (char &c : n)
                             if (c == '-')
                               c = '_';
                           return n;
                         });

TEST(Int8CodegenErrors, QLinearWeightOfWrongStoreType) {
  // enc.qlinear's verifier only takes i8 weights; a store entry of another
  // element type is caught before packing.
  const char *bad = R"(
func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>) -> tensor<?x?x4xf32> {
  %word = enc.weight "word" : tensor<10x8xf32>
  %pos = enc.weight "pos" : tensor<8x8xf32>
  %type = enc.weight "type" : tensor<2x8xf32>
  %wq = enc.weight "w.q8" : tensor<4x8xi8>
  %ws = enc.weight "w.q8scale" : tensor<4xf32>
  %e = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<8x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  %q, %s = enc.quantize %e : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
  %y = enc.qlinear %q, %s, %wq, %ws : (tensor<?x?x8xui8>, tensor<?x?xf32>, tensor<4x8xi8>, tensor<4xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}
)";
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::enc::EncDialect>();
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(bad, &ctx);
  ASSERT_TRUE(module);
  WeightStore ws;
  auto f32 = [&](const std::string &name, std::vector<int64_t> shape) {
    ws.set(name, WeightTensor::allocate(WeightType::F32, shape));
  };
  f32("word", {10, 8});
  f32("pos", {8, 8});
  f32("type", {2, 8});
  f32("w.q8scale", {4});
  f32("w.q8", {4, 8}); // f32 in the store, i8 in the IR
  auto code = generateCpuCode(*module, ws);
  ASSERT_FALSE(bool(code));
  std::string err = llvm::toString(code.takeError());
  EXPECT_NE(err.find("\"w.q8\""), std::string::npos) << err;
  EXPECT_NE(err.find("element type"), std::string::npos) << err;
}

} // namespace
