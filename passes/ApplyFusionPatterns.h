//===- ApplyFusionPatterns.h - The pattern driver every fusion pass uses ---===//
//
// The enc fusion passes rewrite straight-line code in one function body; they
// run the greedy driver without region simplification (which could otherwise
// restructure the function the codegen walks in order).
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_APPLYFUSIONPATTERNS_H
#define ENC_PASSES_APPLYFUSIONPATTERNS_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::enc {

inline LogicalResult applyFusionPatterns(Operation *root, RewritePatternSet &&patterns) {
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  return applyPatternsAndFoldGreedily(root, std::move(patterns), config);
}

} // namespace mlir::enc

#endif // ENC_PASSES_APPLYFUSIONPATTERNS_H
