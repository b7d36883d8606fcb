//===- CodeModule.h - The CPU code object of an artifact, loaded ----------===//
//
// Picks the first code object (encc writes them best-first) whose ISA
// features this CPU supports, or the one the caller forces, loads it from
// memory (memfd + dlopen, or an unlinked temporary file), checks its kernel
// ABI version and resolves every step's kernel symbol. Immutable after load;
// thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CODEMODULE_H
#define ENCRT_CODEMODULE_H

#include "encrt/kernel_abi.h"

#include <memory>
#include <string>
#include <vector>

namespace encrt::rt {

class Artifact;

class CodeModule {
public:
  /// `forcedTarget` may be null (pick the best). Throws Failure.
  static std::unique_ptr<CodeModule> load(const Artifact &artifact,
                                          const char *forcedTarget);
  ~CodeModule();
  CodeModule(const CodeModule &) = delete;
  CodeModule &operator=(const CodeModule &) = delete;

  const std::string &target() const { return target_; }
  /// The kernel of plan step `step` (every step has one after load).
  enc_kernel_fn kernel(size_t step) const { return kernels_[step]; }

private:
  CodeModule() = default;

  std::string target_;
  void *handle_ = nullptr;
  int fd_ = -1; ///< the memfd, kept open while loaded so its name stays unique
  std::vector<enc_kernel_fn> kernels_;
};

} // namespace encrt::rt

#endif // ENCRT_CODEMODULE_H
