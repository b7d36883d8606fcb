//===- CodegenUtil.h - Helpers shared by the CPU and CUDA code generators -===//
//
// Error construction, writing files into a work directory and running an
// external compiler (c++, nvcc) with its output captured in files.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_CODEGEN_CODEGENUTIL_H
#define ENCC_COMPILER_CODEGEN_CODEGENUTIL_H

#include "compiler/Plan.h"
#include "ir/EncOps.h"
#include "ir/WeightStore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace encc {

/// One file embedded into the compiler at build time (EmbedFiles.cmake).
struct EmbeddedFile {
  const char *path; ///< relative to the work dir, e.g. "encrt/kernel_abi.h"
  const char *text;
};

} // namespace encc

namespace encc::codegen {

/// A StringError with `msg`.
llvm::Error makeError(const llvm::Twine &msg);

/// `loc` as MLIR prints it.
std::string locString(mlir::Location loc);

/// "<who>: '<op name>' at <loc>: <msg>", e.g. who = "cpu codegen".
llvm::Error opErrorIn(llvm::StringRef who, mlir::Operation *op,
                      const llvm::Twine &msg);

/// Appends a value to `plan`; returns its id.
uint32_t addPlanValue(Plan &plan, std::string name, ValueKind kind, DType dtype,
                      std::vector<int64_t> shape);

/// An enc.weight op checked against the weight store.
struct WeightInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};

/// `op` checked against `store`: a static shape, present in the store with
/// that shape and the IR's element type (f32/i8/i32/bf16; an f16 or bf16
/// tensor the IR reads as f32 is replaced by its deferred widening here);
/// errors as opErrorIn(who, op, ...).
llvm::Expected<WeightInfo> checkWeightOp(mlir::enc::WeightOp op,
                                         mlir::enc::WeightStore &store,
                                         llvm::StringRef who);

/// The plan dtype of a stored weight's element type.
DType planDType(mlir::enc::WeightType type);

/// The plan names of @forward's arguments, in order (type_ids optional).
constexpr const char *kForwardArgNames[3] = {"ids", "lengths", "type_ids"};

/// The module's func.func @forward, checked to have one block and the
/// arguments (ids: tensor<?x?xi32>, lengths: tensor<?xi32>[, type_ids:
/// tensor<?x?xi32>]); errors start with "<who>: ".
llvm::Expected<mlir::func::FuncOp> forwardFunction(mlir::ModuleOp module,
                                                   llvm::StringRef who);

/// Calls `visit` on each op of @forward's body in order; an enc.fusion is
/// replaced by the ops of its body, after which each of the group's results
/// takes the plan value id (in `ids`) of the value its enc.yield names.
llvm::Error forEachBodyOp(mlir::func::FuncOp func, llvm::function_ref<llvm::Error(mlir::Operation *)> visit,
                          llvm::DenseMap<mlir::Value, uint32_t> &ids);

/// The backend's legality check, before anything is generated: every enc op
/// of @forward (and of its fusion groups) must be one `whyNot` accepts ("");
/// else one error line "--target=<target>: <op> at <loc> <reason>" for the
/// first that is not.
llvm::Error checkLowerable(mlir::ModuleOp module, llvm::StringRef target,
                           llvm::function_ref<std::string(mlir::Operation *)> whyNot);

/// Calls `fn(producer, consumer)` for each pair of ops in one enc.fusion
/// where `consumer`'s first operand is `producer`'s first result: the chains
/// enc-form-fusion-groups made, which a backend may compute in one step.
void forEachGroupedPair(mlir::func::FuncOp func, llvm::function_ref<void(mlir::Operation *, mlir::Operation *)> fn);

/// Writes `text` to `path`, creating its directory.
llvm::Error writeFile(const std::string &path, llvm::StringRef text);

/// The first `maxLines` lines of a file, each on a new line indented by two
/// spaces ("\n  ..." when there are more); "" when it cannot be read.
std::string firstLines(const std::string &path, int maxLines);

/// Creates `workDir`, writes `files` into it and `source` to `srcPath`.
llvm::Error writeWorkDir(const std::string &workDir,
                         const std::vector<EmbeddedFile> &files,
                         const std::string &srcPath, llvm::StringRef source);

/// Runs `program` with `argv` (argv[0] names it), stdout and stderr
/// redirected to `outPath` and `errPath`. On failure: "<what> failed (<why>):
/// <argv joined><the first 20 lines of errPath>".
llvm::Error runCapturing(llvm::StringRef program,
                         const std::vector<std::string> &argv,
                         const std::string &outPath, const std::string &errPath,
                         llvm::StringRef what);

} // namespace encc::codegen

#endif // ENCC_COMPILER_CODEGEN_CODEGENUTIL_H
