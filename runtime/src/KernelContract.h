//===- KernelContract.h - Plan steps checked against their kernels --------===//
//
// A generated kernel is specialised to its operands: their number, which it
// writes, their dtypes and shapes, its integer attributes. The code object
// states this per kernel (enc_code_info.kernels, encrt/kernel_abi.h) as data;
// verifyKernelContracts refuses a plan step that differs from its kernel's
// contract in any of them, so a plan that would hand a kernel other buffers
// than it was built for (and make it read or write out of bounds) never runs.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_KERNELCONTRACT_H
#define ENCRT_KERNELCONTRACT_H

#include "encrt/artifact_generated.h"
#include "ElfCheck.h"
#include "encrt/kernel_abi.h"

#include <string>

namespace encrt::rt {

/// Throws Failure(ENCRT_INVALID_ARTIFACT) naming `where` (path and code
/// object), the step and the first difference. `info` lies inside the object
/// loaded at `base` with `layout`; every pointer of its table (the
/// contracts, names, signatures) must too before it is read.
void verifyKernelContracts(const enc_code_info_t &info, const encm::Model &model,
                           const std::string &where, const ElfLayout &layout, uintptr_t base);

} // namespace encrt::rt

#endif // ENCRT_KERNELCONTRACT_H
