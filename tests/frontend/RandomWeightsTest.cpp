//===- RandomWeightsTest.cpp - --weights=random:SEED in the frontend ------===//
#include "frontends/hf/HFImport.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace encc;

namespace {

const char *kConfig = R"({"model_type":"bert","hidden_size":64,"num_hidden_layers":2,
  "num_attention_heads":4,"intermediate_size":128,"vocab_size":1000,
  "max_position_embeddings":64,"type_vocab_size":2,"hidden_act":"gelu",
  "layer_norm_eps":1e-12,"pad_token_id":0})";

ModelConfig config() {
  auto c = parseModelConfig(kConfig, "M/config.json");
  EXPECT_TRUE(bool(c));
  return *c;
}

} // namespace

TEST(RandomWeights, EveryWeightWithItsShapeAndBertInit) {
  ModelConfig c = config();
  mlir::enc::WeightStore w = randomWeights(c, 1);
  for (const WeightSpec &spec : expectedWeights(c)) {
    const mlir::enc::WeightTensor *t = w.find(spec.name);
    ASSERT_NE(t, nullptr) << spec.name;
    EXPECT_EQ(t->shape, spec.shape) << spec.name;
    ASSERT_EQ(t->type, mlir::enc::WeightType::F32) << spec.name;
    ASSERT_TRUE(t->resident()) << spec.name;
    const float *f = t->f32();
    bool bias = spec.name.size() > 5 && spec.name.substr(spec.name.size() - 5) == ".bias";
    if (spec.shape.size() == 1) { // LayerNorm gamma 1; biases and betas 0
      for (int64_t i = 0; i < t->numElements(); ++i)
        ASSERT_EQ(f[i], bias ? 0.0f : 1.0f) << spec.name;
      continue;
    }
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < t->numElements(); ++i) {
      ASSERT_TRUE(std::isfinite(f[i]));
      ASSERT_LE(std::fabs(f[i]), 0.08f) << spec.name; // bounded at ~3.5 sigma
      sum += f[i];
      sq += double(f[i]) * f[i];
    }
    // Five standard errors: of the mean 0.02/sqrt(n), of the std 0.02/sqrt(2n).
    double n = double(t->numElements());
    EXPECT_NEAR(sum / n, 0.0, 5 * 0.02 / std::sqrt(n)) << spec.name;
    EXPECT_NEAR(std::sqrt(sq / n), 0.02, 5 * 0.02 / std::sqrt(2 * n)) << spec.name;
  }
}

TEST(RandomWeights, DeterministicPerSeedAndTensor) {
  ModelConfig c = config();
  auto a = randomWeights(c, 7), b = randomWeights(c, 7), d = randomWeights(c, 8);
  const std::string q = "encoder.layer.0.attention.self.query.weight";
  const std::string k = "encoder.layer.0.attention.self.key.weight";
  EXPECT_EQ(a.find(q)->floats(), b.find(q)->floats());
  EXPECT_NE(a.find(q)->floats(), d.find(q)->floats());
  EXPECT_NE(a.find(q)->floats(), a.find(k)->floats());
}

TEST(RandomWeights, ImportNeedsOnlyConfigJson) {
  char tmpl[] = "/tmp/encc-random-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::ofstream(dir + "/config.json") << kConfig;
  mlir::MLIRContext ctx;
  ImportOptions opts;
  auto plain = importHFModel(ctx, dir, opts);
  ASSERT_FALSE(bool(plain)) << "without --weights=random a folder needs model.safetensors";
  EXPECT_NE(llvm::toString(plain.takeError()).find("model.safetensors: missing"), std::string::npos);
  opts.randomWeightsSeed = 3;
  auto m = importHFModel(ctx, dir, opts);
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_TRUE(m->tokenizer.vocab.empty());
  EXPECT_NE(m->tokenizer.note.find("no vocab.txt or tokenizer.json"), std::string::npos);
  EXPECT_EQ(m->weights.totalBytes(), randomWeights(config(), 3).totalBytes());
  EXPECT_EQ(m->weights.find("embeddings.word_embeddings.weight")->floats(),
            randomWeights(config(), 3).find("embeddings.word_embeddings.weight")->floats());
  std::remove((dir + "/config.json").c_str());
  rmdir(dir.c_str());
}
