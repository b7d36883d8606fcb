//===- CpuFeatures.h - Which ISA features this CPU runs -------------------===//
#ifndef ENCRT_CPUFEATURES_H
#define ENCRT_CPUFEATURES_H

#include <string_view>

namespace encrt::rt {

/// True when this CPU (and OS) supports `feature`, a name as encc writes it in
/// CodeObject.isa_features ("sse4.2", "avx2", "fma", "avx512f", "avx512bw",
/// "avx512vl", "avx512dq", "avx512vnni", "avxvnni", "avx512bf16", "amx-tile",
/// "amx-bf16", ...). Unknown names are unsupported. The first query of an AMX
/// feature asks Linux for the tile-data permission (process-wide).
bool cpuSupports(std::string_view feature);

} // namespace encrt::rt

#endif // ENCRT_CPUFEATURES_H
