//===- TokenizerComponentsTest.cpp - Schema 9.9's tokenizer components ----===//
//
// A tokenizer stored as components (Tokenizer.pipeline) gives the ids the
// same tokenizer stored as an older artifact's flat table gives, for each
// model kind; every component the runtime does not know, or a composition it
// does not implement, is refused at load with one line naming it.
//
//===----------------------------------------------------------------------===//
#include "ArtifactBuilder.h"
#include "TestUtil.h"

#include "encrt/schema_version.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace encrt::test;

namespace {

constexpr auto kBad = ENCRT_INVALID_ARTIFACT;
using N = encm::Normalizer;
using P = encm::PreTokenizer;

std::vector<int32_t> tokenizePair(const encrt_model *m, const char *a, const char *b) {
  int64_t n = 0;
  std::vector<int32_t> ids(64), types(64);
  encrt_status *st = encrt_model_tokenize_pair(m, {a, static_cast<int64_t>(strlen(a))},
                                               {b, static_cast<int64_t>(strlen(b))}, ENCRT_TRUNCATE_LONGEST_FIRST,
                                               ids.data(), types.data(), 64, &n);
  EXPECT_EQ(st, nullptr) << encrt_status_message(st);
  encrt_status_free(st);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

/// The test model's tokenizer as each kind: WordPiece as it is, byte-level
/// BPE (no merges, <s> text </s>), Unigram (scores, <unk> 1).
enum class Kind { WordPiece, Bpe, Unigram };

ArtifactSpec specOf(const std::vector<uint8_t> &kernels, Kind kind) {
  ArtifactSpec s = TestModel::spec(kernels);
  SpecTokenizer &t = *s.tokenizer;
  if (kind == Kind::Bpe) {
    t.bpe = true;
    t.unkId = -1;
    // Byte-level symbols for "hello" and " world" merged nowhere: each
    // letter is its own piece, the vocabulary's own bytes.
    t.vocab = {"<pad>", "<unk>", "<s>", "</s>", "h", "e", "l", "o", "\xC4\xA0", "w", "r", "d"};
    t.templateIds = {2, -1, 3};
    t.pairTemplateIds = {2, -1, 3, 3, -2, 3};
    t.pairTypeIds = {0, 0, 0, 0, 0, 0};
  } else if (kind == Kind::Unigram) {
    t.unigram = true;
    t.unkId = 1;
    t.vocab = {"<pad>", "<unk>", "<s>", "</s>", "\xE2\x96\x81hello", "\xE2\x96\x81world", "s", "\xE2\x96\x81"};
    t.scores.assign(t.vocab.size(), -1.0);
    t.templateIds = {2, -1, 3};
    t.pairTemplateIds = {2, -1, 3, 3, -2, 3};
    t.pairTypeIds = {0, 0, 0, 0, 0, 0};
  }
  return s;
}

} // namespace

TEST_F(RuntimeTest, TokenizerComponentsGiveTheFlatTablesIds) {
  const char *texts[] = {"hello world", "Hello worlds, the a [SEP] x", "", "  hello   ", "\xff hello"};
  for (Kind kind : {Kind::WordPiece, Kind::Bpe, Kind::Unigram}) {
    SCOPED_TRACE(static_cast<int>(kind));
    ArtifactSpec flat = specOf(kernels(), kind);
    ArtifactSpec components = flat;
    components.tokenizer->pipeline = SpecTokenizer::Pipeline{};
    encrt_model *a = load(writeArtifact(flat));
    encrt_model *b = load(writeArtifact(components));
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    for (const char *text : texts) {
      const std::vector<int32_t> ids = tokenize(b, text);
      EXPECT_EQ(ids, tokenize(a, text)) << text;
      EXPECT_GE(ids.size(), 2u);
    }
    EXPECT_EQ(tokenizePair(b, "hello", "world"), tokenizePair(a, "hello", "world"));
    encrt_model_release(a);
    encrt_model_release(b);
  }
  // What the ids are, not only that they agree: WordPiece [CLS] hello world [SEP].
  encrt_model *m = load(writeArtifact([&] {
    ArtifactSpec s = specOf(kernels(), Kind::WordPiece);
    s.tokenizer->pipeline = SpecTokenizer::Pipeline{};
    return s;
  }()));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(tokenize(m, "Hello worlds"), (std::vector<int32_t>{2, 4, 5, 6, 3}));
  EXPECT_EQ(tokenizePair(m, "hello", "world"), (std::vector<int32_t>{2, 4, 3, 5, 3}));
  encrt_model_release(m);
}

TEST_F(RuntimeTest, TokenizerComponentsAreChecked) {
  auto with = [&](Kind kind, auto edit) {
    ArtifactSpec s = specOf(kernels(), kind);
    s.tokenizer->pipeline = SpecTokenizer::Pipeline{};
    edit(*s.tokenizer->pipeline);
    return writeArtifact(s);
  };
  auto none = [](SpecTokenizer::Pipeline &) {};
  // The feature, and no flat vocabulary beside the components.
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.omitFeature = true; }), kBad,
                  "the tokenizer's pipeline needs feature 'tokenizer-components', which the artifact does not require");
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.flatVocabToo = true; }), kBad,
                  "the tokenizer has both components and a flat vocabulary");
  // Union types this runtime does not know, or NONE, in every slot.
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.normalizers = {uint8_t(N::BertNormalizer), 99}; }), kBad,
                  "tokenizer: unknown normalizer type 99");
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.normalizers = {0}; }), kBad,
                  "tokenizer: unknown normalizer type 0");
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.preTokenizers = {42}; }), kBad,
                  "tokenizer: unknown pre-tokenizer type 42");
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.model = 0; }), kBad, "tokenizer: unknown model type 0");
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.postProcessor = 0; }), kBad,
                  "tokenizer: unknown post-processor type 0");
  expectLoadError(with(Kind::Bpe, [](auto &p) { p.offsetTrim = encm::OffsetTrim::Unrecorded; }), kBad,
                  "tokenizer: offset trim 0 in a post-processor");
  expectLoadError(with(Kind::Unigram, [](auto &p) { p.normalizers = std::vector<uint8_t>(17, uint8_t(N::NfcNormalizer)); }),
                  kBad, "tokenizer: more than 16 normalizers or pre-tokenizers");
  // Compositions no implementation runs, named with what is implemented.
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.normalizers = {uint8_t(N::NfcNormalizer)}; }), kBad,
                  "tokenizer: WordPiece after normalizers [NFC] is not implemented (one BertNormalizer with "
                  "clean_text is)");
  expectLoadError(with(Kind::WordPiece, [](auto &p) { p.preTokenizers = {uint8_t(P::MetaspacePreTokenizer)}; }), kBad,
                  "tokenizer: WordPiece after pre-tokenizers [Metaspace] is not implemented");
  expectLoadError(with(Kind::Bpe, [](auto &p) { p.normalizers = {uint8_t(N::BertNormalizer)}; }), kBad,
                  "tokenizer: a BertNormalizer before a BPE model is not implemented");
  expectLoadError(with(Kind::Bpe,
                       [](auto &p) {
                         p.preTokenizers = {uint8_t(P::ByteLevelPreTokenizer), uint8_t(P::ByteLevelPreTokenizer)};
                       }),
                  kBad, "tokenizer: BPE after pre-tokenizers [ByteLevel, ByteLevel] is not implemented");
  expectLoadError(with(Kind::Unigram, [](auto &p) { p.preTokenizers = std::vector<uint8_t>{}; }), kBad,
                  "tokenizer: Unigram after pre-tokenizers [] is not implemented ([Metaspace] and [WhitespaceSplit, "
                  "Metaspace] are)");
  // Each kind as written loads.
  for (Kind kind : {Kind::WordPiece, Kind::Bpe, Kind::Unigram}) {
    encrt_model *m = load(with(kind, none));
    ASSERT_NE(m, nullptr);
    encrt_model_release(m);
  }
}
