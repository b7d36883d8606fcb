//===- OpLowering.h - One way from an enc op to its kernel ----------------===//
//
// Each code generator lists its ops in one OpLoweringTable: op class ->
// the generator method that lowers it, and optionally a legality check (the
// attribute values its kernels lack). Adding an op to a backend is one
// method and one `add` line; an op missing from a table is reported by name,
// never silently skipped. Before any code is generated, whyNot() of every op
// of @forward is asked (codegen::checkLowerable), so a model a backend cannot
// lower fails with one line naming the op and attribute. Both the CPU and the
// CUDA generators use it.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_CODEGEN_OPLOWERING_H
#define ENCC_COMPILER_CODEGEN_OPLOWERING_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <string>

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

  /// Refuses OpT where `why` says so: "" when this backend can lower the op,
  /// else the reason (what attribute value its kernels lack).
  template <typename OpT> OpLoweringTable &check(std::string (*why)(OpT)) {
    checks_[mlir::TypeID::get<OpT>()] = [why](mlir::Operation *op) { return why(llvm::cast<OpT>(op)); };
    return *this;
  }
  /// The same for every one of OpTs, with one function taking the Operation.
  template <typename... OpTs> OpLoweringTable &checkAll(std::string (*why)(mlir::Operation *)) {
    (checks_.try_emplace(mlir::TypeID::get<OpTs>(), why), ...);
    return *this;
  }

  /// The lowering of `op`'s class, or null.
  const Fn *lookup(mlir::Operation *op) const {
    auto it = table_.find(op->getName().getTypeID());
    return it == table_.end() ? nullptr : &it->second;
  }

  /// "" when `op` can be lowered, else why not.
  std::string whyNot(mlir::Operation *op) const {
    if (!lookup(op))
      return "is an unsupported op (no kernel in this backend)";
    auto it = checks_.find(op->getName().getTypeID());
    return it == checks_.end() ? std::string() : it->second(op);
  }

private:
  llvm::DenseMap<mlir::TypeID, Fn> table_;
  llvm::DenseMap<mlir::TypeID, std::function<std::string(mlir::Operation *)>> checks_;
};

} // namespace encc::codegen

#endif // ENCC_COMPILER_CODEGEN_OPLOWERING_H
