//===- ServeRequestFuzzer.cpp - encc-serve's request parsers under libFuzzer ===//
//
// The input is an HTTP body: each of the three parsers (TEI /embed, /tokenize,
// OpenAI /v1/embeddings) either refuses it with a 4xx ApiError or returns a
// request within the limits (1..maxInputTexts texts, or id lists of
// 1..maxSeq ids each in [0, vocabSize)). The same bytes, read as floats, go
// through the response writers: the float array is JSON and each element
// reads back to the same bits, the base64 text decodes to the same bytes.
//
//===----------------------------------------------------------------------===//
#include "Requests.h"
#include "JsonText.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace encc::serve;

namespace {

void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

void checkRequest(const EmbedRequest &r, const RequestLimits &l) {
  check(r.texts.empty() != r.ids.empty(), "texts or ids, exactly one");
  check(r.texts.size() <= size_t(l.maxInputTexts), "texts within the limit");
  check(r.ids.size() <= size_t(l.maxInputTexts), "id lists within the limit");
  for (const auto &ids : r.ids) {
    check(!ids.empty() && ids.size() <= size_t(l.maxSeq), "id list length");
    for (int32_t id : ids)
      check(id >= 0 && id < l.vocabSize, "id in the vocabulary");
  }
}

void checkRequest(const PredictRequest &r, const RequestLimits &l) {
  check(!r.inputs.empty() && r.inputs.size() <= size_t(l.maxInputTexts), "1 to maxInputTexts inputs");
  check(r.batch || r.query || r.inputs.size() == 1, "one input unless a batch or a rerank");
  if (r.query)
    for (const auto &in : r.inputs)
      check(!in.second, "a rerank's inputs are the texts alone");
}

void checkRequest(const DecodeRequest &r, const RequestLimits &l) {
  check(!r.ids.empty() && r.ids.size() <= size_t(l.maxInputTexts), "1 to maxInputTexts id lists");
  check(r.batch || r.ids.size() == 1, "one id list unless a batch");
  for (const auto &ids : r.ids) {
    check(!ids.empty(), "no empty id list");
    for (int32_t id : ids)
      check(id >= 0, "ids >= 0");
  }
}

template <typename Parse> void tryParse(Parse parse, const std::string &body, const RequestLimits &l) {
  try {
    checkRequest(parse(body, l), l);
  } catch (const ApiError &e) {
    check(e.status >= 400 && e.status < 500, "a refusal is a 4xx");
    check(!e.message.empty(), "a refusal says why");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string body(reinterpret_cast<const char *>(data), size);
  RequestLimits l;
  l.maxInputTexts = 8;
  l.maxSeq = 16;
  l.vocabSize = 1000;
  l.hidden = 4;
  tryParse(parseTeiEmbed, body, l);
  tryParse(parseTeiTokenize, body, l);
  tryParse(parseTeiSimilarity, body, l);
  tryParse(parseTeiPredict, body, l);
  tryParse(parseTeiRerank, body, l);
  tryParse(parseTeiDecode, body, l);
  tryParse(parseOpenAiEmbeddings, body, l);
  l.allowTokenIds = true; // token id input is refused by default; its checks run with --allow-token-ids
  tryParse(parseOpenAiEmbeddings, body, l);

  const size_t n = size / sizeof(float);
  std::vector<float> v(n);
  if (n)
    std::memcpy(v.data(), data, n * sizeof(float));
  std::string out;
  appendFloatArray(out, v.data(), n);
  check(nlohmann::json::accept(out), "the float array is JSON");
  // Each element read back as a float directly (strtof: a JSON parser's
  // double would round twice).
  check(out.front() == '[' && out.back() == ']', "brackets");
  size_t at = 1;
  for (size_t i = 0; i < n; ++i) {
    const size_t end = out.find_first_of(",]", at);
    check(end != std::string::npos, "an element per float");
    const std::string text = out.substr(at, end - at);
    at = end + 1;
    if (!std::isfinite(v[i])) {
      check(text == "null", "non-finite as null");
      continue;
    }
    const float back = std::strtof(text.c_str(), nullptr);
    check(std::memcmp(&back, &v[i], sizeof back) == 0, "a float reads back to its bits");
  }
  check(n == 0 ? out == "[]" : at == out.size(), "nothing after the last element");
  std::string b64;
  appendBase64(b64, data, size);
  check(b64.size() == (size + 2) / 3 * 4, "base64 length");
  return 0;
}
