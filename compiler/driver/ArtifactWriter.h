//===- ArtifactWriter.h - Serialise a compiled model to .encm -------------===//
//
// Lays out the file described in runtime/schema/artifact.fbs: the FlatBuffer,
// the 64-byte-aligned weights region, the code objects and the checksum
// trailer.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_ARTIFACTWRITER_H
#define ENCC_COMPILER_ARTIFACTWRITER_H

#include "compiler/Plan.h"
#include "frontends/ModelDescription.h"
#include "ir/WeightStore.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace encc {

struct ArtifactContents {
  const ModelDescription *model = nullptr;
  const TokenizerData *tokenizer = nullptr;
  const Plan *plan = nullptr;       ///< the CPU plan; null: CUDA only (then `cuda` is set)
  const CudaProgram *cuda = nullptr; ///< the CUDA plan + fatbin, or null
  const mlir::enc::WeightStore *weights = nullptr;
  std::vector<CodeObject> codeObjects; ///< CPU code objects, best first
  /// Set: the file stores no weight bytes; the runtime generates them from
  /// this seed at load (WeightsFill in artifact.fbs).
  std::optional<uint64_t> randomWeightsSeed;
  std::vector<std::string> passes;
  std::string source; ///< what was compiled, as the user named it
};

/// Writes the artifact atomically (temp file + rename), streaming: weights are
/// read (deferred ones produced) one at a time as they are written.
llvm::Error writeArtifact(const std::string &path, const ArtifactContents &contents);

/// An error unless `path` is absent, a regular file or a link to one (what
/// writeFileAtomically may replace).
llvm::Error checkOutputTarget(const std::string &path);

/// Writes `bytes` to `path` through a fresh temporary beside it (O_EXCL,
/// created with `mode`), fsync and rename; nothing is left behind on failure.
/// An existing `path` must pass checkOutputTarget.
llvm::Error writeFileAtomically(const std::string &path, llvm::ArrayRef<uint8_t> bytes,
                                unsigned mode = 0666);
/// The same, with the contents written by `write` (an error from it removes
/// the temporary and is returned).
llvm::Error writeFileAtomically(const std::string &path,
                                llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write,
                                unsigned mode = 0666);

} // namespace encc

#endif // ENCC_COMPILER_ARTIFACTWRITER_H
