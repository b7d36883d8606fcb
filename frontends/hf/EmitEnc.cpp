//===- EmitEnc.cpp - ModelConfig -> enc dialect @forward ------------------===//
//
// Builds @forward(ids, lengths[, type_ids]): every weight first (one enc.weight per
// tensor), then the family's encoder (ModelFamily::emitEncoder) and the
// optional pooling and normalisation, which every family shares.
//
//===----------------------------------------------------------------------===//
#include "frontends/EmitPooling.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"
#include "ir/EncDialect.h"
#include "ir/EncOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace encc;
using namespace mlir;

static OwningOpRef<ModuleOp> emitModule(MLIRContext &ctx, const ModelConfig &c, const std::string &source) {
  OpBuilder b(&ctx);
  Location fileLoc = FileLineColLoc::get(&ctx, source, 0, 0);
  auto at = [&](const char *name) -> Location { return NameLoc::get(b.getStringAttr(name), fileLoc); };
  ModuleOp module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module.getBody());
  auto idsTy = RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic}, b.getI32Type());
  auto lenTy = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  auto hiddenTy = RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, c.hidden}, b.getF32Type());
  auto pooledTy = RankedTensorType::get({ShapedType::kDynamic, c.embeddingDim()}, b.getF32Type());
  auto scoresTy = RankedTensorType::get({ShapedType::kDynamic, c.numLabels}, b.getF32Type());
  SmallVector<Type> results{hiddenTy};
  if (c.pooling != Pooling::None)
    results.push_back(pooledTy);
  else if (c.classifies())
    results.push_back(scoresTy);
  // bge-m3's heads, in ModelDescription::tokenHeads' order.
  if (c.sparseHead)
    results.push_back(RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, 1}, b.getF32Type()));
  if (c.colbertDim)
    results.push_back(RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, c.colbertDim}, b.getF32Type()));
  if (c.colbert) // a ColBERT checkpoint's token vectors, its only output after the hidden states
    results.push_back(RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, c.colbert->dim()},
                                            b.getF32Type()));
  SmallVector<Type> args{idsTy, lenTy};
  if (c.hasTypeIds())
    args.push_back(idsTy);
  auto func = b.create<func::FuncOp>(at("forward"), "forward", b.getFunctionType(args, results));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value lengths = entry->getArgument(1);
  Value typeIds = c.hasTypeIds() ? entry->getArgument(2) : Value();

  EncoderEmitter e(b, c, fileLoc, entry->getArgument(0), lengths, typeIds);
  e.declareWeights(expectedWeights(c));
  SmallVector<Value> outs{c.family->emitEncoder(e)};
  Value pooledFrom = outs[0];
  if (c.pooling == Pooling::Splade) {
    // SPLADE pools the masked-LM logits: transform (dense, the activation,
    // norm), then the decoder tied to the word embeddings, with its bias.
    const MlmHeadNames head = llvm::cantFail(c.family->mlmHeadNames(c)); // importHFModel checked it
    Value t = e.layernorm(e.gelu(e.linear(pooledFrom, head.dense, c.hidden), head.dense), head.norm);
    auto logitsTy = RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, c.vocab}, b.getF32Type());
    pooledFrom = b.create<enc::LinearOp>(at("cls.predictions.decoder"), logitsTy, t,
                                         e.weight(c.family->weightNames(c).word + ".weight"), e.weight(head.bias),
                                         enc::Epilogue::none);
  }
  // sentence-transformers' Dense modules go between the pooling and the
  // normalisation.
  if (Value p = emitPooling(b, fileLoc, c.pooling, c.normalize && c.dense.empty(), pooledFrom, lengths)) {
    for (size_t i = 0; i < c.dense.size(); ++i) {
      const std::string mod = denseModuleName(i);
      p = e.linear(p, mod, c.dense[i].out);
      if (c.dense[i].tanh)
        p = e.tanh(p, mod);
    }
    if (c.normalize && !c.dense.empty())
      p = b.create<enc::L2NormOp>(at("normalize"), p.getType(), p);
    outs.push_back(p);
  } else if (c.classifies()) {
    outs.push_back(c.family->emitClassifier(e, outs[0]));
  }
  // FlagEmbedding's relu on the sparse weights is the runtime's: it keeps a
  // token's weight only when positive.
  if (c.sparseHead)
    outs.push_back(e.linear(outs[0], "sparse_linear", 1));
  if (c.colbertDim) {
    Value v = e.linear(outs[0], "colbert_linear", c.colbertDim);
    outs.push_back(b.create<enc::L2NormOp>(at("colbert_linear.normalize"), v.getType(), v));
  }
  if (c.colbert) {
    Value v = outs[0];
    for (size_t i = 0; i < c.colbert->dense.size(); ++i) {
      const std::string mod = colbertDenseName(i);
      v = e.linear(v, mod, c.colbert->dense[i].out);
      if (c.colbert->dense[i].tanh)
        v = e.tanh(v, mod);
    }
    outs.push_back(b.create<enc::L2NormOp>(at("colbert.normalize"), v.getType(), v));
  }
  b.create<func::ReturnOp>(at("forward"), outs);
  return module;
}

llvm::Expected<OwningOpRef<ModuleOp>>
encc::buildEncModule(MLIRContext &ctx, const ModelConfig &config, const std::string &sourceName) {
  ctx.loadDialect<func::FuncDialect, enc::EncDialect>();
  if (!config.family)
    return hfError(sourceName + ": model_type '" + config.modelType + "' is not supported (supported: " +
                   supportedModelTypes() + ")");
  if (config.hidden <= 0 || config.heads <= 0 || (config.headDim == 0 && config.hidden % config.heads != 0))
    return hfError(sourceName + ": hidden size " + llvm::Twine(config.hidden) +
                   " is not a positive multiple of the head count " + llvm::Twine(config.heads));
  if (config.classifies())
    if (auto head = config.family->classifierNames(config); !head)
      return head.takeError();
  OwningOpRef<ModuleOp> module = emitModule(ctx, config, sourceName);
  std::string diag;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    if (failed(verify(*module)))
      return hfError(sourceName + ": internal error: the emitted enc module does not verify: " + diag);
  }
  return std::move(module);
}
