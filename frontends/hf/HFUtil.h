//===- HFUtil.h - Helpers of the Hugging Face frontend --------------------===//
#ifndef ENCC_FRONTENDS_HF_HFUTIL_H
#define ENCC_FRONTENDS_HF_HFUTIL_H

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

/// The whole file as text.
inline llvm::Expected<std::string> readTextFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return hfError(path + ": cannot read: " + buf.getError().message());
  return (*buf)->getBuffer().str();
}

inline bool fileExists(const std::string &path) {
  return llvm::sys::fs::exists(path) && !llvm::sys::fs::is_directory(path);
}

} // namespace encc

#endif // ENCC_FRONTENDS_HF_HFUTIL_H
