//===- EncOps.h - Operations of the enc dialect -----------------*- C++ -*-===//
#ifndef ENC_IR_ENCOPS_H
#define ENC_IR_ENCOPS_H

#include "ir/EncDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/EncEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/EncAttrs.h.inc"

#define GET_OP_CLASSES
#include "ir/EncOps.h.inc"

namespace mlir::enc {

/// The NumPy/ONNX broadcast of two shapes (aligned on the right, a dim of 1
/// stretches, `?` against N > 1 is N); failure when they do not broadcast.
FailureOr<SmallVector<int64_t>> broadcastShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b);

} // namespace mlir::enc

#endif // ENC_IR_ENCOPS_H
