//===- RecordedBatch.cpp - A model folder against a recorded batch --------===//
#include "tests/e2e/RecordedBatch.h"

#include "tests/e2e/E2ETest.h"

#include "tests/support/RecordedReference.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

const nlohmann::json &encc::testing::recordedCase(const std::string &file, const std::string &name) {
  static std::mutex mu;
  static std::map<std::string, nlohmann::json> files;
  std::lock_guard<std::mutex> lock(mu);
  auto it = files.find(file);
  if (it == files.end()) {
    std::ifstream in(referenceDataDir() + "/" + file);
    it = files.emplace(file, nlohmann::json::parse(in)).first;
  }
  for (const nlohmann::json &c : it->second["cases"])
    if (c["name"] == name)
      return c;
  throw std::runtime_error(file + " has no case " + name);
}

std::vector<std::string> encc::testing::expectRecordedTexts(encrt::Model &model, const nlohmann::json &t,
                                                           double tolerance, const std::string &name) {
  std::vector<std::string> texts;
  for (size_t i = 0; i < t["texts"].size(); ++i) {
    texts.push_back(t["texts"][i].get<std::string>());
    EXPECT_EQ(model.tokenize(texts.back()), t["ids"][i].get<std::vector<int32_t>>()) << name << ": " << texts.back();
  }
  const std::vector<float> emb = encrt::Session(model).embed(texts);
  std::vector<double> want;
  for (const nlohmann::json &row : t["pooled"])
    for (const nlohmann::json &v : row)
      want.push_back(v.get<double>());
  const double err = maxRelativeError(std::vector<double>(emb.begin(), emb.end()), want);
  std::printf("[ measured ] %s, %zu texts: embeddings %.2e (max |err| / max |ref|)\n", name.c_str(), texts.size(), err);
  EXPECT_LE(err, tolerance) << name;
  return texts;
}

void encc::testing::expectMatchesRecordedBatch(const nlohmann::json &c, const std::string &modelDir,
                                               double tolerance, const std::string &name) {
  std::vector<int32_t> ids, lengths = c["lengths"].get<std::vector<int32_t>>();
  int64_t seq = 0;
  for (const nlohmann::json &row : c["ids"]) {
    seq = static_cast<int64_t>(row.size());
    for (const nlohmann::json &v : row)
      ids.push_back(v.get<int32_t>());
  }
  std::vector<double> wantHidden, wantPooled;
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int32_t s = 0; s < lengths[b]; ++s)
      for (const nlohmann::json &v : c["hidden"][b][s])
        wantHidden.push_back(v.get<double>());
  const bool pooled = c.contains("pooled");
  if (pooled)
    for (const nlohmann::json &row : c["pooled"])
      for (const nlohmann::json &v : row)
        wantPooled.push_back(v.get<double>());
  TempDir dir;
  for (bool packed : {true, false}) {
    CompileOptions o;
    o.modelDir = modelDir;
    o.output = dir.path() + (packed ? "/packed.encm" : "/padded.encm");
    o.allowPackedPlan = packed;
    ASSERT_EQ(compile(o), "");
    encrt::Model m(o.output);
    const int64_t H = m.info().hidden_size;
    const encrt::RunResult r = encrt::Session(m).run(ids, lengths, seq);
    std::vector<double> hidden;
    for (size_t b = 0; b < lengths.size(); ++b)
      hidden.insert(hidden.end(), r.hidden.begin() + b * seq * H, r.hidden.begin() + (b * seq + lengths[b]) * H);
    const double hiddenErr = maxRelativeError(hidden, wantHidden);
    std::printf("[ measured ] %s (%s plan): hidden %.2e", name.c_str(), packed ? "packed" : "padded", hiddenErr);
    EXPECT_LE(hiddenErr, tolerance) << name;
    if (pooled) {
      const double pooledErr = maxRelativeError(std::vector<double>(r.pooled.begin(), r.pooled.end()), wantPooled);
      std::printf(", pooled %.2e", pooledErr);
      EXPECT_LE(pooledErr, tolerance) << name;
    }
    std::printf(" (max |err| / max |ref|)\n");
  }
}
