//===- BpeTokenizerJson.cpp - tokenizer.json (BPE) -> TokenizerData -------===//
//
// The fields of the `tokenizers` library's serialisation (tokenizers 0.23)
// that decide ids: model (vocab, merges as "a b" strings or [a, b] pairs,
// unk_token, fuse_unk, ignore_merges, and the options encrt does not
// implement: dropout, continuing_subword_prefix, end_of_word_suffix,
// byte_fallback), normalizer, pre_tokenizer, post_processor, added_tokens.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/BpeTokenizerJson.h"

#include "frontends/hf/HFUtil.h"

#include <unordered_map>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

namespace {

/// Why the file cannot be tokenised by encrt (empty: it can).
struct Unsupported {
  std::string why;
  explicit operator bool() const { return !why.empty(); }
};

class Reader {
public:
  Reader(const json &j, const std::string &path, TokenizerData &tok) : j_(j), path_(path), tok_(tok) {}

  llvm::Error read(Unsupported &unsupported) {
    const json &model = j_.at("model");
    if (auto e = readVocab(model))
      return e;
    if (auto e = readModelOptions(model, unsupported); e || unsupported)
      return e;
    if (auto e = readMerges(model))
      return e;
    if (auto e = readAddedTokens(unsupported); e || unsupported)
      return e;
    if (const json *n = field(j_, "normalizer"); n && !n->is_null())
      return unsupported.why = "normalizer " + quotedType(*n), llvm::Error::success();
    if (auto e = readPreTokenizer(unsupported); e || unsupported)
      return e;
    return readPostProcessor(unsupported);
  }

private:
  static const json *field(const json &obj, const char *key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  /// obj["type"], or "" when it has none.
  static std::string typeOf(const json &obj) {
    const json *t = obj.is_object() ? field(obj, "type") : nullptr;
    return t && t->is_string() ? t->get<std::string>() : std::string();
  }
  static std::string quotedType(const json &obj) {
    std::string t = typeOf(obj);
    return t.empty() ? "(no type)" : "'" + t + "'";
  }
  llvm::Error bad(const Twine &what) const { return hfError(path_ + ": " + what); }

  llvm::Error readBool(const json &obj, const char *key, const char *where, bool &out) const {
    const json *v = field(obj, key);
    if (!v || v->is_null())
      return llvm::Error::success();
    if (!v->is_boolean())
      return bad(Twine("field '") + where + key + "' must be a boolean");
    out = v->get<bool>();
    return llvm::Error::success();
  }

  llvm::Error readVocab(const json &model) {
    const json *map = field(model, "vocab");
    if (!map || map->empty())
      return bad("field 'model.vocab' must be a non-empty object mapping tokens to ids");
    if (auto e = vocabFromMap(*map, path_, tok_.vocab))
      return e;
    for (size_t i = 0; i < tok_.vocab.size(); ++i)
      ids_[tok_.vocab[i]] = static_cast<int32_t>(i);
    return llvm::Error::success();
  }

  llvm::Error readModelOptions(const json &model, Unsupported &unsupported) {
    if (const json *d = field(model, "dropout"); d && !d->is_null() && !(d->is_number() && d->get<double>() == 0))
      return unsupported.why = "BPE dropout", llvm::Error::success();
    for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (const json *v = field(model, key); v && !v->is_null() && !(v->is_string() && v->get<std::string>().empty()))
        return unsupported.why = std::string("BPE ") + key, llvm::Error::success();
    bool byteFallback = false;
    if (auto e = readBool(model, "byte_fallback", "model.", byteFallback))
      return e;
    if (byteFallback)
      return unsupported.why = "BPE byte_fallback", llvm::Error::success();
    if (auto e = readBool(model, "fuse_unk", "model.", tok_.fuseUnk))
      return e;
    if (auto e = readBool(model, "ignore_merges", "model.", tok_.ignoreMerges))
      return e;
    tok_.unkId = -1;
    if (const json *unk = field(model, "unk_token"); unk && !unk->is_null()) {
      if (!unk->is_string())
        return bad("field 'model.unk_token' must be a string or null");
      auto it = ids_.find(unk->get<std::string>());
      if (it == ids_.end())
        return bad("model.unk_token '" + unk->get<std::string>() + "' is not in the vocabulary");
      tok_.unkId = it->second;
    }
    return llvm::Error::success();
  }

  llvm::Error readMerges(const json &model) {
    const json *merges = field(model, "merges");
    if (!merges || !merges->is_array())
      return bad("field 'model.merges' must be an array");
    tok_.merges.reserve(merges->size());
    for (size_t r = 0; r < merges->size(); ++r) {
      const json &m = (*merges)[r];
      std::string a, b;
      if (m.is_string()) { // "a b"
        const std::string s = m.get<std::string>();
        size_t space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
          return bad("model.merges[" + Twine(r) + "] '" + s + "' is not two tokens separated by one space");
        a = s.substr(0, space), b = s.substr(space + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>(), b = m[1].get<std::string>();
      } else {
        return bad("model.merges[" + Twine(r) + "] must be \"a b\" or [a, b]");
      }
      auto ia = ids_.find(a), ib = ids_.find(b), iab = ids_.find(a + b);
      if (ia == ids_.end() || ib == ids_.end() || iab == ids_.end())
        return bad("model.merges[" + Twine(r) + "] ('" + a + "', '" + b + "'): '" +
                   (ia == ids_.end() ? a : ib == ids_.end() ? b : a + b) + "' is not in the vocabulary");
      tok_.merges.emplace_back(ia->second, ib->second);
    }
    return llvm::Error::success();
  }

  llvm::Error readAddedTokens(Unsupported &unsupported) {
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

  /// ByteLevel alone, or inside a Sequence of one.
  llvm::Error readPreTokenizer(Unsupported &unsupported) {
    const json *pre = field(j_, "pre_tokenizer");
    if (pre && pre->is_object() && typeOf(*pre) == "Sequence") {
      const json *list = field(*pre, "pretokenizers");
      pre = list && list->is_array() && list->size() == 1 ? &(*list)[0] : nullptr;
    }
    if (!pre || !pre->is_object() || typeOf(*pre) != "ByteLevel")
      return unsupported.why = "pre_tokenizer " + (pre ? quotedType(*pre) : std::string("missing")) +
                               " (only ByteLevel is implemented)",
             llvm::Error::success();
    bool useRegex = true;
    if (auto e = readBool(*pre, "use_regex", "pre_tokenizer.", useRegex))
      return e;
    if (!useRegex)
      return unsupported.why = "ByteLevel pre_tokenizer without use_regex", llvm::Error::success();
    return readBool(*pre, "add_prefix_space", "pre_tokenizer.", tok_.addPrefixSpace);
  }

  /// The id of a [token, id] pair (RobertaProcessing's cls / sep).
  llvm::Error pairId(const json &post, const char *key, int32_t &out) const {
    const json *v = field(post, key);
    if (!v || !v->is_array() || v->size() != 2 || !(*v)[1].is_number_integer() || (*v)[1].get<int64_t>() < 0 ||
        (*v)[1].get<int64_t>() > INT32_MAX)
      return bad(Twine("field 'post_processor.") + key + "' must be [token, id]");
    out = static_cast<int32_t>((*v)[1].get<int64_t>());
    return llvm::Error::success();
  }

  llvm::Error templateOf(const json &post, Unsupported &unsupported) {
    const std::string type = typeOf(post);
    std::vector<int32_t> &ids = tok_.templateIds;
    ids.clear();
    if (type == "ByteLevel") {
      ids = {-1};
    } else if (type == "RobertaProcessing" || type == "BertProcessing") {
      int32_t cls = 0, sep = 0;
      if (auto e = pairId(post, "cls", cls))
        return e;
      if (auto e = pairId(post, "sep", sep))
        return e;
      ids = {cls, -1, sep};
    } else if (type == "TemplateProcessing") {
      const json *single = field(post, "single"), *specials = field(post, "special_tokens");
      if (!single || !single->is_array() || !specials || !specials->is_object())
        return bad("post_processor (TemplateProcessing) needs 'single' and 'special_tokens'");
      for (const json &piece : *single) {
        const json *special = piece.is_object() ? field(piece, "SpecialToken") : nullptr;
        if (piece.is_object() && field(piece, "Sequence")) {
          ids.push_back(-1);
        } else if (special && special->is_object() && field(*special, "id") && (*special)["id"].is_string()) {
          const json *st = field(*specials, (*special)["id"].get<std::string>().c_str());
          const json *stIds = st && st->is_object() ? field(*st, "ids") : nullptr;
          if (!stIds || !stIds->is_array())
            return bad("post_processor special token '" + (*special)["id"].get<std::string>() +
                       "' has no ids in 'special_tokens'");
          for (const json &id : *stIds) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
              return bad("post_processor special token ids must be integers >= 0");
            ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
          }
        } else {
          return bad("post_processor (TemplateProcessing) piece must be {\"Sequence\": ...} or "
                     "{\"SpecialToken\": {\"id\": ...}}");
        }
      }
      if (std::count(ids.begin(), ids.end(), -1) != 1)
        return bad("post_processor (TemplateProcessing) 'single' must hold the sequence once");
    } else {
      unsupported.why = "post_processor " + quotedType(post);
    }
    return llvm::Error::success();
  }

  /// null (the text alone), one post-processor, or a Sequence whose
  /// ByteLevel members only trim offsets and whose last other member decides.
  llvm::Error readPostProcessor(Unsupported &unsupported) {
    const json *post = field(j_, "post_processor");
    if (!post || post->is_null()) {
      tok_.templateIds = {-1};
      return llvm::Error::success();
    }
    if (!post->is_object())
      return bad("field 'post_processor' must be an object or null");
    if (typeOf(*post) != "Sequence")
      return templateOf(*post, unsupported);
    const json *list = field(*post, "processors");
    if (!list || !list->is_array())
      return bad("post_processor (Sequence) needs 'processors'");
    tok_.templateIds = {-1};
    for (const json &p : *list)
      if (typeOf(p) != "ByteLevel")
        if (auto e = templateOf(p, unsupported); e || unsupported)
          return e;
    return llvm::Error::success();
  }

  const json &j_;
  const std::string &path_;
  TokenizerData &tok_;
  std::unordered_map<std::string, int32_t> ids_;
};

} // namespace

/// Fills `vocab` (by id) from a JSON map token -> id; ids must be 0..n-1.
llvm::Error encc::vocabFromMap(const json &map, const std::string &path,
                         std::vector<std::string> &vocab) {
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

llvm::Error encc::readByteLevelBpe(const json &j, const std::string &path, TokenizerData &tok) {
  TokenizerData bpe;
  bpe.kind = TokenizerKind::ByteLevelBPE;
  Unsupported unsupported;
  if (auto e = Reader(j, path, bpe).read(unsupported))
    return e;
  if (unsupported) {
    tok.vocab.clear();
    tok.note = path + ": " + unsupported.why + " is not implemented by encc's BPE tokenizer; the model runs on "
                                               "token ids only";
    return llvm::Error::success();
  }
  bpe.note.clear();
  tok = std::move(bpe);
  return llvm::Error::success();
}
