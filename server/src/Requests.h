//===- Requests.h - encc-serve's request bodies, parsed and bounded -------===//
//
// Pure functions from a body's bytes to a checked request (or an ApiError):
// no HTTP and no runtime here, so they are unit-tested and fuzzed
// (tests/fuzz/ServeRequestFuzzer.cpp) on their own. Routes.cpp runs what they
// accept.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_SERVER_REQUESTS_H
#define ENCC_SERVER_REQUESTS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace encc::serve {

enum class Api { Tei, OpenAi };

/// A request the server refuses: HTTP status, one-line message, the field it
/// is about ("" when none) and a short kind ("validation", "overloaded", ...).
struct ApiError {
  int status;
  std::string message, field, kind;
};

/// What the model and the server's options allow.
struct RequestLimits {
  int maxInputTexts = 256;
  int maxSeq = 512;
  int vocabSize = 0;
  int hidden = 0; ///< the embedding's width (OpenAI's dimensions are at most it)
  bool autoTruncate = false;
  bool allowTokenIds = false; ///< token id input accepted (--allow-token-ids)
};

/// An embedding (or tokenisation) request, checked: 1..maxInputTexts texts,
/// or token id lists of 1..maxSeq ids in [0, vocabSize).
struct EmbedRequest {
  Api api = Api::Tei;
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids; ///< OpenAI's token input (then texts is empty)
  bool list = false;                     ///< given as a list: errors name field[i]
  /// TEI's /similarity: texts[0] is inputs.source_sentence, the rest
  /// inputs.sentences (errors name them so).
  bool similarity = false;
  bool normalize = true;
  bool truncate = false;
  bool addSpecialTokens = true; ///< TEI's /tokenize: the model's template around the pieces
  bool base64 = false;
  int dimensions = 0; ///< OpenAI's / TEI's "dimensions": the first N, (re)normalised as asked (0: all)
  /// TEI's prompt_name: the model prompt put before each text; unset: the
  /// model's default prompt (if it has one).
  std::optional<std::string> promptName;
  /// encc's "role" (POST /embed_multi_vector of a ColBERT model: "query",
  /// "document"); unset: none.
  std::optional<std::string> role;
  /// The name of input i in error messages: "inputs", "input[3]".
  std::string field(size_t i) const;
};

/// A classification request (TEI's /predict and /rerank), checked: 1..
/// maxInputTexts inputs, each one text or a text pair.
struct PredictRequest {
  struct Input {
    std::string first;
    std::optional<std::string> second; ///< set: a pair (query, document)
  };
  std::vector<Input> inputs;
  /// /rerank: input i is the pair (query, inputs[i].first), the query held
  /// once however many texts come with it.
  std::optional<std::string> query;
  bool batch = false; ///< /predict given a list of inputs: one answer list per input
  bool truncate = false;
  bool rawScores = false;  ///< logits as the model gives them (else sigmoid / softmax)
  bool returnText = false; ///< /rerank: each rank carries its text
  std::string listName = "inputs"; ///< /rerank: "texts"
  /// The name of input i in error messages: "inputs", "inputs[3]", "texts[3]".
  std::string field(size_t i) const;
};

/// TEI's POST /decode: {"ids": [id] | [[id]], "skip_special_tokens": true}:
/// 1..maxInputTexts non-empty lists of ids >= 0 (ids without a token are
/// refused when decoded).
struct DecodeRequest {
  std::vector<std::vector<int32_t>> ids;
  bool batch = false; ///< given as a list of lists: errors name ids[i]
  bool skipSpecialTokens = true;
  std::string field(size_t i) const { return batch ? "ids[" + std::to_string(i) + "]" : "ids"; }
};
DecodeRequest parseTeiDecode(const std::string &body, const RequestLimits &limits);

/// TEI's POST /embed: {"inputs": str | [str], "normalize", "truncate",
/// "truncation_direction": "Right", "prompt_name": str | null, "dimensions":
/// 1..hidden | null}.
EmbedRequest parseTeiEmbed(const std::string &body, const RequestLimits &limits);
/// TEI's POST /similarity: {"inputs": {"source_sentence": str, "sentences":
/// [str]}, "parameters": {"truncate", "truncation_direction", "prompt_name"}}:
/// the source sentence first, then the others (1 to maxInputTexts - 1).
EmbedRequest parseTeiSimilarity(const std::string &body, const RequestLimits &limits);
/// A body shaped as TEI's similarity request (an object whose "inputs" is an
/// object), which / answers as /similarity; false for anything else.
bool isTeiSimilarity(const std::string &body);
/// TEI's POST /tokenize: {"inputs", "add_special_tokens": true, "prompt_name"}, and as an
/// extension "truncate" (default --auto-truncate: cut to the model's maximum; TEI never cuts).
EmbedRequest parseTeiTokenize(const std::string &body, const RequestLimits &limits);
/// TEI's POST /predict: {"inputs": str | [str, str] | [[str] | [str, str], ...],
/// "truncate", "truncation_direction", "raw_scores"}.
PredictRequest parseTeiPredict(const std::string &body, const RequestLimits &limits);
/// TEI's POST /rerank: {"query": str, "texts": [str], "truncate",
/// "truncation_direction", "raw_scores", "return_text"}: the pairs
/// (query, texts[i]).
PredictRequest parseTeiRerank(const std::string &body, const RequestLimits &limits);
/// OpenAI's POST /v1/embeddings: {"input": str | [str] | [int] | [[int]],
/// "model": str, "encoding_format": "float" | "base64", "dimensions": hidden,
/// "user"}; normalize is always on (OpenAI's embeddings have unit length).
EmbedRequest parseOpenAiEmbeddings(const std::string &body, const RequestLimits &limits);

/// 422 for TEI, 400 for OpenAI: a field of the wrong type or value.
ApiError invalidField(Api api, const std::string &field, const std::string &message);

} // namespace encc::serve

#endif
