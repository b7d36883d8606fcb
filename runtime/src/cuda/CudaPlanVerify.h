//===- CudaPlanVerify.h - Semantic checks of an artifact's CudaPlan -------===//
//
// Every id, offset, size, shape, live range, launch header and GEMM step of
// Model.cuda in range, so the CUDA backend can trust the table. Throws
// Failure(ENCRT_INVALID_ARTIFACT, "<path>: cuda plan ...") like Artifact.cpp.
// A no-op when the model has no CudaPlan. (To be called from
// Artifact::verifySemantics; LoadedModel calls it for now.)
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_CUDAPLANVERIFY_H
#define ENCRT_CUDA_CUDAPLANVERIFY_H

#include "encrt/artifact_generated.h"

#include <cstdint>
#include <string>

namespace encrt::rt {

void verifyCudaPlan(const encm::Model &m, const std::string &path,
                    uint64_t fileSize);

} // namespace encrt::rt

#endif // ENCRT_CUDA_CUDAPLANVERIFY_H
