//===- CudaCodegenTest.cpp - CUDA plan invariants and nvcc builds ---------===//
//
// Imports tiny HF models (and all-MiniLM-L6-v2 from $ENCC_MINILM_DIR), runs the
// default pipeline (+ int8), generates the CUDA plan and .cu, checks the plan
// against encrt/cuda_kernel_abi.h and builds the source with nvcc for every
// default arch (skipped when there is no nvcc). Host-side helpers (fp16/bf16
// rounding, --cuda-arch parsing) are checked against independent references.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/cuda/CudaCodegen.h"
#include "encrt/float16.h"
#include "compiler/driver/CompileDriver.h"
#include "encrt/cuda_kernel_abi.h"
#include "frontends/hf/HFImport.h"
#include "ir/EncDialect.h"
#include "tests/support/NanAware.h"
#include "tests/cuda/PlanEmulator.h"
#include "tests/support/ReferenceEncoder.h"
#include "tests/support/TinyModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>

using namespace encc;
namespace et = encc::testing;

namespace {

std::string errText(llvm::Error e) { return llvm::toString(std::move(e)); }

class ScopedTempDir {
public:
  ScopedTempDir() {
    llvm::SmallString<128> p;
    std::error_code ec = llvm::sys::fs::createUniqueDirectory("encc-cuda-test", p);
    EXPECT_FALSE(ec) << ec.message();
    path_ = std::string(p);
  }
  ~ScopedTempDir() { llvm::sys::fs::remove_directories(path_); }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// An imported model after the default pipeline (+ int8 when asked).
struct Compiled {
  std::unique_ptr<mlir::MLIRContext> ctx;
  ImportedModel model;
};

llvm::Expected<Compiled> importAndRun(const std::string &dir, const std::string &quantize,
                                      const std::string &pipeline = "",
                                      const std::string &pooling = "") {
  Compiled c;
  c.ctx = makeContext();
  ImportOptions io;
  if (!pooling.empty())
    io.pooling = parsePooling(pooling).value();
  auto model = importHFModel(*c.ctx, dir, io);
  if (!model)
    return model.takeError();
  c.model = std::move(*model);
  auto passes = resolvePipeline(pipeline, {});
  if (!passes)
    return passes.takeError();
  auto withQ = buildPipeline(*passes, quantize);
  if (!withQ)
    return withQ.takeError();
  PipelineOptions po;
  po.passes = *withQ;
  if (auto err = runEncPipeline(*c.model.module, &c.model.weights, po))
    return err;
  return c;
}

/// True (and the reason in `why`) when nvcc cannot be found.
bool noNvcc(std::string &why) {
  auto nvcc = findNvcc();
  if (nvcc)
    return false;
  why = errText(nvcc.takeError());
  return true;
}

/// Every documented invariant of a CUDA plan (see CudaCodegen.h and
/// encrt/cuda_kernel_abi.h); `act` is the activation dtype.
void checkPlan(const Plan &plan, const std::string &source,
               const mlir::enc::WeightStore &weights, DType act, bool pools) {
  const std::vector<PlanValue> &v = plan.values;
  // Inputs and outputs.
  // ids, lengths and (BERT: two token types) type ids.
  ASSERT_TRUE(plan.inputs.size() == 2u || plan.inputs.size() == 3u) << plan.inputs.size();
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    EXPECT_EQ(v[plan.inputs[i]].dtype, DType::I32);
    const std::vector<int64_t> want = i == 1 ? std::vector<int64_t>{kDimBatch} : std::vector<int64_t>{kDimBatch, kDimSeq};
    EXPECT_EQ(v[plan.inputs[i]].shape, want);
  }
  ASSERT_EQ(plan.outputs.size(), pools ? 2u : 1u);
  const PlanValue &hidden = v[plan.outputs[0]];
  EXPECT_EQ(hidden.kind, ValueKind::Output);
  EXPECT_EQ(hidden.dtype, DType::F32);
  ASSERT_EQ(hidden.shape.size(), 2u);
  EXPECT_EQ(hidden.shape[0], kDimTokens);
  const int64_t H = hidden.shape[1];
  if (pools) {
    const PlanValue &pooled = v[plan.outputs[1]];
    EXPECT_EQ(pooled.kind, ValueKind::Output);
    EXPECT_EQ(pooled.dtype, DType::F32);
    EXPECT_EQ(pooled.shape, (std::vector<int64_t>{kDimBatch, H}));
  }

  const std::string actSuffix = act == DType::F16 ? ".f16" : ".bf16";
  const int32_t numSteps = static_cast<int32_t>(plan.steps.size());
  std::vector<int32_t> writer(v.size(), -1), firstRead(v.size(), -1), lastRead(v.size(), -1);
  for (int32_t s = 0; s < numSteps; ++s) {
    const PlanStep &step = plan.steps[s];
    SCOPED_TRACE("step " + std::to_string(s) + " " + step.kernel + " (" + step.op + ")");
    ASSERT_GE(step.iattrs.size(), static_cast<size_t>(ENC_CUDA_LAUNCH_HEADER));
    EXPECT_LE(step.iattrs.size() - ENC_CUDA_LAUNCH_HEADER, static_cast<size_t>(ENC_CUDA_MAX_IATTRS));
    EXPECT_LE(step.fattrs.size(), static_cast<size_t>(ENC_CUDA_MAX_FATTRS));
    ASSERT_LE(step.operands.size(), static_cast<size_t>(ENC_CUDA_MAX_BUFFERS));
    ASSERT_GE(step.numResults, 1u);
    ASSERT_LE(step.numResults, step.operands.size());
    EXPECT_FALSE(step.op.empty());
    const int64_t kind = step.iattrs[0];
    ASSERT_GE(kind, ENC_CUDA_GRID_ROWS);
    ASSERT_LE(kind, ENC_CUDA_GRID_GEMM);
    const size_t numIn = step.operands.size() - step.numResults;
    for (size_t i = 0; i < step.operands.size(); ++i) {
      const uint32_t id = step.operands[i];
      ASSERT_LT(id, v.size());
      if (i < numIn) {
        if (firstRead[id] < 0)
          firstRead[id] = s;
        lastRead[id] = s;
      } else {
        EXPECT_EQ(writer[id], -1) << "value " << id << " written twice";
        writer[id] = s;
      }
    }
    if (kind == ENC_CUDA_GRID_GEMM) {
      EXPECT_EQ(step.kernel, ENC_CUDA_GEMM_KERNEL);
      ASSERT_EQ(step.iattrs.size(), ENC_CUDA_LAUNCH_HEADER + 3u);
      const int64_t N = step.iattrs[5], K = step.iattrs[6], epi = step.iattrs[7];
      EXPECT_GE(N, 1);
      EXPECT_GE(K, 1);
      ASSERT_GE(epi, 0);
      ASSERT_LE(epi, 2);
      ASSERT_EQ(step.numResults, 1u);
      const PlanValue &X = v[step.operands[0]], &W = v[step.operands[1]];
      const PlanValue &Y = v[step.operands.back()];
      EXPECT_EQ(X.shape, (std::vector<int64_t>{kDimTokens, K}));
      EXPECT_EQ(W.kind, ValueKind::Weight);
      EXPECT_EQ(W.shape, (std::vector<int64_t>{N, K}));
      EXPECT_EQ(Y.shape, (std::vector<int64_t>{kDimTokens, N}));
      if (X.dtype == DType::I8) {
        EXPECT_EQ(step.op, "enc.qlinear");
        ASSERT_EQ(step.operands.size(), 3u);
        EXPECT_EQ(W.dtype, DType::I8);
        EXPECT_EQ(Y.dtype, DType::I32);
        EXPECT_EQ(epi, 0);
        EXPECT_EQ(K % 4, 0);
      } else {
        EXPECT_EQ(step.op, "enc.linear");
        EXPECT_EQ(X.dtype, act);
        EXPECT_EQ(W.dtype, act);
        EXPECT_EQ(Y.dtype, act);
        ASSERT_EQ(step.operands.size(), epi >= 1 ? 4u : 3u);
        if (epi >= 1) {
          EXPECT_EQ(v[step.operands[2]].dtype, act);
          EXPECT_EQ(v[step.operands[2]].shape, (std::vector<int64_t>{N}));
        }
      }
      continue;
    }
    EXPECT_NE(step.kernel, ENC_CUDA_GEMM_KERNEL);
    const int64_t threads = step.iattrs[1], smem = step.iattrs[2], p0 = step.iattrs[3],
                  p1 = step.iattrs[4];
    EXPECT_GE(threads, 32);
    EXPECT_LE(threads, 1024);
    EXPECT_EQ(threads % 32, 0);
    EXPECT_GE(smem, 0);
    EXPECT_GE(p0, 1);
    if (kind == ENC_CUDA_GRID_SEQ_HEAD_TILE) {
      EXPECT_GE(p1, 1);
      if (step.kernel.find("_mma_") != std::string::npos)
        EXPECT_EQ(2 * p0, threads); // tensor cores: a warp per 16 query rows
      else
        EXPECT_EQ(threads, 4 * p0); // CUDA cores: a quad of threads per query row
    }
    if (kind == ENC_CUDA_GRID_ELEMENTS) {
      EXPECT_GE(p1, 1);
      // One element per thread, or (GELU, dequantise) 8 of one row per thread.
      const bool vectorised = step.kernel.rfind("enc_cuda_gelu_", 0) == 0 ||
                              step.kernel.rfind("enc_cuda_dequantize_", 0) == 0;
      EXPECT_EQ(p0, threads * (vectorised && p1 % 8 == 0 ? 8 : 1)) << step.kernel;
    }
    const std::string decl = "extern \"C\" __global__ void __launch_bounds__(" +
                             std::to_string(threads) + ") " + step.kernel + "(enc_cuda_args a)";
    EXPECT_NE(source.find(decl), std::string::npos) << "missing: " << decl;
  }

  // Values: dtypes, packed shapes, live intervals, weights.
  for (size_t i = 0; i < v.size(); ++i) {
    const PlanValue &pv = v[i];
    SCOPED_TRACE("value " + std::to_string(i) + " " + pv.name);
    ASSERT_FALSE(pv.shape.empty());
    if (pv.kind == ValueKind::Input)
      continue;
    if (pv.kind == ValueKind::Weight) {
      const mlir::enc::WeightTensor *t = weights.find(pv.name);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->shape, pv.shape);
      for (int64_t d : pv.shape)
        EXPECT_GE(d, 1);
      const bool actName = llvm::StringRef(pv.name).ends_with(actSuffix);
      if (pv.dtype == act) {
        EXPECT_TRUE(actName) << "an " << actSuffix << " weight must be named X" << actSuffix;
        const mlir::enc::WeightTensor *f = weights.find(pv.name.substr(0, pv.name.size() - actSuffix.size()));
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(f->type, mlir::enc::WeightType::F32);
        const double rel = act == DType::F16 ? 1.0 / 2048 : 1.0 / 256;
        const std::vector<float> wants = f->floats(), gots = t->floats(); // rounded as written
        for (int64_t e = 0; e < t->numElements(); ++e) {
          const float want = wants[e], got = gots[e];
          ASSERT_LE(std::fabs(got - want), rel * std::fabs(want) + 6e-8) << pv.name << "[" << e << "]";
        }
      } else {
        EXPECT_FALSE(actName);
        EXPECT_TRUE(pv.dtype == DType::F32 || pv.dtype == DType::I8)
            << "weights are " << actSuffix << ", F32 or I8";
      }
      continue;
    }
    // Activations / outputs: packed per-token or pooled per-sequence rows.
    EXPECT_TRUE(pv.shape[0] == kDimTokens || pv.shape[0] == kDimBatch);
    if (pv.shape[0] == kDimBatch) {
      EXPECT_EQ(pv.dtype, DType::F32) << "only pooled rows are per sequence";
    }
    for (size_t d = 1; d < pv.shape.size(); ++d)
      EXPECT_GE(pv.shape[d], 1);
    EXPECT_GE(writer[i], 0) << "never written";
    EXPECT_EQ(pv.firstStep, writer[i]);
    const int32_t lastUse = std::max(writer[i], lastRead[i]);
    if (pv.kind == ValueKind::Output) {
      EXPECT_EQ(pv.lastStep, numSteps - 1);
    } else {
      EXPECT_EQ(pv.lastStep, lastUse);
    }
    if (firstRead[i] >= 0) {
      EXPECT_GT(firstRead[i], writer[i]) << "read before written";
    }
  }
}

/// int8 GEMM weights "X.q8" match a float quantisation of "X" within one step.
void checkInt8Weights(const Plan &plan, const mlir::enc::WeightStore &weights) {
  int checked = 0;
  for (const PlanStep &step : plan.steps) {
    if (step.kernel != ENC_CUDA_GEMM_KERNEL || plan.values[step.operands[0]].dtype != DType::I8)
      continue;
    const std::string &qName = plan.values[step.operands[1]].name;
    ASSERT_TRUE(llvm::StringRef(qName).ends_with(".q8")) << qName;
    const std::string base = qName.substr(0, qName.size() - 3);
    const auto *q = weights.find(qName), *s = weights.find(base + ".q8scale"),
               *f = weights.find(base);
    ASSERT_TRUE(q && s && f) << base;
    const int64_t N = q->shape[0], K = q->shape[1];
    const std::vector<float> qv = q->floats(), sv = s->floats(), fv = f->floats();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) {
        const float got = qv[n * K + k] * sv[n];
        ASSERT_LE(std::fabs(got - fv[n * K + k]), sv[n] * 1.0001f)
            << qName << "[" << n << ", " << k << "]";
      }
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no int8 GEMM in the plan";
}

/// Builds the fatbin for every default arch; returns the nvcc seconds.
double buildAllArchs(const std::string &source, const std::string &label) {
  ScopedTempDir dir;
  if (const char *keep = std::getenv("ENCC_CUDA_TEST_DUMP")) { // debugging aid
    std::error_code ec;
    llvm::raw_fd_ostream os(std::string(keep) + "/" + label + ".cu", ec);
    os << source;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto fatbin = buildCudaFatbin(source, defaultCudaArchs(), dir.path());
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(static_cast<bool>(fatbin)) << (fatbin ? "" : errText(fatbin.takeError()));
  if (!fatbin)
    return secs;
  EXPECT_EQ(fatbin->target, "cuda");
  EXPECT_EQ(fatbin->features, defaultCudaArchs());
  EXPECT_GE(fatbin->bytes.size(), 16u);
  if (fatbin->bytes.size() < 16)
    return secs;
  uint32_t magic;
  std::memcpy(&magic, fatbin->bytes.data(), 4);
  EXPECT_EQ(magic, 0xBA55ED50u);
  // -Werror all-warnings: a warning would have failed the build; nothing on stderr.
  auto log = llvm::MemoryBuffer::getFile(dir.path() + "/nvcc.log");
  if (log) {
    EXPECT_EQ((*log)->getBuffer().trim(), "") << "nvcc printed diagnostics";
  }
  std::printf("[ nvcc     ] %s: %zu lines of .cu, %.1f s for %zu archs, fatbin %zu KB\n",
              label.c_str(), static_cast<size_t>(std::count(source.begin(), source.end(), '\n')),
              secs, defaultCudaArchs().size(), fatbin->bytes.size() / 1024);
  return secs;
}

struct TinyCase {
  const char *name;
  DType dtype;
  const char *quantize;
  const char *act;
  const char *pooling;
  double tolerance; ///< emulated plan vs float64 reference: max |err| / max |ref|
};

/// Runs the plan on the host emulator for a mixed-length batch and compares
/// hidden (packed rows) and pooled outputs with the float64 reference encoder.
void checkEmulatedOutputs(const Plan &plan, const mlir::enc::WeightStore &weights, DType act,
                          const et::TinyModel &model, double tolerance) {
  const std::vector<int64_t> lengths = {12, 1, 7};
  const int64_t S = 12, B = lengths.size(), H = model.spec.hidden;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> tok(5, model.spec.vocab - 1);
  std::vector<std::vector<int64_t>> ids(B, std::vector<int64_t>(S, 0)), types = ids;
  std::vector<int32_t> flat(B * S, 0), flatTypes(B * S, 0), len32(lengths.begin(), lengths.end());
  // With two token types, the second half of each sequence is segment 1.
  const bool typed = plan.inputs.size() > 2;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < lengths[b]; ++s) {
      flat[b * S + s] = static_cast<int32_t>(ids[b][s] = tok(rng));
      flatTypes[b * S + s] = static_cast<int32_t>(types[b][s] = typed && 2 * s >= lengths[b] ? 1 : 0);
    }
  const et::ReferenceOutput ref = et::runReferenceEncoder(model, ids, lengths, types);
  const et::EmulatedOutputs got =
      et::emulateCudaPlan(plan, weights, act, flat, flatTypes, len32, S);
  ASSERT_EQ(got.error, "");
  double maxRef = 0, maxErr = 0;
  int64_t row = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < lengths[b]; ++s, ++row)
      for (int64_t h = 0; h < H; ++h) {
        maxRef = std::max(maxRef, std::fabs(ref.hidden[b][s][h]));
        maxErr = encc::testing::errorMax(maxErr, std::fabs(got.hidden[row * H + h] - ref.hidden[b][s][h]));
      }
  ASSERT_EQ(got.hidden.size(), static_cast<size_t>(row * H));
  EXPECT_LE(maxErr / maxRef, tolerance) << "hidden: max |err| " << maxErr << ", max |ref| " << maxRef;
  std::printf("[ emulated ] hidden max|err|/max|ref| = %.2e (tolerance %.0e)\n", maxErr / maxRef,
              tolerance);
  if (ref.pooled.empty()) {
    EXPECT_TRUE(got.pooled.empty());
    return;
  }
  ASSERT_EQ(got.pooled.size(), static_cast<size_t>(B * H));
  double pRef = 0, pErr = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      pRef = std::max(pRef, std::fabs(ref.pooled[b][h]));
      pErr = encc::testing::errorMax(pErr, std::fabs(got.pooled[b * H + h] - ref.pooled[b][h]));
    }
  EXPECT_LE(pErr / pRef, tolerance) << "pooled: max |err| " << pErr << ", max |ref| " << pRef;
}

void PrintTo(const TinyCase &c, std::ostream *os) { *os << c.name; }

class CudaTinyModel : public ::testing::TestWithParam<TinyCase> {};

TEST_P(CudaTinyModel, PlanInvariantsAndNvccBuild) {
  const TinyCase &c = GetParam();
  ScopedTempDir dir;
  et::TinyModelSpec spec;
  spec.act = c.act;
  spec.pooling = c.pooling;
  spec.normalize = std::string(c.pooling) != "none";
  spec.seed = 7;
  const et::TinyModel tiny = et::writeTinyModel(dir.path() + "/model", spec);
  auto compiled = importAndRun(dir.path() + "/model", c.quantize, "", c.pooling);
  ASSERT_TRUE(static_cast<bool>(compiled)) << errText(compiled.takeError());
  CudaCodegenOptions opts;
  opts.dtype = c.dtype;
  auto gen = generateCudaCode(*compiled->model.module, compiled->model.weights, opts);
  ASSERT_TRUE(static_cast<bool>(gen)) << errText(gen.takeError());
  const bool pools = std::string(c.pooling) != "none";
  checkPlan(gen->plan, gen->source, compiled->model.weights, c.dtype, pools);
  if (std::string(c.quantize) == "int8")
    checkInt8Weights(gen->plan, compiled->model.weights);
  checkEmulatedOutputs(gen->plan, compiled->model.weights, c.dtype, tiny, c.tolerance);

  // Shape of the plan: per layer 1 attention step, one fused LN per residual.
  std::map<std::string, int> ops;
  for (const PlanStep &s : gen->plan.steps)
    ++ops[s.op];
  EXPECT_EQ(ops["enc.attention"], spec.layers);
  EXPECT_EQ(ops["output"], 1);
  const bool q8 = std::string(c.quantize) == "int8";
  // The embedding's LayerNorm (and, int8, its quantise: 11 operands with type
  // ids and the int8 word table) fused into it.
  EXPECT_EQ(ops[q8 ? "enc.embedding+enc.layernorm+enc.quantize" : "enc.embedding+enc.layernorm"], 1);
  if (q8) {
    // After each int8 GEMM, one row kernel: FFN1's GELU + the quantisation
    // for FFN2; the output projections' residual LayerNorms (+ the
    // quantisation for the next Linear, all but the last).
    EXPECT_EQ(ops["enc.quantize"], spec.layers); // of the attention's output
    EXPECT_EQ(ops["enc.qlinear+enc.quantize"], spec.layers);
    EXPECT_EQ(ops["enc.qlinear+enc.add_layernorm+enc.quantize"], 2 * spec.layers - 1);
    EXPECT_EQ(ops["enc.qlinear+enc.add_layernorm"], 1);
    EXPECT_EQ(ops["enc.qlinear"], 5 * spec.layers); // 4 GEMMs, and QKV's dequantisation
    EXPECT_EQ(ops["enc.add_layernorm"] + ops["enc.add_layernorm+enc.quantize"], 0);
  } else {
    EXPECT_EQ(ops["enc.add_layernorm"], 2 * spec.layers);
  }
  if (pools) {
    EXPECT_EQ(ops["enc.pool+enc.l2norm"], 1);
  }
  // Identical instantiations share one symbol: the kernel count does not grow
  // with the number of layers.
  std::set<std::string> symbols;
  for (const PlanStep &s : gen->plan.steps)
    if (s.kernel != ENC_CUDA_GEMM_KERNEL)
      symbols.insert(s.kernel);
  EXPECT_LE(symbols.size(), 12u);

  std::string why;
  if (noNvcc(why))
    GTEST_SKIP() << why;
  buildAllArchs(gen->source, c.name);
}

INSTANTIATE_TEST_SUITE_P(
    Tiny, CudaTinyModel,
    ::testing::Values(TinyCase{"tiny_f16", DType::F16, "none", "gelu", "mean", 5e-3},
                      TinyCase{"tiny_bf16", DType::BF16, "none", "gelu_new", "cls", 2e-2},
                      TinyCase{"tiny_int8", DType::F16, "int8", "gelu", "none", 2e-2}),
    [](const ::testing::TestParamInfo<TinyCase> &i) { return std::string(i.param.name); });

TEST(CudaCodegen, MiniLMFp16AllArchs) {
  const char *dir = std::getenv("ENCC_MINILM_DIR");
  ASSERT_TRUE(dir && *dir) << "ENCC_MINILM_DIR is not set: point it at the all-MiniLM-L6-v2 "
                              "folder (./scripts/test sets it)";
  ASSERT_TRUE(llvm::sys::fs::exists(std::string(dir) + "/model.safetensors"))
      << "ENCC_MINILM_DIR=" << dir << " has no model.safetensors";
  auto compiled = importAndRun(dir, "none");
  ASSERT_TRUE(static_cast<bool>(compiled)) << errText(compiled.takeError());
  auto gen = generateCudaCode(*compiled->model.module, compiled->model.weights, {});
  ASSERT_TRUE(static_cast<bool>(gen)) << errText(gen.takeError());
  checkPlan(gen->plan, gen->source, compiled->model.weights, DType::F16, true);
  // 6 layers x (QKV GEMM, attention, out GEMM, add+LN, FFN1 GEMM, gelu, FFN2
  // GEMM, add+LN) + embedding + pool + output.
  EXPECT_EQ(gen->plan.steps.size(), 6u * 8 + 3);
  size_t gemms = 0;
  for (const PlanStep &s : gen->plan.steps)
    gemms += s.kernel == ENC_CUDA_GEMM_KERNEL;
  EXPECT_EQ(gemms, 6u * 4);
  // Only the GPU names: the fp16 copies, the f32 LayerNorm parameters.
  uint64_t bytes = 0;
  for (const PlanValue &v : gen->plan.values)
    if (v.kind == ValueKind::Weight)
      bytes += compiled->model.weights.find(v.name)->byteSize();
  EXPECT_LT(bytes, 50u << 20) << "fp16 MiniLM weights should be about 45 MB";
  std::string why;
  if (noNvcc(why))
    GTEST_SKIP() << why;
  buildAllArchs(gen->source, "MiniLM_fp16");
}

TEST(CudaCodegen, UnfusedPipelineIsAnError) {
  ScopedTempDir dir;
  et::TinyModelSpec spec;
  et::writeTinyModel(dir.path() + "/model", spec);
  // --pipeline=none: the decompose pass alone, the unfused attention.
  auto compiled = importAndRun(dir.path() + "/model", "none", "none");
  ASSERT_TRUE(static_cast<bool>(compiled)) << errText(compiled.takeError());
  auto gen = generateCudaCode(*compiled->model.module, compiled->model.weights, {});
  ASSERT_FALSE(static_cast<bool>(gen));
  const std::string msg = errText(gen.takeError());
  EXPECT_NE(msg.find("--target=cuda: 'enc."), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs the fused pipeline"), std::string::npos) << msg;
}

TEST(CudaCodegen, RejectsOtherActivationDtypes) {
  ScopedTempDir dir;
  et::TinyModelSpec spec;
  et::writeTinyModel(dir.path() + "/model", spec);
  auto compiled = importAndRun(dir.path() + "/model", "none");
  ASSERT_TRUE(static_cast<bool>(compiled)) << errText(compiled.takeError());
  CudaCodegenOptions opts;
  opts.dtype = DType::F32;
  auto gen = generateCudaCode(*compiled->model.module, compiled->model.weights, opts);
  ASSERT_FALSE(static_cast<bool>(gen));
  EXPECT_NE(errText(gen.takeError()).find("F16 or BF16"), std::string::npos);
}

/// The attention steps' kernel symbols of a tiny model with `heads` heads of
/// hidden 64, or the error text.
std::vector<std::string> attentionKernels(int heads, CudaAttentionKernel kernel, std::string &error) {
  ScopedTempDir dir;
  et::TinyModelSpec spec;
  spec.heads = heads;
  et::writeTinyModel(dir.path() + "/model", spec);
  auto compiled = importAndRun(dir.path() + "/model", "none");
  if (!compiled) {
    error = errText(compiled.takeError());
    return {};
  }
  CudaCodegenOptions opts;
  opts.attention = kernel;
  auto gen = generateCudaCode(*compiled->model.module, compiled->model.weights, opts);
  if (!gen) {
    error = errText(gen.takeError());
    return {};
  }
  std::vector<std::string> symbols;
  for (const PlanStep &s : gen->plan.steps)
    if (s.op == "enc.attention") {
      symbols.push_back(s.kernel);
      EXPECT_EQ(s.iattrs[3], s.kernel.find("_mma_") != std::string::npos ? 64 : 32) << s.kernel;
    }
  return symbols;
}

TEST(CudaCodegen, AttentionKernelChoice) {
  std::string error;
  // Head dim 32 (2 heads of hidden 64): auto picks tensor cores.
  for (const std::string &k : attentionKernels(2, CudaAttentionKernel::Auto, error))
    EXPECT_EQ(k, "enc_cuda_attention_mma_packed_f16_h2_d32");
  EXPECT_EQ(error, "");
  for (const std::string &k : attentionKernels(2, CudaAttentionKernel::CudaCores, error))
    EXPECT_EQ(k, "enc_cuda_attention_packed_f16_h2_d32");
  EXPECT_EQ(error, "");
  // Head dim 8 (8 heads): not a multiple of 16, so CUDA cores under auto and
  // an error naming the option when tensor cores are asked for.
  auto autoD8 = attentionKernels(8, CudaAttentionKernel::Auto, error);
  ASSERT_EQ(autoD8.size(), 2u) << error;
  EXPECT_EQ(autoD8[0], "enc_cuda_attention_packed_f16_h8_d8");
  EXPECT_TRUE(attentionKernels(8, CudaAttentionKernel::TensorCores, error).empty());
  EXPECT_NE(error.find("--cuda-attention=tensor-cores needs a head dim that is a multiple of 16, "
                       "got 8"),
            std::string::npos)
      << error;

  EXPECT_EQ(*parseCudaAttentionKernel("auto"), CudaAttentionKernel::Auto);
  EXPECT_EQ(*parseCudaAttentionKernel("tensor-cores"), CudaAttentionKernel::TensorCores);
  EXPECT_EQ(*parseCudaAttentionKernel("cuda-cores"), CudaAttentionKernel::CudaCores);
  auto bad = parseCudaAttentionKernel("mma");
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(errText(bad.takeError()),
            "--cuda-attention expects auto, tensor-cores or cuda-cores, got 'mma'");
}

TEST(CudaCodegen, LaunchHeaderLayout) {
  EXPECT_EQ(cudaLaunchHeader(ENC_CUDA_GRID_SEQ_HEAD_TILE, 128, 0, 32, 12),
            (std::vector<int64_t>{1, 128, 0, 32, 12}));
  EXPECT_EQ(cudaLaunchHeader(ENC_CUDA_GRID_GEMM, 0, 0, 0, 0).size(),
            static_cast<size_t>(ENC_CUDA_LAUNCH_HEADER));
}

TEST(CudaArchs, DefaultsAndParsing) {
  EXPECT_EQ(defaultCudaArchs(),
            (std::vector<std::string>{"sm_80", "sm_86", "sm_89", "sm_90", "compute_90"}));
  auto ok = parseCudaArchs("sm_80, sm_90a,compute_90");
  ASSERT_TRUE(static_cast<bool>(ok)) << errText(ok.takeError());
  EXPECT_EQ(*ok, (std::vector<std::string>{"sm_80", "sm_90a", "compute_90"}));
  for (const char *bad : {"", "sm_80,", "sm80", "sm_", "sm_x0", "gfx90a", "sm_75",
                          "compute_70", "sm_80,sm_80", "sm_90b"}) {
    auto r = parseCudaArchs(bad);
    ASSERT_FALSE(static_cast<bool>(r)) << "accepted '" << bad << "'";
    const std::string msg = errText(r.takeError());
    EXPECT_NE(msg.find("--cuda-arch"), std::string::npos) << msg;
  }
}

TEST(CudaArchs, MissingNvccIsAClearError) {
  const char *old = std::getenv("NVCC");
  const std::string saved = old ? old : "";
  setenv("NVCC", "/nonexistent/bin/nvcc", 1);
  auto r = findNvcc();
  auto built = buildCudaFatbin("", defaultCudaArchs(), "/tmp");
  if (old)
    setenv("NVCC", saved.c_str(), 1);
  else
    unsetenv("NVCC");
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(errText(r.takeError()).find("NVCC=/nonexistent/bin/nvcc"), std::string::npos);
  ASSERT_FALSE(static_cast<bool>(built));
  EXPECT_NE(errText(built.takeError()).find("NVCC"), std::string::npos);
}

/// Nearest-even reference: the candidate half (all 65536 bit patterns decoded
/// by an independent ldexp-based decoder) closest to x.
TEST(HalfConversion, MatchesNearestRepresentable) {
  auto decode = [](uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
  };
  for (uint32_t h = 0; h < 0x7c00; ++h) // finite positives round-trip
    ASSERT_EQ(encm_f32_to_f16(static_cast<float>(decode(h))), h) << h;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> ex(-26, 16);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::ldexp(mant(rng), ex(rng));
    const uint16_t got = encm_f32_to_f16(x);
    const double ax = std::fabs(static_cast<double>(x));
    if (ax >= 65520.0) {
      ASSERT_EQ(got & 0x7fff, 0x7c00) << x;
      continue;
    }
    // The neighbours of the result must not be closer.
    const double g = std::fabs(decode(got));
    ASSERT_EQ((got >> 15) != 0, std::signbit(x)) << x;
    const uint16_t mag = got & 0x7fff;
    for (int d : {-1, 1}) {
      const int n = mag + d;
      if (n < 0 || n >= 0x7c00)
        continue;
      const double o = decode(static_cast<uint16_t>(n));
      ASSERT_LE(std::fabs(g - ax), std::fabs(o - ax)) << x;
      if (std::fabs(g - ax) == std::fabs(o - ax)) {
        ASSERT_EQ(mag & 1, 0) << "tie must round to even: " << x;
      }
    }
  }
  EXPECT_EQ(encm_f32_to_f16(INFINITY), 0x7c00);
  EXPECT_EQ(encm_f32_to_f16(-INFINITY), 0xfc00);
  EXPECT_EQ(encm_f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(encm_f32_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(encm_f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(encm_f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(encm_f32_to_f16(1.0f), 0x3c00);
  EXPECT_TRUE(std::isnan(encm_f16_to_f32(encm_f32_to_f16(NAN))));
  for (uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 0x7c00) != 0x7c00) {
      ASSERT_EQ(static_cast<double>(encm_f16_to_f32(h)), decode(h)) << h;
    }
}

TEST(Bf16Conversion, NearestEven) {
  EXPECT_EQ(encm_f32_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even (1).
  EXPECT_EQ(encm_f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(encm_f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(encm_f32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(encm_f32_to_bf16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(encm_bf16_to_f32(encm_f32_to_bf16(NAN))));
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 10.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = d(rng);
    const float y = encm_bf16_to_f32(encm_f32_to_bf16(x));
    ASSERT_LE(std::fabs(y - x), std::ldexp(std::fabs(x), -8)) << x;
  }
}

} // namespace
