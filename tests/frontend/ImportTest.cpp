//===- ImportTest.cpp - importHFModel on tiny models and MiniLM -----------===//
//
// Tiny folders come from tests/support (an independent writer); imported
// weights are compared bit for bit with what it wrote, and the IR structure
// is counted op by op.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/HFImport.h"
#include "ir/EncOps.h"
#include "tests/support/ProcessTempDir.h"
#include "tests/support/TinyModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

using namespace encc;
namespace fs = std::filesystem;
using encc::testing::TinyModelSpec;

namespace {

std::string freshDir(const std::string &name) {
  fs::path dir = encc::testing::processTempDir("encc_frontend_import") / name;
  fs::remove_all(dir);
  return dir.string();
}

std::map<std::string, int> countOps(mlir::ModuleOp m) {
  std::map<std::string, int> n;
  m.walk([&](mlir::Operation *op) { n[op->getName().getStringRef().str()]++; });
  return n;
}

std::string importError(const std::string &dir, const ImportOptions &opts = {}) {
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, dir, opts);
  if (m)
    return "<no error>";
  return llvm::toString(m.takeError());
}

void editJson(const std::string &path, const std::function<void(nlohmann::json &)> &f) {
  nlohmann::json j;
  {
    std::ifstream in(path);
    in >> j;
  }
  f(j);
  std::ofstream(path) << j.dump(2);
}

/// Every imported tensor equals what the writer stored (prefix stripped).
void expectWeightsMatch(const ImportedModel &m, const encc::testing::TinyModel &tiny) {
  size_t compared = 0;
  for (auto &[name, values] : tiny.weights) {
    std::string canon = name.substr(tiny.spec.weightPrefix.size());
    const mlir::enc::WeightTensor *t = m.weights.find(canon);
    if (!t)
      continue; // e.g. pooler weights the encoder does not use
    ASSERT_EQ(t->shape, tiny.shapes.at(name)) << canon;
    ASSERT_EQ(size_t(t->numElements()), values.size()) << canon;
    const std::vector<float> got = t->floats();
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(double(got[i]), values[i]) << canon << "[" << i << "]";
    ++compared;
  }
  EXPECT_EQ(compared, m.weights.all().size());
}

TEST(Import, TinyBertStructureAndWeights) {
  TinyModelSpec spec;
  spec.hidden = 32;
  spec.layers = 3;
  spec.heads = 4;
  spec.intermediate = 48;
  spec.vocab = 100;
  spec.maxPositions = 40;
  auto tiny = encc::testing::writeTinyModel(freshDir("bert"), spec);
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  const ModelDescription &c = m->description;
  EXPECT_EQ(c.hidden, 32);
  EXPECT_EQ(c.layers, 3);
  EXPECT_EQ(c.maxSeq, 40); // sentence_bert_config max_seq_length
  EXPECT_EQ(c.pooling, Pooling::Mean);
  EXPECT_TRUE(c.normalize);
  EXPECT_EQ(m->tokenizer.vocab, encc::testing::tinyVocab(spec));
  EXPECT_EQ(m->tokenizer.padId, 0);
  EXPECT_EQ(m->tokenizer.unkId, 1);
  EXPECT_EQ(m->tokenizer.clsId, 2);
  EXPECT_EQ(m->tokenizer.sepId, 3);
  EXPECT_TRUE(m->tokenizer.lowercase);
  EXPECT_TRUE(m->tokenizer.stripAccents);

  // 5 embedding tensors + 16 per layer.
  EXPECT_EQ(m->weights.all().size(), 5u + 16u * 3);
  expectWeightsMatch(*m, tiny);

  auto ops = countOps(*m->module);
  EXPECT_EQ(ops["enc.weight"], 5 + 16 * 3);
  EXPECT_EQ(ops["enc.embedding"], 1);
  EXPECT_EQ(ops["enc.layernorm"], 1 + 2 * 3);
  EXPECT_EQ(ops["enc.linear"], 6 * 3);
  // Attention as the model means it, one op per layer (the decompose pass
  // spells it out; PassesTest runs both forms).
  EXPECT_EQ(ops["enc.attention"], 3);
  for (const char *unfused : {"enc.split_heads", "enc.matmul", "enc.scale", "enc.mask", "enc.softmax",
                              "enc.merge_heads", "enc.split"})
    EXPECT_EQ(ops[unfused], 0) << unfused;
  EXPECT_EQ(ops["enc.add"], 2 * 3);
  EXPECT_EQ(ops["enc.gelu"], 3);
  EXPECT_EQ(ops["enc.pool"], 1);
  EXPECT_EQ(ops["enc.l2norm"], 1);

  // Weight names are the WeightStore keys, once each; the attention reads
  // the three projections unpacked (fuse-qkv merges them), scaled by
  // 1/sqrt(8), the padding mask only.
  std::set<std::string> names;
  m->module->walk([&](mlir::enc::WeightOp w) {
    EXPECT_TRUE(names.insert(w.getName().str()).second) << w.getName().str();
    EXPECT_NE(m->weights.find(w.getName().str()), nullptr) << w.getName().str();
  });
  m->module->walk([&](mlir::enc::AttentionOp a) {
    EXPECT_EQ(a.getInputs().size(), 3u);
    EXPECT_EQ(a.getNumHeads(), 4);
    EXPECT_FLOAT_EQ(a.getScale().convertToFloat(), 1.0f / std::sqrt(8.0f));
    EXPECT_FALSE(a.getPositionBias() || a.getWindow() || a.getCausal() || a.getNumKvHeads() || a.getBf16Pv());
    for (mlir::Value in : a.getInputs())
      EXPECT_TRUE(in.getDefiningOp<mlir::enc::LinearOp>());
  });
  m->module->walk([&](mlir::enc::GeluOp g) { EXPECT_EQ(g.getApproximate(), mlir::enc::GeluApproximation::none); });
  auto fn = m->module->lookupSymbol<mlir::func::FuncOp>("forward");
  ASSERT_TRUE(fn);
  EXPECT_EQ(fn.getFunctionType().getNumResults(), 2u);
}

TEST(Import, TinyRobertaF16WithPrefixAndOptions) {
  TinyModelSpec spec;
  spec.modelType = "roberta";
  spec.dtype = "F16";
  spec.weightPrefix = "roberta.";
  spec.act = "gelu_new";
  spec.pooling = "cls";
  spec.normalize = false;
  auto tiny = encc::testing::writeTinyModel(freshDir("roberta"), spec);
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->description.maxSeq, 62);
  EXPECT_EQ(m->description.pooling, Pooling::Cls);
  EXPECT_FALSE(m->description.normalize);
  EXPECT_EQ(m->tokenizer.padId, 1);
  expectWeightsMatch(*m, tiny);
  auto ops = countOps(*m->module);
  EXPECT_EQ(ops["enc.l2norm"], 0);
  m->module->walk([&](mlir::enc::EmbeddingOp e) { EXPECT_EQ(e.getPositionOffset(), 2u); });
  m->module->walk([&](mlir::enc::GeluOp g) { EXPECT_EQ(g.getApproximate(), mlir::enc::GeluApproximation::tanh); });

  // Options override the folder: no pooling at all, a shorter max length.
  ImportOptions opts;
  opts.pooling = Pooling::None;
  opts.maxSeq = 16;
  auto m2 = importHFModel(ctx, tiny.dir, opts);
  ASSERT_TRUE(bool(m2)) << llvm::toString(m2.takeError());
  EXPECT_EQ(m2->description.maxSeq, 16);
  auto fn = m2->module->lookupSymbol<mlir::func::FuncOp>("forward");
  EXPECT_EQ(fn.getFunctionType().getNumResults(), 1u);
  opts.maxSeq = 63;
  EXPECT_EQ(importError(tiny.dir, opts),
            tiny.dir + ": --max-seq 63 is out of range [1, 62] (the model's position table)");
}

TEST(Import, TinyBertBF16AndNoModulesJsonDefaults) {
  TinyModelSpec spec;
  spec.dtype = "BF16";
  spec.weightPrefix = "bert.";
  spec.pooling = "none"; // no sentence-transformers files at all
  auto tiny = encc::testing::writeTinyModel(freshDir("bf16"), spec);
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->description.pooling, Pooling::Mean);
  EXPECT_TRUE(m->description.normalize);
  EXPECT_EQ(m->description.maxSeq, 64);
  expectWeightsMatch(*m, tiny);
  ImportOptions opts;
  opts.normalize = 0;
  auto m2 = importHFModel(ctx, tiny.dir, opts);
  ASSERT_TRUE(bool(m2));
  EXPECT_FALSE(m2->description.normalize);
}

// A sharded checkpoint (model.safetensors.index.json: tensor -> shard file)
// reads as the single file would; its errors name the index or the shard.
TEST(Import, ShardedCheckpoint) {
  TinyModelSpec spec;
  spec.layers = 2;
  auto tiny = encc::testing::writeTinyModel(freshDir("sharded"), spec);
  const std::string dir = tiny.dir;
  fs::remove(dir + "/model.safetensors");
  encc::testing::WeightMap first, second;
  nlohmann::json index;
  index["metadata"] = {{"total_size", 0}};
  for (const auto &[name, values] : tiny.weights) {
    const bool inFirst = name.find("layer.1.") == std::string::npos;
    (inFirst ? first : second)[name] = values;
    index["weight_map"][name] = inFirst ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  encc::testing::writeSafetensors(dir + "/model-00001-of-00002.safetensors", first, tiny.shapes, "F32");
  encc::testing::writeSafetensors(dir + "/model-00002-of-00002.safetensors", second, tiny.shapes, "BF16");
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  const mlir::enc::WeightTensor *q0 = m->weights.find("encoder.layer.0.attention.self.query.weight");
  const mlir::enc::WeightTensor *q1 = m->weights.find("encoder.layer.1.attention.self.query.weight");
  ASSERT_TRUE(q0 && q1);
  const std::vector<double> &want0 = tiny.weights.at("encoder.layer.0.attention.self.query.weight");
  const std::vector<double> &want1 = tiny.weights.at("encoder.layer.1.attention.self.query.weight");
  EXPECT_EQ(q1->type, mlir::enc::WeightType::BF16) << "kept as stored";
  const std::vector<float> got0 = q0->floats(), got1 = q1->floats();
  for (size_t i = 0; i < want0.size(); ++i) {
    ASSERT_EQ(got0[i], float(want0[i])) << i;
    ASSERT_EQ(got1[i], float(encc::testing::roundToDtype(want1[i], "BF16"))) << i;
  }

  // A tensor the index maps to a shard that lacks it; one it does not map.
  index["weight_map"]["encoder.layer.0.output.dense.bias"] = "model-00002-of-00002.safetensors";
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  EXPECT_EQ(importError(dir), dir + "/model-00002-of-00002.safetensors: tensor 'encoder.layer.0.output.dense.bias' "
                                    "is missing");
  index["weight_map"].erase("encoder.layer.0.output.dense.bias");
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  EXPECT_EQ(importError(dir), dir + "/model.safetensors.index.json: tensor 'encoder.layer.0.output.dense.bias' is "
                                    "missing");
  // Shards are files of the folder, named; the index is an object with a map.
  for (const char *shard : {"../model-00001-of-00002.safetensors", "/etc/passwd", "", ".."}) {
    index["weight_map"]["encoder.layer.0.output.dense.bias"] = shard;
    std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
    EXPECT_EQ(importError(dir), dir + "/model.safetensors.index.json: weight_map['encoder.layer.0.output.dense.bias'] "
                                      "is '" + shard + "', expected the name of a file in the model's folder");
  }
  index["weight_map"]["encoder.layer.0.output.dense.bias"] = "absent.safetensors";
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  EXPECT_NE(importError(dir).find(dir + "/absent.safetensors"), std::string::npos) << importError(dir);
  std::ofstream(dir + "/model.safetensors.index.json") << "[1, 2]";
  EXPECT_EQ(importError(dir), dir + "/model.safetensors.index.json: expected a JSON object with a non-empty "
                                    "'weight_map' (tensor name -> shard file)");
}

// config_sentence_transformers.json: prompts in the file's order, the
// default one of them; what sentence-transformers would do differently
// (a Pooling that leaves the prompt out) is refused.
TEST(Import, SentenceTransformersPrompts) {
  TinyModelSpec spec;
  auto tiny = encc::testing::writeTinyModel(freshDir("prompts"), spec);
  const std::string dir = tiny.dir, path = dir + "/config_sentence_transformers.json";
  std::ofstream(path) << R"({"prompts": {"query": "query: ", "passage": "passage: ", "a": ""},
                            "default_prompt_name": "passage", "similarity_fn_name": "cosine"})";
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  using Prompts = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(m->description.prompts, (Prompts{{"query", "query: "}, {"passage", "passage: "}, {"a", ""}}));
  EXPECT_EQ(m->description.defaultPrompt, "passage");
  EXPECT_EQ(m->description.similarity, encc::ModelDescription::Similarity::Cosine);
  // similarity_fn_name is carried (sentence-transformers' similarity() uses it); an unknown one is an error.
  std::ofstream(path) << R"({"similarity_fn_name": "dot"})";
  m = importHFModel(ctx, dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->description.similarity, encc::ModelDescription::Similarity::Dot);
  std::ofstream(path) << R"({"similarity_fn_name": "jaccard"})";
  EXPECT_EQ(importError(dir), path + ": similarity_fn_name \"jaccard\" is not one of cosine, dot, euclidean, manhattan");

  std::ofstream(path) << R"({"prompts": {"query": "q"}, "default_prompt_name": "doc"})";
  EXPECT_EQ(importError(dir), path + ": default_prompt_name 'doc' is not one of the prompts");
  std::ofstream(path) << R"({"prompts": {"query": 7}})";
  EXPECT_EQ(importError(dir), path + ": prompts['query'] must be a string");
  std::ofstream(path) << R"({"prompts": ["query"]})";
  EXPECT_EQ(importError(dir), path + ": field 'prompts' must be an object of prompt names to texts");
  std::ofstream(path) << R"({"prompts": {"query": ")" + std::string(20000, 'x') + R"("}})";
  EXPECT_EQ(importError(dir), path + ": prompts['query'] has 20000 bytes (at most 16384)");
  std::ofstream(path) << R"({"prompts": {"query": "q: "}})";
  editJson(dir + "/1_Pooling/config.json", [](nlohmann::json &j) { j["include_prompt"] = false; });
  EXPECT_EQ(importError(dir), dir + "/1_Pooling/config.json: include_prompt is false (the pooling leaves out the "
                                    "prompt's tokens), which encc does not implement for a model with prompts");
  fs::remove(path); // without prompts, include_prompt does not matter
  EXPECT_EQ(importError(dir), "<no error>");
}

// sentence-transformers Dense modules after the pooling: their weights from
// the module's folder, a linear (+ tanh) per module between the pooling and
// the normalisation; what they cannot be is one error naming the file.
TEST(Import, SentenceTransformersDenseModules) {
  TinyModelSpec spec; // hidden 64
  auto tiny = encc::testing::writeTinyModel(freshDir("dense"), spec);
  const std::string dir = tiny.dir;
  nlohmann::json modules = nlohmann::json::parse(std::ifstream(dir + "/modules.json"));
  auto writeDense = [&](const std::string &sub, int in, int out, bool bias, const std::string &act) {
    fs::create_directories(dir + "/" + sub);
    std::ofstream(dir + "/" + sub + "/config.json")
        << nlohmann::json{{"in_features", in}, {"out_features", out}, {"bias", bias}, {"activation_function", act}};
    encc::testing::WeightMap w{{"linear.weight", std::vector<double>(size_t(in * out), 0.5)}};
    encc::testing::ShapeMap shapes{{"linear.weight", {out, in}}, {"linear.bias", {out}}};
    if (bias)
      w["linear.bias"] = std::vector<double>(size_t(out), 0.25);
    encc::testing::writeSafetensors(dir + "/" + sub + "/model.safetensors", w, shapes, "F32");
  };
  // Transformer, Pooling, Dense 64 -> 96 (bias, tanh), Dense 96 -> 64, Normalize.
  nlohmann::json withDense = nlohmann::json::array();
  for (const nlohmann::json &m : modules) {
    if (m["type"].get<std::string>().find("Normalize") != std::string::npos)
      for (const char *sub : {"2_Dense", "3_Dense"})
        withDense.push_back({{"idx", withDense.size()}, {"name", sub}, {"path", sub},
                             {"type", "sentence_transformers.models.Dense"}});
    withDense.push_back(m);
  }
  std::ofstream(dir + "/modules.json") << withDense.dump();
  writeDense("2_Dense", 64, 96, true, "torch.nn.modules.activation.Tanh");
  writeDense("3_Dense", 96, 64, false, "torch.nn.modules.linear.Identity");
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  const mlir::enc::WeightTensor *w0 = m->weights.find("dense.0.linear.weight");
  const mlir::enc::WeightTensor *b0 = m->weights.find("dense.0.linear.bias");
  ASSERT_TRUE(w0 && b0 && m->weights.find("dense.1.linear.weight"));
  EXPECT_EQ(w0->shape, (std::vector<int64_t>{96, 64}));
  EXPECT_EQ(b0->floats()[0], 0.25f);
  EXPECT_EQ(m->weights.find("dense.1.linear.bias"), nullptr);
  auto ops = countOps(*m->module);
  EXPECT_EQ(ops["enc.tanh"], 1);
  EXPECT_EQ(ops["enc.l2norm"], 1);

  // Another width than the hidden size: the pooled output's (issue 37; DenseWidth checks the numbers).
  writeDense("3_Dense", 96, 32, false, "torch.nn.modules.linear.Identity");
  auto narrow = importHFModel(ctx, dir, {});
  ASSERT_TRUE(bool(narrow)) << llvm::toString(narrow.takeError());
  EXPECT_EQ(narrow->description.embeddingDim, 32);
  EXPECT_EQ(narrow->description.pooledWidth(), 32);
  writeDense("3_Dense", 90, 64, false, "torch.nn.modules.linear.Identity");
  EXPECT_EQ(importError(dir), dir + "/3_Dense/config.json: in_features 90 does not match the embedding's width 96");
  writeDense("3_Dense", 96, 64, false, "torch.nn.modules.activation.ReLU");
  EXPECT_EQ(importError(dir), dir + "/3_Dense/config.json: activation_function 'torch.nn.modules.activation.ReLU' "
                                    "is not supported (supported: torch.nn.modules.linear.Identity, "
                                    "torch.nn.modules.activation.Tanh)");
  writeDense("3_Dense", 96, 64, false, "torch.nn.modules.linear.Identity");
  fs::remove(dir + "/3_Dense/model.safetensors");
  EXPECT_NE(importError(dir).find(dir + "/3_Dense/model.safetensors"), std::string::npos) << importError(dir);
  // Module folders stay inside the model's folder.
  for (const char *escape : {"../2_Dense", "/etc", "2_Dense/../../x"}) {
    nlohmann::json outside = withDense;
    outside[2]["path"] = escape;
    std::ofstream(dir + "/modules.json") << outside.dump();
    EXPECT_EQ(importError(dir), dir + "/modules.json: module 'sentence_transformers.models.Dense' has path '" +
                                    escape + "', expected a folder inside the model's folder");
  }
  // A Dense module before the Pooling.
  std::swap(withDense[1], withDense[2]);
  std::ofstream(dir + "/modules.json") << withDense.dump();
  EXPECT_EQ(importError(dir), dir + "/modules.json: a Dense module before the Pooling or after the Normalize "
                                    "module is not supported (supported: Pooling, then Dense modules, then "
                                    "Normalize)");
}

TEST(Import, ErrorsNameFileAndTensor) {
  TinyModelSpec spec;
  auto tiny = encc::testing::writeTinyModel(freshDir("errors"), spec);
  std::string dir = tiny.dir;

  // Config and weights disagree: the tensor and both shapes are named.
  editJson(dir + "/config.json", [](nlohmann::json &j) { j["intermediate_size"] = 100; });
  EXPECT_EQ(importError(dir), dir + "/model.safetensors: tensor "
                                    "'encoder.layer.0.intermediate.dense.weight' has shape "
                                    "[128, 64], expected [100, 64]");
  editJson(dir + "/config.json", [](nlohmann::json &j) { j["intermediate_size"] = 128; });
  EXPECT_EQ(importError(dir), "<no error>");

  // A tensor is missing.
  {
    auto w = tiny.weights;
    auto s = tiny.shapes;
    w.erase("encoder.layer.1.attention.self.key.bias");
    encc::testing::writeSafetensors(dir + "/model.safetensors", w, s, "F32");
    EXPECT_EQ(importError(dir), dir + "/model.safetensors: tensor "
                                      "'encoder.layer.1.attention.self.key.bias' is missing");
  }

  // Unsupported pooling mode.
  editJson(dir + "/1_Pooling/config.json", [](nlohmann::json &j) {
    j["pooling_mode_mean_tokens"] = false;
    j["pooling_mode_max_tokens"] = true;
  });
  EXPECT_EQ(importError(dir), dir + "/1_Pooling/config.json: pooling modes "
                                    "{pooling_mode_max_tokens} are not supported (supported: "
                                    "exactly one of pooling_mode_cls_token, "
                                    "pooling_mode_mean_tokens, pooling_mode_lasttoken)");
  editJson(dir + "/1_Pooling/config.json", [](nlohmann::json &j) {
    j["pooling_mode_mean_tokens"] = true;
    j["pooling_mode_max_tokens"] = false;
  });
  // Names are parsed once (--pooling, enc-import): the closed set, nothing else.
  EXPECT_EQ(parsePooling("max"), std::nullopt);
  EXPECT_EQ(parsePooling("last"), Pooling::Last);
  for (Pooling p : {Pooling::None, Pooling::Cls, Pooling::Mean, Pooling::Last})
    EXPECT_EQ(parsePooling(poolingName(p)), p);

  // Only a PyTorch checkpoint.
  fs::remove(dir + "/model.safetensors");
  std::ofstream(dir + "/pytorch_model.bin") << "x";
  EXPECT_EQ(importError(dir), dir + ": only model.safetensors is supported for now, found "
                                    "pytorch_model.bin (convert it with "
                                    "safetensors.torch.save_file)");

  EXPECT_EQ(importError(dir + "/absent"),
            dir + "/absent: not a Hugging Face model folder (no config.json)");
}

TEST(Import, DistilbertNamesAndSyntheticTokenTypes) {
  // Build a distilbert folder from a tiny bert's tensors, renamed.
  TinyModelSpec spec;
  spec.pooling = "none";
  auto tiny = encc::testing::writeTinyModel(freshDir("distil"), spec);
  std::map<std::string, std::string> rename = {{"attention.self.query", "attention.q_lin"},
                                               {"attention.self.key", "attention.k_lin"},
                                               {"attention.self.value", "attention.v_lin"},
                                               {"attention.output.dense", "attention.out_lin"},
                                               {"attention.output.LayerNorm", "sa_layer_norm"},
                                               {"intermediate.dense", "ffn.lin1"},
                                               {"output.dense", "ffn.lin2"},
                                               {"output.LayerNorm", "output_layer_norm"}};
  encc::testing::WeightMap w;
  encc::testing::ShapeMap s;
  for (auto &[name, v] : tiny.weights) {
    std::string n = name;
    if (n.find("token_type") != std::string::npos || n.find("pooler") != std::string::npos)
      continue;
    if (n.rfind("encoder.layer.", 0) == 0) {
      size_t dot = n.find('.', 14);
      std::string rest = n.substr(dot + 1), suffix = rest.substr(rest.rfind('.'));
      std::string mod = rest.substr(0, rest.rfind('.'));
      ASSERT_TRUE(rename.count(mod)) << mod;
      n = "transformer.layer." + n.substr(14, dot - 14) + "." + rename[mod] + suffix;
    }
    w["distilbert." + n] = v;
    s["distilbert." + n] = tiny.shapes.at(name);
  }
  encc::testing::writeSafetensors(tiny.dir + "/model.safetensors", w, s, "F32");
  std::ofstream(tiny.dir + "/config.json")
      << R"({"model_type":"distilbert","dim":64,"n_layers":2,"n_heads":2,"hidden_dim":128,
             "activation":"gelu","vocab_size":120,"max_position_embeddings":64})";
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  const auto *q = m->weights.find("transformer.layer.1.attention.q_lin.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(double(q->floats()[5]), tiny.weights.at("encoder.layer.1.attention.self.query.weight")[5]);
  const auto *tt = m->weights.find("embeddings.token_type_embeddings.weight");
  ASSERT_NE(tt, nullptr);
  EXPECT_EQ(tt->shape, (std::vector<int64_t>{1, 64}));
  for (float f : tt->floats())
    ASSERT_EQ(f, 0.0f);
}

TEST(Import, TokenizerJsonWordPieceAndBPE) {
  TinyModelSpec spec;
  spec.layers = 1;
  auto tiny = encc::testing::writeTinyModel(freshDir("tokjson"), spec);
  std::vector<std::string> vocab = encc::testing::tinyVocab(spec);
  fs::remove(tiny.dir + "/vocab.txt");
  fs::remove(tiny.dir + "/tokenizer_config.json");
  nlohmann::json tj;
  tj["model"]["type"] = "WordPiece";
  for (size_t i = 0; i < vocab.size(); ++i)
    tj["model"]["vocab"][vocab[i]] = i;
  tj["normalizer"] = {{"type", "BertNormalizer"},
                      {"lowercase", false},
                      {"strip_accents", nullptr},
                      {"handle_chinese_chars", false}};
  std::ofstream(tiny.dir + "/tokenizer.json") << tj.dump();
  mlir::MLIRContext ctx;
  auto m = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->tokenizer.vocab, vocab);
  EXPECT_FALSE(m->tokenizer.lowercase);
  EXPECT_FALSE(m->tokenizer.stripAccents); // follows lowercase when null
  EXPECT_FALSE(m->tokenizer.splitChinese);
  EXPECT_EQ(m->tokenizer.clsId, 2);

  // A gap in the ids is an error naming the file.
  tj["model"]["vocab"].erase(vocab[7]);
  std::ofstream(tiny.dir + "/tokenizer.json") << tj.dump();
  EXPECT_NE(importError(tiny.dir).find("/tokenizer.json: vocabulary ids must be 0.."),
            std::string::npos)
      << importError(tiny.dir);

  // Byte-level BPE: vocabulary, merges as ids, added tokens, the template.
  nlohmann::json bpe;
  bpe["model"] = {{"type", "BPE"},
                  {"vocab", {{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}, {"a", 4}, {"b", 5}, {"ab", 6}}},
                  {"merges", {"a b"}},
                  {"unk_token", "<unk>"}};
  bpe["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
  bpe["post_processor"] = {{"type", "RobertaProcessing"}, {"cls", {"<s>", 0}}, {"sep", {"</s>", 2}}};
  bpe["added_tokens"] = {{{"id", 7}, {"content", "<mask>"}, {"lstrip", true}, {"special", true}}};
  std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
  auto b = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->tokenizer.kind, encc::TokenizerKind::ByteLevelBPE);
  EXPECT_EQ(b->tokenizer.vocab.size(), 7u);
  EXPECT_EQ(b->tokenizer.merges, (std::vector<std::pair<int32_t, int32_t>>{{4, 5}}));
  EXPECT_EQ(b->tokenizer.templateIds, (std::vector<int32_t>{0, -1, 2}));
  EXPECT_EQ(b->tokenizer.pairTemplateIds, (std::vector<int32_t>{0, -1, 2, 2, -2, 2})); // <s> A </s></s> B </s>
  EXPECT_EQ(b->tokenizer.pairTypeIds, (std::vector<int32_t>(6, 0)));
  EXPECT_EQ(b->tokenizer.unkId, 3);
  EXPECT_TRUE(b->tokenizer.addPrefixSpace);
  ASSERT_EQ(b->tokenizer.addedTokens.size(), 1u);
  EXPECT_EQ(b->tokenizer.addedTokens[0].content, "<mask>");
  EXPECT_TRUE(b->tokenizer.addedTokens[0].lstrip);

  // What encc's BPE does not implement imports for id-only use, with a note.
  bpe["pre_tokenizer"] = {{"type", "Whitespace"}};
  std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
  b = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_TRUE(b->tokenizer.vocab.empty());
  EXPECT_NE(b->tokenizer.note.find("pre_tokenizer 'Whitespace' (implemented: ByteLevel, and a Split on Qwen2's or "
                                   "cl100k's regex before it; none, Metaspace or a Split on \" \" merged with the "
                                   "previous piece for SentencePiece BPE)"),
            std::string::npos)
      << b->tokenizer.note;

  // SentencePiece BPE (issue 37, item 4): no pre-tokenizer (Llama 2: Prepend
  // and Replace) or a Split after spaces (Gemma) makes the model see
  // characters, with byte_fallback; byte_fallback beside a ByteLevel one, a
  // Replace of a regex, or a Split on another string imports for ids only.
  bpe["model"]["byte_fallback"] = true;
  bpe["normalizer"] = {{"type", "Sequence"},
                       {"normalizers",
                        {{{"type", "Prepend"}, {"prepend", "\u2581"}},
                         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}};
  bpe["pre_tokenizer"] = nullptr;
  std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
  b = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->tokenizer.bpeAlphabet, encc::TokenizerData::BpeAlphabet::Chars);
  EXPECT_EQ(b->tokenizer.bpeSplit, encc::TokenizerData::BpeSplit::Whole);
  EXPECT_TRUE(b->tokenizer.byteFallback);
  ASSERT_EQ(b->tokenizer.normalizers.size(), 2u);
  EXPECT_EQ(b->tokenizer.normalizers[0].kind, encc::NormalizerStepData::Kind::Prepend);
  EXPECT_EQ(b->tokenizer.normalizers[0].content, "\u2581");
  EXPECT_EQ(b->tokenizer.normalizers[1].pattern, " ");
  bpe["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"},
                          {"invert", false}};
  std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
  b = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->tokenizer.bpeSplit, encc::TokenizerData::BpeSplit::SpaceMergedWithPrevious);
  // transformers' non-legacy Llama / Mistral: no normalizer, Metaspace as the
  // pre-tokenizer (any prepend scheme, split or not); a malformed one is an error.
  {
    nlohmann::json mistral = bpe;
    mistral["normalizer"] = nullptr;
    mistral["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"},
                                {"split", false}};
    std::ofstream(tiny.dir + "/tokenizer.json") << mistral.dump();
    b = importHFModel(ctx, tiny.dir, {});
    ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
    EXPECT_EQ(b->tokenizer.bpeAlphabet, encc::TokenizerData::BpeAlphabet::Chars);
    EXPECT_EQ(b->tokenizer.bpeSplit, encc::TokenizerData::BpeSplit::Metaspace);
    EXPECT_EQ(b->tokenizer.metaspacePrepend, encc::TokenizerData::Prepend::First);
    EXPECT_FALSE(b->tokenizer.metaspaceSplit);
    EXPECT_TRUE(b->tokenizer.normalizers.empty());
    mistral["pre_tokenizer"]["replacement"] = "ab";
    std::ofstream(tiny.dir + "/tokenizer.json") << mistral.dump();
    b = importHFModel(ctx, tiny.dir, {});
    ASSERT_FALSE(bool(b));
    EXPECT_NE(llvm::toString(b.takeError()).find("field 'pre_tokenizer.replacement' (Metaspace) must be one character"),
              std::string::npos);
  }
  for (auto [edit, note] : std::vector<std::pair<std::function<void()>, std::string>>{
           {[&] { bpe["pre_tokenizer"]["pattern"]["String"] = "-"; }, "pre_tokenizer 'Split'"},
           {[&] { bpe["pre_tokenizer"] = {{"type", "ByteLevel"}}; }, "BPE byte_fallback with a ByteLevel pre_tokenizer"},
           {[&] { bpe["normalizer"]["normalizers"][1]["pattern"] = {{"Regex", " +"}}; },
            "normalizer.normalizers[1] (Replace) of anything but a string"}}) {
    nlohmann::json saved = bpe;
    edit();
    std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
    b = importHFModel(ctx, tiny.dir, {});
    ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
    EXPECT_TRUE(b->tokenizer.vocab.empty());
    EXPECT_NE(b->tokenizer.note.find(note), std::string::npos) << b->tokenizer.note;
    bpe = saved;
  }
  bpe["normalizer"]["normalizers"][0]["prepend"] = "";
  std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
  EXPECT_NE(importError(tiny.dir).find("field 'normalizer.normalizers[0].prepend' must be a non-empty string"),
            std::string::npos)
      << importError(tiny.dir);
  bpe["model"]["byte_fallback"] = false;
  bpe["normalizer"] = nullptr;

  // A Split on Qwen2's / cl100k's regex before a ByteLevel without its own
  // (Qwen2 / Qwen3, Llama 3); any other Split, or a ByteLevel that would cut
  // or prefix the pieces again, leaves the model on ids with a note.
  const std::string qwen2 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  auto splitThenByteLevel = [&](const std::string &regex, const std::string &behavior, bool useRegex) {
    bpe["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", behavior}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", useRegex}}}}};
    bpe["post_processor"] = {{"type", "ByteLevel"}, {"trim_offsets", false}};
    std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
    auto r = importHFModel(ctx, tiny.dir, {});
    EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
    return r ? std::move(r->tokenizer) : encc::TokenizerData{};
  };
  encc::TokenizerData split = splitThenByteLevel(qwen2, "Isolated", false);
  EXPECT_EQ(split.vocab.size(), 7u) << split.note;
  EXPECT_EQ(split.bpeSplit, encc::TokenizerData::BpeSplit::Qwen2);
  EXPECT_EQ(split.templateIds, (std::vector<int32_t>{-1})); // ByteLevel post-processing: the text alone
  std::string cl100k = qwen2;
  cl100k.replace(cl100k.find("\\p{N}|"), 6, "\\p{N}{1,3}|");
  EXPECT_EQ(splitThenByteLevel(cl100k, "Isolated", false).bpeSplit, encc::TokenizerData::BpeSplit::Cl100k);
  split = splitThenByteLevel("\\s+", "Isolated", false);
  EXPECT_TRUE(split.vocab.empty());
  EXPECT_NE(split.note.find("a Split pre_tokenizer on the regex '\\s+' (implemented: Qwen2's and cl100k's regex)"),
            std::string::npos)
      << split.note;
  EXPECT_NE(splitThenByteLevel(qwen2, "Removed", false).note.find("a Split pre_tokenizer other than Isolated"),
            std::string::npos);
  EXPECT_NE(splitThenByteLevel(qwen2, "Isolated", true).note.find("before a ByteLevel one with use_regex"),
            std::string::npos);
  bpe["post_processor"] = {{"type", "RobertaProcessing"}, {"cls", {"<s>", 0}}, {"sep", {"</s>", 2}}};

  // An added token longer than the runtime takes is refused here, not at load.
  bpe["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
  nlohmann::json longToken = bpe["added_tokens"][0];
  longToken["content"] = std::string(257, '*');
  bpe["added_tokens"].push_back(longToken);
  std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
  EXPECT_NE(importError(tiny.dir).find("tokenizer.json: field 'added_tokens[1].content' has 257 bytes (at most 256)"),
            std::string::npos)
      << importError(tiny.dir);
  bpe["added_tokens"].erase(1);

  // A malformed one is an error naming the field.
  bpe["model"].erase("merges");
  std::ofstream(tiny.dir + "/tokenizer.json") << bpe.dump();
  EXPECT_NE(importError(tiny.dir).find("tokenizer.json: field 'model.merges' must be an array"), std::string::npos)
      << importError(tiny.dir);

  // Unigram: pieces and scores, the normalisers (the converters' regexes
  // read as runs, a literal or a strip of spaces), Metaspace's older
  // add_prefix_space, WhitespaceSplit, the template.
  nlohmann::json uni;
  uni["model"] = {{"type", "Unigram"},
                  {"unk_id", 3},
                  {"byte_fallback", true},
                  {"vocab", nlohmann::json::array()}};
  for (auto [piece, score] : {std::pair<const char *, double>{"<s>", 0}, {"<pad>", 0}, {"</s>", 0}, {"<unk>", 0},
                              {"\u2581a", -1.5}})
    uni["model"]["vocab"].push_back(nlohmann::json::array({piece, score})); // [piece, score], not an object
  uni["normalizer"] = {{"type", "Sequence"},
                       {"normalizers",
                        {{{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", "\u2581"}},
                         {{"type", "Replace"}, {"pattern", {{"Regex", "a\\.b"}}}, {"content", "x"}},
                         {{"type", "Replace"}, {"pattern", {{"Regex", "\\A +| +\\z"}}}, {"content", ""}},
                         {{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}}}}};
  uni["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {{{"type", "WhitespaceSplit"}},
                            {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"add_prefix_space", false}}}}};
  uni["post_processor"] = {{"type", "RobertaProcessing"}, {"cls", {"<s>", 0}}, {"sep", {"</s>", 2}}};
  std::ofstream(tiny.dir + "/tokenizer.json") << uni.dump();
  auto u = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(u)) << llvm::toString(u.takeError());
  const encc::TokenizerData &ut = u->tokenizer;
  EXPECT_EQ(ut.kind, encc::TokenizerKind::Unigram);
  EXPECT_EQ(ut.scores, (std::vector<double>{0, 0, 0, 0, -1.5}));
  EXPECT_EQ(ut.unkId, 3);
  EXPECT_TRUE(ut.byteFallback);
  EXPECT_TRUE(ut.whitespaceSplit);
  EXPECT_EQ(ut.metaspacePrepend, encc::TokenizerData::Prepend::Never);
  EXPECT_EQ(ut.templateIds, (std::vector<int32_t>{0, -1, 2}));
  EXPECT_EQ(ut.pairTemplateIds, (std::vector<int32_t>{0, -1, 2, 2, -2, 2}));
  ASSERT_EQ(ut.normalizers.size(), 4u);
  EXPECT_EQ(ut.normalizers[0].pattern, " ");
  EXPECT_EQ(ut.normalizers[0].minRepeat, 2);
  EXPECT_EQ(ut.normalizers[1].pattern, "a.b"); // an escaped metacharacter is itself
  EXPECT_EQ(ut.normalizers[1].minRepeat, 0);
  EXPECT_EQ(ut.normalizers[2].kind, encc::NormalizerStepData::Kind::Strip);
  EXPECT_TRUE(ut.normalizers[2].stripSpacesOnly && ut.normalizers[2].stripLeft && ut.normalizers[2].stripRight);
  EXPECT_FALSE(ut.normalizers[3].stripLeft || ut.normalizers[3].stripSpacesOnly);

  // A regex beyond those, or no unk_id, imports for ids only with a note.
  uni["normalizer"]["normalizers"][1]["pattern"]["Regex"] = "[ab]+";
  std::ofstream(tiny.dir + "/tokenizer.json") << uni.dump();
  u = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(u)) << llvm::toString(u.takeError());
  EXPECT_TRUE(u->tokenizer.vocab.empty());
  EXPECT_NE(u->tokenizer.note.find("normalizer.normalizers[1] (Replace) regex '[ab]+' is not implemented"),
            std::string::npos)
      << u->tokenizer.note;
  uni["normalizer"] = nullptr;
  uni["model"]["unk_id"] = nullptr;
  std::ofstream(tiny.dir + "/tokenizer.json") << uni.dump();
  u = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(u)) << llvm::toString(u.takeError());
  EXPECT_NE(u->tokenizer.note.find("a Unigram model without unk_id"), std::string::npos) << u->tokenizer.note;

  // Contradicting Metaspace options and an unk_id outside the pieces are errors.
  uni["model"]["unk_id"] = 5;
  std::ofstream(tiny.dir + "/tokenizer.json") << uni.dump();
  EXPECT_NE(importError(tiny.dir).find("field 'model.unk_id' must be an index into model.vocab (0..4)"),
            std::string::npos)
      << importError(tiny.dir);
  uni["model"]["unk_id"] = 3;
  uni["pre_tokenizer"]["pretokenizers"][1]["prepend_scheme"] = "always";
  std::ofstream(tiny.dir + "/tokenizer.json") << uni.dump();
  EXPECT_NE(importError(tiny.dir).find("add_prefix_space false contradicts prepend_scheme"), std::string::npos)
      << importError(tiny.dir);
  // The Metaspace decoder reads the same options the same way: a
  // prepend_scheme that is not one of the three is an error, not ignored.
  uni["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true;
  uni["decoder"] = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", 5}};
  std::ofstream(tiny.dir + "/tokenizer.json") << uni.dump();
  EXPECT_NE(importError(tiny.dir).find(
                "field 'decoder.prepend_scheme' (Metaspace) must be \"always\", \"first\" or \"never\""),
            std::string::npos)
      << importError(tiny.dir);
}

TEST(Import, XlmRobertaSentencePieceModelAsTheConverterReadsIt) {
  // tests/tokenizer/unigram: sentencepiece.bpe.model and the tokenizer.json
  // transformers' XLMRobertaConverter made of it. A folder with only the
  // model must give the same tokenizer.
  const std::string data = std::string(ENCC_SOURCE_DIR) + "/tests/tokenizer/unigram/";
  TinyModelSpec spec;
  spec.modelType = "xlm-roberta";
  spec.vocab = 4002;
  spec.layers = 1;
  auto tiny = encc::testing::writeTinyModel(freshDir("xlmr-spm"), spec);
  fs::remove(tiny.dir + "/vocab.txt");
  fs::remove(tiny.dir + "/tokenizer_config.json");
  mlir::MLIRContext ctx;
  fs::copy_file(data + "tokenizer.json", tiny.dir + "/tokenizer.json");
  auto fromJson = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(fromJson)) << llvm::toString(fromJson.takeError());
  fs::remove(tiny.dir + "/tokenizer.json");
  fs::copy_file(data + "sentencepiece.bpe.model", tiny.dir + "/sentencepiece.bpe.model");
  auto fromSpm = importHFModel(ctx, tiny.dir, {});
  ASSERT_TRUE(bool(fromSpm)) << llvm::toString(fromSpm.takeError());
  const encc::TokenizerData &a = fromJson->tokenizer, &b = fromSpm->tokenizer;
  ASSERT_EQ(a.kind, encc::TokenizerKind::Unigram);
  EXPECT_EQ(b.kind, a.kind);
  EXPECT_EQ(b.vocab, a.vocab);
  EXPECT_EQ(b.scores, a.scores); // float32 scores widened, as the JSON holds them
  EXPECT_EQ(b.unkId, a.unkId);
  EXPECT_EQ(b.byteFallback, a.byteFallback);
  ASSERT_EQ(b.normalizers.size(), a.normalizers.size());
  for (size_t i = 0; i < a.normalizers.size(); ++i) {
    const auto &x = a.normalizers[i], &y = b.normalizers[i];
    EXPECT_TRUE(x.kind == y.kind && x.charsmap == y.charsmap && x.pattern == y.pattern && x.content == y.content &&
                x.minRepeat == y.minRepeat && x.stripLeft == y.stripLeft && x.stripRight == y.stripRight &&
                x.stripSpacesOnly == y.stripSpacesOnly)
        << "normalizer " << i;
  }
  EXPECT_EQ(b.whitespaceSplit, a.whitespaceSplit);
  EXPECT_EQ(b.metaspaceReplacement, a.metaspaceReplacement);
  EXPECT_EQ(b.metaspacePrepend, a.metaspacePrepend);
  EXPECT_EQ(b.metaspaceSplit, a.metaspaceSplit);
  ASSERT_EQ(b.addedTokens.size(), a.addedTokens.size());
  for (size_t i = 0; i < a.addedTokens.size(); ++i) {
    const auto &x = a.addedTokens[i], &y = b.addedTokens[i];
    EXPECT_TRUE(x.content == y.content && x.id == y.id && x.special == y.special && x.lstrip == y.lstrip &&
                x.rstrip == y.rstrip && x.normalized == y.normalized)
        << "added token " << i << " " << x.content;
  }
  EXPECT_EQ(b.templateIds, a.templateIds);
  EXPECT_EQ(b.pairTemplateIds, a.pairTemplateIds);
  EXPECT_EQ(b.pairTypeIds, a.pairTypeIds);

  // A damaged model is an error naming the file.
  std::string bytes;
  {
    std::ifstream in(data + "sentencepiece.bpe.model", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(tiny.dir + "/sentencepiece.bpe.model", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_NE(importError(tiny.dir).find("sentencepiece.bpe.model: not a SentencePiece model (malformed protobuf)"),
            std::string::npos)
      << importError(tiny.dir);
  // A piece that is not UTF-8 (the runtime would refuse it) is refused here.
  std::string broken = bytes;
  broken.replace(broken.find("\xE2\x96\x81"), 3, "\xFF\xFE\xFD");
  std::ofstream(tiny.dir + "/sentencepiece.bpe.model", std::ios::binary) << broken;
  EXPECT_NE(importError(tiny.dir).find("sentencepiece.bpe.model: piece 3 is not valid UTF-8"), std::string::npos)
      << importError(tiny.dir);
}

TEST(Import, RealMiniLM) {
  const char *env = std::getenv("ENCC_MINILM_DIR");
  ASSERT_TRUE(env && *env) << "ENCC_MINILM_DIR is not set: point it at all-MiniLM-L6-v2 "
                              "(scripts/test does)";
  std::string dir = env;
  ASSERT_TRUE(fs::exists(dir + "/model.safetensors"))
      << "ENCC_MINILM_DIR=" << dir << " has no model.safetensors";
  mlir::MLIRContext ctx;
  auto t0 = std::chrono::steady_clock::now();
  auto m = importHFModel(ctx, dir, {});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  std::printf("[ info ] imported %s in %.3f s (%zu tensors, %.1f MB)\n", dir.c_str(), secs,
              m->weights.all().size(), m->weights.totalBytes() / 1e6);
  EXPECT_LT(secs, 5.0) << "import is far slower than expected (< 1-2 s)";
  const ModelDescription &c = m->description;
  EXPECT_EQ(c.architecture, "bert");
  EXPECT_EQ(c.layers, 6);
  EXPECT_EQ(c.hidden, 384);
  EXPECT_EQ(c.heads, 12);
  EXPECT_EQ(c.intermediate, 1536);
  EXPECT_EQ(c.vocab, 30522);
  EXPECT_EQ(c.maxSeq, 256);
  EXPECT_EQ(c.activation, Activation::Gelu);
  EXPECT_EQ(c.pooling, Pooling::Mean);
  EXPECT_TRUE(c.normalize);
  EXPECT_EQ(m->tokenizer.vocab.size(), 30522u);
  EXPECT_EQ(m->tokenizer.vocab[101], "[CLS]");
  EXPECT_EQ(m->tokenizer.clsId, 101);
  EXPECT_EQ(m->tokenizer.sepId, 102);
  EXPECT_EQ(m->tokenizer.unkId, 100);
  EXPECT_EQ(m->tokenizer.padId, 0);
  EXPECT_TRUE(m->tokenizer.lowercase);
  EXPECT_EQ(m->weights.all().size(), 5u + 16u * 6);
  // Spot-check values against the test-support reader (independent code).
  auto ref = encc::testing::loadSafetensorsF64(dir + "/model.safetensors");
  for (const char *name :
       {"embeddings.word_embeddings.weight", "encoder.layer.5.output.LayerNorm.bias",
        "encoder.layer.3.intermediate.dense.weight"}) {
    const auto *t = m->weights.find(name);
    ASSERT_NE(t, nullptr) << name;
    const auto &v = ref.weights.at(name);
    ASSERT_EQ(size_t(t->numElements()), v.size());
    const std::vector<float> got = t->floats();
    for (size_t i = 0; i < v.size(); i += 997)
      ASSERT_EQ(double(got[i]), v[i]) << name << "[" << i << "]";
  }
}

} // namespace
