//===- UnigramJson.h - A Unigram tokenizer.json -> encrt::UnigramTokenizer -===//
//
// For the tests and the fuzzer: the tokenizer.json files in
// tests/tokenizer/unigram read with nlohmann-json, independently of the
// compiler's reader (frontends/hf/UnigramTokenizerJson.cpp); only the options
// those files use.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_TOKENIZER_UNIGRAMJSON_H
#define ENCC_TESTS_TOKENIZER_UNIGRAMJSON_H

#include "tests/tokenizer/PairTemplateJson.h"
#include "unigram_tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

namespace encc::testing {

using encrt::AddedToken;
using encrt::NormalizerStep;
using encrt::UnigramOptions;
using encrt::UnigramTokenizer;
using nlohmann::json;

inline std::string base64Decode(const std::string &in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? std::strchr(alphabet, c) : nullptr;
    if (!p)
      continue; // '=' padding
    acc = acc << 6 | uint32_t(p - alphabet);
    if ((bits += 6) >= 8)
      out.push_back(static_cast<char>(acc >> (bits -= 8) & 0xFF));
  }
  return out;
}

inline void addNormalizer(const json &n, std::vector<NormalizerStep> &out) {
  const std::string type = n.at("type");
  NormalizerStep s;
  if (type == "Sequence") {
    for (const json &m : n.at("normalizers"))
      addNormalizer(m, out);
    return;
  }
  if (type == "Precompiled") {
    s.kind = NormalizerStep::Kind::Precompiled;
    s.charsmap = base64Decode(n.at("precompiled_charsmap"));
  } else if (type == "Replace") {
    s.kind = NormalizerStep::Kind::Replace;
    s.content = n.at("content");
    const json &p = n.at("pattern");
    if (p.contains("String")) {
      s.pattern = p.at("String");
    } else if (p.at("Regex") == " {2,}") {
      s.pattern = " ";
      s.minRepeat = 2;
    } else if (p.at("Regex") == "\\A +| +\\z") {
      s.kind = NormalizerStep::Kind::Strip;
      s.stripLeft = s.stripRight = s.stripSpacesOnly = true;
    } else {
      throw std::runtime_error("unexpected Replace regex " + p.dump());
    }
  } else if (type == "Strip") {
    s.kind = NormalizerStep::Kind::Strip;
    s.stripLeft = n.at("strip_left");
    s.stripRight = n.at("strip_right");
  } else {
    throw std::runtime_error("unexpected normalizer " + type);
  }
  out.push_back(std::move(s));
}

inline std::unique_ptr<encrt::UnigramTokenizer> loadUnigram(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot open");
  const nlohmann::json j = nlohmann::json::parse(in);
  const json &model = j.at("model");
  std::vector<std::string> vocab;
  std::vector<double> scores;
  for (const json &piece : model.at("vocab")) {
    vocab.push_back(piece.at(0));
    scores.push_back(piece.at(1));
  }
  std::vector<AddedToken> added;
  for (const json &a : j.at("added_tokens"))
    added.push_back({a.at("content"), a.at("id"), a.at("special"), a.at("lstrip"), a.at("rstrip"),
                     a.at("normalized")});
  UnigramOptions o;
  o.unkId = model.at("unk_id");
  o.byteFallback = model.value("byte_fallback", false);
  if (!j.at("normalizer").is_null())
    addNormalizer(j.at("normalizer"), o.normalizers);
  json meta = j.at("pre_tokenizer");
  if (meta.at("type") == "Sequence") {
    const json &list = meta.at("pretokenizers");
    o.whitespaceSplit = list.size() == 2 && list.at(0).at("type") == "WhitespaceSplit";
    meta = list.back();
  }
  if (meta.at("type") != "Metaspace")
    throw std::runtime_error("unexpected pre_tokenizer " + meta.dump());
  o.replacement = meta.at("replacement");
  const std::string scheme = meta.value("prepend_scheme", "always");
  o.prepend = scheme == "first"   ? UnigramOptions::Prepend::First
              : scheme == "never" ? UnigramOptions::Prepend::Never
                                  : UnigramOptions::Prepend::Always;
  o.split = meta.value("split", true);
  const json &post = j.at("post_processor");
  if (!post.is_null())
    o.pairTemplate = pairTemplateOf(post);
  if (post.is_null()) {
    o.templateIds = {UnigramOptions::kSequence};
  } else if (post.at("type") == "RobertaProcessing") {
    o.templateIds = {post.at("cls").at(1), UnigramOptions::kSequence, post.at("sep").at(1)};
  } else {
    for (const json &piece : post.at("single")) {
      if (piece.contains("Sequence"))
        o.templateIds.push_back(UnigramOptions::kSequence);
      else
        for (const json &id : post.at("special_tokens").at(piece.at("SpecialToken").at("id").get<std::string>())
                                  .at("ids"))
          o.templateIds.push_back(id);
    }
  }
  return std::make_unique<UnigramTokenizer>(std::move(vocab), std::move(scores), std::move(added), o);
}

} // namespace encc::testing

#endif // ENCC_TESTS_TOKENIZER_UNIGRAMJSON_H
