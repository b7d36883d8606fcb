//===- UnigramTokenizerTest.cpp - Unigram (XLM-R) vs the `tokenizers` library ===//
//
// Exact ids against unigram/expected.json, recorded from the `tokenizers`
// library (record_unigram.py) for SentencePiece Unigram tokenizer.json files
// converted by transformers as for XLM-R (the nmt_nfkc precompiled charsmap,
// Metaspace) and variants (WhitespaceSplit before Metaspace, byte_fallback,
// prepend_scheme "first"); truncated encodings. The tokenizer.json files are
// read here with nlohmann-json, independently of the compiler's reader. Then
// the model's Viterbi cases from the library's own tests, and the
// normalisers and pre-tokenizer on hand-made inputs.
//
//===----------------------------------------------------------------------===//
#include "tests/tokenizer/UnigramJson.h"
#include "unicode.h"
#include "unigram_tokenizer.h"

#include "tests/tokenizer/EscapedText.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

using encrt::AddedToken;
using encrt::NormalizerStep;
using encrt::UnigramOptions;
using encrt::UnigramTokenizer;
using nlohmann::json;

namespace {

constexpr int32_t kNoLimit = 1 << 30;
using Ids = std::vector<int32_t>;

json readJson(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot open");
  return json::parse(in);
}

using encc::testing::escape;

struct Fixture {
  std::vector<std::unique_ptr<UnigramTokenizer>> tokenizers; ///< as expected.json's tokenizers_files
  std::vector<std::string> files;
  json expected, sweep;
  std::string error;
};

const Fixture &fixture() {
  static const Fixture f = [] {
    Fixture f;
    try {
      const std::string dir = ENCC_UNIGRAM_DIR;
      f.expected = readJson(dir + "/expected.json");
      f.sweep = readJson(dir + "/sweep.json");
      for (const json &file : f.expected.at("tokenizers_files")) {
        f.files.push_back(file.at("file"));
        f.tokenizers.push_back(encc::testing::loadUnigram(dir + "/" + f.files.back()));
      }
    } catch (const std::exception &e) {
      f.error = e.what();
      f.tokenizers.clear();
    }
    return f;
  }();
  return f;
}

class UnigramLibrary : public ::testing::Test {
protected:
  void SetUp() override {
    if (fixture().tokenizers.size() != 3)
      GTEST_FAIL() << "expected three tokenizer files: " << fixture().error;
  }
};

TEST_F(UnigramLibrary, IdsMatchOnTexts) {
  const json &texts = fixture().expected.at("texts");
  for (size_t f = 0; f < fixture().tokenizers.size(); ++f) {
    const json &ids = fixture().expected.at("tokenizers_files")[f].at("ids");
    ASSERT_EQ(ids.size(), texts.size());
    size_t mismatches = 0, total = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string text = texts[i];
      const Ids want = ids[i], got = fixture().tokenizers[f]->encode(text, kNoLimit);
      total += want.size();
      if (got != want && ++mismatches <= 10)
        ADD_FAILURE() << fixture().files[f] << " text " << i << " \"" << escape(text) << "\": got "
                      << ::testing::PrintToString(got) << ", tokenizers " << ::testing::PrintToString(want);
    }
    EXPECT_EQ(mismatches, 0u) << fixture().files[f];
    std::printf("[ measured ] %s: %zu texts, %zu ids, %zu differ\n", fixture().files[f].c_str(), texts.size(),
                total, mismatches);
  }
}

TEST_F(UnigramLibrary, IdsMatchOnTheCodePointSweep) {
  // Each code point c as "a" c "b" and as fullwidth A then c (the
  // precompiled normaliser maps a whole grapheme cluster shorter than 6 bytes
  // by its first code point's entry, so the second probe shows where
  // clusters end).
  const json &sweep = fixture().sweep;
  std::vector<char32_t> cps;
  for (const json &range : sweep.at("codepoints"))
    for (char32_t c = range.at(0).get<char32_t>(); c <= range.at(1).get<char32_t>(); ++c)
      cps.push_back(c);
  ASSERT_EQ(cps.size(), sweep.at("count").get<size_t>());
  const json &sequences = sweep.at("sequences");
  const std::vector<std::string> probes = sweep.at("probes");
  for (size_t f = 0; f < fixture().tokenizers.size(); ++f) {
    const json &file = sweep.at("files").at(fixture().files[f]);
    size_t mismatches = 0, checked = 0;
    for (const std::string &probe : probes) {
      const json &index = file.at(probe);
      ASSERT_EQ(index.size(), cps.size());
      const size_t at = probe.find("%s");
      for (size_t i = 0; i < cps.size(); ++i) {
        if (cps[i] >= 0xD800 && cps[i] <= 0xDFFF)
          continue;
        std::string cp;
        encrt::unicode::appendUtf8(cp, cps[i]);
        const std::string text = probe.substr(0, at) + cp + probe.substr(at + 2);
        const Ids want = sequences.at(index[i].get<size_t>()), got = fixture().tokenizers[f]->encode(text, kNoLimit);
        ++checked;
        if (got != want && ++mismatches <= 10)
          ADD_FAILURE() << fixture().files[f] << " U+" << std::hex << uint32_t(cps[i]) << std::dec << " in '"
                        << probe << "': got " << ::testing::PrintToString(got) << ", tokenizers "
                        << ::testing::PrintToString(want);
      }
    }
    EXPECT_EQ(mismatches, 0u) << fixture().files[f];
    std::printf("[ measured ] %s: %zu code point probes, %zu differ\n", fixture().files[f].c_str(), checked,
                mismatches);
  }
}

TEST_F(UnigramLibrary, PairsMatch) {
  const char *keys[] = {"base", "variant", "first"};
  size_t checked = 0;
  for (size_t f = 0; f < 3; ++f)
    for (const std::string &failure :
         encc::testing::comparePairs(fixture().expected.at("pairs"), keys[f], *fixture().tokenizers[f], checked))
      ADD_FAILURE() << fixture().files[f] << " " << failure;
  EXPECT_EQ(checked, 600u);
}

TEST_F(UnigramLibrary, TruncationMatches) {
  const char *keys[] = {"base", "variant", "first"};
  size_t checked = 0;
  for (const json &c : fixture().expected.at("truncated")) {
    const std::string text = c.at("text");
    const int32_t maxLen = c.at("max_len");
    for (size_t f = 0; f < 3; ++f) {
      const Ids want = c.at(keys[f]);
      // With a maximum below the template's special tokens the library does
      // not truncate at all; encrt keeps the specials only (a model cannot
      // take more than its maximum), checked below.
      const size_t specials = f == 2 ? 1 : 2;
      if (size_t(maxLen) < specials || (size_t(maxLen) == specials && want.size() > specials))
        continue;
      EXPECT_EQ(fixture().tokenizers[f]->encode(text, maxLen), want)
          << fixture().files[f] << " \"" << escape(text) << "\" max " << maxLen;
      ++checked;
    }
  }
  EXPECT_GT(checked, 300u);
  EXPECT_EQ(fixture().tokenizers[0]->encode("hello world", 0), (Ids{0, 2}));
}

TEST_F(UnigramLibrary, InvalidUtf8IsDroppedAndRandomBytesAreSafe) {
  const UnigramTokenizer &tok = *fixture().tokenizers[1]; // byte_fallback
  EXPECT_EQ(tok.encode("ab\xff\xfe" "cd", kNoLimit), tok.encode("abcd", kNoLimit));
  EXPECT_EQ(tok.encode("\xe2\x82", kNoLimit), tok.encode("", kNoLimit));
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 64, '\0');
    for (char &c : s)
      c = static_cast<char>(rng());
    for (const auto &t : fixture().tokenizers) {
      const Ids ids = t->encode(s, 16);
      ASSERT_LE(ids.size(), 16u);
      ASSERT_EQ(ids.back(), 2);
      for (int32_t id : ids)
        ASSERT_TRUE(id >= 0 && id <= t->maxId());
    }
  }
}

/// The library's test_encode2 pieces (models/unigram/model.rs).
UnigramTokenizer libraryExample(bool byteFallback = false, std::vector<NormalizerStep> normalizers = {}) {
  std::vector<std::string> vocab = {"<unk>", "ab", "cd", "abc", "a", "b", "c", "ABC", "abcdabcd", "q", "r", "qr"};
  std::vector<double> scores = {0.0, 0.0, -0.1, -0.2, -0.3, -0.4, -0.5, -0.5, 20.0, 20.5, 20.5, -0.5};
  if (byteFallback)
    for (const char *b : {"<0x41>", "<0x42>"}) {
      vocab.push_back(b);
      scores.push_back(-1.0);
    }
  UnigramOptions o;
  o.unkId = 0;
  o.byteFallback = byteFallback;
  o.prepend = UnigramOptions::Prepend::Never;
  o.normalizers = std::move(normalizers);
  o.templateIds = {UnigramOptions::kSequence};
  return UnigramTokenizer(vocab, scores, {}, o);
}

TEST(UnigramModel, ViterbiAsTheLibrarysTests) {
  const UnigramTokenizer tok = libraryExample();
  using V = std::vector<std::string>;
  EXPECT_EQ(tok.tokenize("abc"), (V{"abc"}));
  EXPECT_EQ(tok.tokenize("abcd"), (V{"ab", "cd"}));
  EXPECT_EQ(tok.tokenize("abcc"), (V{"abc", "c"}));
  // "x" and "d" are unknown: each its own unknown piece between known ones.
  EXPECT_EQ(tok.encode("xabcabaabcdd", kNoLimit), (Ids{0, 3, 1, 4, 1, 2, 0}));
  EXPECT_EQ(tok.tokenize("ABC"), (V{"ABC"}));
  EXPECT_EQ(tok.tokenize("abABCcd"), (V{"ab", "ABC", "cd"}));
  EXPECT_EQ(tok.tokenize("ababcdabcdcd"), (V{"ab", "abcdabcd", "cd"}));
  EXPECT_EQ(tok.tokenize("abqrcd"), (V{"ab", "q", "r", "cd"}));
  // Unknown characters fuse into one unknown piece ("xyz東京" is one).
  EXPECT_EQ(tok.encode("xyz東京", kNoLimit), (Ids{0}));
  EXPECT_EQ(tok.encode("AB", kNoLimit), (Ids{0}));
  EXPECT_EQ(tok.encode("", kNoLimit), (Ids{}));
}

TEST(UnigramModel, AnUnknownCharacterCostsMinScoreMinusTen) {
  // "x" has no piece of its own. <unk> "yzw" scores (-20 - 10) - 1 = -31,
  // "xy" "z" "w" scores -30 and wins; were the penalty 1 instead of the
  // library's 10, <unk> "yzw" (-22) would.
  UnigramOptions o;
  o.unkId = 0;
  o.prepend = UnigramOptions::Prepend::Never;
  o.templateIds = {UnigramOptions::kSequence};
  const UnigramTokenizer tok({"<unk>", "xy", "yzw", "z", "w", "y"}, {0, -20, -1, -5, -5, -5}, {}, o);
  EXPECT_EQ(tok.encode("xyzw", kNoLimit), (Ids{1, 3, 4}));
}

TEST(UnigramModel, ByteFallbackSpellsUnknownPiecesWhenEveryByteHasAPiece) {
  const UnigramTokenizer tok = libraryExample(/*byteFallback=*/true);
  EXPECT_EQ(tok.encode("AB", kNoLimit), (Ids{12, 13}));      // <0x41> <0x42>
  EXPECT_EQ(tok.encode("ABx", kNoLimit), (Ids{0}));          // no <0x78>: unknown
  EXPECT_EQ(tok.encode("abAB", kNoLimit), (Ids{1, 12, 13})); // after a known piece
}

TEST(UnigramNormalizers, ReplaceAndStrip) {
  NormalizerStep runs;
  runs.kind = NormalizerStep::Kind::Replace;
  runs.pattern = "a";
  runs.minRepeat = 2;
  runs.content = "b";
  NormalizerStep literal;
  literal.kind = NormalizerStep::Kind::Replace;
  literal.pattern = "ABC";
  literal.content = "q";
  NormalizerStep strip;
  strip.kind = NormalizerStep::Kind::Strip;
  strip.stripLeft = strip.stripRight = true;
  using V = std::vector<std::string>;
  // "aa" and "aaa" become "b"; a lone "a" stays.
  EXPECT_EQ(libraryExample(false, {runs}).tokenize("aacaaab"), (V{"b", "c", "b", "b"}));
  EXPECT_EQ(libraryExample(false, {runs}).tokenize("ab"), (V{"ab"}));
  EXPECT_EQ(libraryExample(false, {literal}).tokenize("ABCabABC"), (V{"q", "ab", "q"}));
  // Unicode White_Space at both ends (U+3000, U+00A0, tab) goes; inside stays.
  EXPECT_EQ(libraryExample(false, {strip}).encode("\xe3\x80\x80\t ab\xc2\xa0", kNoLimit), (Ids{1}));
  EXPECT_THROW(libraryExample(false, {NormalizerStep{NormalizerStep::Kind::Replace, "", "", 0, "x"}}),
               std::invalid_argument);
  EXPECT_THROW(libraryExample(false, {NormalizerStep{NormalizerStep::Kind::Replace, "", "a", 0, "\xff"}}),
               std::invalid_argument); // not UTF-8
}

/// A vocabulary for the Metaspace cases: every piece a word of its own.
UnigramTokenizer metaspace(UnigramOptions::Prepend prepend, bool split, bool whitespaceSplit) {
  const std::string m = "\xe2\x96\x81"; // U+2581
  std::vector<std::string> vocab = {"<unk>", m, m + "a", "a", m + "b", "b", m + "a" + m + "b", "<s>"};
  std::vector<double> scores = {0, -5, -1, -2, -1, -2, -0.5, 0};
  UnigramOptions o;
  o.unkId = 0;
  o.prepend = prepend;
  o.split = split;
  o.whitespaceSplit = whitespaceSplit;
  o.templateIds = {UnigramOptions::kSequence};
  return UnigramTokenizer(vocab, scores, {{"<s>", 7, true, false, false, false}}, o);
}

TEST(UnigramPreTokenizer, Metaspace) {
  using P = UnigramOptions::Prepend;
  // Split: each "▁" starts a piece, so "▁a▁b" is never one piece.
  EXPECT_EQ(metaspace(P::Always, true, false).encode("a b", kNoLimit), (Ids{2, 4}));
  EXPECT_EQ(metaspace(P::Always, false, false).encode("a b", kNoLimit), (Ids{6}));
  EXPECT_EQ(metaspace(P::Never, true, false).encode("a b", kNoLimit), (Ids{3, 4}));
  EXPECT_EQ(metaspace(P::Always, true, false).encode(" a", kNoLimit), (Ids{2})); // no second "▁"
  EXPECT_EQ(metaspace(P::Always, true, false).encode("a  b", kNoLimit), (Ids{2, 1, 4}));
  // Always prepends after an added token too; First only at the text's start.
  EXPECT_EQ(metaspace(P::Always, true, false).encode("a<s>a", kNoLimit), (Ids{2, 7, 2}));
  EXPECT_EQ(metaspace(P::First, true, false).encode("a<s>a", kNoLimit), (Ids{2, 7, 3}));
  EXPECT_EQ(metaspace(P::First, true, false).encode("<s>a", kNoLimit), (Ids{7, 3}));
  // WhitespaceSplit drops the whitespace, so spaces never reach Metaspace.
  EXPECT_EQ(metaspace(P::Always, true, true).encode("a \t b", kNoLimit), (Ids{2, 4}));
  EXPECT_EQ(metaspace(P::Never, true, true).encode("a \t b", kNoLimit), (Ids{3, 5}));
  EXPECT_EQ(metaspace(P::First, true, true).encode("a b", kNoLimit), (Ids{2, 5}));
}

TEST(UnigramOptions, InconsistentDataIsRefused) {
  UnigramOptions o;
  o.templateIds = {UnigramOptions::kSequence};
  EXPECT_NO_THROW(UnigramTokenizer({"<unk>", "a"}, {0, -1}, {}, o));
  EXPECT_THROW(UnigramTokenizer({}, {}, {}, o), std::invalid_argument);
  EXPECT_THROW(UnigramTokenizer({"<unk>", "a"}, {0}, {}, o), std::invalid_argument); // scores
  EXPECT_THROW(UnigramTokenizer({"<unk>", "a"}, {0, std::nan("")}, {}, o), std::invalid_argument);
  EXPECT_THROW(UnigramTokenizer({"<unk>", "\xff"}, {0, -1}, {}, o), std::invalid_argument); // not UTF-8
  UnigramOptions badUnk = o;
  badUnk.unkId = 2;
  EXPECT_THROW(UnigramTokenizer({"<unk>", "a"}, {0, -1}, {}, badUnk), std::invalid_argument);
  UnigramOptions badRep = o;
  badRep.replacement = "ab";
  EXPECT_THROW(UnigramTokenizer({"<unk>", "a"}, {0, -1}, {}, badRep), std::invalid_argument);
  UnigramOptions noSeq = o;
  noSeq.templateIds = {0};
  EXPECT_THROW(UnigramTokenizer({"<unk>", "a"}, {0, -1}, {}, noSeq), std::invalid_argument);
  for (const std::string &map : {std::string("\x08\x00\x00", 3), std::string("\x07\x00\x00\x00" "abcdefgh", 12),
                                std::string("\x08\x00\x00\x00" "abcd", 8), std::string("\x04\x00\x00\x00" "abcd\xff", 9)}) {
    UnigramOptions damaged = o;
    damaged.normalizers.push_back({NormalizerStep::Kind::Precompiled, map, "", 0, "", false, false});
    EXPECT_THROW(UnigramTokenizer({"<unk>", "a"}, {0, -1}, {}, damaged), std::invalid_argument) << escape(map);
  }
}

} // namespace
