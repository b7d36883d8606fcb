//===- PassesTest.cpp - The enc pipeline API, WeightStore and counters ----===//
#include "passes/PassCounters.h"
#include "passes/Passes.h"
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "ir/WeightStore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::enc;

namespace {

// One attention block with biased Q/K/V projections (hidden 4, 2 heads) and
// a GELU feed-forward.
const char *kLayer = R"mlir(
func.func @layer(%x: tensor<?x?x4xf32>, %len: tensor<?xi32>) -> tensor<?x?x6xf32> {
  %wq = enc.weight "q.w" : tensor<4x4xf32>
  %bq = enc.weight "q.b" : tensor<4xf32>
  %wk = enc.weight "k.w" : tensor<4x4xf32>
  %bk = enc.weight "k.b" : tensor<4xf32>
  %wv = enc.weight "v.w" : tensor<4x4xf32>
  %bv = enc.weight "v.b" : tensor<4xf32>
  %q = enc.linear %x, %wq, %bq : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %k = enc.linear %x, %wk, %bk : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %v = enc.linear %x, %wv, %bv : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x4xf32> -> tensor<?x2x?x2xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x?xf32>
  %ss = enc.div %s {divisor = 1.41421354 : f32} : tensor<?x2x?x?xf32>
  %m = enc.mask %ss, %len : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %p = enc.softmax %m : tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x2xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x2xf32> -> tensor<?x?x4xf32>
  %wi = enc.weight "i.w" : tensor<6x4xf32>
  %i = enc.linear %c, %wi : (tensor<?x?x4xf32>, tensor<6x4xf32>) -> tensor<?x?x6xf32>
  %g = enc.gelu %i {approximate = #enc.approximation<tanh>} : tensor<?x?x6xf32>
  return %g : tensor<?x?x6xf32>
}
)mlir";

WeightTensor f32Tensor(std::vector<int64_t> shape, float first) {
  WeightTensor t = WeightTensor::allocate(mlir::enc::WeightType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableF32()[i] = first + static_cast<float>(i);
  return t;
}

struct Fixture : ::testing::Test {
  Fixture() {
    ctx.loadDialect<EncDialect, func::FuncDialect>();
  }
  OwningOpRef<ModuleOp> parse() {
    auto m = parseSourceString<ModuleOp>(kLayer, &ctx);
    EXPECT_TRUE(m);
    return m;
  }
  /// Runs `opts` with the store of useStore (if any), summing the passes'
  /// counters into `counts`.
  LogicalResult run(ModuleOp m, EncPipelineOptions opts) {
    PassManager pm(&ctx);
    pm.addInstrumentation(createPassCountCollector(counts));
    opts.passOptions.weights = store;
    buildEncPipeline(pm, opts);
    return pm.run(m);
  }
  void useStore(WeightStore *s) { store = s; }
  std::map<std::string, int> opCounts(ModuleOp m) {
    std::map<std::string, int> n;
    m.walk([&](Operation *op) { ++n[op->getName().getStringRef().str()]; });
    return n;
  }

  MLIRContext ctx;
  WeightStore *store = nullptr;
  PassCounts counts;
};

TEST(PassesApi, NamesAndErrors) {
  const auto &names = defaultPipeline();
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names.front(), "canonicalize");
  EXPECT_EQ(names.back(), "fuse-residual-layernorm");
  EXPECT_TRUE(isEncPassName("fuse-attention"));
  EXPECT_FALSE(isEncPassName("enc-fuse-attention"));
  EXPECT_EQ(encShortNameForPassArgument("enc-fuse-qkv"), "fuse-qkv");
  EXPECT_EQ(encShortNameForPassArgument("cse"), "canonicalize");
  EXPECT_EQ(encShortNameForPassArgument("inline"), "");

  MLIRContext ctx;
  PassManager pm(&ctx);
  std::string error;
  EXPECT_TRUE(failed(addPassByName(pm, "fuse-everything", &error)));
  EXPECT_NE(error.find("unknown pass 'fuse-everything'"), std::string::npos)
      << error;
  EXPECT_NE(error.find("fuse-residual-layernorm"), std::string::npos) << error;
  EXPECT_TRUE(succeeded(addPassByName(pm, "canonicalize", &error)));
  EXPECT_EQ(pm.size(), 2u); // canonicalizer + CSE
}

TEST_F(Fixture, EmptyPipelineChangesNothing) {
  auto m = parse();
  auto before = opCounts(*m);
  EncPipelineOptions opts;
  opts.passes.clear();
  ASSERT_TRUE(succeeded(run(*m, opts)));
  EXPECT_EQ(opCounts(*m), before);
}

TEST_F(Fixture, FullPipelineWritesConcatenatedWeightsAndCounts) {
  WeightStore store;
  store.set("q.w", f32Tensor({4, 4}, 0));
  store.set("k.w", f32Tensor({4, 4}, 100));
  store.set("v.w", f32Tensor({4, 4}, 200));
  store.set("q.b", f32Tensor({4}, 1000));
  store.set("k.b", f32Tensor({4}, 2000));
  store.set("v.b", f32Tensor({4}, 3000));
  useStore(&store);

  auto m = parse();
  ASSERT_TRUE(succeeded(run(*m, EncPipelineOptions())));
  auto ops = opCounts(*m);
  EXPECT_EQ(ops["enc.attention"], 1);
  EXPECT_EQ(ops["enc.linear"], 2);
  EXPECT_EQ(ops["enc.split"], 0);
  EXPECT_EQ(ops["enc.softmax"], 0);
  EXPECT_EQ(ops["enc.gelu"], 0);

  // The packed attention reads the merged Linear.
  AttentionOp att;
  m->walk([&](AttentionOp a) { att = a; });
  ASSERT_TRUE(att);
  EXPECT_TRUE(att.isPacked());
  EXPECT_EQ(att.getNumHeads(), 2u);
  EXPECT_NEAR(att.getScale().convertToFloat(), 0.70710678f, 1e-6f);
  auto lin = att.getInputs()[0].getDefiningOp<LinearOp>();
  ASSERT_TRUE(lin);
  auto w = lin.getWeight().getDefiningOp<WeightOp>();
  ASSERT_TRUE(w);
  EXPECT_EQ(w.getName(), "q.w+k.w+v.w");

  // [12, 4]: rows of q, then k, then v.
  const WeightTensor *wt = store.find("q.w+k.w+v.w");
  ASSERT_NE(wt, nullptr);
  EXPECT_EQ(wt->shape, (std::vector<int64_t>{12, 4}));
  ASSERT_EQ(wt->numElements(), 48);
  const std::vector<float> wv = wt->floats();
  for (int part = 0; part < 3; ++part)
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(wv[part * 16 + i], 100.0f * part + i)
          << part << " " << i;
  const WeightTensor *bt = store.find("q.b+k.b+v.b");
  ASSERT_NE(bt, nullptr);
  EXPECT_EQ(bt->shape, (std::vector<int64_t>{12}));
  const std::vector<float> bv = bt->floats();
  for (int part = 0; part < 3; ++part)
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(bv[part * 4 + i], 1000.0f * (part + 1) + i);

  EXPECT_EQ(counts["fuse-qkv"]["num-fused"], 1u);
  EXPECT_EQ(counts["fuse-qkv"]["num-weights-created"], 2u);
  EXPECT_EQ(counts["fuse-scale-mask-softmax"]["num-fused"], 1u);
  EXPECT_EQ(counts["fuse-scale-mask-softmax"]["num-unscaled"], 0u);
  EXPECT_EQ(counts["fuse-attention"]["num-fused"], 1u);
  EXPECT_EQ(counts["fuse-attention"]["num-packed"], 1u);
  EXPECT_EQ(counts["fuse-bias-gelu"]["num-fused"], 1u);
  EXPECT_EQ(counts["fuse-residual-layernorm"]["num-fused"], 0u);
}

/// The passes keep no state outside the pass managers that run them: two
/// modules, each with its own store, compile in one context side by side and
/// each store gets its own merged weights.
TEST_F(Fixture, TwoModulesWithTheirOwnStoresInOneContext) {
  WeightStore a, b;
  for (auto [store, base] : {std::pair{&a, 0.0f}, std::pair{&b, 5000.0f}})
    for (const char *n : {"q.w", "k.w", "v.w"})
      store->set(n, f32Tensor({4, 4}, base));
  for (auto [store, base] : {std::pair{&a, 0.0f}, std::pair{&b, 5000.0f}})
    for (const char *n : {"q.b", "k.b", "v.b"})
      store->set(n, f32Tensor({4}, base));
  auto ma = parse(), mb = parse();
  useStore(&a);
  ASSERT_TRUE(succeeded(run(*ma, EncPipelineOptions())));
  useStore(&b);
  ASSERT_TRUE(succeeded(run(*mb, EncPipelineOptions())));
  const WeightTensor *wa = a.find("q.w+k.w+v.w"), *wb = b.find("q.w+k.w+v.w");
  ASSERT_NE(wa, nullptr);
  ASSERT_NE(wb, nullptr);
  EXPECT_EQ(wa->floats()[17], 1.0f);    // k.w[0][1] of store a
  EXPECT_EQ(wb->floats()[17], 5001.0f); // k.w[0][1] of store b
  EXPECT_EQ(counts["fuse-qkv"]["num-fused"], 2u); // summed over both runs
  EXPECT_EQ(opCounts(*ma), opCounts(*mb));
}

TEST_F(Fixture, FuseQKVSkipsWhenStoreLacksAWeight) {
  WeightStore store;
  store.set("q.w", f32Tensor({4, 4}, 0));
  store.set("k.w", f32Tensor({4, 4}, 0));
  // v.w missing: fusing would reference data nobody can provide.
  store.set("q.b", f32Tensor({4}, 0));
  store.set("k.b", f32Tensor({4}, 0));
  store.set("v.b", f32Tensor({4}, 0));
  useStore(&store);
  auto m = parse();
  EncPipelineOptions opts;
  opts.passes = {"fuse-qkv"};
  ASSERT_TRUE(succeeded(run(*m, opts)));
  EXPECT_EQ(opCounts(*m)["enc.split"], 0);
  EXPECT_EQ(store.find("q.w+k.w+v.w"), nullptr);
}

TEST_F(Fixture, WithoutStoreOnlyTheIRChanges) {
  auto m = parse();
  EncPipelineOptions opts;
  opts.passes = {"fuse-qkv"};
  ASSERT_TRUE(succeeded(run(*m, opts)));
  EXPECT_EQ(opCounts(*m)["enc.split"], 1);
  EXPECT_EQ(opCounts(*m)["enc.linear"], 2);
}

} // namespace
