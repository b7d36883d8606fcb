//===- VerifyUtil.h - Checks shared by the CPU and CUDA plan verifiers ----===//
//
// Artifact.cpp (the CPU plan) and cuda/CudaPlanVerify.cpp (the CudaPlan) check
// the same encm::Value tables. Messages start with a caller-given prefix
// ("<path>:" or "<path>: cuda plan") and name the plan as `owner` ("artifact"
// or "the plan"), so each verifier keeps its own wording.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_VERIFYUTIL_H
#define ENCRT_VERIFYUTIL_H

#include "encrt/artifact_generated.h"

#include <cstdint>
#include <initializer_list>
#include <string>

namespace encrt::rt {

constexpr int kMaxRank = 8;

using ValueTable = flatbuffers::Vector<flatbuffers::Offset<encm::Value>>;

/// a + b <= limit without overflow.
inline bool fitsIn(uint64_t a, uint64_t b, uint64_t limit) {
  return a <= limit && b <= limit - a;
}

/// "[d0,d1,...]" ("[]" for a missing shape).
std::string shapeString(const flatbuffers::Vector<int64_t> *shape);

/// Whether `v` has exactly the shape `dims`.
bool shapeIs(const encm::Value &v, std::initializer_list<int64_t> dims);

/// "Input", "Weight", "Activation", "Output" (or "unknown").
const char *kindName(encm::ValueKind kind);

/// The last step that touches `v` (an Output lives to the end of the plan).
int32_t liveEnd(const encm::Value &v, int32_t numSteps);

/// How a verifier words its value checks.
struct PlanWording {
  std::string prefix; ///< "<path>:" or "<path>: cuda plan"
  const char *owner;  ///< "artifact" or "the plan", in "(<owner> has N ...)"
  /// -3 (tokens) only as the first dim (the CPU plan) or anywhere (CUDA).
  bool tokensFirstDimOnly;
  /// Name the offending kind when a step writes a non-arena value (CPU).
  bool namesResultKind;
};

/// Ids, kinds, dtypes, shapes, weight extents in a region of `weightsSize`
/// bytes and live ranges of every value of a plan with `numSteps` steps.
void verifyPlanValues(const ValueTable &values, int32_t numSteps,
                      uint64_t weightsSize, const PlanWording &w);

/// Every operand of step `s` names a value, results are Activations or
/// Outputs, and arena values are used within their live ranges.
void verifyStepOperands(const encm::Step &step, int32_t s,
                        const ValueTable &values, int32_t numSteps,
                        const PlanWording &w);

/// Every Activation or Output a step reads was written by an earlier step,
/// and every plan output by some step: a plan whose writer of a value was
/// removed (live ranges renumbered) would read arena garbage. Operand ids
/// and the outputs list must be checked already.
void verifyWrittenBeforeRead(const flatbuffers::Vector<flatbuffers::Offset<encm::Step>> &steps,
                             const ValueTable &values, const flatbuffers::Vector<uint32_t> &outputs,
                             const PlanWording &w);

/// A plan's inputs list: [ids: I32 [-1,-2], lengths: I32 [-1]] and, when
/// `typeIds`, type_ids: I32 [-1,-2]; distinct values, and no other value of
/// kind Input.
void verifyPlanInputs(const flatbuffers::Vector<uint32_t> *inputs,
                      const ValueTable &values, bool typeIds,
                      const PlanWording &w);

} // namespace encrt::rt

#endif // ENCRT_VERIFYUTIL_H
