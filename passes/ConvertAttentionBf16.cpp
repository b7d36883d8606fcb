//===- ConvertAttentionBf16.cpp - attention in bf16 -----------------------===//
//
// convert-attention-bf16 (the bf16 tier's) sets `bf16_pv` on every
// enc.attention: p·v over probabilities and values rounded to bf16
// (vdpbf16ps on AVX512-BF16 CPUs; tdpbf16ps tiles on AMX ones, where q·kᵀ is
// taken as three bf16 tile products too), the softmax in f32; on MiniLM it
// keeps the min token cosine vs fp32 where it was, while a plain bf16 q·kᵀ
// did not (see enc_attention.h). convert-attention-bf16-amx (the int8
// tier's) sets `bf16_amx`: the same on CPUs with AMX tiles only, f32
// elsewhere (where bf16 p·v is no faster than f32).
//
//===----------------------------------------------------------------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

namespace mlir::enc {
#define GEN_PASS_DEF_CONVERTATTENTIONBF16PASS
#define GEN_PASS_DEF_CONVERTATTENTIONBF16AMXPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// Sets bf16_pv (or, with amx, bf16_amx) on every enc.attention that has
/// neither; returns how many.
unsigned convertAttentions(Operation *root, bool amx) {
  unsigned converted = 0;
  root->walk([&](AttentionOp op) {
    if (op.getBf16Pv() || op.getBf16Amx())
      return;
    if (amx)
      op.setBf16Amx(true);
    else
      op.setBf16Pv(true);
    ++converted;
  });
  return converted;
}

struct ConvertAttentionBf16Pass : enc::impl::ConvertAttentionBf16PassBase<ConvertAttentionBf16Pass>,
                                  PassCounters {
  void runOnOperation() override {
    recordCounts({{"num-converted", convertAttentions(getOperation(), /*amx=*/false)}});
  }
};

struct ConvertAttentionBf16AmxPass : enc::impl::ConvertAttentionBf16AmxPassBase<ConvertAttentionBf16AmxPass>,
                                     PassCounters {
  void runOnOperation() override {
    recordCounts({{"num-converted", convertAttentions(getOperation(), /*amx=*/true)}});
  }
};

} // namespace
