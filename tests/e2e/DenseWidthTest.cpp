//===- DenseWidthTest.cpp - Dense modules to another width, end to end ---===//
//
// sentence-transformers' Dense modules after the pooling may project the
// sentence embedding to another width than the hidden size (distiluse: 768
// -> 512, tanh). A tiny BERT folder with two Dense modules (64 -> 80 with bias
// and tanh, 80 -> 24 without) before its Normalize is compiled with the real
// driver and embedded through the C API: the artifact says its width
// (encrt_model_info.embedding_dim 24, schema feature "embedding-dim") and each
// row equals the float64 reference: the reference encoder's mean pooling,
// then the two modules and the L2 norm in double (max |err| / max |ref| <=
// 1e-5, the tiny encoders' tolerance). --target=cuda is refused before
// codegen, naming the op.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/ReferenceEncoder.h"
#include "tests/support/Safetensors.h"
#include "tests/support/TinyModel.h"

#include "encrt/schema_version.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

using namespace encc::testing;

namespace {

struct Dense {
  int in, out;
  bool bias, tanh;
  std::vector<double> w, b; ///< [out][in], [out]
};

TEST(DenseWidth, EmbeddingsOfAnotherWidthMatchTheReference) {
  TinyModelSpec spec; // BERT, hidden 64, mean pooling, Normalize
  spec.linearGain = 3;
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", spec);
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 0.15);
  std::vector<Dense> dense = {{64, 80, true, true, {}, {}}, {80, 24, false, false, {}, {}}};
  nlohmann::json modules = nlohmann::json::parse(std::ifstream(model.dir + "/modules.json")), withDense;
  for (const nlohmann::json &m : modules) {
    if (m["type"].get<std::string>().find("Normalize") != std::string::npos)
      for (size_t i = 0; i < dense.size(); ++i) {
        const std::string sub = std::to_string(2 + i) + "_Dense";
        withDense.push_back({{"idx", withDense.size()}, {"name", sub}, {"path", sub},
                             {"type", "sentence_transformers.models.Dense"}});
        Dense &d = dense[i];
        for (int k = 0; k < d.in * d.out; ++k)
          d.w.push_back(normal(rng));
        for (int k = 0; k < (d.bias ? d.out : 0); ++k)
          d.b.push_back(normal(rng));
        std::filesystem::create_directories(model.dir + "/" + sub);
        std::ofstream(model.dir + "/" + sub + "/config.json")
            << nlohmann::json{{"in_features", d.in}, {"out_features", d.out}, {"bias", d.bias},
                              {"activation_function", d.tanh ? "torch.nn.modules.activation.Tanh"
                                                             : "torch.nn.modules.linear.Identity"}};
        WeightMap w{{"linear.weight", d.w}};
        ShapeMap shapes{{"linear.weight", {d.out, d.in}}};
        if (d.bias) {
          w["linear.bias"] = d.b;
          shapes["linear.bias"] = {d.out};
        }
        writeSafetensors(model.dir + "/" + sub + "/model.safetensors", w, shapes, "F32");
      }
    withDense.push_back(m);
  }
  std::ofstream(model.dir + "/modules.json") << withDense.dump();
  const std::string artifact = dir.path() + "/m.encm";
  ASSERT_EQ(compile(model.dir, artifact, 16), "");
  // The CUDA generator has no Linear on pooled rows: refused by the legality check, before any code.
  encc::CompileOptions cuda;
  cuda.modelDir = model.dir;
  cuda.output = dir.path() + "/cuda.encm";
  cuda.targets = {"cuda"};
  const std::string cudaError = compile(cuda);
  EXPECT_NE(cudaError.find("--target=cuda: 'enc.linear' at"), std::string::npos) << cudaError;
  EXPECT_NE(cudaError.find("a Linear on the pooled embedding (sentence-transformers' Dense modules) has no CUDA "
                           "kernel yet"),
            std::string::npos)
      << cudaError;

  encrt::Model m(artifact);
  EXPECT_EQ(m.info().embedding_dim, 24);
  EXPECT_EQ(m.info().hidden_size, 64);
  const std::vector<int64_t> lengths = {16, 1, 7, 3};
  std::mt19937 idRng(3);
  std::uniform_int_distribution<int> tok(5, spec.vocab - 1);
  std::vector<std::vector<int64_t>> ids(lengths.size(), std::vector<int64_t>(16, 0));
  std::vector<int32_t> flat, lens(lengths.begin(), lengths.end());
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t s = 0; s < lengths[b]; ++s)
      ids[b][s] = tok(idRng);
  for (const auto &row : ids)
    flat.insert(flat.end(), row.begin(), row.end());
  encrt::Session session(m);
  const encrt::RunResult r = session.run(flat, lens, 16, false, true);
  ASSERT_EQ(r.pooled.size(), lengths.size() * 24);

  TinyModelSpec unnormalised = spec;
  unnormalised.normalize = false;
  const ReferenceOutput ref = runReferenceEncoder(model.weights, unnormalised, ids, lengths);
  std::vector<double> want, got(r.pooled.begin(), r.pooled.end());
  for (std::vector<double> x : ref.pooled) {
    for (const Dense &d : dense) {
      std::vector<double> y(size_t(d.out));
      for (int o = 0; o < d.out; ++o) {
        double acc = d.bias ? d.b[size_t(o)] : 0.0;
        for (int k = 0; k < d.in; ++k)
          acc += d.w[size_t(o * d.in + k)] * x[size_t(k)];
        y[size_t(o)] = d.tanh ? std::tanh(acc) : acc;
      }
      x = std::move(y);
    }
    double norm = 0;
    for (double v : x)
      norm += v * v;
    for (double v : x)
      want.push_back(v / std::max(std::sqrt(norm), 1e-12));
  }
  const double err = maxRelativeError(got, want);
  std::printf("[ measured ] Dense 64 -> 80 -> 24 embeddings: max relative error %.2e\n", err);
  EXPECT_LE(err, 1e-5);

  // The C API's text path writes rows of that width too.
  const std::vector<float> text = session.embed({"hello world", "a"});
  EXPECT_EQ(text.size(), 2u * 24);
  double norm = 0;
  for (int k = 0; k < 24; ++k)
    norm += double(text[size_t(k)]) * text[size_t(k)];
  EXPECT_NEAR(norm, 1.0, 1e-5);
}

} // namespace
