//===- EncDialect.cpp - The enc dialect -----------------------------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"

using namespace mlir;
using namespace mlir::enc;

#include "ir/EncDialect.cpp.inc"

void EncDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/EncOps.cpp.inc"
      >();
}

void EncDialect::addPassCount(llvm::StringRef pass, llvm::StringRef statistic,
                              uint64_t value) {
  std::lock_guard<std::mutex> lock(passCountsMutex);
  passCounts[pass.str()][statistic.str()] += value;
}

EncDialect::PassCounts EncDialect::getPassCounts() const {
  std::lock_guard<std::mutex> lock(passCountsMutex);
  return passCounts;
}

void EncDialect::clearPassCounts() {
  std::lock_guard<std::mutex> lock(passCountsMutex);
  passCounts.clear();
}
