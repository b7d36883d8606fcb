//===- EncDialect.cpp - The enc dialect -----------------------------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"

using namespace mlir;
using namespace mlir::enc;

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "ir/EncDialect.cpp.inc"
#include "ir/EncEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "ir/EncAttrs.cpp.inc"

void EncDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/EncOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/EncAttrs.cpp.inc"
      >();
}

Operation *EncDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type, Location loc) {
  auto dense = dyn_cast<DenseFPElementsAttr>(value);
  if (!dense || dense.getType() != type || !dense.getElementType().isF32() || dense.getNumElements() > 64)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, dense);
}
