//===- VerifyUtil.cpp - Checks shared by the CPU and CUDA plan verifiers --===//
#include "VerifyUtil.h"

#include "Artifact.h"
#include "Failure.h"

#include <vector>

namespace encrt::rt {

std::string shapeString(const flatbuffers::Vector<int64_t> *shape) {
  std::string s = "[";
  if (shape)
    for (flatbuffers::uoffset_t i = 0; i < shape->size(); ++i)
      s += (i ? "," : "") + std::to_string(shape->Get(i));
  return s + "]";
}

bool shapeIs(const encm::Value &v, std::initializer_list<int64_t> dims) {
  const auto *shape = v.shape();
  if (!shape || shape->size() != dims.size())
    return false;
  flatbuffers::uoffset_t i = 0;
  for (int64_t d : dims)
    if (shape->Get(i++) != d)
      return false;
  return true;
}

const char *kindName(encm::ValueKind kind) {
  switch (kind) {
  case encm::ValueKind::Input: return "Input";
  case encm::ValueKind::Weight: return "Weight";
  case encm::ValueKind::Activation: return "Activation";
  case encm::ValueKind::Output: return "Output";
  }
  return "unknown";
}

int32_t liveEnd(const encm::Value &v, int32_t numSteps) {
  if (v.kind() == encm::ValueKind::Output)
    return numSteps - 1;
  return v.last_step() >= v.first_step() ? v.last_step() : v.first_step();
}

void verifyPlanValues(const ValueTable &values, int32_t numSteps,
                      uint64_t weightsSize, const PlanWording &w) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const std::string &p = w.prefix;
  for (uint32_t i = 0; i < values.size(); ++i) {
    const encm::Value &v = *values.Get(i);
    if (v.id() != i)
      fail(bad, p, " value ", i, " has id ", v.id(),
           " (ids must equal the value's index)");
    auto kind = v.kind();
    if (static_cast<int>(kind) < 0 || static_cast<int>(kind) > 3)
      fail(bad, p, " value ", i, " has unknown kind ", static_cast<int>(kind));
    size_t elem = dtypeSize(v.dtype());
    if (elem == 0)
      fail(bad, p, " value ", i, " has unknown dtype ",
           static_cast<int>(v.dtype()));
    const auto *shape = v.shape();
    if (!shape)
      fail(bad, p, " value ", i, " has no shape");
    if (shape->size() > kMaxRank)
      fail(bad, p, " value ", i, " has rank ", shape->size(), " (at most ",
           kMaxRank, ")");
    for (flatbuffers::uoffset_t d = 0; d < shape->size(); ++d) {
      int64_t dim = shape->Get(d);
      if (w.tokensFirstDimOnly && (dim < -3 || (dim == -3 && d != 0)))
        fail(bad, p, " value ", i, " shape ", shapeString(shape), " dim ", d,
             " is ", dim, " (expected >= 0, -1 batch, -2 sequence, or -3 "
             "tokens as the first dim)");
      if (!w.tokensFirstDimOnly && dim < -3)
        fail(bad, p, " value ", i, " shape ", shapeString(shape), " dim ", d,
             " is ", dim, " (expected >= 0, -1 batch, -2 sequence or -3 tokens)");
      if (kind == encm::ValueKind::Weight && dim < 0)
        fail(bad, p, " weight value ", i, " has a dynamic shape ",
             shapeString(shape));
    }
    if (kind == encm::ValueKind::Weight) {
      // product(shape) * dtype size, with overflow checks.
      uint64_t bytes = elem;
      for (flatbuffers::uoffset_t d = 0; d < shape->size(); ++d)
        if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape->Get(d)),
                                   &bytes))
          fail(bad, p, " weight value ", i, " shape ", shapeString(shape),
               " is too large");
      if (bytes != v.weight_bytes())
        fail(bad, p, " weight value ", i, " has weight_bytes ",
             v.weight_bytes(), ", its shape ", shapeString(shape), " needs ",
             bytes);
      if (v.weight_offset() % 64 != 0)
        fail(bad, p, " weight value ", i, " weight_offset ", v.weight_offset(),
             " is not 64-byte aligned");
      if (!fitsIn(v.weight_offset(), v.weight_bytes(), weightsSize))
        fail(bad, p, " weight value ", i, " [", v.weight_offset(), ", +",
             v.weight_bytes(), ") lies outside the weights region (",
             weightsSize, " bytes)");
    }
    if (kind == encm::ValueKind::Activation || kind == encm::ValueKind::Output) {
      if (v.first_step() < 0 || v.first_step() >= numSteps)
        fail(bad, p, " value ", i, " first_step ", v.first_step(),
             " is out of range (", w.owner, " has ", numSteps, " steps)");
      if (v.last_step() != -1 &&
          (v.last_step() < v.first_step() || v.last_step() >= numSteps))
        fail(bad, p, " value ", i, " last_step ", v.last_step(),
             " is out of range [first_step ", v.first_step(), ", ",
             numSteps - 1, "]");
    }
  }
}

void verifyStepOperands(const encm::Step &step, int32_t s,
                        const ValueTable &values, int32_t numSteps,
                        const PlanWording &w) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const std::string &p = w.prefix;
  const auto *ops = step.operands();
  uint32_t numOps = ops ? ops->size() : 0;
  for (uint32_t o = 0; o < numOps; ++o) {
    uint32_t id = ops->Get(o);
    if (id >= values.size())
      fail(bad, p, " step ", s, " operand ", o, " refers to value ", id, " (",
           w.owner, " has ", values.size(), " values)");
    const encm::Value &v = *values.Get(id);
    bool isResult = o >= numOps - step.num_results();
    bool inArena = v.kind() == encm::ValueKind::Activation ||
                   v.kind() == encm::ValueKind::Output;
    if (isResult && !inArena && w.namesResultKind)
      fail(bad, p, " step ", s, " writes value ", id, " of kind ",
           kindName(v.kind()), " (results must be Activation or Output)");
    if (isResult && !inArena)
      fail(bad, p, " step ", s, " writes value ", id,
           " which is not an Activation or Output");
    if (inArena && (s < v.first_step() || s > liveEnd(v, numSteps)))
      fail(bad, p, " step ", s, " uses value ", id,
           " outside its live range [", v.first_step(), ", ",
           liveEnd(v, numSteps), "]");
  }
}

void verifyWrittenBeforeRead(const flatbuffers::Vector<flatbuffers::Offset<encm::Step>> &steps,
                             const ValueTable &values, const flatbuffers::Vector<uint32_t> &outputs,
                             const PlanWording &w) {
  std::vector<bool> written(values.size(), false);
  auto inArena = [&](uint32_t id) {
    const encm::ValueKind k = values.Get(id)->kind();
    return k == encm::ValueKind::Activation || k == encm::ValueKind::Output;
  };
  for (uint32_t s = 0; s < steps.size(); ++s) {
    const encm::Step &step = *steps.Get(s);
    const auto *ops = step.operands();
    const uint32_t numOps = ops ? ops->size() : 0, firstResult = numOps - step.num_results();
    for (uint32_t o = 0; o < firstResult; ++o)
      if (inArena(ops->Get(o)) && !written[ops->Get(o)])
        fail(ENCRT_INVALID_ARTIFACT, w.prefix, " step ", s, " reads value ", ops->Get(o),
             " before any step writes it");
    for (uint32_t o = firstResult; o < numOps; ++o)
      written[ops->Get(o)] = true;
  }
  for (uint32_t k = 0; k < outputs.size(); ++k)
    if (!written[outputs.Get(k)])
      fail(ENCRT_INVALID_ARTIFACT, w.prefix, " output ", k, " (value ", outputs.Get(k),
           ") is written by no step");
}

void verifyPlanInputs(const flatbuffers::Vector<uint32_t> *inputs,
                      const ValueTable &values, bool typeIds,
                      const PlanWording &w) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const std::string &p = w.prefix;
  static const char *names[3] = {"ids", "lengths", "type_ids"};
  const uint32_t want = typeIds ? 3 : 2;
  if (!inputs || inputs->size() != want)
    fail(bad, p, " expected ", want, " inputs (ids, lengths", typeIds ? ", type_ids" : "",
         "), found ", inputs ? inputs->size() : 0,
         typeIds ? " (the model has token types)" : "");
  const uint32_t numValues = values.size();
  for (uint32_t k = 0; k < want; ++k) {
    uint32_t id = inputs->Get(k);
    if (id >= numValues)
      fail(bad, p, " input ", k, " (", names[k], ") refers to value ", id,
           " (", w.owner, " has ", numValues, " values)");
    const encm::Value &v = *values.Get(id);
    const bool rank2 = k != 1;
    bool shapeOk = rank2 ? shapeIs(v, {-1, -2}) : shapeIs(v, {-1});
    if (v.kind() != encm::ValueKind::Input || v.dtype() != encm::DType::I32 ||
        !shapeOk)
      fail(bad, p, " input ", k, " (", names[k], ", value ", id, ") must be an ",
           "I32 Input of shape ", rank2 ? "[-1,-2]" : "[-1]", ", found ",
           encm::EnumNameDType(v.dtype()), " ", kindName(v.kind()), " ",
           shapeString(v.shape()));
    for (uint32_t j = 0; j < k; ++j)
      if (inputs->Get(j) == id)
        fail(bad, p, " inputs ", names[j], " and ", names[k], " are the same value");
  }
  for (uint32_t i = 0; i < numValues; ++i) {
    if (values.Get(i)->kind() != encm::ValueKind::Input)
      continue;
    bool listed = false;
    for (uint32_t k = 0; k < want; ++k)
      listed |= inputs->Get(k) == i;
    if (!listed)
      fail(bad, p, " value ", i, " is an Input but not listed in inputs");
  }
}

} // namespace encrt::rt
