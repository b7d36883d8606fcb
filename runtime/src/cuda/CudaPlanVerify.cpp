//===- CudaPlanVerify.cpp - Semantic checks of an artifact's CudaPlan -----===//
#include "cuda/CudaPlanVerify.h"

#include "Artifact.h"
#include "Failure.h"
#include "VerifyUtil.h"
#include "encrt/cuda_kernel_abi.h"
#include "encrt/checksum.h"
#include "encrt/schema_version.h"

#include <cstring>

namespace encrt::rt {

namespace {

/// A cublaslt step: iattrs [header.., N, K, epilogue]; operands X, W[, bias], Y
/// with the plan's dtype (int8: X, W I8 and Y I32, no bias or epilogue).
void verifyGemmStep(const encm::Step &step, int32_t s,
                    const flatbuffers::Vector<flatbuffers::Offset<encm::Value>> &values,
                    encm::DType planDtype, const std::string &p) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const auto *ops = step.operands();
  const uint32_t numOps = ops ? ops->size() : 0;
  const uint32_t numI = step.iattrs()->size();
  const int64_t *ia = step.iattrs()->data();
  if (numI != ENC_CUDA_LAUNCH_HEADER + 3)
    fail(bad, p, " step ", s, " (cublaslt) has ", numI,
         " iattrs (expected the header plus [N, K, epilogue])");
  const int64_t n = ia[5], k = ia[6], epilogue = ia[7];
  if (n < 1 || k < 1 || epilogue < 0 || epilogue > 2)
    fail(bad, p, " step ", s, " (cublaslt) has N ", n, ", K ", k,
         ", epilogue ", epilogue, " (expected N, K >= 1, epilogue 0..2)");
  if (numOps < 3)
    fail(bad, p, " step ", s, " (cublaslt) has ", numOps, " operands");
  const encm::Value &x = *values.Get(ops->Get(0));
  const encm::Value &w = *values.Get(ops->Get(1));
  const encm::Value &y = *values.Get(ops->Get(numOps - 1));
  const bool int8 = x.dtype() == encm::DType::I8;
  const uint32_t wantOps = int8 ? 3 : (epilogue >= 1 ? 4 : 3);
  if (numOps != wantOps || step.num_results() != 1)
    fail(bad, p, " step ", s, " (cublaslt) has ", numOps, " operands and ",
         step.num_results(), " results (expected ", wantOps, " and 1)");
  const encm::DType dt = int8 ? encm::DType::I8 : planDtype;
  const encm::DType yt = int8 ? encm::DType::I32 : planDtype;
  if (x.dtype() != dt || w.dtype() != dt || y.dtype() != yt ||
      (numOps == 4 && values.Get(ops->Get(2))->dtype() != dt))
    fail(bad, p, " step ", s, " (cublaslt) operand dtypes are X ",
         encm::EnumNameDType(x.dtype()), ", W ", encm::EnumNameDType(w.dtype()),
         ", Y ", encm::EnumNameDType(y.dtype()), " (expected X, W",
         numOps == 4 ? ", bias " : " ", encm::EnumNameDType(dt), ", Y ",
         encm::EnumNameDType(yt), ")");
  if (int8 && (epilogue != 0 || k % 4 != 0))
    fail(bad, p, " step ", s, " (cublaslt int8) has K ", k, ", epilogue ",
         epilogue, " (expected K a multiple of 4, epilogue 0)");
  if (w.kind() != encm::ValueKind::Weight || !shapeIs(w, {n, k}))
    fail(bad, p, " step ", s, " (cublaslt) W must be a Weight of shape [", n,
         ",", k, "], found ", shapeString(w.shape()));
  if (numOps == 4 && !shapeIs(*values.Get(ops->Get(2)), {n}))
    fail(bad, p, " step ", s, " (cublaslt) bias must have shape [", n,
         "], found ", shapeString(values.Get(ops->Get(2))->shape()));
  if (x.shape()->size() != 2 || x.shape()->Get(1) != k ||
      y.shape()->size() != 2 || y.shape()->Get(1) != n ||
      x.shape()->Get(0) != y.shape()->Get(0))
    fail(bad, p, " step ", s, " (cublaslt) X ", shapeString(x.shape()),
         " and Y ", shapeString(y.shape()), " do not match [T,", k, "] and [T,",
         n, "]");
}

} // namespace

void verifyCudaPlan(const encm::Model &m, const std::string &path,
                    uint64_t fileSize) {
  const encm::CudaPlan *cp = m.cuda();
  if (!cp)
    return;
  const std::string p = path + ": cuda plan";
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const encm::Metadata *md = m.metadata();
  if (!md)
    fail(bad, path, ": missing metadata");
  if (md->num_labels() > 0)
    fail(bad, p, " of a classification model: not supported (classification heads run on the CPU)");
  if (cp->dtype() != encm::DType::F16 && cp->dtype() != encm::DType::BF16)
    fail(bad, p, " dtype is ", encm::EnumNameDType(cp->dtype()),
         " (expected F16 or BF16)");
  if (!cp->values() || cp->values()->size() == 0)
    fail(bad, p, " has no values");
  if (!cp->steps() || cp->steps()->size() == 0)
    fail(bad, p, " has no steps");
  if (cp->steps()->size() > static_cast<uint32_t>(INT32_MAX))
    fail(bad, p, " has too many steps");
  const auto &values = *cp->values();
  const auto &steps = *cp->steps();
  const uint32_t numValues = values.size();
  const int32_t numSteps = static_cast<int32_t>(steps.size());

  const PlanWording wording{p, "the plan", /*tokensFirstDimOnly=*/false,
                            /*namesResultKind=*/false};
  verifyPlanValues(values, numSteps, m.weights_size(), wording);

  for (int32_t s = 0; s < numSteps; ++s) {
    const encm::Step &step = *steps.Get(s);
    if (!step.kernel() || step.kernel()->size() == 0)
      fail(bad, p, " step ", s, " has no kernel name");
    const auto *ops = step.operands();
    uint32_t numOps = ops ? ops->size() : 0;
    if (numOps > ENC_CUDA_MAX_BUFFERS)
      fail(bad, p, " step ", s, " has ", numOps, " operands (at most ",
           ENC_CUDA_MAX_BUFFERS, ")");
    if (step.num_results() > numOps)
      fail(bad, p, " step ", s, " has ", step.num_results(),
           " results but only ", numOps, " operands");
    uint32_t numI = step.iattrs() ? step.iattrs()->size() : 0;
    uint32_t numF = step.fattrs() ? step.fattrs()->size() : 0;
    if (numI < ENC_CUDA_LAUNCH_HEADER ||
        numI > ENC_CUDA_LAUNCH_HEADER + ENC_CUDA_MAX_IATTRS)
      fail(bad, p, " step ", s, " (", step.kernel()->str(), ") has ", numI,
           " iattrs (expected the ", ENC_CUDA_LAUNCH_HEADER,
           "-entry launch header plus at most ", ENC_CUDA_MAX_IATTRS, ")");
    if (numF > ENC_CUDA_MAX_FATTRS)
      fail(bad, p, " step ", s, " has ", numF, " fattrs (at most ",
           ENC_CUDA_MAX_FATTRS, ")");
    verifyStepOperands(step, s, values, numSteps, wording);
    const int64_t *ia = step.iattrs()->data();
    const int64_t kind = ia[0];
    bool isGemm = step.kernel()->string_view() == ENC_CUDA_GEMM_KERNEL;
    if (kind < ENC_CUDA_GRID_ROWS || kind > ENC_CUDA_GRID_GEMM)
      fail(bad, p, " step ", s, " has unknown grid kind ", kind);
    if (isGemm != (kind == ENC_CUDA_GRID_GEMM))
      fail(bad, p, " step ", s, " (", step.kernel()->str(), ") has grid kind ",
           kind, isGemm ? " (a cublaslt step needs grid kind 4)"
                        : " (grid kind 4 needs kernel \"cublaslt\")");
    if (!isGemm) {
      if (ia[1] < 1 || ia[1] > 1024 || ia[2] < 0 || ia[3] < 1 ||
          ((kind == ENC_CUDA_GRID_SEQ_HEAD_TILE || kind == ENC_CUDA_GRID_ELEMENTS) &&
           ia[4] < 1))
        fail(bad, p, " step ", s, " (", step.kernel()->str(),
             ") has a bad launch header [", ia[0], ",", ia[1], ",", ia[2], ",",
             ia[3], ",", ia[4], "]");
    } else {
      verifyGemmStep(step, s, values, cp->dtype(), p);
    }
  }

  // Inputs: [ids: I32 [-1,-2], lengths: I32 [-1], type_ids: I32 [-1,-2]?].
  verifyPlanInputs(cp->inputs(), values, md->type_vocab_size() >= 2, wording);

  // Outputs: [hidden: F32 [-3,H] or [-1,-2,H], pooled: F32 [-1,H]?].
  if (!cp->outputs() || cp->outputs()->size() < 1 || cp->outputs()->size() > 2)
    fail(bad, p, " expects 1 or 2 outputs (hidden, pooled), found ",
         cp->outputs() ? cp->outputs()->size() : 0);
  const int64_t hidden = md->hidden_size();
  for (uint32_t k = 0; k < cp->outputs()->size(); ++k) {
    uint32_t id = cp->outputs()->Get(k);
    if (id >= numValues)
      fail(bad, p, " output ", k, " refers to value ", id, " (the plan has ",
           numValues, " values)");
    const encm::Value &v = *values.Get(id);
    bool shapeOk = k == 0 ? shapeIs(v, {-3, hidden}) || shapeIs(v, {-1, -2, hidden})
                          : shapeIs(v, {-1, hidden});
    if (v.kind() != encm::ValueKind::Output || v.dtype() != encm::DType::F32 ||
        !shapeOk)
      fail(bad, p, " output ", k, " (", k == 0 ? "hidden" : "pooled",
           ", value ", id, ") must be an F32 Output of shape ",
           k == 0 ? "[-3,H] or [-1,-2,H]" : "[-1,H]", " with H = ", hidden,
           ", found ", encm::EnumNameDType(v.dtype()), " ",
           shapeString(v.shape()));
  }
  verifyWrittenBeforeRead(steps, values, *cp->outputs(), wording);

  // Code object.
  const auto *codes = m.code_objects();
  if (!codes || cp->code_object() >= codes->size())
    fail(bad, p, " code_object ", cp->code_object(), " is out of range (",
         codes ? codes->size() : 0, " code objects)");
  const encm::CodeObject &co = *codes->Get(cp->code_object());
  if (!co.target() || co.target()->string_view() != "cuda")
    fail(bad, p, " code_object ", cp->code_object(), " has target \"",
         co.target() ? co.target()->str() : "", "\" (expected \"cuda\")");
  if (fileSize < ENCM_TRAILER_SIZE || co.size() == 0 ||
      !fitsIn(co.offset(), co.size(), fileSize - ENCM_TRAILER_SIZE))
    fail(bad, p, " fatbin [", co.offset(), ", +", co.size(),
         ") lies outside the file");
}

} // namespace encrt::rt
