//===- PassCounters.h - What each enc pass changed ------------------------===//
//
// MLIR's Pass::Statistic is compiled out when LLVM is built with NDEBUG (as
// Debian's is), so every enc pass also derives from PassCounters and records
// what its last run changed in itself. A PassCountCollector, added to a pass
// manager by whoever runs it, sums those counts after each pass: no state in
// the dialect, so two modules can be compiled at once.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_PASSCOUNTERS_H
#define ENC_PASSES_PASSCOUNTERS_H

#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace mlir::enc {

/// Statistic name ("num-fused") -> value.
using PassCounterMap = std::map<std::string, uint64_t>;
/// Pass short name ("fuse-qkv") -> its counters, summed over runs.
using PassCounts = std::map<std::string, PassCounterMap>;

class PassCounters {
public:
  virtual ~PassCounters() = default;
  /// What the last successful run changed.
  const PassCounterMap &lastRunCounts() const { return counts; }

protected:
  /// Replaces the counts; call once at the end of runOnOperation.
  void recordCounts(PassCounterMap runCounts) { counts = std::move(runCounts); }

private:
  PassCounterMap counts;
};

/// After every enc pass that succeeds, adds its counters to `sink` under the
/// pass's short name (encShortNameForPassArgument). Thread-safe; `sink` must
/// outlive the pass manager.
std::unique_ptr<PassInstrumentation> createPassCountCollector(PassCounts &sink);

} // namespace mlir::enc

#endif // ENC_PASSES_PASSCOUNTERS_H
