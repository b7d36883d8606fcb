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
