//===- BpeTokenizerTest.cpp - Byte-level BPE vs the `tokenizers` library --===//
//
// Exact ids against bpe/expected.json, recorded from the `tokenizers` library
// (record_bpe.py) for three tokenizer.json files (RoBERTa-style; a variant
// with add_prefix_space, ignore_merges, an unk token, TemplateProcessing and
// rstrip / normalized added tokens; GPT-NeoX / ModernBERT-style, with the NFC
// normalizer and [CLS] $A [SEP]) on 1040 texts: the sentence pairs, edge
// cases, 600 seeded random strings over all of Unicode, texts whose NFC
// differs from them and 300 random strings of letters, Hangul and combining
// marks in any order; truncated
// encodings; and robustness on invalid UTF-8 and random bytes. The
// tokenizer.json files are read here with nlohmann-json, independently of the
// compiler's reader (frontends/hf).
//
//===----------------------------------------------------------------------===//
#include "bpe_tokenizer.h"
#include "tests/tokenizer/ByteLevelVocab.h"
#include "tests/tokenizer/PairTemplateJson.h"

#include "tests/tokenizer/EscapedText.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <stdexcept>

using encrt::AddedToken;
using encrt::BpeOptions;
using encrt::BytePairTokenizer;
using encrt::NormalizerStep;
using nlohmann::json;

namespace {

constexpr int32_t kNoLimit = 1 << 30;

json readJson(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot open");
  return json::parse(in);
}

std::unique_ptr<BytePairTokenizer> load(const std::string &file) {
  json j = readJson(std::string(ENCC_BPE_DIR) + "/" + file);
  const json &model = j.at("model");
  std::vector<std::string> vocab(model.at("vocab").size());
  std::unordered_map<std::string, int32_t> ids;
  for (auto it = model.at("vocab").begin(); it != model.at("vocab").end(); ++it) {
    vocab.at(it.value().get<size_t>()) = it.key();
    ids[it.key()] = it.value().get<int32_t>();
  }
  std::vector<std::pair<int32_t, int32_t>> merges;
  for (const json &m : model.at("merges"))
    merges.emplace_back(ids.at(m.at(0).get<std::string>()), ids.at(m.at(1).get<std::string>()));
  std::vector<AddedToken> added;
  for (const json &a : j.at("added_tokens"))
    added.push_back({a.at("content"), a.at("id"), a.at("special"), a.at("lstrip"), a.at("rstrip"),
                     a.at("normalized")});
  BpeOptions o;
  // ByteLevel, or Sequence [Split (the regex), ByteLevel].
  const json *byteLevel = &j.at("pre_tokenizer");
  if (byteLevel->at("type") == "Sequence") {
    const json &split = byteLevel->at("pretokenizers").at(0);
    const std::string regex = split.at("pattern").at("Regex");
    o.split = regex.find("\\p{N}{1,3}") != std::string::npos ? encrt::BpeSplit::Cl100k : encrt::BpeSplit::Qwen2;
    byteLevel = &byteLevel->at("pretokenizers").at(1);
  }
  o.addPrefixSpace = byteLevel->at("add_prefix_space");
  o.ignoreMerges = model.value("ignore_merges", false);
  o.fuseUnk = model.value("fuse_unk", false);
  if (model.at("unk_token").is_string())
    o.unkId = ids.at(model.at("unk_token").get<std::string>());
  if (const json &n = j.at("normalizer"); !n.is_null()) {
    if (n.at("type") != "NFC")
      throw std::runtime_error(file + ": normalizer " + n.dump() + " (the tests know NFC only)");
    NormalizerStep nfc;
    nfc.kind = NormalizerStep::Kind::Nfc;
    o.normalizers.push_back(nfc);
  }
  const json &post = j.at("post_processor");
  o.pairTemplate = encc::testing::pairTemplateOf(post);
  if (post.at("type") == "ByteLevel") {
    o.templateIds = {BpeOptions::kSequence};
  } else if (post.at("type") == "RobertaProcessing") {
    o.templateIds = {post.at("cls").at(1), BpeOptions::kSequence, post.at("sep").at(1)};
  } else {
    for (const json &piece : post.at("single")) {
      if (piece.contains("Sequence"))
        o.templateIds.push_back(BpeOptions::kSequence);
      else
        for (const json &id : post.at("special_tokens").at(piece.at("SpecialToken").at("id").get<std::string>())
                                  .at("ids"))
          o.templateIds.push_back(id);
    }
  }
  return std::make_unique<BytePairTokenizer>(std::move(vocab), merges, std::move(added), o);
}

struct Fixture {
  std::unique_ptr<BytePairTokenizer> base, variant, neox, qwen2, cl100k;
  json expected;
  std::string error;
};

const Fixture &fixture() {
  static const Fixture f = [] {
    Fixture f;
    try {
      f.base = load("tokenizer.json");
      f.variant = load("tokenizer-variant.json");
      f.neox = load("tokenizer-neox.json");
      f.qwen2 = load("tokenizer-qwen2.json");
      f.cl100k = load("tokenizer-cl100k.json");
      f.expected = readJson(std::string(ENCC_BPE_DIR) + "/expected.json");
    } catch (const std::exception &e) {
      f.error = e.what();
      f.base.reset();
    }
    return f;
  }();
  return f;
}

class BpeTokenizer : public ::testing::Test {
protected:
  void SetUp() override {
    if (!fixture().base)
      GTEST_FAIL() << fixture().error;
  }
};

using encc::testing::escape;

TEST_F(BpeTokenizer, IdsMatchTheTokenizersLibrary) {
  const json &texts = fixture().expected.at("texts");
  const json &files = fixture().expected.at("tokenizers_files");
  const BytePairTokenizer *const tokenizers[] = {fixture().base.get(), fixture().variant.get(), fixture().neox.get(),
                                                 fixture().qwen2.get(), fixture().cl100k.get()};
  ASSERT_EQ(files.size(), std::size(tokenizers));
  for (size_t f = 0; f < std::size(tokenizers); ++f) {
    const BytePairTokenizer &tok = *tokenizers[f];
    const json &ids = files[f].at("ids");
    ASSERT_EQ(ids.size(), texts.size());
    size_t mismatches = 0, total = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string text = texts[i];
      const std::vector<int32_t> want = ids[i], got = tok.encode(text, kNoLimit);
      total += want.size();
      if (got != want && ++mismatches <= 10)
        ADD_FAILURE() << files[f].at("file").get<std::string>() << " text " << i << " \"" << escape(text)
                      << "\": got " << ::testing::PrintToString(got) << ", tokenizers "
                      << ::testing::PrintToString(want);
    }
    EXPECT_EQ(mismatches, 0u) << files[f].at("file").get<std::string>();
    std::printf("[ measured ] %s: %zu texts, %zu ids, %zu differ\n", files[f].at("file").get<std::string>().c_str(),
                texts.size(), total, mismatches);
  }
}

TEST_F(BpeTokenizer, PairsMatchTheTokenizersLibrary) {
  const json pairs = readJson(ENCC_PAIRS_EXPECTED).at("pairs");
  size_t checked = 0;
  for (const char *key : {"bpe", "variant"})
    for (const std::string &failure :
         encc::testing::comparePairs(pairs, key, std::string(key) == "bpe" ? *fixture().base : *fixture().variant, checked))
      ADD_FAILURE() << failure;
  EXPECT_EQ(checked, 440u);
}

TEST_F(BpeTokenizer, TruncationMatchesTheTokenizersLibrary) {
  for (const json &c : fixture().expected.at("truncated")) {
    const std::string text = c.at("text");
    const int32_t maxLen = c.at("max_len");
    EXPECT_EQ(fixture().base->encode(text, maxLen), c.at("base").get<std::vector<int32_t>>())
        << "\"" << escape(text) << "\" max " << maxLen;
    // With a maximum below its 3 special tokens the library does not
    // truncate at all (the result exceeds max_len); encrt keeps the specials
    // only (below), as a model cannot take more than its maximum.
    if (maxLen >= 3) {
      EXPECT_EQ(fixture().variant->encode(text, maxLen), c.at("variant").get<std::vector<int32_t>>())
          << "\"" << escape(text) << "\" max " << maxLen;
    }
  }
  EXPECT_EQ(fixture().variant->encode("hello", 2), (std::vector<int32_t>{0, 0, 2}));
  // A maximum below the template's special tokens still gives them all.
  EXPECT_EQ(fixture().base->encode("hello", 0), (std::vector<int32_t>{0, 2}));
}

TEST_F(BpeTokenizer, PiecesAreVocabularyStrings) {
  // "Ġ" is the byte-level symbol of the space.
  std::vector<std::string> pieces = fixture().base->tokenize("the license <mask>");
  ASSERT_GE(pieces.size(), 3u);
  EXPECT_EQ(pieces.front(), "the");
  EXPECT_EQ(pieces.back(), "<mask>");
  for (size_t i = 1; i + 1 < pieces.size(); ++i)
    EXPECT_EQ(pieces[i].rfind("\xc4\xa0", 0), 0u) << pieces[i]; // every later word starts with Ġ
}

TEST_F(BpeTokenizer, InvalidUtf8IsDroppedAndRandomBytesAreSafe) {
  const BytePairTokenizer &tok = *fixture().base;
  EXPECT_EQ(tok.encode("ab\xff\xfe" "cd", kNoLimit), tok.encode("abcd", kNoLimit));
  EXPECT_EQ(tok.encode("\xe2\x82", kNoLimit), tok.encode("", kNoLimit)); // truncated sequence
  EXPECT_EQ(tok.encode("abcd\xff", kNoLimit), tok.encode("abcd", kNoLimit)); // a last invalid byte
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 64, '\0');
    for (char &c : s)
      c = static_cast<char>(rng());
    std::vector<int32_t> ids = tok.encode(s, 16);
    ASSERT_LE(ids.size(), 16u);
    ASSERT_EQ(ids.front(), 0);
    ASSERT_EQ(ids.back(), 2);
    for (int32_t id : ids)
      ASSERT_TRUE(id >= 0 && id <= tok.maxId());
  }
}

// The Split pre-tokenizers cut each recorded text where the library does
// (its pre_tokenize_str on the texts whose UTF-8 is valid; the library reads
// others after a lossy conversion).
TEST_F(BpeTokenizer, SplitPiecesMatchTheTokenizersLibrary) {
  const json &texts = fixture().expected.at("texts");
  for (const auto &[name, split] : {std::pair{"qwen2", encrt::BpeSplit::Qwen2}, {"cl100k", encrt::BpeSplit::Cl100k}}) {
    const json &want = fixture().expected.at("split_pieces").at(name);
    ASSERT_EQ(want.size(), texts.size());
    size_t mismatches = 0, pieces = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::vector<std::string> got = BytePairTokenizer::preTokenize(split, texts[i].get<std::string>());
      const std::vector<std::string> expected = want[i];
      pieces += expected.size();
      if (got != expected && ++mismatches <= 10)
        ADD_FAILURE() << name << " text " << i << " \"" << escape(texts[i]) << "\"";
    }
    EXPECT_EQ(mismatches, 0u) << name;
    std::printf("[ measured ] %s split: %zu texts, %zu pieces, %zu differ\n", name, texts.size(), pieces, mismatches);
  }
}

TEST(BpeTokenizerPreTokenizer, CutsWhereTheGpt2RegexDoes) {
  // Merges that spell each contraction whole (and "ll", "ve" on their own;
  // the space-prefixed words rank first): a piece shows where the
  // pre-tokenizer cut.
  auto data = encc::testing::byteLevelVocab({" he", " 12", " !!", "  ", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d",
                                             "ll", "ve", "he", "12", "!!"});
  BpeOptions o;
  o.templateIds = {BpeOptions::kSequence};
  BytePairTokenizer tok(data.vocab, data.merges, {}, o);
  using V = std::vector<std::string>;
  const std::string sp = encc::testing::byteSymbol(' ');
  EXPECT_EQ(tok.tokenize("he'll"), (V{"he", "'ll"})); // a contraction is one piece
  EXPECT_EQ(tok.tokenize("he's he've he'd he'm he't he're"),
            (V{"he", "'s", sp + "he", "'ve", sp + "he", "'d", sp + "he", "'m", sp + "he", "'t", sp + "he", "'re"}));
  EXPECT_EQ(tok.tokenize("he'LL"), (V{"he", "'", "L", "L"})); // case-sensitive
  EXPECT_EQ(tok.tokenize("he 12!!"), (V{"he", sp + "12", "!!"}));
  EXPECT_EQ(tok.tokenize("he  12"), (V{"he", sp, sp + "12"})); // a space run leaves its last space
  EXPECT_EQ(tok.tokenize("he\t12"), (V{"he", encc::testing::byteSymbol('\t'), "12"}));
  EXPECT_EQ(tok.tokenize(" !!  "), (V{sp + "!!", sp + sp}));
}

TEST(BpeTokenizerOptions, InconsistentDataIsRefused) {
  std::vector<std::string> vocab = {"a", "b", "ab"};
  BpeOptions o;
  o.templateIds = {BpeOptions::kSequence};
  EXPECT_NO_THROW(BytePairTokenizer(vocab, {{0, 1}}, {}, o));
  EXPECT_THROW(BytePairTokenizer(vocab, {{1, 0}}, {}, o), std::invalid_argument); // "ba" not in vocab
  EXPECT_THROW(BytePairTokenizer(vocab, {{0, 3}}, {}, o), std::invalid_argument);
  EXPECT_THROW(BytePairTokenizer({}, {}, {}, o), std::invalid_argument);
  EXPECT_THROW(BytePairTokenizer(vocab, {}, {{"", 5}}, o), std::invalid_argument);
  BpeOptions noSeq;
  noSeq.templateIds = {0, 1};
  EXPECT_THROW(BytePairTokenizer(vocab, {}, {}, noSeq), std::invalid_argument);
  BpeOptions badUnk = o;
  badUnk.unkId = 3;
  EXPECT_THROW(BytePairTokenizer(vocab, {}, {}, badUnk), std::invalid_argument);
  // Bytes without a symbol are dropped when there is no unk token.
  EXPECT_EQ(BytePairTokenizer(vocab, {{0, 1}}, {}, o).encode("abzab", kNoLimit), (std::vector<int32_t>{2, 2}));
}

} // namespace
