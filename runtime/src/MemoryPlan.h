//===- MemoryPlan.h - Placing activations in the session arena ------------===//
//
// Greedy by size: largest first, each at the lowest 64-byte-aligned offset
// that does not overlap any already placed buffer whose live range
// [first, last] (plan step indices, inclusive) intersects its own.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_MEMORYPLAN_H
#define ENCRT_MEMORYPLAN_H

#include <cstdint>
#include <vector>

namespace encrt::rt {

constexpr uint64_t kArenaAlign = 64;

struct ArenaRequest {
  uint64_t bytes;
  int32_t first, last;
};

/// Fills `offsets` (one per request) and returns the arena size needed.
uint64_t planArena(const std::vector<ArenaRequest> &requests,
                   std::vector<uint64_t> &offsets);

} // namespace encrt::rt

#endif // ENCRT_MEMORYPLAN_H
