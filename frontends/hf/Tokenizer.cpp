//===- Tokenizer.cpp - The model folder's tokenizer -> TokenizerData ------===//
//
// vocab.txt (one token per line) or tokenizer.json (model.type WordPiece,
// model.vocab: token -> id), then tokenizer_config.json for lowercasing,
// accent stripping, CJK splitting and the special token texts (defaults from
// the model family). A tokenizer.json of model.type BPE is read by
// BpeTokenizerJson.cpp, one of model.type Unigram by UnigramTokenizerJson.cpp;
// an XLM-R folder with neither, only sentencepiece.bpe.model, by
// SentencePieceModel.cpp.
// Other tokenizers, and BPE / Unigram ones asking for what encrt does not
// implement, import with an empty vocabulary (families with
// vocabularyOptional: roberta, xlm-roberta): the model still runs on ids,
// only text embedding is unavailable, and a note says why.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/BpeTokenizerJson.h"
#include "frontends/hf/SentencePieceModel.h"
#include "frontends/hf/TokenizerJsonReader.h"
#include "frontends/hf/UnigramTokenizerJson.h"
#include "frontends/hf/WordPieceTokenizerJson.h"
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"

#include "llvm/ADT/StringRef.h"
#include <nlohmann/json.hpp>

#include <optional>
#include <unordered_map>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

namespace {

/// A token field of tokenizer_config.json: "text" or {"content": "text"}.
void readTokenText(const json &cfg, const char *key, std::string &out) {
  auto it = cfg.find(key);
  if (it == cfg.end())
    return;
  if (it->is_string())
    out = it->get<std::string>();
  else if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    out = (*it)["content"].get<std::string>();
}

llvm::Error readBool(const json &obj, const char *key, const std::string &path, bool &out,
                     bool *wasSet = nullptr) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null())
    return llvm::Error::success();
  if (!it->is_boolean())
    return hfError(path + ": field '" + key + "' must be a boolean or null");
  out = it->get<bool>();
  if (wasSet)
    *wasSet = true;
  return llvm::Error::success();
}

} // namespace

llvm::Expected<TokenizerData> encc::readTokenizer(const std::string &dir,
                                                  const ModelConfig &config) {
  TokenizerData tok;
  SpecialTokenTexts names = config.family->specialTokens();
  std::string vocabPath = dir + "/vocab.txt", tjPath = dir + "/tokenizer.json";
  std::string source;                         // the file the vocabulary came from
  std::vector<std::string> nonWordPieceVocab; // BPE/Unigram: only for special ids
  bool lowercaseSet = false, stripSet = false;
  // tokenizer.json, parsed once: the vocabulary's source and/or WordPiece's
  // added tokens and pair template below.
  std::optional<json> tjDoc;
  auto tokenizerJson = [&]() -> llvm::Expected<const json *> {
    if (!tjDoc) {
      auto text = readTextFile(tjPath);
      if (!text)
        return text.takeError();
      tjDoc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    }
    return &*tjDoc;
  };

  if (fileExists(vocabPath)) {
    auto text = readTextFile(vocabPath);
    if (!text)
      return text.takeError();
    llvm::StringRef rest(*text);
    while (!rest.empty()) {
      auto [line, tail] = rest.split('\n');
      if (line.ends_with("\r"))
        line = line.drop_back();
      tok.vocab.push_back(line.str());
      rest = tail;
    }
    if (tok.vocab.empty())
      return hfError(vocabPath + ": empty (expected one token per line)");
    source = vocabPath;
  } else if (fileExists(tjPath)) {
    auto doc = tokenizerJson();
    if (!doc)
      return doc.takeError();
    const json &j = **doc;
    if (j.is_discarded() || !j.is_object())
      return hfError(tjPath + ": not a JSON object");
    auto model = j.find("model");
    if (model == j.end() || !model->is_object())
      return hfError(tjPath + ": field 'model' is missing (expected an object)");
    std::string type = model->contains("type") && (*model)["type"].is_string()
                           ? (*model)["type"].get<std::string>()
                           : "";
    if (type == "WordPiece") {
      if (!model->contains("vocab"))
        return hfError(tjPath + ": field 'model.vocab' is missing");
      if (auto e = vocabFromMap((*model)["vocab"], tjPath, tok.vocab))
        return std::move(e);
      source = tjPath;
      auto norm = j.find("normalizer");
      if (norm != j.end() && norm->is_object()) {
        if (auto e = readBool(*norm, "lowercase", tjPath, tok.lowercase, &lowercaseSet))
          return std::move(e);
        if (auto e = readBool(*norm, "strip_accents", tjPath, tok.stripAccents, &stripSet))
          return std::move(e);
        if (auto e = readBool(*norm, "handle_chinese_chars", tjPath, tok.splitChinese))
          return std::move(e);
      }
    } else if (type == "BPE") {
      if (auto e = readByteLevelBpe(j, tjPath, tok))
        return std::move(e);
      source = tjPath;
      if (tok.vocab.empty() && model->contains("vocab"))
        (void)vocabFromMap((*model)["vocab"], tjPath, nonWordPieceVocab);
    } else if (type == "Unigram") {
      if (auto e = readUnigram(j, tjPath, tok))
        return std::move(e);
      source = tjPath;
      if (tok.vocab.empty() && model->contains("vocab") && (*model)["vocab"].is_array())
        for (const json &entry : (*model)["vocab"])
          nonWordPieceVocab.push_back(entry.is_array() && !entry.empty() && entry[0].is_string()
                                          ? entry[0].get<std::string>()
                                          : std::string());
    } else {
      tok.note = tjPath + ": tokenizer model '" + type +
                 "' is not implemented (WordPiece, byte-level BPE and Unigram are); the model runs on token ids "
                 "only";
    }
  } else if (const std::string spm = config.family->sentencePieceFile(config);
             !spm.empty() && fileExists(dir + "/" + spm)) {
    if (auto e = readXlmRobertaSentencePiece(dir + "/" + spm, tok))
      return std::move(e);
    source = dir + "/" + spm;
  } else if (config.family->vocabularyOptional()) {
    tok.note = dir + ": no WordPiece vocabulary (vocab.txt or tokenizer.json); the model runs "
                     "on token ids only";
  } else {
    return hfError(dir + ": no vocab.txt or tokenizer.json found");
  }

  std::string tcPath = dir + "/tokenizer_config.json";
  if (fileExists(tcPath)) {
    auto text = readTextFile(tcPath);
    if (!text)
      return text.takeError();
    json cfg = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (cfg.is_discarded() || !cfg.is_object())
      return hfError(tcPath + ": not a JSON object");
    if (auto e = readBool(cfg, "do_lower_case", tcPath, tok.lowercase, &lowercaseSet))
      return std::move(e);
    if (auto e = readBool(cfg, "strip_accents", tcPath, tok.stripAccents, &stripSet))
      return std::move(e);
    if (auto e = readBool(cfg, "tokenize_chinese_chars", tcPath, tok.splitChinese))
      return std::move(e);
    readTokenText(cfg, "unk_token", names.unk);
    readTokenText(cfg, "cls_token", names.cls);
    readTokenText(cfg, "sep_token", names.sep);
    readTokenText(cfg, "pad_token", names.pad);
    readTokenText(cfg, "mask_token", tok.maskToken);
  }
  // BERT: accents are stripped iff lowercasing, unless set explicitly.
  if (!stripSet)
    tok.stripAccents = tok.lowercase;

  // BPE: its ids come from tokenizer.json (unk_token, the post-processor);
  // these are informational and fall back like the ids-only case.
  const bool wordPiece = tok.kind == TokenizerKind::WordPiece && !tok.vocab.empty();
  const std::vector<std::string> &lookup = tok.vocab.empty() ? nonWordPieceVocab : tok.vocab;
  std::unordered_map<std::string, int32_t> ids;
  for (size_t i = 0; i < lookup.size(); ++i)
    ids.emplace(lookup[i], int32_t(i));
  auto idOf = [&](const std::string &text, int32_t fallback, int32_t &out) -> llvm::Error {
    auto it = ids.find(text);
    if (it != ids.end()) {
      out = it->second;
      return llvm::Error::success();
    }
    if (wordPiece)
      return hfError(source + ": special token '" + text + "' is not in the vocabulary");
    out = fallback;
    return llvm::Error::success();
  };
  // Fallbacks (token ids only): the fairseq ids roberta checkpoints use.
  // BPE and Unigram name their unknown token themselves.
  if (tok.kind == TokenizerKind::WordPiece)
    if (auto e = idOf(names.unk, 3, tok.unkId))
      return std::move(e);
  if (auto e = idOf(names.cls, 0, tok.clsId))
    return std::move(e);
  if (auto e = idOf(names.sep, 2, tok.sepId))
    return std::move(e);
  if (auto e = idOf(names.pad, 1, tok.padId))
    return std::move(e);

  // WordPiece decodes as transformers' BERT tokenizers do ("##" joins, the
  // cleanup of spaces before punctuation); a tokenizer.json's decoder below
  // replaces it.
  if (wordPiece) {
    DecoderStepData decoder;
    decoder.kind = DecoderStepData::Kind::WordPiece;
    decoder.text = "##";
    decoder.cleanup = true;
    tok.decoders = {decoder};
  }

  // A WordPiece tokenizer.json (beside vocab.txt or the vocabulary's source):
  // the added tokens and pair template the library applies.
  if (wordPiece && fileExists(tjPath)) {
    auto doc = tokenizerJson();
    if (!doc)
      return doc.takeError();
    const json &j = **doc;
    const json *model = j.is_object() && j.contains("model") ? &j["model"] : nullptr;
    if (model && model->is_object() && model->value("type", "") == "WordPiece") {
      std::string note;
      if (auto e = readWordPieceSpecials(j, tjPath, tok, note))
        return std::move(e);
      if (!note.empty())
        tok.note = note;
    }
  }

  if (int64_t(tok.vocab.size()) > config.vocab)
    return hfError(source + ": " + Twine(tok.vocab.size()) +
                   " tokens, more than the model's vocab_size " + Twine(config.vocab));
  for (const AddedTokenData &t : tok.addedTokens)
    if (t.id >= config.vocab)
      return hfError(source + ": added token '" + t.content + "' has id " + Twine(t.id) +
                     ", outside the model's vocab_size " + Twine(config.vocab));
  std::vector<int32_t> templateIds = tok.templateIds;
  templateIds.insert(templateIds.end(), tok.pairTemplateIds.begin(), tok.pairTemplateIds.end());
  for (int32_t id : templateIds)
    if (id >= config.vocab)
      return hfError(source + ": the post-processor adds id " + Twine(id) + ", outside the model's vocab_size " +
                     Twine(config.vocab));
  return tok;
}
