//===- enc-opt.cpp - MlirOptMain driver for the enc dialect ---------------===//
//
// Parses, verifies, transforms and prints enc IR; used by the lit tests.
// Registers enc, func and arith, the core MLIR transform passes
// (canonicalize, cse, ...) and, when the passes/ library is built, the enc
// passes and pipeline.
//
//===----------------------------------------------------------------------===//
#include "ir/EncDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#ifdef ENCC_HAVE_ENC_PASSES
#include "passes/Passes.h"
#endif

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
#ifdef ENCC_HAVE_ENC_PASSES
  mlir::enc::registerEncPasses();
#endif

  mlir::DialectRegistry registry;
  registry.insert<mlir::enc::EncDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "enc optimizer driver\n", registry));
}
