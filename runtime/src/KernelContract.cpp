//===- KernelContract.cpp - Plan steps checked against their kernels ------===//
#include "KernelContract.h"

#include "Failure.h"
#include "VerifyUtil.h"

#include <string_view>
#include <unordered_map>

namespace encrt::rt {

namespace {

/// Generated objects have tens of kernels and signatures of tens of numbers.
constexpr uint32_t kMaxKernels = 1 << 16;
constexpr uint32_t kMaxSignature = 1 << 16;

std::string typeString(int64_t dtype, const int64_t *dims, int64_t rank) {
  std::string s = dtype >= 0 && dtype <= int64_t(encm::DType::MAX)
                      ? encm::EnumNameDType(static_cast<encm::DType>(dtype))
                      : "dtype" + std::to_string(dtype);
  s += " [";
  for (int64_t d = 0; d < rank; ++d)
    s += (d ? "," : "") + std::to_string(dims[d]);
  return s + "]";
}

std::string typeString(const encm::Value &v) {
  const auto *shape = v.shape();
  std::string s = encm::EnumNameDType(v.dtype());
  return s + " " + shapeString(shape);
}

bool sameType(const encm::Value &v, int64_t dtype, const int64_t *dims, int64_t rank) {
  if (static_cast<int64_t>(v.dtype()) != dtype || !v.shape() ||
      static_cast<int64_t>(v.shape()->size()) != rank)
    return false;
  for (int64_t d = 0; d < rank; ++d)
    if (v.shape()->Get(static_cast<flatbuffers::uoffset_t>(d)) != dims[d])
      return false;
  return true;
}

} // namespace

void verifyKernelContracts(const enc_code_info_t &info, const encm::Model &model,
                           const std::string &where, const ElfLayout &layout, uintptr_t base) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  if (info.num_kernels > kMaxKernels || (info.num_kernels && !info.kernels) ||
      !layout.contains(base, info.kernels, uint64_t(info.num_kernels) * sizeof(enc_kernel_contract)))
    fail(bad, where, ": the kernel contract table has ", info.num_kernels, " entries",
         info.kernels ? " outside the code object" : " and no address");
  std::unordered_map<std::string_view, const enc_kernel_contract *> contracts;
  for (uint32_t k = 0; k < info.num_kernels; ++k) {
    const enc_kernel_contract &c = info.kernels[k];
    if (!c.name || !c.signature || c.signature_len < ENC_CONTRACT_HEADER ||
        c.signature_len > kMaxSignature || !layout.containsString(base, c.name, 4096) ||
        !layout.contains(base, c.signature, uint64_t(c.signature_len) * sizeof(int64_t)))
      fail(bad, where, ": kernel contract ", k, " is malformed (or points outside the code object)");
    contracts.emplace(c.name, &c);
  }

  const auto &values = *model.values();
  const auto &steps = *model.steps();
  for (uint32_t s = 0; s < steps.size(); ++s) {
    const encm::Step &step = *steps.Get(s);
    std::string_view kernel = step.kernel()->string_view();
    auto it = contracts.find(kernel);
    if (it == contracts.end())
      fail(bad, where, ": step ", s, " kernel \"", kernel,
           "\" has no contract in the code object (not a kernel encc generated for this plan)");
    const int64_t *sig = it->second->signature;
    const int64_t len = it->second->signature_len;
    const int64_t numOps = sig[0], numResults = sig[1], numI = sig[2], numF = sig[3];
    auto stepError = [&](const auto &...parts) {
      fail(bad, where, ": step ", s, " (", step.op() ? step.op()->str() : "?", ", kernel ",
           kernel, ") ", parts...);
    };
    if (numOps < 0 || numResults < 0 || numI < 0 || numF < 0 ||
        numI > len - ENC_CONTRACT_HEADER)
      stepError("has a malformed kernel contract");
    const uint32_t stepOps = step.operands() ? step.operands()->size() : 0;
    if (stepOps != numOps || step.num_results() != numResults)
      stepError("has ", stepOps, " operands (", step.num_results(),
                " results), its kernel takes ", numOps, " (", numResults, " results)");
    const uint32_t stepI = step.iattrs() ? step.iattrs()->size() : 0;
    const uint32_t stepF = step.fattrs() ? step.fattrs()->size() : 0;
    if (stepI != numI || stepF != numF)
      stepError("has ", stepI, " integer and ", stepF, " float attributes, its kernel takes ",
                numI, " and ", numF);
    const int64_t *iattrs = sig + ENC_CONTRACT_HEADER;
    for (uint32_t i = 0; i < stepI; ++i)
      if (step.iattrs()->Get(i) != iattrs[i])
        stepError("integer attribute ", i, " is ", step.iattrs()->Get(i),
                  ", its kernel was built for ", iattrs[i]);
    int64_t at = ENC_CONTRACT_HEADER + numI;
    for (uint32_t o = 0; o < stepOps; ++o) {
      if (at + 2 > len || sig[at + 1] < 0 || sig[at + 1] > len - at - 2)
        stepError("has a malformed kernel contract");
      const int64_t dtype = sig[at], rank = sig[at + 1];
      const int64_t *dims = sig + at + 2;
      at += 2 + rank;
      // Operand ids were range-checked by the artifact verifier.
      const encm::Value &v = *values.Get(step.operands()->Get(o));
      if (!sameType(v, dtype, dims, rank))
        stepError("operand ", o, " is value ", v.id(), " of type ", typeString(v),
                  ", its kernel was built for ", typeString(dtype, dims, rank));
    }
    if (at != len)
      stepError("has a malformed kernel contract");
  }
}

} // namespace encrt::rt
