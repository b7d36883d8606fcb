//===- OpLowering.h - One way from an enc op to its kernel ----------------===//
//
// Each code generator lists its ops in one OpLoweringTable: op class ->
// the generator method that lowers it. Adding an op to a backend is one
// method and one `add` line; an op missing from a table is reported by name,
// never silently skipped. Both the CPU and the CUDA generators use it.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_CODEGEN_OPLOWERING_H
#define ENCC_COMPILER_CODEGEN_OPLOWERING_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace encc::codegen {

/// Op class -> `Result Gen::method(OpT op, Args...)`.
template <typename Gen, typename Result, typename... Args> class OpLoweringTable {
public:
  using Fn = std::function<Result(Gen &, mlir::Operation *, Args...)>;

  /// Lowers OpT with a method taking the op as OpT.
  template <typename OpT> OpLoweringTable &add(Result (Gen::*method)(OpT, Args...)) {
    table_[mlir::TypeID::get<OpT>()] = [method](Gen &g, mlir::Operation *op, Args... args) {
      return (g.*method)(llvm::cast<OpT>(op), std::forward<Args>(args)...);
    };
    return *this;
  }

  /// Lowers every one of OpTs with one method taking the Operation.
  template <typename... OpTs> OpLoweringTable &addAll(Result (Gen::*method)(mlir::Operation *, Args...)) {
    (table_.try_emplace(mlir::TypeID::get<OpTs>(),
                        [method](Gen &g, mlir::Operation *op, Args... args) {
                          return (g.*method)(op, std::forward<Args>(args)...);
                        }),
     ...);
    return *this;
  }

  /// The lowering of `op`'s class, or null.
  const Fn *lookup(mlir::Operation *op) const {
    auto it = table_.find(op->getName().getTypeID());
    return it == table_.end() ? nullptr : &it->second;
  }

private:
  llvm::DenseMap<mlir::TypeID, Fn> table_;
};

} // namespace encc::codegen

#endif // ENCC_COMPILER_CODEGEN_OPLOWERING_H
