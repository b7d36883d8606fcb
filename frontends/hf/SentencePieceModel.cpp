//===- SentencePieceModel.cpp - sentencepiece.bpe.model -> TokenizerData ---===//
//
// The protobuf wire format read directly (no protobuf library): only the
// fields of sentencepiece_model.proto the conversion needs. ModelProto:
// pieces = 1 (SentencePiece: piece = 1, score = 2 (float), type = 3),
// trainer_spec = 2 (model_type = 3), normalizer_spec = 3 (precompiled_charsmap
// = 2, add_dummy_prefix = 3, default true). Every length is checked against
// what is left of the file.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/SentencePieceModel.h"

#include "frontends/ProtoWire.h"
#include "frontends/hf/HFUtil.h"

#include "llvm/Support/ConvertUTF.h"

#include <cmath>
#include <cstring>

using namespace encc;
using llvm::Twine;

namespace {

struct Piece {
  std::string text;
  float score = 0;
};

} // namespace

llvm::Error encc::readXlmRobertaSentencePiece(const std::string &path, TokenizerData &tok) {
  auto file = readTextFile(path);
  if (!file)
    return file.takeError();
  return xlmRobertaSentencePiece(*file, path, tok);
}

llvm::Error encc::xlmRobertaSentencePiece(llvm::StringRef bytes, const std::string &path, TokenizerData &tok) {
  std::vector<Piece> pieces;
  std::string charsmap;
  bool dummyPrefix = true;
  int64_t modelType = 1; // UNIGRAM
  auto bad = [&](const Twine &what) { return hfError(path + ": " + what); };
  const bool ok = ProtoWire(bytes).each([&](uint32_t field, uint32_t type, uint64_t, llvm::StringRef bytes) {
    if (field == 1 && type == 2) {
      Piece piece;
      bool good = ProtoWire(bytes).each([&](uint32_t f, uint32_t t, uint64_t, llvm::StringRef b) {
        if (f == 1 && t == 2)
          piece.text = b.str();
        else if (f == 2 && t == 5)
          piece.score = ProtoWire::fixed32Float(b);
        return true;
      });
      pieces.push_back(std::move(piece));
      return good;
    }
    if (field == 2 && type == 2)
      return ProtoWire(bytes).each([&](uint32_t f, uint32_t t, uint64_t v, llvm::StringRef) {
        if (f == 3 && t == 0)
          modelType = int64_t(v);
        return true;
      });
    if (field == 3 && type == 2)
      return ProtoWire(bytes).each([&](uint32_t f, uint32_t t, uint64_t v, llvm::StringRef b) {
        if (f == 2 && t == 2)
          charsmap = b.str();
        else if (f == 3 && t == 0)
          dummyPrefix = v != 0;
        return true;
      });
    return true;
  });
  if (!ok)
    return bad("not a SentencePiece model (malformed protobuf)");
  if (pieces.size() < 4)
    return bad("a SentencePiece model with " + Twine(pieces.size()) + " pieces (at least <unk> <s> </s> and one more)");
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string &t = pieces[i].text;
    auto *p = reinterpret_cast<const llvm::UTF8 *>(t.data());
    if (!llvm::isLegalUTF8String(&p, p + t.size()))
      return bad("piece " + Twine(i) + " is not valid UTF-8");
    if (!std::isfinite(pieces[i].score))
      return bad("piece " + Twine(i) + " ('" + pieces[i].text + "') has a score that is not finite");
  }
  if (modelType != 1) {
    tok.vocab.clear();
    tok.note = path + ": a SentencePiece model of type " + std::to_string(modelType) +
               " (only Unigram, type 1, is implemented); the model runs on token ids only";
    return llvm::Error::success();
  }
  if (!charsmap.empty() && (charsmap.size() < 4 || (uint8_t(charsmap[0]) | uint8_t(charsmap[1]) << 8 |
                                                    uint8_t(charsmap[2]) << 16 | uint32_t(uint8_t(charsmap[3])) << 24) +
                                                           4ull > charsmap.size()))
    return bad("the normalizer's precompiled charsmap is malformed");

  TokenizerData t;
  t.kind = TokenizerKind::Unigram;
  for (const char *special : {"<s>", "<pad>", "</s>", "<unk>"}) {
    t.vocab.push_back(special);
    t.scores.push_back(0.0);
  }
  for (size_t i = 3; i < pieces.size(); ++i) {
    t.vocab.push_back(pieces[i].text);
    t.scores.push_back(double(pieces[i].score));
  }
  t.vocab.push_back("<mask>");
  t.scores.push_back(0.0);
  const int32_t mask = int32_t(t.vocab.size()) - 1;
  t.unkId = 3;
  if (!charsmap.empty()) {
    NormalizerStepData map;
    map.kind = NormalizerStepData::Kind::Precompiled;
    map.charsmap = charsmap;
    t.normalizers.push_back(std::move(map));
  }
  NormalizerStepData strip;
  strip.kind = NormalizerStepData::Kind::Strip;
  strip.stripRight = true;
  t.normalizers.push_back(strip);
  NormalizerStepData spaces;
  spaces.kind = NormalizerStepData::Kind::Replace;
  spaces.pattern = " ";
  spaces.minRepeat = 2;
  spaces.content = "\xE2\x96\x81";
  t.normalizers.push_back(spaces);
  t.metaspacePrepend = dummyPrefix ? TokenizerData::Prepend::Always : TokenizerData::Prepend::Never;
  for (int32_t id = 0; id < 4; ++id)
    t.addedTokens.push_back({t.vocab[size_t(id)], id, true, false, false, false});
  t.addedTokens.push_back({"<mask>", mask, true, true, false, false});
  t.templateIds = {0, -1, 2};
  t.pairTemplateIds = {0, -1, 2, 2, -2, 2};
  t.pairTypeIds = {0, 0, 0, 0, 0, 0};
  tok = std::move(t);
  return llvm::Error::success();
}
