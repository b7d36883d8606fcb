//===- support_test.cpp - Tests of the test support library ---------------===//
//
// Round trips of the tiny model writer through the independent safetensors
// loader, fp16/bf16 rounding, the float64 reference encoder against a
// hand-computed case, against PyTorch (recorded in tests/reference/
// tiny_torch.json) and on all-MiniLM-L6-v2 against sentence-transformers.
//
//===----------------------------------------------------------------------===//

#include "tests/support/NanAware.h"
#include "tests/support/RecordedReference.h"
#include "tests/support/ReferenceEncoder.h"
#include "tests/support/Safetensors.h"
#include "tests/support/TinyModel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace encc::testing;

namespace {

fs::path tempRoot() {
  return fs::temp_directory_path() /
         ("encc_support_test_" + std::to_string(::getpid()));
}

/// Removes this process's temporary models at exit.
class TempCleanup : public ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tempRoot(), ec);
  }
};
const auto *const kCleanup =
    ::testing::AddGlobalTestEnvironment(new TempCleanup);

std::string tempDir(const std::string &name) {
  fs::path p = tempRoot() / name;
  fs::remove_all(p);
  return p.string();
}

nlohmann::json readJsonFile(const fs::path &p) {
  std::ifstream in(p);
  EXPECT_TRUE(in.good()) << p;
  return nlohmann::json::parse(in);
}

double maxAbsDiff(const std::vector<double> &a, const std::vector<double> &b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = encc::testing::errorMax(m, std::fabs(a[i] - b[i]));
  return m;
}

/// Builds a spec from make-tiny-model's flag names (as recorded in tiny_torch.json).
TinyModelSpec specFromFlags(const nlohmann::json &j) {
  TinyModelSpec s;
  s.modelType = j.value("model-type", s.modelType);
  s.hidden = j.value("hidden", s.hidden);
  s.layers = j.value("layers", s.layers);
  s.heads = j.value("heads", s.heads);
  s.intermediate = j.value("intermediate", s.intermediate);
  s.vocab = j.value("vocab", s.vocab);
  s.maxPositions = j.value("max-positions", s.maxPositions);
  s.typeVocab = j.value("type-vocab", s.typeVocab);
  s.act = j.value("act", s.act);
  s.seed = j.value("seed", s.seed);
  s.pooling = j.value("pooling", s.pooling);
  s.dtype = j.value("dtype", s.dtype);
  s.weightPrefix = j.value("weight-prefix", s.weightPrefix);
  return s;
}

int runCommand(const std::string &cmd) {
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

} // namespace

//===----------------------------------------------------------------------===//
// Half / bfloat16 rounding
//===----------------------------------------------------------------------===//

TEST(Rounding, HalfRoundToNearestEven) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00); // tie above max -> inf
  EXPECT_EQ(floatToHalfBits(1.0f + 0x1p-11f), 0x3c00);        // tie -> even
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * 0x1p-11f), 0x3c02);    // tie -> even
  EXPECT_EQ(floatToHalfBits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); // above tie
  EXPECT_EQ(floatToHalfBits(0x1p-24f), 0x0001);     // smallest subnormal
  EXPECT_EQ(floatToHalfBits(0x1p-25f), 0x0000);     // tie -> even (zero)
  EXPECT_EQ(floatToHalfBits(3 * 0x1p-25f), 0x0002); // tie -> even
  EXPECT_EQ(floatToHalfBits(0x1p-14f - 0x1p-25f), 0x0400); // rounds up to normal
  for (uint32_t h = 0; h < 0x7c00; ++h) // every finite positive half round-trips
    ASSERT_EQ(floatToHalfBits(halfBitsToFloat(uint16_t(h))), h);
  EXPECT_TRUE(std::isinf(halfBitsToFloat(0x7c00)));
  EXPECT_EQ(halfBitsToFloat(0x0001), 0x1p-24f);
}

TEST(Rounding, BF16RoundToNearestEven) {
  EXPECT_EQ(floatToBF16Bits(1.0f), 0x3f80);
  EXPECT_EQ(floatToBF16Bits(1.0f + 0x1p-8f), 0x3f80);     // tie -> even
  EXPECT_EQ(floatToBF16Bits(1.0f + 3 * 0x1p-8f), 0x3f82); // tie -> even
  EXPECT_EQ(floatToBF16Bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(bf16BitsToFloat(0xbf80), -1.0f);
  EXPECT_DOUBLE_EQ(roundToDtype(0.1, "BF16"), 0.10009765625);
  EXPECT_DOUBLE_EQ(roundToDtype(0.1, "F16"), 0.0999755859375);
  EXPECT_DOUBLE_EQ(roundToDtype(0.1, "F32"), double(0.1f));
}

//===----------------------------------------------------------------------===//
// Tiny model writer
//===----------------------------------------------------------------------===//

TEST(TinyModel, TensorNamesAndShapesMatchHFBertModel) {
  TinyModelSpec spec;
  spec.layers = 3;
  TinyModel m = makeTinyWeights(spec);
  EXPECT_EQ(m.weights.size(), 5u + 16u * 3u);
  const int64_t H = 64, I = 128;
  std::map<std::string, std::vector<int64_t>> expect = {
      {"embeddings.word_embeddings.weight", {120, H}},
      {"embeddings.position_embeddings.weight", {64, H}},
      {"embeddings.token_type_embeddings.weight", {2, H}},
      {"embeddings.LayerNorm.weight", {H}},
      {"embeddings.LayerNorm.bias", {H}},
      {"encoder.layer.2.attention.self.query.weight", {H, H}},
      {"encoder.layer.2.attention.self.key.bias", {H}},
      {"encoder.layer.2.attention.self.value.weight", {H, H}},
      {"encoder.layer.2.attention.output.dense.weight", {H, H}},
      {"encoder.layer.2.attention.output.LayerNorm.bias", {H}},
      {"encoder.layer.2.intermediate.dense.weight", {I, H}},
      {"encoder.layer.2.intermediate.dense.bias", {I}},
      {"encoder.layer.2.output.dense.weight", {H, I}},
      {"encoder.layer.2.output.dense.bias", {H}},
      {"encoder.layer.2.output.LayerNorm.weight", {H}}};
  for (const auto &[name, shape] : expect) {
    ASSERT_TRUE(m.shapes.count(name)) << name;
    EXPECT_EQ(m.shapes[name], shape) << name;
  }
  spec.weightPrefix = "bert.";
  TinyModel p = makeTinyWeights(spec);
  EXPECT_TRUE(p.weights.count("bert.encoder.layer.0.output.dense.weight"));
  EXPECT_EQ(detectWeightPrefix(p.weights), "bert.");
  // Same values as without prefix: streams are keyed by the unprefixed name.
  EXPECT_EQ(p.weights["bert.encoder.layer.0.output.dense.weight"],
            m.weights["encoder.layer.0.output.dense.weight"]);
}

TEST(TinyModel, DeterministicAndWellScaled) {
  TinyModelSpec spec;
  TinyModel a = makeTinyWeights(spec), b = makeTinyWeights(spec);
  EXPECT_EQ(a.weights, b.weights);
  spec.seed = 2;
  TinyModel c = makeTinyWeights(spec);
  EXPECT_NE(a.weights["encoder.layer.0.attention.self.query.weight"],
            c.weights["encoder.layer.0.attention.self.query.weight"]);
  for (double g : a.weights["encoder.layer.1.output.LayerNorm.weight"])
    EXPECT_TRUE(g >= 0.9 && g <= 1.1) << g;
  for (double w : a.weights["encoder.layer.1.output.dense.weight"]) // fan_in 128
    EXPECT_LE(std::fabs(w), 1.0 / std::sqrt(128.0));
}

TEST(TinyModel, SafetensorsRoundTripAllDtypes) {
  for (const char *dtype : {"F32", "F16", "BF16"}) {
    TinyModelSpec spec;
    spec.dtype = dtype;
    spec.hidden = 16;
    spec.intermediate = 32;
    TinyModel m = writeTinyModel(tempDir(std::string("rt_") + dtype), spec);
    SafetensorsF64 st = loadSafetensorsF64(m.dir + "/model.safetensors");
    EXPECT_EQ(st.metadata["format"], "pt");
    EXPECT_EQ(st.shapes, m.shapes) << dtype;
    ASSERT_EQ(st.weights.size(), m.weights.size());
    for (const auto &[name, values] : m.weights) {
      EXPECT_EQ(st.dtypes[name], dtype) << name;
      EXPECT_EQ(st.weights[name], values) << dtype << " " << name;
      for (double v : values)
        ASSERT_EQ(roundToDtype(v, dtype), v) << "in-memory value not rounded";
    }
    // Header length is a multiple of 8 and data starts right after it.
    std::ifstream in(m.dir + "/model.safetensors", std::ios::binary);
    uint64_t len = 0;
    in.read(reinterpret_cast<char *>(&len), 8);
    EXPECT_EQ(len % 8, 0u);
  }
  // The rounded values really differ from the F32 ones.
  TinyModelSpec f32, f16;
  f16.dtype = "F16";
  EXPECT_NE(makeTinyWeights(f32).weights["embeddings.LayerNorm.weight"],
            makeTinyWeights(f16).weights["embeddings.LayerNorm.weight"]);
}

TEST(TinyModel, LoaderRejectsCorruptFiles) {
  std::string dir = tempDir("corrupt");
  fs::create_directories(dir);
  std::string path = dir + "/bad.safetensors";
  {
    std::ofstream out(path, std::ios::binary);
    uint64_t len = 1000; // longer than the file
    out.write(reinterpret_cast<const char *>(&len), 8);
    out << "{}";
  }
  EXPECT_THROW(loadSafetensorsF64(path), std::runtime_error);
  {
    std::ofstream out(path, std::ios::binary);
    std::string h = R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
    uint64_t len = h.size();
    out.write(reinterpret_cast<const char *>(&len), 8);
    out << h << std::string(8, '\0');
  }
  try {
    loadSafetensorsF64(path);
    FAIL() << "expected a size mismatch error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("tensor 't'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(loadSafetensorsF64(dir + "/missing.safetensors"),
               std::runtime_error);
}

TEST(TinyModel, FolderLayoutAndConfigRoundTrip) {
  TinyModelSpec spec;
  spec.hidden = 32;
  spec.heads = 4;
  spec.act = "gelu_new";
  spec.pooling = "cls";
  TinyModel m = writeTinyModel(tempDir("layout"), spec);
  fs::path d(m.dir);
  for (const char *f : {"config.json", "model.safetensors", "vocab.txt",
                        "tokenizer_config.json", "modules.json",
                        "sentence_bert_config.json", "1_Pooling/config.json"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  nlohmann::json cfg = readJsonFile(d / "config.json");
  EXPECT_EQ(cfg["model_type"], "bert");
  EXPECT_EQ(cfg["hidden_size"], 32);
  EXPECT_EQ(cfg["num_attention_heads"], 4);
  EXPECT_EQ(cfg["pad_token_id"], 0);
  EXPECT_EQ(cfg["hidden_act"], "gelu_new");
  EXPECT_EQ(readJsonFile(d / "tokenizer_config.json")["do_lower_case"], true);
  EXPECT_EQ(readJsonFile(d / "modules.json").size(), 3u);

  TinyModelSpec back = readModelSpec(m.dir);
  EXPECT_EQ(back.hidden, 32);
  EXPECT_EQ(back.heads, 4);
  EXPECT_EQ(back.layers, spec.layers);
  EXPECT_EQ(back.intermediate, spec.intermediate);
  EXPECT_EQ(back.vocab, spec.vocab);
  EXPECT_EQ(back.maxPositions, spec.maxPositions);
  EXPECT_EQ(back.act, "gelu_new");
  EXPECT_EQ(back.pooling, "cls");
  EXPECT_TRUE(back.normalize);
  EXPECT_DOUBLE_EQ(back.eps, 1e-12);

  std::ifstream vin(d / "vocab.txt");
  std::vector<std::string> vocab;
  for (std::string line; std::getline(vin, line);)
    vocab.push_back(line);
  ASSERT_EQ(vocab.size(), 120u);
  EXPECT_EQ(vocab[0], "[PAD]");
  EXPECT_EQ(vocab[1], "[UNK]");
  EXPECT_EQ(vocab[2], "[CLS]");
  EXPECT_EQ(vocab[3], "[SEP]");
  EXPECT_EQ(vocab[4], "[MASK]");
  EXPECT_EQ(std::set<std::string>(vocab.begin(), vocab.end()).size(),
            vocab.size()) << "duplicate vocab entries";

  spec.pooling = "none";
  TinyModel n = writeTinyModel(tempDir("nopool"), spec);
  EXPECT_FALSE(fs::exists(fs::path(n.dir) / "modules.json"));
  EXPECT_EQ(readModelSpec(n.dir).pooling, "none");

  TinyModelSpec bad;
  bad.heads = 3; // 64 % 3 != 0
  EXPECT_THROW(makeTinyWeights(bad), std::invalid_argument);
}

TEST(TinyModel, RobertaConfig) {
  TinyModelSpec spec;
  spec.modelType = "roberta";
  TinyModel m = writeTinyModel(tempDir("roberta"), spec);
  nlohmann::json cfg = readJsonFile(fs::path(m.dir) / "config.json");
  EXPECT_EQ(cfg["model_type"], "roberta");
  EXPECT_EQ(cfg["pad_token_id"], 1);
  EXPECT_EQ(tinyVocab(spec)[1], "[PAD]");
  EXPECT_EQ(readModelSpec(m.dir).positionOffset(), 2);
}

TEST(TinyModel, CommandLineTool) {
  const std::string tool = ENCC_MAKE_TINY_MODEL;
  EXPECT_EQ(runCommand(tool + " --help"), 0);
  EXPECT_EQ(runCommand(tool), 2);                              // no DIR
  EXPECT_EQ(runCommand(tool + " /tmp/x --bogus 1"), 2);        // unknown flag
  EXPECT_EQ(runCommand(tool + " /tmp/x --hidden abc"), 2);     // not a number
  std::string bad = tempDir("cli_bad");
  EXPECT_EQ(runCommand(tool + " " + bad + " --hidden 30 --heads 4"), 1);

  std::string dir = tempDir("cli");
  ASSERT_EQ(runCommand(tool + " " + dir +
                       " --hidden 24 --layers 1 --heads 3 --act=gelu_new "
                       "--seed 5 --pooling cls --dtype BF16 --weight-prefix bert."),
            0);
  TinyModelSpec spec;
  spec.hidden = 24;
  spec.layers = 1;
  spec.heads = 3;
  spec.act = "gelu_new";
  spec.seed = 5;
  spec.pooling = "cls";
  spec.dtype = "BF16";
  spec.weightPrefix = "bert.";
  TinyModel expect = makeTinyWeights(spec);
  SafetensorsF64 st = loadSafetensorsF64(dir + "/model.safetensors");
  EXPECT_EQ(st.weights, expect.weights);
  EXPECT_EQ(readModelSpec(dir).pooling, "cls");
}

//===----------------------------------------------------------------------===//
// Reference encoder
//===----------------------------------------------------------------------===//

namespace {

/// hidden 4, 1 head, 1 layer, intermediate 1, exact small weights:
///   word 5 = [1,-1,1,-1], word 6 = [1,1,-1,-1], word 7 = [9,0,-9,3] (used as
///   a padding token that must not leak), position/type embeddings 0,
///   LayerNorms identity, Q = K = 0 (uniform attention), V = O = identity,
///   intermediate = first component, output dense = [1,-1,0,0]^T.
std::pair<WeightMap, TinyModelSpec> handModel() {
  TinyModelSpec s;
  s.hidden = 4;
  s.heads = 1;
  s.layers = 1;
  s.intermediate = 1;
  s.vocab = 8;
  s.maxPositions = 8;
  s.typeVocab = 1;
  s.pooling = "mean";
  s.normalize = true;
  WeightMap w;
  auto zeros = [](size_t n) { return std::vector<double>(n, 0.0); };
  std::vector<double> word = zeros(8 * 4);
  const double rows[3][4] = {{1, -1, 1, -1}, {1, 1, -1, -1}, {9, 0, -9, 3}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c)
      word[(5 + r) * 4 + c] = rows[r][c];
  std::vector<double> eye = zeros(16);
  for (int i = 0; i < 4; ++i)
    eye[i * 4 + i] = 1;
  w["embeddings.word_embeddings.weight"] = word;
  w["embeddings.position_embeddings.weight"] = zeros(8 * 4);
  w["embeddings.token_type_embeddings.weight"] = zeros(4);
  const std::string L = "encoder.layer.0.";
  for (const std::string &ln :
       {std::string("embeddings.LayerNorm"), L + "attention.output.LayerNorm",
        L + "output.LayerNorm"}) {
    w[ln + ".weight"] = {1, 1, 1, 1};
    w[ln + ".bias"] = zeros(4);
  }
  w[L + "attention.self.query.weight"] = zeros(16);
  w[L + "attention.self.key.weight"] = zeros(16);
  w[L + "attention.self.value.weight"] = eye;
  w[L + "attention.output.dense.weight"] = eye;
  for (const char *n : {"attention.self.query", "attention.self.key",
                        "attention.self.value", "attention.output.dense",
                        "output.dense"})
    w[L + n + ".bias"] = zeros(4);
  w[L + "intermediate.dense.weight"] = {1, 0, 0, 0};
  w[L + "intermediate.dense.bias"] = {0};
  w[L + "output.dense.weight"] = {1, -1, 0, 0};
  return {w, s};
}

} // namespace

TEST(ReferenceEncoder, HandComputedCase) {
  auto [w, spec] = handModel();
  // Batch: [5, 6] (length 2) and [5, 6, 7] with length 2 (7 is padding).
  ReferenceOutput r =
      runReferenceEncoder(w, spec, {{5, 6, 0}, {5, 6, 7}}, {2, 2});
  // By hand: embeddings are already zero-mean/unit-variance, so the first
  // LayerNorm keeps them. Uniform attention over the 2 valid keys gives
  // ctx = ([1,-1,1,-1] + [1,1,-1,-1]) / 2 = [1,0,0,-1]. Residual for token 5:
  // [2,-1,1,-2], variance 10/4 -> a = [2,-1,1,-2]/sqrt(2.5); token 6:
  // a = [2,1,-1,-2]/sqrt(2.5). FFN: h = a[0] = 2/sqrt(2.5), g = gelu(h);
  // out = a + g*[1,-1,0,0], still zero-mean, then normalised.
  const double r25 = std::sqrt(2.5), h = 2 / r25;
  const double g = 0.5 * h * (1 + std::erf(h / std::sqrt(2.0)));
  auto ln = [](std::vector<double> v) {
    double var = 0;
    for (double x : v)
      var += x * x; // mean is 0 by construction
    var /= 4;
    for (double &x : v)
      x /= std::sqrt(var + 1e-12);
    return v;
  };
  std::vector<double> t5 = ln({2 / r25 + g, -1 / r25 - g, 1 / r25, -2 / r25});
  std::vector<double> t6 = ln({2 / r25 + g, 1 / r25 - g, -1 / r25, -2 / r25});
  for (int b = 0; b < 2; ++b) {
    EXPECT_LT(maxAbsDiff(r.hidden[b][0], t5), 1e-11) << "batch " << b;
    EXPECT_LT(maxAbsDiff(r.hidden[b][1], t6), 1e-11) << "batch " << b;
  }
  // Mean pooling over the 2 valid rows, then L2 normalisation.
  std::vector<double> mean(4);
  double norm = 0;
  for (int c = 0; c < 4; ++c)
    mean[c] = (t5[c] + t6[c]) / 2, norm += mean[c] * mean[c];
  for (double &x : mean)
    x /= std::sqrt(norm);
  EXPECT_LT(maxAbsDiff(r.pooled[0], mean), 1e-11);
  EXPECT_LT(maxAbsDiff(r.pooled[1], mean), 1e-11);

  // A single token attends to itself: residual 2x, LayerNorm -> x, then FFN.
  ReferenceOutput one = runReferenceEncoder(w, spec, {{5}}, {1});
  const double g1 = 0.5 * (1 + std::erf(1 / std::sqrt(2.0)));
  EXPECT_LT(maxAbsDiff(one.hidden[0][0], ln({1 + g1, -1 - g1, 1, -1})), 1e-11);

  // The mask matters: counting the padding token 7 as valid changes row 0.
  ReferenceOutput leak = runReferenceEncoder(w, spec, {{5, 6, 7}}, {3});
  EXPECT_GT(maxAbsDiff(leak.hidden[0][0], t5), 1e-3);

  // CLS pooling without normalisation is token 0 itself.
  spec.pooling = "cls";
  spec.normalize = false;
  ReferenceOutput cls = runReferenceEncoder(w, spec, {{5, 6}}, {2});
  EXPECT_LT(maxAbsDiff(cls.pooled[0], t5), 1e-11);
}

TEST(ReferenceEncoder, RejectsBadInputs) {
  auto [w, spec] = handModel();
  EXPECT_THROW(runReferenceEncoder(w, spec, {{5, 6}}, {3}), std::invalid_argument);
  EXPECT_THROW(runReferenceEncoder(w, spec, {{5, 6}}, {0}), std::invalid_argument);
  EXPECT_THROW(runReferenceEncoder(w, spec, {{5, 6}, {5}}, {2, 1}),
               std::invalid_argument);
  EXPECT_THROW(runReferenceEncoder(w, spec, {{5, 8}}, {2}), std::invalid_argument);
  EXPECT_THROW(runReferenceEncoder(w, spec, {std::vector<int64_t>(9, 5)}, {9}),
               std::invalid_argument);
  w.erase("encoder.layer.0.output.dense.bias");
  EXPECT_THROW(runReferenceEncoder(w, spec, {{5, 6}}, {2}), std::runtime_error);
}

TEST(ReferenceEncoder, MatchesRecordedPyTorchOnTinyModels) {
  nlohmann::json j = readJsonFile(referenceDataDir() + "/tiny_torch.json");
  ASSERT_GE(j["cases"].size(), 3u);
  for (const auto &c : j["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    TinyModelSpec spec = specFromFlags(c["spec"]);
    TinyModel m = makeTinyWeights(spec);
    auto ids = c["ids"].get<std::vector<std::vector<int64_t>>>();
    auto lengths = c["lengths"].get<std::vector<int64_t>>();
    ReferenceOutput r = runReferenceEncoder(m, ids, lengths);
    // Both sides are float64 with identical weights: only summation order
    // differs.
    double worst = 0;
    for (size_t b = 0; b < ids.size(); ++b) {
      auto hs = c["hidden"][b].get<std::vector<std::vector<double>>>();
      ASSERT_EQ(hs.size(), size_t(lengths[b]));
      for (size_t s = 0; s < hs.size(); ++s)
        worst = std::max(worst, maxAbsDiff(r.hidden[b][s], hs[s]));
      worst = std::max(worst, maxAbsDiff(r.pooled[b],
                                         c["pooled"][b].get<std::vector<double>>()));
    }
    EXPECT_LT(worst, 1e-9);

    // The tolerance discriminates: a different activation is far off.
    TinyModelSpec other = spec;
    other.act = spec.act == "gelu" ? "gelu_new" : "gelu";
    ReferenceOutput o = runReferenceEncoder(m.weights, other, ids, lengths);
    EXPECT_GT(maxAbsDiff(o.hidden[0][0], c["hidden"][0][0].get<std::vector<double>>()),
              1e-6);
    // MPNet: so is the encoder without its relative position bias.
    if (spec.mpnet()) {
      WeightMap unbiased = m.weights;
      std::fill(unbiased[kMpnetBiasTable].begin(), unbiased[kMpnetBiasTable].end(), 0.0);
      ReferenceOutput u = runReferenceEncoder(unbiased, spec, ids, lengths);
      EXPECT_GT(maxAbsDiff(u.hidden[0][0], c["hidden"][0][0].get<std::vector<double>>()), 1e-3);
    }

    // sentence-transformers (float32) on the written folder: layout,
    // tokenizer and pooling config are understood as intended.
    if (c.contains("st")) {
      std::vector<std::vector<int64_t>> stIds;
      std::vector<int64_t> stLen;
      size_t S = 0;
      for (const auto &e : c["st"])
        S = std::max(S, e["ids"].size());
      for (const auto &e : c["st"]) {
        auto v = e["ids"].get<std::vector<int64_t>>();
        stLen.push_back(int64_t(v.size()));
        v.resize(S, 0);
        stIds.push_back(v);
      }
      EXPECT_EQ(stIds[0].front(), 2); // [CLS]
      EXPECT_EQ(stIds[0][stLen[0] - 1], 3); // [SEP]
      ReferenceOutput st = runReferenceEncoder(m, stIds, stLen);
      for (size_t b = 0; b < stIds.size(); ++b)
        EXPECT_LT(maxAbsDiff(st.pooled[b],
                             c["st"][b]["embedding"].get<std::vector<double>>()),
                  1e-5);
    }
  }
}

TEST(ReferenceEncoder, MiniLMMatchesSentenceTransformers) {
  std::string dir;
  try {
    dir = minilmDir();
  } catch (const std::exception &e) {
    FAIL() << e.what();
  }
  LoadedModel model = loadModelF64(dir);
  EXPECT_EQ(model.spec.hidden, 384);
  EXPECT_EQ(model.spec.layers, 6);
  EXPECT_EQ(model.spec.pooling, "mean");
  EXPECT_TRUE(model.spec.normalize);
  EXPECT_EQ(model.spec.weightPrefix, "");

  MinilmReference ref = loadMinilmReference();
  ASSERT_EQ(ref.sentences.size(), 64u);
  // Two sentences of different lengths in one right-padded batch.
  const RecordedSentence &a = ref.sentences[0], &b = ref.sentences[1];
  size_t S = std::max(a.ids.size(), b.ids.size());
  ASSERT_NE(a.ids.size(), b.ids.size());
  std::vector<std::vector<int64_t>> ids = {a.ids, b.ids};
  for (auto &v : ids)
    v.resize(S, 0);
  ReferenceOutput r = runReferenceEncoder(
      model.weights, model.spec, ids,
      {int64_t(a.ids.size()), int64_t(b.ids.size())});
  EXPECT_GE(cosine(r.pooled[0], a.embedding), 0.99999) << a.text;
  EXPECT_GE(cosine(r.pooled[1], b.embedding), 0.99999) << b.text;
  EXPECT_LT(cosine(r.pooled[0], b.embedding), 0.999); // and can tell them apart
  for (int i = 0; i < 2; ++i) {
    const RecordedSentence &s = i ? b : a;
    ASSERT_EQ(s.hiddenHead.size(), 2u);
    for (int t = 0; t < 2; ++t) {
      std::vector<double> head(r.hidden[i][t].begin(), r.hidden[i][t].begin() + 8);
      EXPECT_LT(maxAbsDiff(head, s.hiddenHead[t]), 1e-4) << s.text << " token " << t;
    }
  }
}

TEST(NanAware, ErrorMaxKeepsNan) {
  // std::max drops a NaN that comes second: the reason errorMax exists.
  EXPECT_EQ(std::max(0.0, double(NAN)), 0.0);
  EXPECT_TRUE(std::isnan(errorMax(0.0, NAN)));
  EXPECT_TRUE(std::isnan(errorMax(NAN, 1.0)));
  EXPECT_EQ(errorMax(1.0, 2.0), 2.0);
  EXPECT_EQ(errorMax(3.0, INFINITY), INFINITY);
}
