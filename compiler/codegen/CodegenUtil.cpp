//===- CodegenUtil.cpp - Helpers shared by the CPU and CUDA generators ----===//
#include "compiler/codegen/CodegenUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace encc::codegen {

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string locString(mlir::Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return os.str();
}

llvm::Error opErrorIn(llvm::StringRef who, mlir::Operation *op,
                      const llvm::Twine &msg) {
  return makeError(who + ": '" + op->getName().getStringRef() + "' at " +
                   locString(op->getLoc()) + ": " + msg);
}

uint32_t addPlanValue(Plan &plan, std::string name, ValueKind kind, DType dtype,
                      std::vector<int64_t> shape) {
  PlanValue v;
  v.name = std::move(name);
  v.kind = kind;
  v.dtype = dtype;
  v.shape = std::move(shape);
  plan.values.push_back(std::move(v));
  return plan.values.size() - 1;
}

llvm::Expected<WeightInfo> checkWeightOp(mlir::enc::WeightOp op,
                                         mlir::enc::WeightStore &store,
                                         llvm::StringRef who) {
  std::string name = op.getName().str();
  auto fail = [&](const llvm::Twine &msg) {
    return opErrorIn(who, op, "weight \"" + name + "\" " + msg);
  };
  auto type = mlir::cast<mlir::RankedTensorType>(op.getType());
  if (!type.hasStaticShape())
    return fail("must have a static shape");
  mlir::enc::WeightTensor *w = store.find(name);
  if (!w)
    return fail("is not in the weight store");
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (w->shape != shape) {
    std::string have = "[", want;
    for (size_t i = 0; i < w->shape.size(); ++i)
      have += (i ? ", " : "") + std::to_string(w->shape[i]);
    have += "]";
    llvm::raw_string_ostream(want) << type;
    return fail("has shape " + have + " in the weight store but the IR expects " + want);
  }
  mlir::Type et = type.getElementType();
  mlir::enc::WeightType want;
  if (et.isF32())
    want = mlir::enc::WeightType::F32;
  else if (et.isInteger(8))
    want = mlir::enc::WeightType::I8;
  else if (et.isInteger(32))
    want = mlir::enc::WeightType::I32;
  else if (et.isBF16())
    want = mlir::enc::WeightType::BF16;
  else
    return fail("has an unsupported element type");
  // A checkpoint's f16 / bf16 tensor that no pass gave another form becomes
  // the f32 the kernels read, converted as the artifact is written.
  if (want == mlir::enc::WeightType::F32 && mlir::enc::isStoredFloat(w->type))
    *w = w->widenedToF32();
  if (w->type != want)
    return fail(std::string("has element type ") + mlir::enc::weightTypeName(w->type) + " in the weight store but " +
                mlir::enc::weightTypeName(want) + " in the IR");
  return WeightInfo{name, planDType(want), shape};
}

DType planDType(mlir::enc::WeightType type) {
  switch (type) {
  case mlir::enc::WeightType::F32: return DType::F32;
  case mlir::enc::WeightType::I8: return DType::I8;
  case mlir::enc::WeightType::I32: return DType::I32;
  case mlir::enc::WeightType::F16: return DType::F16;
  case mlir::enc::WeightType::BF16: return DType::BF16;
  }
  return DType::F32;
}

llvm::Expected<mlir::func::FuncOp> forwardFunction(mlir::ModuleOp module,
                                                   llvm::StringRef who) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!func)
    return makeError(who + ": the module has no func.func @forward");
  if (func.getBody().getBlocks().size() != 1)
    return makeError(who + ": @forward must have exactly one block");
  if (func.getNumArguments() != 2 && func.getNumArguments() != 3)
    return makeError(who + ": @forward must take (ids, lengths[, type_ids]), got " +
                     llvm::Twine(func.getNumArguments()) + " arguments");
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto t = llvm::dyn_cast<mlir::RankedTensorType>(func.getArgument(i).getType());
    const int64_t rank = i == 1 ? 1 : 2;
    if (!t || !t.getElementType().isInteger(32) || t.getRank() != rank)
      return makeError(who + ": @forward argument " + llvm::Twine(i) + " (" +
                       kForwardArgNames[i] + ") must be a " +
                       (rank == 2 ? "tensor<?x?xi32>" : "tensor<?xi32>"));
  }
  return func;
}

llvm::Error forEachBodyOp(mlir::func::FuncOp func, llvm::function_ref<llvm::Error(mlir::Operation *)> visit,
                          llvm::DenseMap<mlir::Value, uint32_t> &ids) {
  for (mlir::Operation &op : func.getBody().front()) {
    auto group = llvm::dyn_cast<mlir::enc::FusionOp>(op);
    if (!group) {
      if (auto err = visit(&op))
        return err;
      continue;
    }
    mlir::Block &body = group.getBody().front();
    for (mlir::Operation &inner : body.without_terminator())
      if (auto err = visit(&inner))
        return err;
    for (auto [result, yielded] : llvm::zip(group.getResults(), body.getTerminator()->getOperands()))
      if (auto it = ids.find(yielded); it != ids.end()) {
        const uint32_t id = it->second; // (inserting may move the entry)
        ids[result] = id;
      }
  }
  return llvm::Error::success();
}

llvm::Error checkLowerable(mlir::ModuleOp module, llvm::StringRef target,
                           llvm::function_ref<std::string(mlir::Operation *)> whyNot) {
  auto forward = forwardFunction(module, target.str() + " codegen");
  if (!forward)
    return forward.takeError();
  llvm::DenseMap<mlir::Value, uint32_t> unused;
  return forEachBodyOp(*forward, [&](mlir::Operation *op) -> llvm::Error {
    if (llvm::isa<mlir::enc::WeightOp, mlir::func::ReturnOp>(op))
      return llvm::Error::success();
    std::string why = op->getDialect() && op->getDialect()->getNamespace() ==
                                              mlir::enc::EncDialect::getDialectNamespace()
                          ? whyNot(op)
                          : "is an unsupported op (not of the enc dialect)";
    if (why.empty())
      return llvm::Error::success();
    return llvm::createStringError("--target=%s: '%s' at %s %s", target.str().c_str(),
                                   op->getName().getStringRef().str().c_str(),
                                   locString(op->getLoc()).c_str(), why.c_str());
  }, unused);
}

void forEachGroupedPair(mlir::func::FuncOp func, llvm::function_ref<void(mlir::Operation *, mlir::Operation *)> fn) {
  func.walk([&](mlir::enc::FusionOp group) {
    for (mlir::Operation &consumer : group.getBody().front().without_terminator()) {
      if (consumer.getNumOperands() == 0)
        continue;
      mlir::Value x = consumer.getOperand(0);
      mlir::Operation *producer = x.getDefiningOp();
      if (producer && producer->getParentOp() == group && producer->getResult(0) == x)
        fn(producer, &consumer);
    }
  });
}

llvm::Error writeFile(const std::string &path, llvm::StringRef text) {
  if (auto ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)))
    return makeError("cannot create the directory of " + path + ": " + ec.message());
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return makeError("cannot write " + path + ": " + ec.message());
  os << text;
  os.close();
  if (os.has_error())
    return makeError("cannot write " + path + ": " + os.error().message());
  return llvm::Error::success();
}

llvm::Error writeWorkDir(const std::string &workDir,
                         const std::vector<EmbeddedFile> &files,
                         const std::string &srcPath, llvm::StringRef source) {
  if (auto ec = llvm::sys::fs::create_directories(workDir))
    return makeError("cannot create work directory " + workDir + ": " + ec.message());
  for (const EmbeddedFile &f : files)
    if (auto e = writeFile(workDir + "/" + f.path, f.text))
      return e;
  return writeFile(srcPath, source);
}

std::string firstLines(const std::string &path, int maxLines) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', maxLines + 1, false);
  std::string out;
  for (int i = 0; i < static_cast<int>(lines.size()) && i < maxLines; ++i)
    out += "\n  " + lines[i].str();
  if (static_cast<int>(lines.size()) > maxLines)
    out += "\n  ...";
  return out;
}

llvm::Error runCapturing(llvm::StringRef program,
                         const std::vector<std::string> &argv,
                         const std::string &outPath, const std::string &errPath,
                         llvm::StringRef what) {
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[3] = {
      std::nullopt, llvm::StringRef(outPath), llvm::StringRef(errPath)};
  std::string errMsg;
  bool failed = false;
  int rc = llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects, 0,
                                     0, &errMsg, &failed);
  if (failed || rc != 0)
    return makeError(what + " failed (" +
                     (failed ? errMsg : "exit code " + std::to_string(rc)) +
                     "): " + llvm::join(argv, " ") + firstLines(errPath, 20));
  return llvm::Error::success();
}

} // namespace encc::codegen
