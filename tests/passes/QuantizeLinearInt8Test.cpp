//===- QuantizeLinearInt8Test.cpp - int8 and bf16 weights written by passes ===//
//
// Runs quantize-linear-int8 with a WeightStore and checks the int8 weights
// and scales it writes bit for bit against quantizeWeightsQ8 of the int8
// GEMM kernels (enc_qgemm.h, the code the runtime's numbers depend on), and
// independently against |dequant(q) - w| <= s/2. Likewise convert-linear-bf16
// against toBf16Bits (enc_bf16.h) and |bf16(w) - w| <= 2^-8 |w| (half an ulp of an 8-bit significand).
//
//===----------------------------------------------------------------------===//
#include "passes/PassCounters.h"
#include "passes/Passes.h"
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "ir/WeightStore.h"

#include "compiler/codegen/cpu/kernels/enc_bf16.h"
#include "compiler/codegen/cpu/kernels/enc_qgemm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::enc;

namespace {

// Embedding, a Linear with bias + GELU, one on the same input (shared
// quantize), one on another value, one kept f32 by a skip pattern.
const char *kModel = R"mlir(
func.func @m(%ids: tensor<?x?xi32>) -> (tensor<?x?x6xf32>, tensor<?x?x5xf32>, tensor<?x?x5xf32>) {
  %word = enc.weight "emb.word" : tensor<50x5xf32>
  %pos = enc.weight "emb.pos" : tensor<8x5xf32>
  %type = enc.weight "emb.type" : tensor<2x5xf32>
  %x = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : i64}
      : (tensor<?x?xi32>, tensor<50x5xf32>, tensor<8x5xf32>, tensor<2x5xf32>) -> tensor<?x?x5xf32>
  %wi = enc.weight "ffn.in.weight" : tensor<6x5xf32>
  %bi = enc.weight "ffn.in.bias" : tensor<6xf32>
  %h = enc.linear %x, %wi, %bi {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x5xf32>, tensor<6x5xf32>, tensor<6xf32>) -> tensor<?x?x6xf32>
  %wa = enc.weight "attn.q.weight" : tensor<5x5xf32>
  %a = enc.linear %x, %wa : (tensor<?x?x5xf32>, tensor<5x5xf32>) -> tensor<?x?x5xf32>
  %wo = enc.weight "ffn.out.weight" : tensor<5x6xf32>
  %o = enc.linear %h, %wo : (tensor<?x?x6xf32>, tensor<5x6xf32>) -> tensor<?x?x5xf32>
  %wk = enc.weight "attention.output.weight" : tensor<5x5xf32>
  %k = enc.linear %o, %wk : (tensor<?x?x5xf32>, tensor<5x5xf32>) -> tensor<?x?x5xf32>
  return %h, %a, %k : tensor<?x?x6xf32>, tensor<?x?x5xf32>, tensor<?x?x5xf32>
}
)mlir";

/// Random weights plus the awkward cases: an all-zero row, a row whose
/// largest magnitude is negative, exact .5 ties after scaling, denormals.
WeightTensor weights(int64_t n, int64_t k, unsigned seed) {
  WeightTensor t = WeightTensor::allocate(WeightType::F32, {n, k});
  float *f = t.mutableF32();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  for (int64_t i = 0; i < n * k; ++i)
    f[i] = u(rng);
  for (int64_t c = 0; c < k; ++c)
    f[c] = 0.0f; // row 0: zeros
  f[k] = -1.27f; // row 1: max |w| negative
  if (k > 2) {
    f[k + 1] = 0.025f; // 0.025 * 100 = 2.5: a tie
    f[k + 2] = 1e-40f; // denormal
  }
  return t;
}

struct QuantizeFixture : ::testing::Test {
  QuantizeFixture() {
    ctx.loadDialect<EncDialect, func::FuncDialect>();
    store.set("emb.word", weights(50, 5, 1));
    store.set("emb.pos", weights(8, 5, 2));
    store.set("emb.type", weights(2, 5, 3));
    store.set("ffn.in.weight", weights(6, 5, 4));
    store.set("ffn.in.bias", weights(6, 1, 5));
    store.find("ffn.in.bias")->shape = {6};
    store.set("attn.q.weight", weights(5, 5, 6));
    store.set("ffn.out.weight", weights(5, 6, 7));
    store.set("attention.output.weight", weights(5, 5, 8));
  }

  OwningOpRef<ModuleOp> parse(const char *text = kModel) {
    auto m = parseSourceString<ModuleOp>(text, &ctx);
    EXPECT_TRUE(m);
    return m;
  }
  /// Runs the pass with the store of useStore (if any), summing its counters
  /// into `counts`.
  LogicalResult quantize(ModuleOp m, EncPassOptions opts,
                         const char *pass = "quantize-linear-int8") {
    PassManager pm(&ctx);
    pm.addInstrumentation(createPassCountCollector(counts));
    opts.weights = activeStore;
    std::string error;
    EXPECT_TRUE(succeeded(addPassByName(pm, pass, &error, opts))) << error;
    return pm.run(m);
  }
  std::map<std::string, int> opCounts(ModuleOp m) {
    std::map<std::string, int> n;
    m.walk([&](Operation *op) { ++n[op->getName().getStringRef().str()]; });
    return n;
  }

  /// `name`.q8 / `name`.q8scale in the store equal quantizeWeightsQ8 of the
  /// f32 tensor `name`, bit for bit; returns the reference scales.
  std::vector<float> expectQuantized(const std::string &name) {
    SCOPED_TRACE(name);
    const WeightTensor *w = store.find(name);
    EXPECT_NE(w, nullptr);
    if (!w)
      return {};
    const int n = static_cast<int>(w->shape[0]), k = static_cast<int>(w->shape[1]);
    const std::vector<float> wf = w->floats(); // as stored: f32, f16 or bf16
    std::vector<int8_t> refQ(n * k);
    std::vector<float> refS(n);
    enc_kernels::quantizeWeightsQ8(wf.data(), n, k, refQ.data(), refS.data());

    const WeightTensor *q = store.find(name + ".q8");
    const WeightTensor *s = store.find(name + ".q8scale");
    EXPECT_NE(q, nullptr);
    EXPECT_NE(s, nullptr);
    if (!q || !s)
      return refS;
    EXPECT_EQ(q->type, WeightType::I8);
    EXPECT_EQ(q->shape, (std::vector<int64_t>{n, k}));
    EXPECT_EQ(s->type, WeightType::F32);
    EXPECT_EQ(s->shape, (std::vector<int64_t>{n}));
    if (!q->resident() || !s->resident())
      return ADD_FAILURE() << "quantised weights are not held", refS;
    const auto *qv = reinterpret_cast<const int8_t *>(q->data());
    for (int i = 0; i < n * k; ++i)
      EXPECT_EQ(qv[i], refQ[i]) << "element " << i;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(std::memcmp(&s->f32()[r], &refS[r], sizeof(float)), 0)
          << "scale " << r << ": " << s->f32()[r] << " vs " << refS[r];
      // Independent of the kernels: symmetric, in range, error <= s/2.
      for (int c = 0; c < k; ++c) {
        float orig = wf[r * k + c];
        EXPECT_LE(std::abs(int(qv[r * k + c])), 127);
        EXPECT_LE(std::fabs(qv[r * k + c] * s->f32()[r] - orig),
                  0.5f * s->f32()[r] * 1.0001f + 1e-30f)
            << r << "," << c;
      }
    }
    return refS;
  }

  MLIRContext ctx;
  void useStore(WeightStore *s) { activeStore = s; }

  WeightStore *activeStore = nullptr;
  PassCounts counts;
  WeightStore store;
};

TEST(QuantizePassApi, Names) {
  EXPECT_TRUE(isEncPassName("quantize-linear-int8"));
  EXPECT_EQ(std::count(defaultPipeline().begin(), defaultPipeline().end(),
                       "quantize-linear-int8"),
            0);
  EXPECT_EQ(knownPassNames().end()[-5], "quantize-linear-int8");
  EXPECT_EQ(knownPassNames().end()[-4], "convert-linear-bf16");
  EXPECT_EQ(knownPassNames().end()[-3], "convert-attention-bf16");
  EXPECT_EQ(knownPassNames().end()[-2], "convert-attention-bf16-amx");
  EXPECT_EQ(encShortNameForPassArgument("enc-convert-attention-bf16-amx"), "convert-attention-bf16-amx");
  EXPECT_EQ(knownPassNames().back(), "form-fusion-groups");
  EXPECT_EQ(std::count(defaultPipeline().begin(), defaultPipeline().end(), "form-fusion-groups"), 0);
  EXPECT_EQ(encShortNameForPassArgument("enc-quantize-linear-int8"),
            "quantize-linear-int8");
  MLIRContext ctx;
  PassManager pm(&ctx);
  std::string error;
  EXPECT_TRUE(failed(addPassByName(pm, "quantize-int4", &error)));
  EXPECT_NE(error.find("quantize-linear-int8"), std::string::npos) << error;
  EXPECT_TRUE(succeeded(addPassByName(pm, "quantize-linear-int8", &error)));
  EXPECT_EQ(pm.size(), 1u);
}

// bf16: only Linears with an even K convert (ffn.out, 5 x 6; the others
// have K = 5), their weights rounded as the kernels round.
TEST_F(QuantizeFixture, Bf16WritesKernelIdenticalWeights) {
  useStore(&store);
  auto m = parse();
  ASSERT_TRUE(succeeded(quantize(*m, EncPassOptions(), "convert-linear-bf16")));
  auto ops = opCounts(*m);
  EXPECT_EQ(ops["enc.linear"], 4);
  EXPECT_EQ(ops["enc.to_bf16"], 1);
  EXPECT_EQ(counts["convert-linear-bf16"]["num-converted"], 1u);
  EXPECT_EQ(store.find("ffn.in.weight.bf16"), nullptr) << "odd K must stay f32";
  const WeightTensor *w = store.find("ffn.out.weight"), *b = store.find("ffn.out.weight.bf16");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, WeightType::BF16);
  EXPECT_EQ(b->shape, w->shape);
  const WeightTensor bb = b->read(); // rounded as the artifact is written
  ASSERT_EQ(bb.byteSize(), size_t(w->numElements()) * 2);
  const auto *bv = reinterpret_cast<const uint16_t *>(bb.data());
  for (int64_t i = 0; i < w->numElements(); ++i) {
    const float orig = w->f32()[i];
    EXPECT_EQ(bv[i], enc_kernels::toBf16Bits(orig)) << "element " << i;
    EXPECT_LE(std::fabs(enc_kernels::bf16ToFloat(bv[i]) - orig), std::ldexp(std::fabs(orig), -8) + 1e-38f)
        << "element " << i;
  }
}

/// `t`'s values rounded to bf16 and stored so (a bf16 checkpoint's tensor).
WeightTensor storedBf16(const WeightTensor &t) { return t.roundedTo(WeightType::BF16).read(); }

// A bf16 checkpoint's weights: convert-linear-bf16 uses the stored tensor as
// it is (the same bytes, not a copy); int8 quantises its values.
TEST_F(QuantizeFixture, StoredBf16WeightsAreUsedAsStored) {
  for (const char *name : {"ffn.in.weight", "attn.q.weight", "ffn.out.weight", "emb.word"})
    store.set(name, storedBf16(*store.find(name)));
  WeightStore forInt8 = store;
  useStore(&store);
  auto m = parse();
  ASSERT_TRUE(succeeded(quantize(*m, EncPassOptions(), "convert-linear-bf16")));
  EXPECT_EQ(counts["convert-linear-bf16"]["num-converted"], 1u);
  const WeightTensor *w = store.find("ffn.out.weight"), *b = store.find("ffn.out.weight.bf16");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, WeightType::BF16);
  ASSERT_TRUE(b->resident());
  EXPECT_EQ(b->data(), w->data()) << "the stored bf16 tensor is used, not copied";

  store = forInt8; // the bf16 tensors again, without the pass's additions
  auto m8 = parse();
  ASSERT_TRUE(succeeded(quantize(*m8, EncPassOptions())));
  EXPECT_EQ(opCounts(*m8)["enc.qlinear"], 4);
  for (const char *name : {"ffn.in.weight", "attn.q.weight", "ffn.out.weight", "emb.word"})
    expectQuantized(name); // against the bf16 values, widened
}

TEST_F(QuantizeFixture, WritesKernelIdenticalWeightsAndScales) {
  useStore(&store);
  auto m = parse();
  EncPassOptions opts;
  opts.quantizeSkip = {"*attention.output*"};
  ASSERT_TRUE(succeeded(quantize(*m, opts)));

  auto ops = opCounts(*m);
  EXPECT_EQ(ops["enc.qlinear"], 3);
  EXPECT_EQ(ops["enc.linear"], 1); // the skipped one
  EXPECT_EQ(ops["enc.quantize"], 2); // x (shared by two) and h

  std::map<std::string, std::vector<float>> scales;
  for (const char *name : {"ffn.in.weight", "attn.q.weight", "ffn.out.weight",
                           "emb.word"})
    scales[name] = expectQuantized(name);
  // Row 0 of every weight is zero: scale 0, all q 0.
  EXPECT_EQ(scales["emb.word"][0], 0.0f);
  EXPECT_EQ(store.find("attention.output.weight.q8"), nullptr);
  EXPECT_EQ(store.find("emb.pos.q8"), nullptr);
  // The f32 originals stay in the store (codegen only emits referenced ones).
  EXPECT_NE(store.find("ffn.in.weight"), nullptr);

  // Each qlinear: its weights, kept bias/epilogue and the scale summary.
  int seen = 0;
  m->walk([&](QLinearOp q) {
    auto w = q.getWeight().getDefiningOp<WeightOp>();
    auto s = q.getWScale().getDefiningOp<WeightOp>();
    ASSERT_TRUE(w && s);
    std::string base = w.getName().drop_back(3).str(); // strip ".q8"
    EXPECT_EQ(w.getName(), base + ".q8");
    EXPECT_EQ(s.getName(), base + ".q8scale");
    ASSERT_TRUE(scales.count(base)) << base;
    const auto &ref = scales[base];
    ASSERT_TRUE(q.getWScaleMin() && q.getWScaleMax());
    EXPECT_EQ(q.getWScaleMin()->convertToFloat(),
              *std::min_element(ref.begin(), ref.end()));
    EXPECT_EQ(q.getWScaleMax()->convertToFloat(),
              *std::max_element(ref.begin(), ref.end()));
    auto quant = q.getX().getDefiningOp<QuantizeOp>();
    ASSERT_TRUE(quant);
    EXPECT_FALSE(quant.getStaticScale().has_value());
    if (base == "ffn.in.weight") {
      EXPECT_EQ(q.getEpilogue(), Epilogue::gelu);
      ASSERT_TRUE(q.getBias());
      EXPECT_EQ(q.getBias().getDefiningOp<WeightOp>().getName(), "ffn.in.bias");
    } else {
      EXPECT_EQ(q.getEpilogue(), Epilogue::none);
      EXPECT_FALSE(q.getBias());
    }
    ++seen;
  });
  EXPECT_EQ(seen, 3);

  EmbeddingOp emb;
  m->walk([&](EmbeddingOp e) { emb = e; });
  ASSERT_TRUE(emb);
  EXPECT_TRUE(emb.isQuantized());
  EXPECT_EQ(emb.getWord().getDefiningOp<WeightOp>().getName(), "emb.word.q8");
  EXPECT_EQ(emb.getWordScale().getDefiningOp<WeightOp>().getName(),
            "emb.word.q8scale");
  EXPECT_TRUE(succeeded(verify(*m)));

  auto q = counts["quantize-linear-int8"];
  EXPECT_EQ(q["num-quantized"], 3u);
  EXPECT_EQ(q["num-skipped"], 1u);
  EXPECT_EQ(q["num-quantize-ops"], 2u);
  EXPECT_EQ(q["num-embeddings"], 1u);
  EXPECT_EQ(q["num-weights-created"], 8u);
}

TEST_F(QuantizeFixture, EmbeddingsOffAndSkipByGlob) {
  useStore(&store);
  auto m = parse();
  EncPassOptions opts;
  opts.quantizeEmbeddings = false;
  opts.quantizeSkip = {"ffn.*", "attn.?.weight"};
  ASSERT_TRUE(succeeded(quantize(*m, opts)));
  auto ops = opCounts(*m);
  EXPECT_EQ(ops["enc.qlinear"], 1); // attention.output.weight only
  EXPECT_EQ(ops["enc.linear"], 3);
  EXPECT_EQ(store.find("emb.word.q8"), nullptr);
  EXPECT_EQ(store.find("ffn.in.weight.q8"), nullptr);
  expectQuantized("attention.output.weight");
  EXPECT_EQ(counts["quantize-linear-int8"]["num-skipped"], 3u);
}

TEST_F(QuantizeFixture, MissingWeightStaysFloat) {
  WeightStore partial;
  partial.set("ffn.in.weight", weights(6, 5, 4));
  partial.set("attn.q.weight", weights(4, 5, 6)); // wrong shape: not used
  useStore(&partial);
  auto m = parse();
  ASSERT_TRUE(succeeded(quantize(*m, EncPassOptions())));
  auto ops = opCounts(*m);
  EXPECT_EQ(ops["enc.qlinear"], 1);
  EXPECT_EQ(ops["enc.linear"], 3);
  EXPECT_EQ(ops["enc.quantize"], 1);
  EXPECT_EQ(partial.find("attn.q.weight.q8"), nullptr);
  EXPECT_NE(partial.find("ffn.in.weight.q8"), nullptr);
  EXPECT_TRUE(succeeded(verify(*m)));
}

TEST_F(QuantizeFixture, WithoutStoreOnlyTheIRChanges) {
  auto m = parse();
  ASSERT_TRUE(succeeded(quantize(*m, EncPassOptions())));
  EXPECT_EQ(opCounts(*m)["enc.qlinear"], 4);
  m->walk([&](QLinearOp q) { EXPECT_FALSE(q.getWScaleMin().has_value()); });
  EXPECT_EQ(store.find("ffn.in.weight.q8"), nullptr);
}

TEST_F(QuantizeFixture, InvalidSkipPatternFailsThePass) {
  auto m = parse();
  EncPassOptions opts;
  opts.quantizeSkip = {"ffn.[in"};
  std::string diag;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag = d.str();
    return success();
  });
  EXPECT_TRUE(failed(quantize(*m, opts)));
  EXPECT_NE(diag.find("invalid skip pattern 'ffn.[in'"), std::string::npos)
      << diag;
}

// With the fusion pipeline first: the fused Q/K/V weight is quantised too.
TEST_F(QuantizeFixture, AfterFusionPipeline) {
  const char *text = R"mlir(
func.func @qkv(%x: tensor<?x?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %wq = enc.weight "q.w" : tensor<4x4xf32>
  %wk = enc.weight "k.w" : tensor<4x4xf32>
  %wv = enc.weight "v.w" : tensor<4x4xf32>
  %q = enc.linear %x, %wq : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<?x?x4xf32>
  %k = enc.linear %x, %wk : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<?x?x4xf32>
  %v = enc.linear %x, %wv : (tensor<?x?x4xf32>, tensor<4x4xf32>) -> tensor<?x?x4xf32>
  return %q, %k, %v : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
}
)mlir";
  store.set("q.w", weights(4, 4, 11));
  store.set("k.w", weights(4, 4, 12));
  store.set("v.w", weights(4, 4, 13));
  auto m = parse(text);
  EncPipelineOptions opts;
  opts.passes.push_back("quantize-linear-int8");
  opts.passOptions.weights = &store;
  PassManager pm(&ctx);
  buildEncPipeline(pm, opts);
  ASSERT_TRUE(succeeded(pm.run(*m)));
  EXPECT_EQ(opCounts(*m)["enc.qlinear"], 1);
  EXPECT_EQ(opCounts(*m)["enc.split"], 1);
  expectQuantized("q.w+k.w+v.w");
}

} // namespace
