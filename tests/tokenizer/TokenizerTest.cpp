//===- TokenizerTest.cpp - WordPiece tokenizer vs the tokenizers library --===//
//
// Exact ids against expected.json (the `tokenizers` library, i.e. the fast
// tokenizer sentence-transformers uses, on all-MiniLM-L6-v2's tokenizer.json;
// the vocabulary from $ENCC_MINILM_DIR): 109 texts and a sweep of 13 859
// single code points; truncation, and robustness on invalid UTF-8 and random
// bytes.
//
//===----------------------------------------------------------------------===//
#include "tests/tokenizer/PairTemplateJson.h"
#include "tokenizer.h"
#include "unicode.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>

using encrt::WordPieceOptions;
using encrt::WordPieceTokenizer;

namespace {

constexpr int32_t kNoLimit = 1 << 30;

struct Fixture {
  std::unique_ptr<WordPieceTokenizer> tok;
  nlohmann::json expected;
  std::string error;
};

std::vector<std::string> readVocab(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot open the vocabulary");
  std::vector<std::string> vocab;
  for (std::string line; std::getline(in, line);)
    vocab.push_back(line); // HF strips only the "\n".
  if (vocab.size() < 103)
    throw std::runtime_error(path +
                             ": expected a BERT vocabulary (>= 103 lines)");
  return vocab;
}

const Fixture &fixture() {
  static const Fixture f = [] {
    Fixture f;
    try {
      const char *dir = std::getenv("ENCC_MINILM_DIR");
      if (!dir || !*dir)
        throw std::runtime_error(
            "ENCC_MINILM_DIR is not set: point it at the all-MiniLM-L6-v2 "
            "directory (vocab.txt); ./scripts/test sets it");
      f.tok = std::make_unique<WordPieceTokenizer>(
          readVocab(std::string(dir) + "/vocab.txt"), WordPieceOptions{});
      std::ifstream in(ENCC_TOKENIZER_EXPECTED);
      if (!in)
        throw std::runtime_error(std::string(ENCC_TOKENIZER_EXPECTED) +
                                 ": cannot open the expected ids");
      f.expected = nlohmann::json::parse(in);
    } catch (const std::exception &e) {
      f.tok.reset();
      f.error = e.what();
    }
    return f;
  }();
  return f;
}

class Tokenizer : public ::testing::Test {
protected:
  void SetUp() override {
    if (!fixture().tok)
      GTEST_FAIL() << fixture().error;
  }
  const WordPieceTokenizer &tok() const { return *fixture().tok; }
  const nlohmann::json &cases() const { return fixture().expected.at("cases"); }

  /// Every id in range, [CLS] first, [SEP] last, at most maxLen ids.
  void expectWellFormed(const std::vector<int32_t> &ids, int32_t maxLen,
                        const std::string &what) const {
    ASSERT_GE(ids.size(), 2u) << what;
    EXPECT_LE(ids.size(), static_cast<size_t>(std::max(maxLen, 2))) << what;
    EXPECT_EQ(ids.front(), 101) << what;
    EXPECT_EQ(ids.back(), 102) << what;
    for (int32_t id : ids)
      ASSERT_TRUE(id >= 0 && static_cast<size_t>(id) < tok().vocab().size())
          << what << ": id " << id;
  }
};

std::string hexBytes(const std::string &s) {
  static const char *digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += "\\x";
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

TEST_F(Tokenizer, MatchesHuggingFace) {
  ASSERT_GE(cases().size(), 90u);
  int mismatches = 0;
  for (const auto &c : cases()) {
    const std::string name = c.at("name");
    const std::string text = c.at("text");
    const auto want = c.at("ids").get<std::vector<int32_t>>();
    std::vector<int32_t> got = tok().encode(text, kNoLimit);
    if (got != want) {
      ++mismatches;
      std::string g, w;
      for (int32_t id : got)
        g += tok().vocab()[id] + " ";
      for (int32_t id : want)
        w += tok().vocab()[id] + " ";
      ADD_FAILURE() << name << ": text \"" << text << "\"\n  got:  " << g
                    << "\n  want: " << w;
      continue;
    }
    // tokenize() yields the same pieces, without [CLS]/[SEP].
    auto tokens = c.at("tokens").get<std::vector<std::string>>();
    std::vector<std::string> inner(tokens.begin() + 1, tokens.end() - 1);
    EXPECT_EQ(tok().tokenize(text), inner) << name;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(Tokenizer, PairsMatchTheLibrary) {
  // [CLS] a [SEP] b [SEP] with token types 0 then 1, cut longest first or
  // only the second text, as the library cuts them (pairs-expected.json).
  std::ifstream in(ENCC_PAIRS_EXPECTED);
  ASSERT_TRUE(in) << ENCC_PAIRS_EXPECTED;
  const nlohmann::json pairs = nlohmann::json::parse(in).at("pairs");
  size_t checked = 0;
  for (const std::string &failure : encc::testing::comparePairs(pairs, "wordpiece", tok(), checked))
    ADD_FAILURE() << failure;
  EXPECT_EQ(checked, 220u);
}

TEST_F(Tokenizer, Truncates) {
  const std::string text =
      "The river bank was covered in mud after the flood, and the bank raised "
      "its interest rates.";
  std::vector<int32_t> full = tok().encode(text, kNoLimit);
  ASSERT_GT(full.size(), 10u);
  std::vector<int32_t> ids = tok().encode(text, 8);
  ASSERT_EQ(ids.size(), 8u);
  EXPECT_EQ(ids.back(), 102);
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.end() - 1),
            std::vector<int32_t>(full.begin(), full.begin() + 7));
  // Exactly the full length, and one more, change nothing.
  int32_t n = static_cast<int32_t>(full.size());
  EXPECT_EQ(tok().encode(text, n), full);
  EXPECT_EQ(tok().encode(text, n + 1), full);
  EXPECT_EQ(tok().encode(text, n - 1).size(), full.size() - 1);
  // maxLen < 2 acts as 2.
  for (int32_t m : {2, 1, 0, -7})
    EXPECT_EQ(tok().encode(text, m), (std::vector<int32_t>{101, 102})) << m;
  std::vector<int32_t> three = tok().encode(text, 3);
  EXPECT_EQ(three, (std::vector<int32_t>{101, full[1], 102}));
  EXPECT_EQ(tok().encode("", 512), (std::vector<int32_t>{101, 102}));
}

TEST_F(Tokenizer, InvalidUtf8IsDropped) {
  // Each invalid sequence vanishes: the ids equal those of the clean text.
  const std::pair<std::string, std::string> cases[] = {
      {"ab\xff"
       "cd",
       "abcd"},
      {"caf\xc3", "caf"},                   // Truncated 2-byte at the end.
      {"caf\xc3 x", "caf x"},               // Truncated 2-byte, then ASCII.
      {"\xe2\x82 euro", " euro"},           // Truncated 3-byte.
      {"x\xf0\x9f\x8d", "x"},               // Truncated 4-byte at the end.
      {"\xc0\xaf slash", " slash"},         // Overlong '/'.
      {"\xe0\x80\xaf slash", " slash"},     // Overlong '/' (3 bytes).
      {"\xf0\x80\x80\xaf slash", " slash"}, // Overlong '/' (4 bytes).
      {"\xed\xa0\x80 surrogate", " surrogate"},
      {"\xf4\x90\x80\x80 big", " big"},       // Above U+10FFFF.
      {"\xf8\x88\x80\x80\x80 five", " five"}, // 5-byte form.
      {"\x80\xbf\xfe\xff", ""},               // Stray continuation bytes.
      {"na\xc3\xafve\xa9", "na\xc3\xafve"},   // Valid 'ï' kept, stray dropped.
      {"[CL\xffS]", "[cls]"}, // Like HF on "[CL\u200bS]": not special.
  };
  for (const auto &[bad, clean] : cases) {
    std::vector<int32_t> got = tok().encode(bad, kNoLimit);
    expectWellFormed(got, kNoLimit, hexBytes(bad));
    EXPECT_EQ(got, tok().encode(clean, kNoLimit)) << hexBytes(bad);
  }
  // A truncated sequence at the very end of an exactly-sized buffer.
  for (const char *tail : {"\xc3", "\xe2\x82", "\xf0\x9f\x8d"}) {
    std::string s = std::string("abc") + tail;
    std::unique_ptr<char[]> buf(new char[s.size()]);
    std::copy(s.begin(), s.end(), buf.get());
    EXPECT_EQ(tok().encode(std::string_view(buf.get(), s.size()), kNoLimit),
              tok().encode("abc", kNoLimit));
  }
}

TEST_F(Tokenizer, FuzzRandomBytes) {
  std::mt19937 rng(20240531);
  const std::string fragments[] = {
      "[CLS]", "[SEP", "##", "é",  "ß", "我",           "\xcc\x81",
      " ",     "!",    "İ",  "한", "🍕", "\xe2\x80\xa8", "a"};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s;
    size_t len = rng() % 80;
    while (s.size() < len) {
      switch (rng() % 3) {
      case 0:
        s += static_cast<char>(rng() & 0xFF);
        break;
      case 1:
        s += static_cast<char>('a' + rng() % 26);
        break;
      default:
        s += fragments[rng() % std::size(fragments)];
      }
    }
    const std::string what =
        "iteration " + std::to_string(iter) + ": " + hexBytes(s);
    std::vector<int32_t> full = tok().encode(s, kNoLimit);
    expectWellFormed(full, kNoLimit, what);
    ASSERT_EQ(tok().tokenize(s).size(), full.size() - 2) << what;
    int32_t m = static_cast<int32_t>(rng() % 12);
    std::vector<int32_t> cut = tok().encode(s, m);
    expectWellFormed(cut, m, what);
    size_t keep = cut.size() - 1;
    ASSERT_TRUE(std::equal(cut.begin(), cut.begin() + keep, full.begin()))
        << what;
  }
}

TEST_F(Tokenizer, ConcurrentUseAgrees) {
  std::vector<std::vector<int32_t>> want;
  for (const auto &c : cases())
    want.push_back(tok().encode(c.at("text").get<std::string>(), kNoLimit));
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep)
        for (size_t i = 0; i < want.size(); ++i)
          if (tok().encode(cases()[i].at("text").get<std::string>(),
                           kNoLimit) != want[i])
            ++bad[t];
    });
  for (auto &th : threads)
    th.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ(bad[t], 0) << "thread " << t;
}

TEST(TokenizerOptions, RejectsIdsOutsideVocabulary) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"};
  WordPieceOptions opt;
  opt.padId = 0;
  opt.unkId = 1;
  opt.clsId = 2;
  opt.sepId = 3;
  EXPECT_NO_THROW(WordPieceTokenizer(vocab, opt));
  opt.unkId = 100;
  EXPECT_THROW(WordPieceTokenizer(vocab, opt), std::invalid_argument);
}

// tokenizer.json's added tokens and pair template (MPNet's kind): a
// normalized token is matched on the lowercased text only, lstrip swallows
// the whitespace before the token, an added id past the vocabulary is
// tokenize()'d as its content and counts in maxId(); the pair template
// replaces BERT's. (e2e.Mpnet checks the real file against the library.)
TEST(TokenizerOptions, AddedTokensAndPairTemplate) {
  std::vector<std::string> vocab = {"<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<", ">", "a", "b", "mask", "unk"};
  WordPieceOptions opt;
  opt.clsId = 0, opt.padId = 1, opt.sepId = 2, opt.unkId = 4;
  encrt::WordPieceSpecials specials;
  specials.addedTokens = {{"<s>", 0, true, false, false, false},
                          {"</s>", 2, true, false, false, false},
                          {"<unk>", 3, true, false, false, /*normalized=*/true},
                          {"<mask>", 11, true, /*lstrip=*/true, false, false}};
  specials.pairTemplate = {{0, -1, 2, 2, -2, 2}, {0, 0, 0, 0, 0, 0}};
  WordPieceTokenizer tok(vocab, opt, specials);
  EXPECT_EQ(tok.maxId(), 11);
  EXPECT_EQ(tok.encode("a <mask> b", 64), (std::vector<int32_t>{0, 7, 11, 8, 2}));
  EXPECT_EQ(tok.encode("a <UNK>b", 64), (std::vector<int32_t>{0, 7, 3, 8, 2}));
  EXPECT_EQ(tok.encode("<MASK>", 64), (std::vector<int32_t>{0, 5, 9, 6, 2})); // <mask> is not normalized
  EXPECT_EQ(tok.tokenize("a  <mask></s>"), (std::vector<std::string>{"a", "<mask>", "</s>"}));
  encrt::PairEncoding p = tok.encodePair("a", "b", 64, encrt::PairTruncation::LongestFirst);
  EXPECT_EQ(p.ids, (std::vector<int32_t>{0, 7, 2, 2, 8, 2}));
  EXPECT_EQ(p.typeIds, (std::vector<int32_t>{0, 0, 0, 0, 0, 0}));
  // Without specials: BERT's built-in ones.
  WordPieceTokenizer plain(vocab, opt);
  EXPECT_EQ(plain.maxId(), 10);
  EXPECT_EQ(plain.encodePair("a", "b", 64, encrt::PairTruncation::LongestFirst).typeIds,
            (std::vector<int32_t>{0, 0, 0, 1, 1}));
  // A malformed template (an entry below -2) is refused.
  specials.pairTemplate = {{0, -1, -2, -7}, {0, 0, 0, 0}};
  EXPECT_THROW(WordPieceTokenizer(vocab, opt, specials), std::invalid_argument);
}

TEST(TokenizerOptions, CasedAndUnstripped) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "Caf",
                                    "##é",   "caf",   "##e",   "!",     "##É"};
  WordPieceOptions opt;
  opt.padId = 0;
  opt.unkId = 1;
  opt.clsId = 2;
  opt.sepId = 3;
  opt.maxCharsPerWord = 4;
  opt.lowercase = false;
  opt.stripAccents = false;
  WordPieceTokenizer cased(vocab, opt);
  EXPECT_EQ(cased.tokenize("Café! CAFÉ Cafee"),
            (std::vector<std::string>{"Caf", "##é", "!", "[UNK]", "[UNK]"}));
  opt.lowercase = true;
  opt.stripAccents = true;
  WordPieceTokenizer uncased(vocab, opt);
  EXPECT_EQ(uncased.tokenize("Café! CAFÉ"),
            (std::vector<std::string>{"caf", "##e", "!", "caf", "##e"}));
}

TEST_F(Tokenizer, SweepOfSingleCodePointsMatchesTheLibrary) {
  // "a" + c + "b" for every 97th scalar value and each code point where
  // Python's BertTokenizer and the library disagree: the Unicode data must be
  // the library's.
  const nlohmann::json &sweep = fixture().expected.at("sweep");
  const auto cps = sweep.at("code_points").get<std::vector<uint32_t>>();
  const auto &ids = sweep.at("ids");
  ASSERT_EQ(cps.size(), ids.size());
  ASSERT_GT(cps.size(), 10000u);
  size_t mismatches = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    std::string text = "a";
    encrt::unicode::appendUtf8(text, cps[i]);
    text += "b";
    const auto want = ids[i].get<std::vector<int32_t>>();
    const auto got = tok().encode(text, kNoLimit);
    if (got != want && ++mismatches <= 10)
      ADD_FAILURE() << "U+" << std::hex << cps[i] << std::dec << ": got " << ::testing::PrintToString(got)
                    << ", tokenizers " << ::testing::PrintToString(want);
  }
  EXPECT_EQ(mismatches, 0u) << "of " << cps.size() << " code points";
}

TEST(Unicode, Utf8RoundTripsEveryScalarValue) {
  std::string buf;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF)
      continue;
    buf.clear();
    encrt::unicode::appendUtf8(buf, cp);
    size_t pos = 0;
    char32_t got = 0;
    ASSERT_TRUE(encrt::unicode::decodeUtf8(buf, pos, got)) << std::hex << cp;
    ASSERT_EQ(got, cp);
    ASSERT_EQ(pos, buf.size());
  }
}

TEST(Unicode, BertClassesAndNormalisation) {
  // The `tokenizers` library's view (unicode_bert_tables.cpp), which differs
  // from Python's BertTokenizer where noted.
  using encrt::unicode::BertClass;
  using encrt::unicode::bertClass;
  EXPECT_EQ(bertClass(U'\t'), BertClass::Space);
  EXPECT_EQ(bertClass(0x00A0), BertClass::Space);
  EXPECT_EQ(bertClass(0x3000), BertClass::Space);
  EXPECT_EQ(bertClass(0x2028), BertClass::Space);
  EXPECT_EQ(bertClass(0x0000), BertClass::Removed);
  EXPECT_EQ(bertClass(0x0085), BertClass::Removed); // NEL: a control before whitespace
  EXPECT_EQ(bertClass(0x200B), BertClass::Removed); // Cf
  EXPECT_EQ(bertClass(0xFFFD), BertClass::Removed);
  EXPECT_EQ(bertClass(U'$'), BertClass::Punct);
  EXPECT_EQ(bertClass(0x00BF), BertClass::Punct); // ¿
  EXPECT_EQ(bertClass(0x3002), BertClass::Punct); // 。
  EXPECT_EQ(bertClass(0x20AC), BertClass::Other); // € is Sc
  EXPECT_EQ(bertClass(U'a'), BertClass::Other);
  EXPECT_EQ(bertClass(0x4E00), BertClass::Chinese);
  EXPECT_EQ(bertClass(0x2B740), BertClass::Chinese); // CJK extension D
  char32_t out[encrt::unicode::kMaxBertExpansion];
  ASSERT_EQ(encrt::unicode::bertNormalize(0x00C9, true, true, out), 1); // É -> e
  EXPECT_EQ(out[0], U'e');
  ASSERT_EQ(encrt::unicode::bertNormalize(0x00C9, false, true, out), 1); // É -> é
  EXPECT_EQ(out[0], 0x00E9u);
  EXPECT_EQ(encrt::unicode::bertNormalize(0x0301, true, false, out), 0); // a lone accent goes
  ASSERT_EQ(encrt::unicode::bertNormalize(0xAC01, true, false, out), 3);  // 각: Hangul NFD
  EXPECT_EQ(out[0], 0x1100u);
  EXPECT_EQ(out[1], 0x1161u);
  EXPECT_EQ(out[2], 0x11A8u);
  ASSERT_EQ(encrt::unicode::bertNormalize(0x03A3, false, true, out), 1); // Σ -> σ, never ς
  EXPECT_EQ(out[0], 0x03C3u);
}

} // namespace
