//===- MemoryPlan.cpp - Placing activations in the session arena ----------===//
#include "MemoryPlan.h"

#include <algorithm>
#include <numeric>

namespace encrt::rt {

uint64_t planArena(const std::vector<ArenaRequest> &requests,
                   std::vector<uint64_t> &offsets) {
  const size_t n = requests.size();
  offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });

  struct Placed { uint64_t begin, end; };
  std::vector<size_t> done;
  std::vector<Placed> conflicts;
  done.reserve(n);
  uint64_t total = 0;
  for (size_t i : order) {
    const ArenaRequest &r = requests[i];
    uint64_t bytes = (r.bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    conflicts.clear();
    for (size_t j : done)
      if (requests[j].first <= r.last && r.first <= requests[j].last)
        conflicts.push_back({offsets[j], offsets[j] + requests[j].bytes});
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Placed &a, const Placed &b) { return a.begin < b.begin; });
    uint64_t offset = 0;
    for (const Placed &c : conflicts) {
      if (offset + bytes <= c.begin)
        break;
      if (c.end > offset)
        offset = (c.end + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    }
    offsets[i] = offset;
    total = std::max(total, offset + bytes);
    done.push_back(i);
  }
  return total;
}

} // namespace encrt::rt
