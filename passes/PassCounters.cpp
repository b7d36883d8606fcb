//===- PassCounters.cpp - Collecting what each enc pass changed -----------===//
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/Pass/Pass.h"

#include <mutex>

using namespace mlir;
using namespace mlir::enc;

namespace {

class PassCountCollector : public PassInstrumentation {
public:
  explicit PassCountCollector(PassCounts &sink) : sink(sink) {}

  void runAfterPass(Pass *pass, Operation *) override {
    const auto *counters = dynamic_cast<const PassCounters *>(pass);
    if (!counters)
      return; // not an enc pass (canonicalize, cse)
    llvm::StringRef name = encShortNameForPassArgument(pass->getArgument());
    std::lock_guard<std::mutex> lock(mutex);
    PassCounterMap &into = sink[name.str()];
    for (const auto &[statistic, value] : counters->lastRunCounts())
      into[statistic] += value;
  }

private:
  PassCounts &sink;
  std::mutex mutex;
};

} // namespace

std::unique_ptr<PassInstrumentation> mlir::enc::createPassCountCollector(PassCounts &sink) {
  return std::make_unique<PassCountCollector>(sink);
}
