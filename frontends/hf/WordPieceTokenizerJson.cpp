//===- WordPieceTokenizerJson.cpp - tokenizer.json (WordPiece) extras -----===//
#include "frontends/hf/WordPieceTokenizerJson.h"

#include "frontends/hf/TokenizerJsonReader.h"

using namespace encc;
using nlohmann::json;

namespace {

class Reader : TokenizerJsonReader {
public:
  Reader(const json &j, const std::string &path, TokenizerData &tok) : TokenizerJsonReader(j, path, tok) {}

  llvm::Error read(Unsupported &unsupported) {
    if (auto e = readAddedTokens(unsupported); e || unsupported)
      return e;
    if (auto e = readPostProcessor(unsupported); e || unsupported)
      return e;
    return readDecoder();
  }
};

} // namespace

llvm::Error encc::readWordPieceSpecials(const json &j, const std::string &path, TokenizerData &tok,
                                        std::string &note) {
  TokenizerData file;
  Unsupported unsupported;
  if (auto e = Reader(j, path, file).read(unsupported))
    return e;
  // encode() puts cls and sep around one text; a file asking for another
  // single-text template keeps the built-in handling.
  if (!unsupported && file.templateIds != std::vector<int32_t>{tok.clsId, -1, tok.sepId})
    unsupported.why = "a single-text post-processor other than [CLS] text [SEP]";
  if (unsupported) {
    note = path + ": " + unsupported.why + " is not implemented by encc's WordPiece tokenizer; the built-in "
                  "special tokens and pair template are used";
    return llvm::Error::success();
  }
  tok.addedTokens = std::move(file.addedTokens);
  tok.pairTemplateIds = std::move(file.pairTemplateIds);
  tok.offsetTrim = file.offsetTrim;
  tok.decoders = std::move(file.decoders);
  tok.pairTypeIds = std::move(file.pairTypeIds);
  return llvm::Error::success();
}
