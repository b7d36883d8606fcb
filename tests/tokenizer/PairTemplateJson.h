//===- PairTemplateJson.h - A tokenizer.json post_processor's pair template -===//
//
// For the tests: the text-pair template of a tokenizer.json post_processor
// (RobertaProcessing, BertProcessing, TemplateProcessing's "pair"), read with
// nlohmann-json independently of the compiler's reader.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_TOKENIZER_PAIRTEMPLATEJSON_H
#define ENCC_TESTS_TOKENIZER_PAIRTEMPLATEJSON_H

#include "tokenizer.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace encc::testing {

inline encrt::PairTemplate pairTemplateOf(const nlohmann::json &post) {
  using encrt::PairTemplate;
  PairTemplate t;
  const std::string type = post.at("type");
  if (type == "RobertaProcessing") {
    const int32_t cls = post.at("cls").at(1), sep = post.at("sep").at(1);
    t.ids = {cls, PairTemplate::kFirst, sep, sep, PairTemplate::kSecond, sep};
    t.typeIds = {0, 0, 0, 0, 0, 0};
  } else if (type == "BertProcessing") {
    const int32_t cls = post.at("cls").at(1), sep = post.at("sep").at(1);
    t.ids = {cls, PairTemplate::kFirst, sep, PairTemplate::kSecond, sep};
    t.typeIds = {0, 0, 0, 1, 1};
  } else if (type == "TemplateProcessing") {
    for (const nlohmann::json &piece : post.at("pair")) {
      if (piece.contains("Sequence")) {
        t.ids.push_back(piece.at("Sequence").at("id") == "A" ? PairTemplate::kFirst : PairTemplate::kSecond);
        t.typeIds.push_back(piece.at("Sequence").at("type_id"));
      } else {
        const nlohmann::json &special = piece.at("SpecialToken");
        for (const nlohmann::json &id : post.at("special_tokens").at(special.at("id").get<std::string>()).at("ids")) {
          t.ids.push_back(id);
          t.typeIds.push_back(special.at("type_id"));
        }
      }
    }
  } else if (type == "ByteLevel") { // offsets only: the texts one after the other
    t.ids = {PairTemplate::kFirst, PairTemplate::kSecond};
    t.typeIds = {0, 0};
  } else {
    throw std::runtime_error("unexpected post_processor " + type);
  }
  return t;
}

/// Checks `tok` on recorded pair encodings (record_pairs.py / record_unigram.py
/// layout: {"a", "b", "strategy", "max_len", key: {"ids", "type_ids"} or
/// {"error"}}); returns one line per difference and counts the checks.
inline std::vector<std::string> comparePairs(const nlohmann::json &entries, const char *key,
                                             const encrt::Tokenizer &tok, size_t &checked) {
  std::vector<std::string> failures;
  for (const nlohmann::json &e : entries) {
    const std::string a = e.at("a"), b = e.at("b");
    const auto strategy = e.at("strategy").is_null() || e.at("strategy") == "longest_first"
                              ? encrt::PairTruncation::LongestFirst
                              : encrt::PairTruncation::OnlySecond;
    const int32_t maxLen = e.at("max_len").is_null() ? 1 << 30 : e.at("max_len").get<int32_t>();
    const nlohmann::json &want = e.at(key);
    const std::string what = std::string(key) + " (\"" + a + "\", \"" + b + "\") " +
                             (e.at("strategy").is_null() ? std::string("untruncated")
                                                         : e.at("strategy").get<std::string>()) +
                             " " + std::to_string(maxLen) + ": ";
    ++checked;
    try {
      const encrt::PairEncoding got = tok.encodePair(a, b, maxLen, strategy);
      if (want.contains("error"))
        failures.push_back(what + "encrt accepted what the library refused (" + want.at("error").dump() + ")");
      else if (got.ids != want.at("ids").get<std::vector<int32_t>>() ||
               got.typeIds != want.at("type_ids").get<std::vector<int32_t>>())
        failures.push_back(what + "ids or type ids differ; library " + want.dump());
    } catch (const std::length_error &err) {
      if (!want.contains("error"))
        failures.push_back(what + "encrt refused (" + err.what() + "), the library did not");
    }
  }
  return failures;
}

} // namespace encc::testing

#endif // ENCC_TESTS_TOKENIZER_PAIRTEMPLATEJSON_H
