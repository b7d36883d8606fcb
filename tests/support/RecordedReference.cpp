//===- RecordedReference.cpp - Recorded PyTorch reference data ------------===//

#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace encc::testing {

std::string referenceDataDir() { return ENCC_REFERENCE_DATA_DIR; }

namespace {

/// $`var`, checked to hold `model`'s config.json, model.safetensors and
/// vocab.txt.
std::string modelDirFromEnv(const char *var, const std::string &model, const char *fetcher) {
  const char *env = std::getenv(var);
  if (!env || !*env)
    throw std::runtime_error(std::string(var) + " is not set: point it at the " + model +
                             " folder (./scripts/test sets it; see scripts/lib.sh " + fetcher + ")");
  for (const char *f : {"config.json", "model.safetensors", "vocab.txt"})
    if (!std::filesystem::exists(std::filesystem::path(env) / f))
      throw std::runtime_error(std::string(var) + "=" + env + ": missing " + f + " (expected the " + model +
                               " folder)");
  return env;
}

} // namespace

std::string minilmDir() { return modelDirFromEnv("ENCC_MINILM_DIR", "all-MiniLM-L6-v2", "fetch_minilm"); }

std::string mpnetDir() { return modelDirFromEnv("ENCC_MPNET_DIR", "all-mpnet-base-v2", "fetch_mpnet"); }

MinilmReference loadMinilmReference(const std::string &pathArg) {
  std::string path =
      pathArg.empty() ? referenceDataDir() + "/minilm_embeddings.json" : pathArg;
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot open (record it with "
                             "tests/reference/record_minilm.py)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    MinilmReference r;
    r.model = j.at("model").get<std::string>();
    for (const auto &s : j.at("sentences")) {
      RecordedSentence rs;
      rs.text = s.at("text").get<std::string>();
      rs.ids = s.at("ids").get<std::vector<int64_t>>();
      rs.embedding = s.at("embedding").get<std::vector<double>>();
      if (s.contains("hidden_head"))
        rs.hiddenHead = s.at("hidden_head").get<std::vector<std::vector<double>>>();
      r.sentences.push_back(std::move(rs));
    }
    return r;
  } catch (const std::exception &e) {
    throw std::runtime_error(path + ": unexpected content: " + e.what());
  }
}

double cosine(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size() || a.empty())
    throw std::invalid_argument("cosine: vectors of sizes " +
                                std::to_string(a.size()) + " and " +
                                std::to_string(b.size()));
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

} // namespace encc::testing
