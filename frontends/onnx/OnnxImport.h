//===- OnnxImport.h - ONNX model -> enc module + weights ------------------===//
//
// Lowers the graph of an ONNX encoder export (torch.onnx.export of a BERT-
// family model: decomposed or LayerNormalization, erf or tanh GELU) to the
// same `@forward(ids, lengths[, type_ids])` the Hugging Face frontend builds:
//
//  - shape arithmetic (Shape, Gather, Concat, Unsqueeze, Slice, Cast, ...)
//    is evaluated at import, with batch and sequence as symbols;
//  - `attention_mask` is followed through its casts and affine arithmetic
//    to the Add on the attention scores, which becomes `enc.mask` (the
//    runtime's key-padding mask; a mask that is not 0 on valid keys and very
//    negative on padded ones is refused);
//  - the Gathers of the word, position and token-type tables become one
//    `enc.embedding`; head reshapes and transposes become
//    `enc.split_heads` / `enc.merge_heads`; a MatMul with a constant [K, N]
//    becomes `enc.linear` over its [N, K] transpose;
//  - arithmetic becomes the import-level `enc.binary` / `enc.unary` /
//    `enc.reduce_mean` / `enc.constant`, which the recognition passes
//    (passes/Recognize*.cpp, LowerScalarArithmetic.cpp) turn into
//    LayerNorm, GELU, Linear biases, scales. One left over is an error
//    naming the ONNX node it came from.
//
// Tokenizer and pooling come from the files next to the model (or
// `tokenizerDir`): config.json + vocab.txt / tokenizer.json and the
// sentence-transformers layout, read as the HF frontend reads them.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_ONNX_ONNXIMPORT_H
#define ENCC_FRONTENDS_ONNX_ONNXIMPORT_H

#include "frontends/ImportedModel.h"
#include "frontends/onnx/OnnxModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace encc {

struct OnnxImportOptions {
  int64_t maxSeq = 0;       ///< 0 = sentence_bert_config.json, else the position table
  std::optional<Pooling> pooling; ///< unset = from the files beside the model
  int normalize = -1;       ///< -1 = from the files beside the model; 0/1 override
  std::string tokenizerDir; ///< "" = the model's folder
  bool allowNonFinite = false;
};

/// True when `path` names an ONNX file (ends in .onnx, case-insensitive).
bool isOnnxPath(const std::string &path);

/// Imports the ONNX file at `path`. Loads the func and enc dialects into `ctx`.
llvm::Expected<ImportedModel> importOnnxModel(mlir::MLIRContext &ctx, const std::string &path,
                                              const OnnxImportOptions &opts);

/// The lowering alone (no recognition passes, no tokenizer): for tests and
/// `enc-import --no-recognize`. `source` names the model in locations and errors.
llvm::Expected<ImportedModel> lowerOnnxGraph(mlir::MLIRContext &ctx, const onnx::Model &model,
                                             const std::string &source, const OnnxImportOptions &opts);

} // namespace encc

#endif // ENCC_FRONTENDS_ONNX_ONNXIMPORT_H
