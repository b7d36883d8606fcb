//===- GraphemeTest.cpp - extended grapheme clusters vs UAX #29 -----------===//
//
// encrt::unicode::graphemeEnd against the official GraphemeBreakTest.txt
// cases of the tables' Unicode version (grapheme/GraphemeBreakTest.txt) and
// against the Python `regex` module's \X on edge cases and 2000 seeded random
// strings weighted towards the classes the rules are about
// (grapheme/expected.json, recorded by grapheme/record_graphemes.py); both
// agree with the Rust crate unicode-segmentation, which the `tokenizers`
// library's Precompiled normalizer uses.
//
//===----------------------------------------------------------------------===//
#include "graphemes.h"
#include "unicode.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef ENCC_GRAPHEME_DIR
#define ENCC_GRAPHEME_DIR "tests/tokenizer/grapheme"
#endif

namespace encrt::unicode::detail {
extern const char kGraphemeTablesSource[];
} // namespace encrt::unicode::detail

using encrt::unicode::graphemeEnd;
using nlohmann::json;

namespace {

std::string path(const char *file) { return std::string(ENCC_GRAPHEME_DIR) + "/" + file; }

/// The cluster ends of `s`, iterating as the normalizer does.
std::vector<size_t> clusterEnds(std::string_view s) {
  std::vector<size_t> ends;
  for (size_t p = 0; p < s.size();) {
    const size_t end = graphemeEnd(s, p);
    if (end <= p || end > s.size())
      throw std::runtime_error("graphemeEnd(" + std::to_string(p) + ") = " + std::to_string(end));
    ends.push_back(p = end);
  }
  return ends;
}

/// "61 301" (hex code points) as UTF-8.
std::string fromHex(const std::string &cps) {
  std::istringstream in(cps);
  std::string hex, out;
  while (in >> hex)
    encrt::unicode::appendUtf8(out, static_cast<char32_t>(std::stoul(hex, nullptr, 16)));
  return out;
}

std::string show(const std::vector<size_t> &ends) {
  std::string out;
  for (size_t e : ends) {
    if (!out.empty())
      out += ' ';
    out += std::to_string(e);
  }
  return out;
}

json readExpected() {
  std::ifstream in(path("expected.json"));
  if (!in)
    throw std::runtime_error(path("expected.json") + ": cannot open");
  return json::parse(in);
}

TEST(Grapheme, TablesAreTheRecordedUnicodeVersion) {
  const json expected = readExpected();
  const std::string source = encrt::unicode::detail::kGraphemeTablesSource;
  EXPECT_EQ(source.rfind("Unicode " + expected.at("unicode").get<std::string>() + " ", 0), 0u)
      << "tables: " << source << "; expected.json: Unicode " << expected.at("unicode");
}

// Lines "÷ 0020 × 0308 ÷ 0020 ÷" of Unicode's GraphemeBreakTest.txt.
TEST(Grapheme, UnicodeGraphemeBreakTest) {
  std::ifstream in(path("GraphemeBreakTest.txt"));
  ASSERT_TRUE(in) << path("GraphemeBreakTest.txt");
  const std::string breakMark = "\xC3\xB7", joinMark = "\xC3\x97"; // ÷, ×
  std::string line;
  int cases = 0, failures = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream tokens(line.substr(0, line.find('#')));
    std::string token, text;
    std::vector<size_t> want;
    while (tokens >> token) {
      if (token == breakMark) {
        if (!text.empty())
          want.push_back(text.size());
      } else if (token != joinMark) {
        encrt::unicode::appendUtf8(text, static_cast<char32_t>(std::stoul(token, nullptr, 16)));
      }
    }
    ++cases;
    const std::vector<size_t> got = clusterEnds(text);
    if (got != want && ++failures <= 20)
      ADD_FAILURE() << line << ": ends " << show(got) << ", want " << show(want);
  }
  EXPECT_EQ(failures, 0) << "of " << cases;
  EXPECT_GE(cases, 700);
}

TEST(Grapheme, RegexRecordings) {
  const json expected = readExpected();
  int cases = 0, failures = 0;
  for (const json &c : expected.at("cases")) {
    const std::string text = fromHex(c.at("cps"));
    const std::vector<size_t> want = c.at("ends").get<std::vector<size_t>>();
    ++cases;
    const std::vector<size_t> got = clusterEnds(text);
    if (got != want && ++failures <= 20)
      ADD_FAILURE() << c.at("cps").get<std::string>() << ": ends " << show(got) << ", want " << show(want);
  }
  EXPECT_EQ(failures, 0) << "of " << cases << " (" << expected.at("reference") << ")";
  EXPECT_GE(cases, 2000);
}

TEST(Grapheme, Rules) {
  const auto ends = [](std::string_view s) { return show(clusterEnds(s)); };
  EXPECT_EQ(ends("ab\r\n\r\rc"), "1 2 4 5 6 7");                               // GB3, GB4, GB5
  EXPECT_EQ(ends("e\xCC\x81x"), "3 4");                                        // GB9: e U+0301
  EXPECT_EQ(ends("\xF0\x9F\x87\xA6\xF0\x9F\x87\xA8\xF0\x9F\x87\xA9"), "8 12"); // GB12: RI RI | RI
  EXPECT_EQ(ends("\xE0\xA4\x95\xE0\xA5\x8D\xE0\xA4\xB7"), "9");                // GB9c: क्ष
  EXPECT_EQ(ends("\xE0\xA4\x95\xE0\xA4\xB7"), "3 6");                          // क ष
  EXPECT_EQ(ends("\xE2\x9D\xA4\xE2\x80\x8D\xF0\x9F\x94\xA5"), "10");           // GB11: ❤ ZWJ 🔥
  EXPECT_EQ(ends("a\xE2\x80\x8D\xF0\x9F\x94\xA5"), "4 8");                     // a ZWJ | 🔥
  EXPECT_EQ(ends("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "9");                // GB6-8: L V T
  EXPECT_EQ(ends("\xD8\x80z\n"), "3 4");                                       // GB9b, GB5
}

// An invalid byte is a cluster of its own; nothing reads past the end.
TEST(Grapheme, InvalidUtf8) {
  EXPECT_EQ(show(clusterEnds("a\xFF\xCC\x81")), "1 2 4");
  EXPECT_EQ(show(clusterEnds("\xE0\xA4")), "1 2");
  EXPECT_EQ(show(clusterEnds("e\xCC")), "1 2");
}

} // namespace
