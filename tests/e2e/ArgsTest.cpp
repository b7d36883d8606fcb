//===- ArgsTest.cpp - encc's command-line parsing ------------------------===//
//
// Issue 41, item 1: "encc tokenize ARTIFACT ---" aborted with an uncaught
// std::out_of_range (the option name of "---" is empty). Texts that begin
// with '-' but are not option-shaped are texts for the commands that take
// texts, an error (never a crash) elsewhere; "--" still ends the options;
// random argument vectors of dashes, '=', letters and empty strings never
// throw, and every string they keep as a positional is one of the inputs.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/Args.h"

#include <gtest/gtest.h>

#include <random>

using encc::Args;
using encc::parseArgs;

namespace {

Args parse(std::vector<std::string> words, bool texts) {
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  return parseArgs(static_cast<int>(argv.size()), argv.data(), 0, {"file", "format"}, {"help", "pair"}, texts);
}

TEST(Args, DashTextsAreTextsWhereTextsAreExpected) {
  Args a = parse({"m.encm", "---", "--=x", "-5 degrees", "--> arrow", "-", "--format", "json", "hello"}, true);
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.positionals, (std::vector<std::string>{"m.encm", "---", "--=x", "-5 degrees", "--> arrow", "-", "hello"}));
  EXPECT_EQ(a.get("format"), "json");
  // An option-shaped unknown name is still a mistake to report, with the way out.
  EXPECT_EQ(parse({"m.encm", "--thread", "2"}, true).error,
            "unknown option '--thread' (a text that begins with '-' goes after --)");
  EXPECT_EQ(parse({"m.encm", "--", "--thread", "--help"}, true).positionals,
            (std::vector<std::string>{"m.encm", "--thread", "--help"}));
}

TEST(Args, DashStringsElsewhereAreAnErrorNotACrash) {
  EXPECT_EQ(parse({"m.encm", "---"}, false).error, "unknown option '---'");
  EXPECT_EQ(parse({"m.encm", "--=x"}, false).error, "unknown option '--=x'");
  EXPECT_EQ(parse({"--format"}, false).error, "option --format needs a value");
  EXPECT_EQ(parse({"--help=1"}, false).error, "option --help takes no value");
}

TEST(Args, RandomArgumentVectorsNeverThrow) {
  const std::vector<std::string> pieces = {"-", "--", "=", "a", "o", "h", "format", "file", "help", "pair", " ", ""};
  std::mt19937 rng(41);
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::string> words(rng() % 6);
    for (std::string &w : words)
      for (int k = rng() % 5; k > 0; --k)
        w += pieces[rng() % pieces.size()];
    for (bool texts : {false, true}) {
      Args a;
      ASSERT_NO_THROW(a = parse(words, texts)) << ::testing::PrintToString(words);
      for (const std::string &p : a.positionals)
        EXPECT_NE(std::find(words.begin(), words.end(), p), words.end());
    }
  }
}

} // namespace
