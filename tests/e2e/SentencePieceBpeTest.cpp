//===- SentencePieceBpeTest.cpp - BPE on characters with byte fallback ----===//
//
// Issue 37, item 4: Gemma (EmbeddingGemma), Llama 2 and Mistral ship BPE
// tokenizer.json files that work on characters, not GPT-2's byte alphabet: a
// character outside the vocabulary becomes its UTF-8 bytes' <0xXX> tokens
// (byte_fallback), spaces are "▁" (Replace; Llama also Prepends one), and the
// pre-tokenizer is none or a Split on " " merged with the previous piece. encc
// refused them ("BPE byte_fallback"). Five such files (tests/tokenizer/spbpe,
// record_spbpe.py: Gemma's layout, Llama's normalizer, one without byte
// fallback or fused unknowns, and the Metaspace pre-tokenizer of
// transformers' non-legacy Llama / Mistral files, prepending first without
// splitting or always with splitting) compiled by encc into tiny models: the
// runtime's ids equal the `tokenizers` library's on 694 texts each
// (sentences, edge cases, random strings over all of Unicode). The Metaspace
// ones are a composition of components the artifact format already had: no
// schema change.
//
//===----------------------------------------------------------------------===//
#include "tests/e2e/E2ETest.h"
#include "tests/e2e/TokenizerJsonModel.h"
#include "tests/support/RecordedReference.h"

#include "encrt/schema_version.h"

#include <nlohmann/json.hpp>

using namespace encc::testing;
using nlohmann::json;

namespace {

TEST(SentencePieceBpe, IdsMatchTheTokenizersLibrary) {
  const std::string dir = referenceDataDir() + "/../tokenizer/spbpe/";
  const json rec = readJsonFile(dir + "expected.json");
  ASSERT_EQ(rec["files"].size(), 5u);
  for (const json &f : rec["files"]) {
    const std::string name = f["file"];
    SCOPED_TRACE(name);
    TempDir tmp;
    const std::string artifact = compileWithTokenizerJson(tmp.path(), readJsonFile(dir + name), "bert");
    ASSERT_NE(artifact, "");
    encrt::Model m(artifact);
    EXPECT_EQ(expectRecordedIds(m, rec["texts"], f["ids"], name), 0u);
  }
}

} // namespace
