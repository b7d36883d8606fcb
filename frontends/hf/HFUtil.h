//===- HFUtil.h - Helpers of the Hugging Face frontend --------------------===//
#ifndef ENCC_FRONTENDS_HF_HFUTIL_H
#define ENCC_FRONTENDS_HF_HFUTIL_H

#include "frontends/RegularFile.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <string>

namespace encc {

/// A one-line error; callers prefix it with the file it is about.
inline llvm::Error hfError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// The largest text file of a model folder read (config.json, vocab.txt,
/// tokenizer.json, merges.txt, sentencepiece.bpe.model, ...).
constexpr uint64_t kMaxModelTextFileBytes = uint64_t(1) << 30;

/// The whole file as text (a regular file of at most kMaxModelTextFileBytes).
inline llvm::Expected<std::string> readTextFile(const std::string &path) {
  auto buf = readRegularFile(path, kMaxModelTextFileBytes, "model file");
  if (!buf)
    return buf.takeError();
  return (*buf)->getBuffer().str();
}

/// A tensor shape as errors spell it: "[768, 384]".
inline std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

inline bool fileExists(const std::string &path) {
  return llvm::sys::fs::exists(path) && !llvm::sys::fs::is_directory(path);
}

} // namespace encc

#endif // ENCC_FRONTENDS_HF_HFUTIL_H
