//===- EncDialect.td - The enc dialect --------------------------*- tablegen -*-===//
//
// Tensor-level ops of a Transformer encoder (BERT/MiniLM): what the frontends
// emit, the passes rewrite and the CPU codegen turns into plan steps.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_DIALECT_TD
#define ENC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Enc_Dialect : Dialect {
  let name = "enc";
  let cppNamespace = "::mlir::enc";
  let summary = "Tensor ops of Transformer encoder models";
  let description = [{
    The `enc` dialect describes one encoder forward pass on value-semantics
    tensors. Batch and sequence dimensions are dynamic (`?`); model
    dimensions are static. Weights are referenced by name (`enc.weight`) and
    live in a `WeightStore` beside the module, never in the IR text; the
    dialect holds no state (the passes that create weights are handed the
    store, and count what they change in themselves). All ops are pure.
  }];
  let useDefaultAttributePrinterParser = 1;
  // Folding makes enc.constant (small dense f32 values) when it needs one.
  let hasConstantMaterializer = 1;
}

class Enc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Enc_Dialect, mnemonic, traits>;

#endif // ENC_DIALECT_TD
