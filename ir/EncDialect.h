//===- EncDialect.h - The enc dialect ---------------------------*- C++ -*-===//
#ifndef ENC_IR_ENCDIALECT_H
#define ENC_IR_ENCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/EncDialect.h.inc"

#endif // ENC_IR_ENCDIALECT_H
