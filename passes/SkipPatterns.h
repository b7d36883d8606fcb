//===- SkipPatterns.h - Weight-name globs that keep a Linear in f32 -------===//
//
// The `skip` option of the precision passes (quantize-linear-int8,
// convert-linear-bf16): llvm::GlobPattern globs on enc.weight names.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_SKIPPATTERNS_H
#define ENC_PASSES_SKIPPATTERNS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/GlobPattern.h"

#include <string>
#include <vector>

namespace mlir::enc {

class SkipPatterns {
public:
  /// Compiles `patterns`; an invalid one is reported on `op` (naming `pass`).
  LogicalResult parse(Operation *op, llvm::StringRef pass,
                      llvm::ArrayRef<std::string> patterns) {
    globs_.clear();
    for (const std::string &pattern : patterns) {
      auto glob = llvm::GlobPattern::create(pattern);
      if (!glob) {
        op->emitError() << pass << ": invalid skip pattern '" << pattern
                        << "': " << llvm::toString(glob.takeError());
        return failure();
      }
      globs_.push_back(std::move(*glob));
    }
    return success();
  }
  bool matches(llvm::StringRef weightName) const {
    return llvm::any_of(globs_, [&](const llvm::GlobPattern &g) { return g.match(weightName); });
  }

private:
  std::vector<llvm::GlobPattern> globs_;
};

} // namespace mlir::enc

#endif // ENC_PASSES_SKIPPATTERNS_H
