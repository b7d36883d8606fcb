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
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

#ifdef ENCC_HAVE_ENC_PASSES
#include "passes/Passes.h"
#endif

/// True when the brackets and quotes of a pass option text pair up. MLIR 19's
/// pass-option parser loops forever on an unclosed '[', '{' or quote
/// (`-enc-quantize-linear-int8=skip=[`), so such text is refused first.
static bool balanced(llvm::StringRef text) {
  std::vector<char> open;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      open.push_back(c == '[' ? ']' : c == '{' ? '}' : ')');
    } else if (c == ']' || c == '}' || c == ')') {
      if (open.empty() || open.back() != c)
        return false;
      open.pop_back();
    }
  }
  return !quote && open.empty();
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = llvm::StringRef(argv[i]).ltrim('-');
    if ((arg.starts_with("enc-") || arg.starts_with("pass-pipeline")) && arg.contains('=') &&
        !balanced(arg.split('=').second)) {
      llvm::errs() << "enc-opt: error: unbalanced brackets or quotes in the pass options of '" << argv[i]
                   << "'\n";
      return 1;
    }
  }
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
