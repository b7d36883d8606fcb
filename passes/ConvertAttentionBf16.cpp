//===- ConvertAttentionBf16.cpp - attention with bf16 p·v -----------------===//
//
// Sets `bf16_pv` on every enc.attention: p·v over probabilities and values
// rounded to bf16 (vdpbf16ps on AVX512-BF16 CPUs), q·kᵀ and the softmax in
// f32. `--quantize=bf16` appends it; on MiniLM it keeps the min token cosine
// vs fp32 where it was, while bf16 q·kᵀ too did not (see enc_attention.h).
//
//===----------------------------------------------------------------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

namespace mlir::enc {
#define GEN_PASS_DEF_CONVERTATTENTIONBF16PASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

struct ConvertAttentionBf16Pass
    : enc::impl::ConvertAttentionBf16PassBase<ConvertAttentionBf16Pass>,
      PassCounters {
  void runOnOperation() override {
    unsigned nConverted = 0;
    getOperation()->walk([&](AttentionOp op) {
      if (op.getBf16Pv())
        return;
      op.setBf16Pv(true);
      ++nConverted;
    });
    recordCounts({{"num-converted", nConverted}});
  }
};

} // namespace
