//===- Colbert.cpp - PyLate ColBERT checkpoints: a query and a document ---===//
//
// A PyLate ColBERT checkpoint is a sentence-transformers folder whose
// modules.json lists the Transformer, then pylate's Dense modules (per token,
// usually one without a bias); its output is every token's projected,
// L2-normalised vector. config_sentence_transformers.json says how a text is
// tokenised as a query or a document (PyLate's ColBERT.tokenize):
//
//   ids    = the tokenizer's, cut to length - 1, with the prefix token
//            inserted after the first ([CLS] [Q] ... [SEP])
//   query  = padded to query_length with the mask token (do_query_expansion),
//            which the attention sees as keys only with
//            attend_to_expansion_tokens; every row is a vector
//   document = cut to document_length; the rows whose id is one of
//            skiplist_words' (punctuation) give no vector
//
// Each becomes a TokenRole of the artifact's multi-vector head. Fields the
// file lacks take PyLate's defaults ("[Q] ", "[D] ", 32, 180, expansion on
// and unattended, string.punctuation), as PyLate itself does.
//
// A Stanford colbert-ai checkpoint (config.json architectures HF_ColBERT, no
// modules.json) keeps the projection in the checkpoint ("linear.weight", no
// bias) and its settings in artifact.metadata (query_token_id, doc_token_id,
// query_maxlen, doc_maxlen, attend_to_mask_tokens); PyLate reads it so, with
// [unused0] / [unused1] as the markers where the file names none.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/SafeTensors.h"

#include "encrt/schema_version.h"
#include "llvm/ADT/STLExtras.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>

using namespace encc;
using llvm::Twine;

namespace {

/// Python's string.punctuation, one character per word: PyLate's skiplist
/// when the config names none.
std::vector<std::string> punctuation() {
  std::vector<std::string> words;
  for (char c : std::string("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"))
    words.emplace_back(1, c);
  return words;
}

} // namespace

llvm::Error encc::readColbertConfig(const std::string &path, const nlohmann::ordered_json &j, ModelConfig &c) {
  ModelConfig::Colbert &cb = *c.colbert;
  cb.skiplist = punctuation();
  for (auto [key, out] : {std::pair{"query_prefix", &cb.queryPrefix}, std::pair{"document_prefix", &cb.documentPrefix}})
    if (auto it = j.find(key); it != j.end() && !it->is_null()) {
      if (!it->is_string() || it->get<std::string>().size() > ENCM_MAX_ADDED_TOKEN_BYTES)
        return hfError(path + ": field '" + key + "' must be a string of at most " +
                       Twine(ENCM_MAX_ADDED_TOKEN_BYTES) + " bytes");
      *out = it->get<std::string>();
    }
  for (auto [key, out] : {std::pair{"query_length", &cb.queryLength}, std::pair{"document_length", &cb.documentLength}})
    if (auto it = j.find(key); it != j.end() && !it->is_null()) {
      if (!it->is_number_integer() || it->get<int64_t>() < 3 || it->get<int64_t>() > 1 << 20)
        return hfError(path + ": field '" + key + "' must be an integer of at least 3");
      *out = it->get<int64_t>();
    }
  for (auto [key, out] : {std::pair{"do_query_expansion", &cb.queryExpansion},
                          std::pair{"attend_to_expansion_tokens", &cb.attendExpansion}})
    if (auto it = j.find(key); it != j.end() && !it->is_null()) {
      if (!it->is_boolean())
        return hfError(path + ": field '" + key + "' must be a boolean");
      *out = it->get<bool>();
    }
  if (!cb.queryExpansion) // PyLate: no expansion, nothing to attend to
    cb.attendExpansion = false;
  if (auto it = j.find("skiplist_words"); it != j.end() && !it->is_null()) {
    if (!it->is_array() || it->size() > ENCM_MAX_SKIP_IDS)
      return hfError(path + ": field 'skiplist_words' must be an array of at most " + Twine(ENCM_MAX_SKIP_IDS) +
                     " strings");
    cb.skiplist.clear();
    for (const auto &w : *it) {
      if (!w.is_string() || w.get<std::string>().size() > ENCM_MAX_ADDED_TOKEN_BYTES)
        return hfError(path + ": skiplist_words must hold strings of at most " + Twine(ENCM_MAX_ADDED_TOKEN_BYTES) +
                       " bytes");
      cb.skiplist.push_back(w.get<std::string>());
    }
  }
  if (auto it = j.find("similarity_fn_name"); it != j.end() && !it->is_null() && *it != "MaxSim")
    return hfError(path + ": similarity_fn_name " + it->dump() + " for a ColBERT model; expected \"MaxSim\"");
  if (auto it = j.find("model_type"); it != j.end() && !it->is_null() && *it != "ColBERT")
    return hfError(path + ": model_type " + it->dump() + " beside PyLate's Dense modules; expected \"ColBERT\"");
  // The compiled length: the longer role (PyLate sets the tokenizer's length
  // per call, ignoring sentence_bert_config.json's max_seq_length).
  const int64_t positions = c.maxPositions - c.positionOffset;
  for (auto [key, length] : {std::pair{"query_length", cb.queryLength}, std::pair{"document_length", cb.documentLength}})
    if (length > positions)
      return hfError(path + ": " + key + " " + Twine(length) + " is longer than the model's " + Twine(positions) +
                     " positions");
  c.maxSeq = std::max(cb.queryLength, cb.documentLength);
  return llvm::Error::success();
}

llvm::Expected<bool> encc::isStanfordColbert(const std::string &dir) {
  auto text = readTextFile(dir + "/config.json");
  if (!text)
    return text.takeError();
  const auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return false; // parseModelConfig says what is wrong with it
  auto it = j.find("architectures");
  return it != j.end() && it->is_array() && !it->empty() && (*it)[0] == "HF_ColBERT";
}

llvm::Error encc::readStanfordColbert(const std::string &dir, ModelConfig &c) {
  const std::string weights = dir + "/model.safetensors";
  auto file = SafeTensorsFile::open(weights);
  if (!file)
    return hfError(dir + ": a colbert-ai (HF_ColBERT) checkpoint's projection is read from model.safetensors "
                   "('linear.weight'): " + llvm::toString(file.takeError()));
  const SafeTensorInfo *w = file->find("linear.weight");
  if (!w || w->shape.size() != 2 || w->shape[1] != c.hidden || w->shape[0] < 1 ||
      w->shape[0] > ENCM_MAX_EMBEDDING_DIM)
    return hfError(weights + ": a colbert-ai (HF_ColBERT) checkpoint needs its projection 'linear.weight' of shape "
                   "[dim, " + Twine(c.hidden) + "]" + (w ? ", found " + shapeStr(w->shape) : std::string()));
  c.colbert.emplace();
  ModelConfig::DenseModule d; // in the checkpoint itself (dir ""), no bias
  d.in = c.hidden, d.out = w->shape[0], d.bias = false;
  c.colbert->dense.push_back(d);
  c.colbert->queryPrefix = "[unused0]", c.colbert->documentPrefix = "[unused1]";
  c.pooling = Pooling::None;
  c.normalize = false;
  // artifact.metadata's fields under PyLate's names (absent: PyLate's defaults).
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();
  const std::string metaPath = dir + "/artifact.metadata";
  if (fileExists(metaPath)) {
    auto text = readTextFile(metaPath);
    if (!text)
      return text.takeError();
    const auto meta = nlohmann::ordered_json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!meta.is_object())
      return hfError(metaPath + ": expected a JSON object");
    for (auto [from, to] : {std::pair{"query_token_id", "query_prefix"}, std::pair{"doc_token_id", "document_prefix"},
                            std::pair{"query_maxlen", "query_length"}, std::pair{"doc_maxlen", "document_length"},
                            std::pair{"attend_to_mask_tokens", "attend_to_expansion_tokens"}})
      if (auto it = meta.find(from); it != meta.end())
        settings[to] = *it;
  }
  return readColbertConfig(metaPath, settings, c);
}

llvm::Error encc::resolveColbertRoles(const TokenizerData &tok, const std::string &dir, ModelConfig &c) {
  ModelConfig::Colbert &cb = *c.colbert;
  if (tok.vocab.empty())
    return hfError(dir + ": a ColBERT model needs its tokenizer (its query and document markers are tokens)");
  // convert_tokens_to_ids: an added token's id, else the vocabulary's.
  std::unordered_map<std::string, int32_t> ids;
  for (size_t i = 0; i < tok.vocab.size(); ++i)
    ids.emplace(tok.vocab[i], int32_t(i));
  for (const AddedTokenData &t : tok.addedTokens)
    ids[t.content] = t.id;
  auto idOf = [&](const std::string &token) -> int32_t {
    auto it = ids.find(token);
    return it == ids.end() ? -1 : it->second;
  };
  auto marker = [&](const std::string &prefix, const char *field, int32_t &out) -> llvm::Error {
    out = -1;
    if (prefix.empty())
      return llvm::Error::success();
    out = idOf(prefix);
    if (out < 0)
      return hfError(dir + ": " + field + " '" + prefix + "' is not a token of the tokenizer (PyLate would add it "
                     "with a new, untrained embedding)");
    return llvm::Error::success();
  };
  TokenRoleDescription query, document;
  query.name = "query", document.name = "document";
  if (auto e = marker(cb.queryPrefix, "query_prefix", query.markerId))
    return e;
  if (auto e = marker(cb.documentPrefix, "document_prefix", document.markerId))
    return e;
  query.maxLength = static_cast<int32_t>(std::min(cb.queryLength, c.maxSeq));
  document.maxLength = static_cast<int32_t>(std::min(cb.documentLength, c.maxSeq));
  if (query.maxLength != cb.queryLength && cb.queryExpansion)
    return hfError(dir + ": --max-seq " + Twine(c.maxSeq) + " is shorter than query_length " + Twine(cb.queryLength) +
                   ", to which every query is expanded");
  if (cb.queryExpansion) {
    // PyLate pads with the mask token (an encoder's; a decoder's eos token
    // is not implemented here).
    query.expansionId = tok.maskToken.empty() ? -1 : idOf(tok.maskToken);
    if (query.expansionId < 0)
      return hfError(dir + ": query expansion pads with the mask token, and the tokenizer has none "
                     "(tokenizer_config.json mask_token" + (tok.maskToken.empty() ? "" : " '" + tok.maskToken + "'") +
                     ")");
    query.expansionAttended = cb.attendExpansion;
  }
  for (const std::string &w : cb.skiplist) {
    int32_t id = idOf(w);
    if (id < 0)
      id = tok.unkId; // PyLate skips the unknown token then
    if (id >= 0 && !llvm::is_contained(document.skipIds, id))
      document.skipIds.push_back(id);
  }
  llvm::sort(document.skipIds);
  for (const TokenRoleDescription *r : {&query, &document})
    if (r->markerId >= c.vocab || r->expansionId >= c.vocab)
      return hfError(dir + ": role " + r->name + "'s marker or mask id is outside the model's vocab_size " +
                     Twine(c.vocab));
  cb.roles = {std::move(query), std::move(document)};
  return llvm::Error::success();
}
