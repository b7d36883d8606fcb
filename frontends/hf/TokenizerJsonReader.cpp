//===- TokenizerJsonReader.cpp - What tokenizer.json readers share --------===//
#include "frontends/hf/TokenizerJsonReader.h"

#include "frontends/hf/HFUtil.h"
#include "encrt/schema_version.h"

using namespace encc;
using llvm::Twine;
using nlohmann::json;

/// Fills `vocab` (by id) from a JSON map token -> id; ids must be 0..n-1.
llvm::Error encc::vocabFromMap(const json &map, const std::string &path, std::vector<std::string> &vocab) {
  if (!map.is_object())
    return hfError(path + ": field 'model.vocab' must be an object mapping tokens to ids");
  vocab.assign(map.size(), std::string());
  std::vector<bool> seen(map.size(), false);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->is_number_integer())
      return hfError(path + ": vocabulary id of '" + it.key() + "' must be an integer");
    int64_t id = it->get<int64_t>();
    if (id < 0 || id >= int64_t(vocab.size()) || seen[id])
      return hfError(path + ": vocabulary ids must be 0.." + Twine(vocab.size() - 1) +
                     ", each once; '" + it.key() + "' has " + Twine(id));
    seen[id] = true;
    vocab[id] = it.key();
  }
  return llvm::Error::success();
}

const nlohmann::json *TokenizerJsonReader::field(const json &obj, const char *key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}
std::string TokenizerJsonReader::typeOf(const json &obj) {
  const json *t = obj.is_object() ? field(obj, "type") : nullptr;
  return t && t->is_string() ? t->get<std::string>() : std::string();
}
std::string TokenizerJsonReader::quotedType(const json &obj) {
  std::string t = typeOf(obj);
  return t.empty() ? "(no type)" : "'" + t + "'";
}
llvm::Error TokenizerJsonReader::bad(const Twine &what) const { return hfError(path_ + ": " + what); }

llvm::Error TokenizerJsonReader::readBool(const json &obj, const char *key, const char *where, bool &out) const {
  const json *v = field(obj, key);
  if (!v || v->is_null())
    return llvm::Error::success();
  if (!v->is_boolean())
    return bad(Twine("field '") + where + key + "' must be a boolean");
  out = v->get<bool>();
  return llvm::Error::success();
}

llvm::Error TokenizerJsonReader::readMetaspace(const json &m) {
  const json *rep = field(m, "replacement");
  if (!rep || !rep->is_string() || rep->get<std::string>().empty() ||
      utf8Length(static_cast<unsigned char>(rep->get<std::string>()[0])) != rep->get<std::string>().size())
    return bad("field 'pre_tokenizer.replacement' (Metaspace) must be one character");
  tok_.metaspaceReplacement = rep->get<std::string>();
  if (auto e = readPrependScheme(m, "pre_tokenizer", tok_.metaspacePrepend))
    return e;
  return readBool(m, "split", "pre_tokenizer.", tok_.metaspaceSplit);
}

llvm::Error TokenizerJsonReader::readPrependScheme(const json &m, const std::string &where,
                                                   TokenizerData::Prepend &out) const {
  using Prepend = TokenizerData::Prepend;
  out = Prepend::Always;
  const json *scheme = field(m, "prepend_scheme");
  const bool hasScheme = scheme && !scheme->is_null();
  if (hasScheme) {
    const std::string s = scheme->is_string() ? scheme->get<std::string>() : "";
    if (s == "always")
      out = Prepend::Always;
    else if (s == "first")
      out = Prepend::First;
    else if (s == "never")
      out = Prepend::Never;
    else
      return bad("field '" + where + ".prepend_scheme' (Metaspace) must be \"always\", \"first\" or \"never\"");
  }
  bool addPrefixSpace = true;
  if (auto e = readBool(m, "add_prefix_space", (where + ".").c_str(), addPrefixSpace))
    return e;
  if (!addPrefixSpace) { // the older spelling
    if (hasScheme && out != Prepend::Never)
      return bad(where + " (Metaspace): add_prefix_space false contradicts prepend_scheme");
    out = Prepend::Never;
  }
  return llvm::Error::success();
}


llvm::Error TokenizerJsonReader::readAddedTokens(Unsupported &unsupported) {
  const json *added = field(j_, "added_tokens");
  if (!added || added->is_null())
    return llvm::Error::success();
  if (!added->is_array())
    return bad("field 'added_tokens' must be an array");
  for (size_t i = 0; i < added->size(); ++i) {
    const json &a = (*added)[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "].";
    const json *content = a.is_object() ? field(a, "content") : nullptr, *id = content ? field(a, "id") : nullptr;
    if (!content || !content->is_string() || content->get<std::string>().empty() || !id ||
        !id->is_number_integer() || id->get<int64_t>() < 0 || id->get<int64_t>() > INT32_MAX)
      return bad("field '" + where + "' needs a non-empty 'content' and an 'id' >= 0");
    AddedTokenData t;
    t.content = content->get<std::string>();
    if (t.content.size() > ENCM_MAX_ADDED_TOKEN_BYTES)
      return bad("field '" + where + "content' has " + std::to_string(t.content.size()) + " bytes (at most " +
                 std::to_string(ENCM_MAX_ADDED_TOKEN_BYTES) + ")");
    t.id = static_cast<int32_t>(id->get<int64_t>());
    bool singleWord = false;
    for (auto [key, out] : {std::pair<const char *, bool *>{"special", &t.special}, {"lstrip", &t.lstrip},
                            {"rstrip", &t.rstrip}, {"normalized", &t.normalized}, {"single_word", &singleWord}})
      if (auto e = readBool(a, key, where.c_str(), *out))
        return e;
    if (singleWord)
      return unsupported.why = "added token '" + t.content + "' with single_word", llvm::Error::success();
    tok_.addedTokens.push_back(std::move(t));
  }
  return llvm::Error::success();
}


/// The id of a [token, id] pair (RobertaProcessing's cls / sep).
llvm::Error TokenizerJsonReader::pairId(const json &post, const char *key, int32_t &out) const {
  const json *v = field(post, key);
  if (!v || !v->is_array() || v->size() != 2 || !(*v)[1].is_number_integer() || (*v)[1].get<int64_t>() < 0 ||
      (*v)[1].get<int64_t>() > INT32_MAX)
    return bad(Twine("field 'post_processor.") + key + "' must be [token, id]");
  out = static_cast<int32_t>((*v)[1].get<int64_t>());
  return llvm::Error::success();
}

/// A TemplateProcessing piece list ("single" or "pair") into ids (-1 / -2 for
/// the texts "A" / "B") and their type ids.
llvm::Error TokenizerJsonReader::templatePieces(const json &pieces, const json &specials, const char *which,
                                                std::vector<int32_t> &ids, std::vector<int32_t> &types) const {
  const std::string where = std::string("post_processor (TemplateProcessing) '") + which + "'";
  if (!pieces.is_array())
    return bad(where + " must be an array");
  for (const json &piece : pieces) {
    const json *seq = piece.is_object() ? field(piece, "Sequence") : nullptr;
    const json *special = piece.is_object() ? field(piece, "SpecialToken") : nullptr;
    const json *body = seq ? seq : special;
    const json *typeId = body && body->is_object() ? field(*body, "type_id") : nullptr;
    int32_t type = 0;
    if (typeId) {
      if (!typeId->is_number_integer() || typeId->get<int64_t>() < 0 || typeId->get<int64_t>() > 1 << 20)
        return bad(where + ": type_id must be an integer >= 0");
      type = static_cast<int32_t>(typeId->get<int64_t>());
    }
    if (seq) {
      const json *id = seq->is_object() ? field(*seq, "id") : nullptr;
      const std::string name = id && id->is_string() ? id->get<std::string>() : "A";
      if (name != "A" && name != "B")
        return bad(where + ": Sequence id must be \"A\" or \"B\"");
      ids.push_back(name == "A" ? -1 : -2);
      types.push_back(type);
    } else if (special && special->is_object() && field(*special, "id") && (*special)["id"].is_string()) {
      const json *st = field(specials, (*special)["id"].get<std::string>().c_str());
      const json *stIds = st && st->is_object() ? field(*st, "ids") : nullptr;
      if (!stIds || !stIds->is_array())
        return bad("post_processor special token '" + (*special)["id"].get<std::string>() +
                   "' has no ids in 'special_tokens'");
      for (const json &id : *stIds) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
          return bad("post_processor special token ids must be integers >= 0");
        ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
        types.push_back(type);
      }
    } else {
      return bad(where + " piece must be {\"Sequence\": ...} or {\"SpecialToken\": {\"id\": ...}}");
    }
  }
  return llvm::Error::success();
}

/// RobertaProcessing's and ByteLevel's trim_offsets (default true in both)
/// and add_prefix_space (default true / true) into tok_.offsetTrim.
llvm::Error TokenizerJsonReader::readOffsetTrim(const json &post, const std::string &where) {
  bool trim = true, prefixSpace = true;
  if (auto e = readBool(post, "trim_offsets", where.c_str(), trim))
    return e;
  if (auto e = readBool(post, "add_prefix_space", where.c_str(), prefixSpace))
    return e;
  if (trim)
    tok_.offsetTrim = prefixSpace ? TokenizerData::OffsetTrim::TrimKeepPrefixSpace : TokenizerData::OffsetTrim::Trim;
  return llvm::Error::success();
}

llvm::Error TokenizerJsonReader::templateOf(const json &post, Unsupported &unsupported) {
  const std::string type = typeOf(post);
  std::vector<int32_t> &ids = tok_.templateIds;
  std::vector<int32_t> &pairIds = tok_.pairTemplateIds, &pairTypes = tok_.pairTypeIds;
  ids.clear(), pairIds.clear(), pairTypes.clear();
  if (type == "ByteLevel" || type == "RobertaProcessing")
    if (auto e = readOffsetTrim(post, "post_processor."))
      return e;
  if (type == "ByteLevel") {
    ids = {-1};
    pairIds = {-1, -2}, pairTypes = {0, 0};
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    int32_t cls = 0, sep = 0;
    if (auto e = pairId(post, "cls", cls))
      return e;
    if (auto e = pairId(post, "sep", sep))
      return e;
    ids = {cls, -1, sep};
    // processors/roberta.rs: <s> A </s></s> B </s>, every type 0;
    // processors/bert.rs: [CLS] A [SEP] B [SEP], types 0 then 1.
    if (type == "RobertaProcessing")
      pairIds = {cls, -1, sep, sep, -2, sep}, pairTypes = {0, 0, 0, 0, 0, 0};
    else
      pairIds = {cls, -1, sep, -2, sep}, pairTypes = {0, 0, 0, 1, 1};
  } else if (type == "TemplateProcessing") {
    const json *single = field(post, "single"), *pair = field(post, "pair"), *specials = field(post, "special_tokens");
    if (!single || !specials || !specials->is_object())
      return bad("post_processor (TemplateProcessing) needs 'single' and 'special_tokens'");
    std::vector<int32_t> singleTypes;
    if (auto e = templatePieces(*single, *specials, "single", ids, singleTypes))
      return e;
    if (std::count(ids.begin(), ids.end(), -1) != 1 || std::count(ids.begin(), ids.end(), -2) != 0)
      return bad("post_processor (TemplateProcessing) 'single' must hold the sequence A once");
    if (pair && !pair->is_null()) {
      if (auto e = templatePieces(*pair, *specials, "pair", pairIds, pairTypes))
        return e;
      if (std::count(pairIds.begin(), pairIds.end(), -1) != 1 || std::count(pairIds.begin(), pairIds.end(), -2) != 1)
        return bad("post_processor (TemplateProcessing) 'pair' must hold A and B once each");
    }
  } else {
    unsupported.why = "post_processor " + quotedType(post);
  }
  return llvm::Error::success();
}

/// null (the text alone), one post-processor, or a Sequence whose ByteLevel
/// members only trim offsets and whose last other member decides.
llvm::Error TokenizerJsonReader::readPostProcessor(Unsupported &unsupported) {
  const json *post = field(j_, "post_processor");
  tok_.offsetTrim = TokenizerData::OffsetTrim::None;
  // ByteLevel's post-processing trims offsets only (Qwen2's tokenizer.json).
  if (!post || post->is_null() || (post->is_object() && typeOf(*post) == "ByteLevel")) {
    tok_.templateIds = {-1};
    tok_.pairTemplateIds = {-1, -2}, tok_.pairTypeIds = {0, 0};
    return post && !post->is_null() ? readOffsetTrim(*post, "post_processor.") : llvm::Error::success();
  }
  if (!post->is_object())
    return bad("field 'post_processor' must be an object or null");
  if (typeOf(*post) != "Sequence")
    return templateOf(*post, unsupported);
  const json *list = field(*post, "processors");
  if (!list || !list->is_array())
    return bad("post_processor (Sequence) needs 'processors'");
  tok_.templateIds = {-1};
  tok_.pairTemplateIds = {-1, -2}, tok_.pairTypeIds = {0, 0};
  for (size_t i = 0; i < list->size(); ++i) {
    const json &p = (*list)[i];
    if (typeOf(p) != "ByteLevel") {
      if (auto e = templateOf(p, unsupported); e || unsupported)
        return e;
    } else if (auto e = readOffsetTrim(p, "post_processor.processors[" + std::to_string(i) + "].")) {
      return e;
    }
  }
  return llvm::Error::success();
}
/// One decoder (not a Sequence) into tok_.decoders.
llvm::Error TokenizerJsonReader::readDecoderStep(const json &d, const std::string &where) {
  using Kind = DecoderStepData::Kind;
  DecoderStepData step;
  const std::string type = typeOf(d);
  auto text = [&](const char *key, const char *fallback, std::string &out) -> llvm::Error {
    const json *v = field(d, key);
    if (!v || v->is_null())
      return out = fallback, llvm::Error::success();
    if (!v->is_string())
      return bad("field '" + where + "." + key + "' must be a string");
    out = v->get<std::string>();
    return llvm::Error::success();
  };
  auto count = [&](const char *key, int32_t &out) -> llvm::Error {
    const json *v = field(d, key);
    if (!v || !v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 1 << 20)
      return bad("field '" + where + "." + key + "' must be an integer >= 0");
    out = static_cast<int32_t>(v->get<int64_t>());
    return llvm::Error::success();
  };
  if (type == "WordPiece") {
    step.kind = Kind::WordPiece;
    step.cleanup = true;
    if (auto e = text("prefix", "##", step.text))
      return e;
    if (auto e = readBool(d, "cleanup", (where + ".").c_str(), step.cleanup))
      return e;
  } else if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
  } else if (type == "Metaspace") {
    step.kind = Kind::Metaspace;
    if (auto e = text("replacement", "\xE2\x96\x81", step.text))
      return e;
    TokenizerData::Prepend prepend;
    if (auto e = readPrependScheme(d, where, prepend))
      return e;
    step.prepend = prepend != TokenizerData::Prepend::Never;
  } else if (type == "Replace") {
    step.kind = Kind::Replace;
    const json *pattern = field(d, "pattern");
    const json *literal = pattern && pattern->is_object() ? field(*pattern, "String") : nullptr;
    if (!literal || !literal->is_string() || literal->get<std::string>().empty()) {
      step.kind = Kind::Unsupported; // a Regex pattern
      step.text = "Replace with a regex";
    } else {
      step.text = literal->get<std::string>();
      if (auto e = text("content", "", step.content))
        return e;
    }
  } else if (type == "ByteFallback") {
    step.kind = Kind::ByteFallback;
  } else if (type == "Fuse") {
    step.kind = Kind::Fuse;
  } else if (type == "Strip") {
    step.kind = Kind::Strip;
    if (auto e = text("content", " ", step.text))
      return e;
    if (auto e = count("start", step.start))
      return e;
    if (auto e = count("stop", step.stop))
      return e;
  } else if (type == "BPEDecoder") {
    step.kind = Kind::Bpe;
    if (auto e = text("suffix", "</w>", step.text))
      return e;
  } else { // CTC and anything newer: decoding is refused, naming it
    step.kind = Kind::Unsupported;
    step.text = quotedType(d);
  }
  tok_.decoders.push_back(std::move(step));
  return llvm::Error::success();
}

llvm::Error TokenizerJsonReader::readDecoder() {
  tok_.decoders.clear();
  const json *d = field(j_, "decoder");
  if (!d || d->is_null())
    return llvm::Error::success();
  if (!d->is_object())
    return bad("field 'decoder' must be an object or null");
  if (typeOf(*d) != "Sequence")
    return readDecoderStep(*d, "decoder");
  const json *list = field(*d, "decoders");
  if (!list || !list->is_array())
    return bad("decoder (Sequence) needs 'decoders'");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string where = "decoder.decoders[" + std::to_string(i) + "]";
    if (typeOf((*list)[i]) == "Sequence") { // nested: flattened
      const json *inner = field((*list)[i], "decoders");
      if (!inner || !inner->is_array())
        return bad(where + " (Sequence) needs 'decoders'");
      for (size_t k = 0; k < inner->size(); ++k)
        if (auto e = readDecoderStep((*inner)[k], where + ".decoders[" + std::to_string(k) + "]"))
          return e;
    } else if (auto e = readDecoderStep((*list)[i], where)) {
      return e;
    }
  }
  return llvm::Error::success();
}

bool encc::decodeBase64(const std::string &text, std::string &out) {
  out.clear();
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t padding = 0;
  for (char ch : text) {
    int v;
    if (ch >= 'A' && ch <= 'Z')
      v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z')
      v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9')
      v = ch - '0' + 52;
    else if (ch == '+')
      v = 62;
    else if (ch == '/')
      v = 63;
    else if (ch == '=' && ++padding <= 2)
      continue;
    else
      return false;
    if (padding)
      return false; // data after padding
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return bits < 6; // a lone trailing 6-bit group is not a byte
}
