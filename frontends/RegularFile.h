//===- RegularFile.h - Reading an input file that must be a regular file --===//
//
// Every file encc reads whole (config.json, tokenizer files, safetensors,
// ONNX models and their external data, keys, artifacts) goes through
// readRegularFile: opened without blocking and refused unless it is a regular
// file of at most `maxBytes`, so a FIFO does not hang the compiler and
// /dev/zero does not exhaust its memory (issue 45, item 7).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_REGULARFILE_H
#define ENCC_FRONTENDS_REGULARFILE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace encc {

/// The largest weight file read (a safetensors checkpoint, an ONNX model or
/// its external data): past the 64 GiB of fp32 weights a compile handles.
constexpr uint64_t kMaxWeightFileBytes = uint64_t(128) << 30;
/// The largest artifact read whole by encc (sign, inspect).
constexpr uint64_t kMaxArtifactFileBytes = uint64_t(128) << 30;

/// The whole of `path` ("PATH: cannot read: ...", "PATH: not a regular file
/// ...", "PATH: N bytes, over the limit of M for WHAT" otherwise).
inline llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(const std::string &path, uint64_t maxBytes, const char *what) {
  auto error = [&](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), path + ": " + msg);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return error(llvm::Twine("cannot read: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return error(llvm::Twine("cannot read: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return error(llvm::Twine("not a regular file (a FIFO, device, socket or directory); the ") + what +
                 " must be a file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > maxBytes) {
    ::close(fd);
    return error(llvm::Twine(size) + " bytes, over the limit of " + llvm::Twine(maxBytes) + " for the " + what);
  }
  auto buf = llvm::MemoryBuffer::getOpenFile(fd, path, size, /*RequiresNullTerminator=*/false);
  ::close(fd);
  if (!buf)
    return error("cannot read: " + buf.getError().message());
  return std::move(*buf);
}

} // namespace encc

#endif // ENCC_FRONTENDS_REGULARFILE_H
