//===- Requests.cpp - encc-serve's request bodies, parsed and bounded -----===//
#include "Requests.h"

#include "JsonText.h"
#include "encrt/schema_version.h"

#include <nlohmann/json.hpp>

namespace encc::serve {

namespace {

using nlohmann::json;

constexpr int kMaxJsonDepth = 8;

json parseObject(const std::string &body, Api api) {
  if (jsonNestingDepth(body, kMaxJsonDepth) > kMaxJsonDepth)
    throw ApiError{400, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", "", "validation"};
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded())
    throw ApiError{400, "the body is not valid JSON", "", "validation"};
  if (!j.is_object())
    throw invalidField(api, "", "the body must be a JSON object");
  return j;
}

/// An optional boolean field.
bool boolField(Api api, const json &body, const char *name, bool fallback) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null())
    return fallback;
  if (!it->is_boolean())
    throw invalidField(api, name, std::string("must be true or false, got ") + it->type_name());
  return it->get<bool>();
}

void checkCount(const std::string &field, size_t n, const RequestLimits &limits) {
  if (n > size_t(limits.maxInputTexts))
    throw ApiError{413,
                   "has " + std::to_string(n) + " texts, more than " + std::to_string(limits.maxInputTexts) +
                       " (--max-input-texts)",
                   field, "validation"};
}

/// TEI's inputs: a string or a non-empty list of strings.
void teiTexts(const json &body, const RequestLimits &limits, EmbedRequest &r) {
  auto it = body.find("inputs");
  if (it == body.end())
    throw invalidField(Api::Tei, "inputs", "missing");
  if (it->is_string()) {
    r.texts.push_back(it->get<std::string>());
    return;
  }
  if (!it->is_array())
    throw invalidField(Api::Tei, "inputs", std::string("must be a string or a list of strings, got ") + it->type_name());
  r.list = true;
  if (it->empty())
    throw invalidField(Api::Tei, "inputs", "is an empty list");
  checkCount("inputs", it->size(), limits);
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string())
      throw invalidField(Api::Tei, "inputs[" + std::to_string(i) + "]",
                         std::string("must be a string, got ") + (*it)[i].type_name());
    r.texts.push_back((*it)[i].get<std::string>());
  }
}

std::vector<int32_t> idList(const json &list, const std::string &field, const RequestLimits &limits) {
  if (!limits.allowTokenIds)
    throw invalidField(Api::OpenAi, field,
                       "token ids are refused: ids made by another model's tokenizer give meaningless vectors "
                       "without an error (LangChain's OpenAIEmbeddings sends tiktoken's ids unless "
                       "check_embedding_ctx_length=False); send the text, or start encc-serve with "
                       "--allow-token-ids if the ids come from this model's tokenizer (POST /tokenize)");
  if (list.empty())
    throw invalidField(Api::OpenAi, field, "is an empty list of token ids");
  if (list.size() > size_t(limits.maxSeq))
    throw ApiError{413,
                   "has " + std::to_string(list.size()) + " tokens, more than the model's " +
                       std::to_string(limits.maxSeq),
                   field, "validation"};
  std::vector<int32_t> ids;
  ids.reserve(list.size());
  for (const json &v : list) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= limits.vocabSize)
      throw invalidField(Api::OpenAi, field,
                         "token ids must be integers in [0, " + std::to_string(limits.vocabSize) + ")");
    ids.push_back(int32_t(v.get<int64_t>()));
  }
  return ids;
}

} // namespace

ApiError invalidField(Api api, const std::string &field, const std::string &message) {
  return ApiError{api == Api::OpenAi ? 400 : 422, message, field, "validation"};
}

std::string EmbedRequest::field(size_t i) const {
  if (similarity)
    return i == 0 ? "inputs.source_sentence" : "inputs.sentences[" + std::to_string(i - 1) + "]";
  const std::string name = api == Api::OpenAi ? "input" : "inputs";
  return list ? name + "[" + std::to_string(i) + "]" : name;
}

/// TEI's prompt_name: a string (checked against the model's prompts when the
/// texts are tokenised), or absent / null.
static std::optional<std::string> promptName(const json &j) {
  auto it = j.find("prompt_name");
  if (it == j.end() || it->is_null())
    return std::nullopt;
  if (!it->is_string())
    throw invalidField(Api::Tei, "prompt_name", "must be a string or null");
  if (it->get_ref<const std::string &>().size() > ENCM_MAX_PROMPT_NAME_BYTES)
    throw invalidField(Api::Tei, "prompt_name", "is longer than any prompt name");
  return it->get<std::string>();
}

/// TEI's truncation_direction: Right (its default; "right" too, as TEI reads it).
static void rightTruncation(const json &j) {
  if (auto it = j.find("truncation_direction");
      it != j.end() && !it->is_null() &&
      !(it->is_string() && (it->get<std::string>() == "Right" || it->get<std::string>() == "right")))
    throw invalidField(Api::Tei, "truncation_direction", "only \"Right\" is supported");
}

std::string PredictRequest::field(size_t i) const {
  return batch || listName != "inputs" ? listName + "[" + std::to_string(i) + "]" : listName;
}

PredictRequest parseTeiPredict(const std::string &body, const RequestLimits &limits) {
  const json j = parseObject(body, Api::Tei);
  PredictRequest r;
  r.truncate = boolField(Api::Tei, j, "truncate", limits.autoTruncate);
  r.rawScores = boolField(Api::Tei, j, "raw_scores", false);
  rightTruncation(j);
  auto it = j.find("inputs");
  if (it == j.end())
    throw invalidField(Api::Tei, "inputs", "missing");
  const char *kShapes = "must be a string, a pair [string, string] or a list of inputs [[string], [string, string], ...]";
  // One input: a string or [string] / [string, string]; as TEI reads them.
  auto input = [&](const json &v, const std::string &field) {
    if (v.is_string())
      return PredictRequest::Input{v.get<std::string>(), std::nullopt};
    if (!v.is_array() || v.empty() || v.size() > 2)
      throw invalidField(Api::Tei, field, kShapes);
    for (size_t k = 0; k < v.size(); ++k)
      if (!v[k].is_string())
        throw invalidField(Api::Tei, field + "[" + std::to_string(k) + "]",
                           std::string("must be a string, got ") + v[k].type_name());
    return PredictRequest::Input{v[0].get<std::string>(),
                                 v.size() == 2 ? std::optional<std::string>(v[1].get<std::string>()) : std::nullopt};
  };
  if (!it->is_array() || it->empty() || it->front().is_string()) { // one input
    r.inputs.push_back(input(*it, "inputs"));
    return r;
  }
  r.batch = true;
  checkCount("inputs", it->size(), limits);
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string field = "inputs[" + std::to_string(i) + "]";
    if (!(*it)[i].is_array()) // a batch holds lists only: ["a", ["b"]] is neither shape
      throw invalidField(Api::Tei, field, kShapes);
    r.inputs.push_back(input((*it)[i], field));
  }
  return r;
}

PredictRequest parseTeiRerank(const std::string &body, const RequestLimits &limits) {
  const json j = parseObject(body, Api::Tei);
  PredictRequest r;
  r.listName = "texts";
  r.truncate = boolField(Api::Tei, j, "truncate", limits.autoTruncate);
  r.rawScores = boolField(Api::Tei, j, "raw_scores", false);
  r.returnText = boolField(Api::Tei, j, "return_text", false);
  rightTruncation(j);
  auto query = j.find("query");
  if (query == j.end() || !query->is_string())
    throw invalidField(Api::Tei, "query", query == j.end() ? "missing" : "must be a string");
  auto texts = j.find("texts");
  if (texts == j.end() || !texts->is_array())
    throw invalidField(Api::Tei, "texts", texts == j.end() ? "missing" : "must be a list of strings");
  if (texts->empty())
    throw ApiError{400, "`texts` cannot be empty", "", "empty"}; // TEI's words and status
  checkCount("texts", texts->size(), limits);
  r.query = query->get<std::string>();
  for (size_t i = 0; i < texts->size(); ++i) {
    if (!(*texts)[i].is_string())
      throw invalidField(Api::Tei, "texts[" + std::to_string(i) + "]",
                         std::string("must be a string, got ") + (*texts)[i].type_name());
    r.inputs.push_back({(*texts)[i].get<std::string>(), std::nullopt});
  }
  return r;
}

EmbedRequest parseTeiEmbed(const std::string &body, const RequestLimits &limits) {
  const json j = parseObject(body, Api::Tei);
  EmbedRequest r;
  r.normalize = boolField(Api::Tei, j, "normalize", true);
  if (auto it = j.find("dimensions"); it != j.end() && !it->is_null()) {
    // Matryoshka: the first N dimensions, then normalised when "normalize" is (TEI's order and words).
    if (!it->is_number_integer() || it->get<int64_t>() < 0)
      throw invalidField(Api::Tei, "dimensions", "must be a positive integer");
    if (it->get<int64_t>() == 0)
      throw invalidField(Api::Tei, "dimensions", "`dimensions` should be positive");
    if (it->get<int64_t>() > limits.hidden)
      throw invalidField(Api::Tei, "dimensions",
                         "`dimensions` should be smaller than the maximum embedding dimension (" +
                             std::to_string(limits.hidden) + ")");
    r.dimensions = int(it->get<int64_t>());
  }
  r.truncate = boolField(Api::Tei, j, "truncate", limits.autoTruncate);
  rightTruncation(j);
  r.promptName = promptName(j);
  if (auto it = j.find("role"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || it->get_ref<const std::string &>().empty() ||
        it->get_ref<const std::string &>().size() > ENCM_MAX_PROMPT_NAME_BYTES)
      throw invalidField(Api::Tei, "role", "must be a role's name (a ColBERT model's: \"query\", \"document\")");
    r.role = it->get<std::string>();
  }
  teiTexts(j, limits, r);
  return r;
}

EmbedRequest parseTeiSimilarity(const std::string &body, const RequestLimits &limits) {
  const json j = parseObject(body, Api::Tei);
  EmbedRequest r;
  r.similarity = true;
  r.truncate = limits.autoTruncate;
  if (auto p = j.find("parameters"); p != j.end() && !p->is_null()) {
    if (!p->is_object())
      throw invalidField(Api::Tei, "parameters", "must be an object");
    r.truncate = boolField(Api::Tei, *p, "truncate", limits.autoTruncate);
    rightTruncation(*p);
    r.promptName = promptName(*p);
  }
  auto in = j.find("inputs");
  if (in == j.end() || !in->is_object())
    throw invalidField(Api::Tei, "inputs", in == j.end() ? "missing" : "must be an object {source_sentence, sentences}");
  auto source = in->find("source_sentence");
  if (source == in->end() || !source->is_string())
    throw invalidField(Api::Tei, "inputs.source_sentence", source == in->end() ? "missing" : "must be a string");
  auto sentences = in->find("sentences");
  if (sentences == in->end() || !sentences->is_array())
    throw invalidField(Api::Tei, "inputs.sentences", sentences == in->end() ? "missing" : "must be a list of strings");
  if (sentences->empty())
    throw invalidField(Api::Tei, "inputs.sentences", "is an empty list");
  checkCount("inputs.sentences", sentences->size() + 1, limits); // embedded with the source sentence
  r.texts.push_back(source->get<std::string>());
  for (size_t i = 0; i < sentences->size(); ++i) {
    if (!(*sentences)[i].is_string())
      throw invalidField(Api::Tei, "inputs.sentences[" + std::to_string(i) + "]",
                         std::string("must be a string, got ") + (*sentences)[i].type_name());
    r.texts.push_back((*sentences)[i].get<std::string>());
  }
  return r;
}

bool isTeiSimilarity(const std::string &body) {
  if (body.find("source_sentence") == std::string::npos || jsonNestingDepth(body, kMaxJsonDepth) > kMaxJsonDepth)
    return false; // most bodies: no second parse
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return false;
  auto in = j.find("inputs");
  return in != j.end() && in->is_object();
}

EmbedRequest parseTeiTokenize(const std::string &body, const RequestLimits &limits) {
  const json j = parseObject(body, Api::Tei);
  EmbedRequest r;
  r.addSpecialTokens = boolField(Api::Tei, j, "add_special_tokens", true);
  r.truncate = boolField(Api::Tei, j, "truncate", limits.autoTruncate);
  r.promptName = promptName(j);
  teiTexts(j, limits, r);
  return r;
}

DecodeRequest parseTeiDecode(const std::string &body, const RequestLimits &limits) {
  const json j = parseObject(body, Api::Tei);
  DecodeRequest r;
  r.skipSpecialTokens = boolField(Api::Tei, j, "skip_special_tokens", true);
  auto it = j.find("ids");
  if (it == j.end())
    throw invalidField(Api::Tei, "ids", "missing");
  if (!it->is_array())
    throw invalidField(Api::Tei, "ids", "must be a list of token ids or a list of lists of them");
  r.batch = !it->empty() && it->front().is_array();
  const auto ids = [&](const json &list, const std::string &field) {
    if (!list.is_array())
      throw invalidField(Api::Tei, field, std::string("must be a list of token ids, got ") + list.type_name());
    if (list.empty()) // TEI's words
      throw ApiError{400, "`input_ids` cannot be empty", field, "empty"};
    std::vector<int32_t> out;
    out.reserve(list.size());
    for (const json &v : list) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
        throw invalidField(Api::Tei, field, "token ids must be integers >= 0");
      out.push_back(int32_t(v.get<int64_t>()));
    }
    return out;
  };
  if (!r.batch) {
    r.ids.push_back(ids(*it, "ids"));
    return r;
  }
  checkCount("ids", it->size(), limits);
  for (size_t i = 0; i < it->size(); ++i)
    r.ids.push_back(ids((*it)[i], r.field(i)));
  return r;
}

EmbedRequest parseOpenAiEmbeddings(const std::string &body, const RequestLimits &limits) {
  const json j = parseObject(body, Api::OpenAi);
  EmbedRequest r;
  r.api = Api::OpenAi;
  r.truncate = limits.autoTruncate;
  if (auto it = j.find("encoding_format"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || (it->get<std::string>() != "float" && it->get<std::string>() != "base64"))
      throw invalidField(Api::OpenAi, "encoding_format", "must be \"float\" or \"base64\"");
    r.base64 = it->get<std::string>() == "base64";
  }
  if (auto it = j.find("dimensions"); it != j.end() && !it->is_null()) {
    // text-embedding-3's shortening (Matryoshka): the first N dimensions, renormalised.
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > limits.hidden)
      throw invalidField(Api::OpenAi, "dimensions",
                         "must be an integer in [1, " + std::to_string(limits.hidden) + "] (the model's dimensions)");
    r.dimensions = int(it->get<int64_t>());
  }
  for (const char *name : {"model", "user"})
    if (auto it = j.find(name); it != j.end() && !it->is_null() && !it->is_string())
      throw invalidField(Api::OpenAi, name, "must be a string");
  auto it = j.find("input");
  if (it == j.end())
    throw invalidField(Api::OpenAi, "input", "missing");
  const char *kShapes = "must be a string, a list of strings, a list of token ids or a list of lists of token ids";
  if (it->is_string()) {
    r.texts.push_back(it->get<std::string>());
    return r;
  }
  if (!it->is_array())
    throw invalidField(Api::OpenAi, "input", kShapes);
  if (it->empty())
    throw invalidField(Api::OpenAi, "input", "is an empty list");
  const json &first = it->front();
  if (first.is_number()) {
    r.ids.push_back(idList(*it, "input", limits));
    return r;
  }
  r.list = true;
  checkCount("input", it->size(), limits);
  for (size_t i = 0; i < it->size(); ++i) {
    const json &v = (*it)[i];
    const std::string field = "input[" + std::to_string(i) + "]";
    if (first.is_string() && v.is_string())
      r.texts.push_back(v.get<std::string>());
    else if (first.is_array() && v.is_array())
      r.ids.push_back(idList(v, field, limits));
    else
      throw invalidField(Api::OpenAi, first.is_string() || first.is_array() ? field : "input", kShapes);
  }
  return r;
}

} // namespace encc::serve
