//===- ArtifactVersionsTest.cpp - Artifacts of earlier releases still load -===//
//
// tests/reference/artifacts/schema8_modernbert_tiny.encm was written by encc
// at schema 8, the last version before schema_minor and required_features
// (commit f3ef143, from tests/reference/modernbert/models/legacy_mean, code
// for x86-64-v2 so that every test machine runs it). This runtime reads it
// as 9.0: the ids of the recorded texts are the `tokenizers` library's and
// their embeddings transformers' (modernbert.json, legacy_mean's texts),
// within 1e-5 relative: its flat tokenizer table is read as the runtime
// read it then. A fresh artifact lists the features it uses (a tokenizer
// stored as components, schema 9.9) and no others.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"

#include "encrt/schema_version.h"
#include "encrt/artifact_generated.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace encc::testing;
using nlohmann::json;

namespace {

TEST(ArtifactVersions, ASchema8ArtifactStillLoadsAndAnswers) {
  std::ifstream in(referenceDataDir() + "/modernbert/modernbert.json");
  const json recorded = json::parse(in);
  const json *texts = nullptr;
  for (const json &c : recorded["cases"])
    if (c["name"] == "legacy_mean")
      texts = &c["texts"];
  ASSERT_NE(texts, nullptr);
  encrt::Model m(referenceDataDir() + "/artifacts/schema8_modernbert_tiny.encm");
  expectRecordedTexts(m, *texts, 1e-5, "schema 8 artifact");
}

std::vector<std::string> requiredFeatures(const std::string &artifact) {
  std::ifstream in(artifact, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const encm::Model *m = encm::GetModel(bytes.data());
  EXPECT_EQ(m->schema_version(), uint32_t(ENCM_SCHEMA_VERSION));
  EXPECT_EQ(m->schema_minor(), uint32_t(ENCM_SCHEMA_MINOR));
  std::vector<std::string> out;
  if (m->required_features())
    for (const flatbuffers::String *f : *m->required_features())
      out.push_back(f->str());
  return out;
}

TEST(ArtifactVersions, AnArtifactRequiresTheFeaturesItUses) {
  TempDir tmp;
  ASSERT_EQ(compile(referenceDataDir() + "/qwen3/models/text_last", tmp.path() + "/qwen.encm"), "");
  EXPECT_EQ(requiredFeatures(tmp.path() + "/qwen.encm"), std::vector<std::string>{ENCM_FEATURE_TOKENIZER_COMPONENTS});
  ASSERT_EQ(compile(referenceDataDir() + "/modernbert/models/legacy_mean", tmp.path() + "/neox.encm"), "");
  EXPECT_EQ(requiredFeatures(tmp.path() + "/neox.encm"), std::vector<std::string>{ENCM_FEATURE_TOKENIZER_COMPONENTS});
  // Without its tokenizer the artifact runs on ids and requires nothing.
  const std::string idsOnly = tmp.path() + "/ids_only";
  std::filesystem::copy(referenceDataDir() + "/modernbert/models/legacy_mean", idsOnly,
                        std::filesystem::copy_options::recursive);
  std::filesystem::remove(idsOnly + "/tokenizer.json");
  ASSERT_EQ(compile(idsOnly, tmp.path() + "/ids.encm"), "");
  EXPECT_EQ(requiredFeatures(tmp.path() + "/ids.encm"), std::vector<std::string>{});
}

} // namespace
