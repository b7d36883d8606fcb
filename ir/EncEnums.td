//===- EncEnums.td - Closed sets of the enc dialect -------------*- tablegen -*-===//
//
// Every attribute whose values form a closed set is an enum attribute: the
// parser rejects anything else, and C++ compares enum values, not strings.
// Printed as `#enc.epilogue<gelu>`, `#enc.approximation<tanh>`,
// `#enc.pooling<mean>`, `#enc.padding<right>`, `#enc.binary<sub>`, `#enc.unary<erf>`,
// `#enc.glu<geglu>`, `#enc.rotary<half>`.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_ENUMS_TD
#define ENC_ENUMS_TD

include "ir/EncDialect.td"
include "mlir/IR/EnumAttr.td"

def Enc_Epilogue : I32EnumAttr<"Epilogue",
    "what a Linear applies to its result elementwise", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"gelu", 1>,      // erf GELU
      I32EnumAttrCase<"gelu_tanh", 2>  // tanh-approximated GELU (gelu_new)
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_EpilogueAttr : EnumAttr<Enc_Dialect, Enc_Epilogue, "epilogue"> {
  let assemblyFormat = "`<` $value `>`";
}

def Enc_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "the form of GELU", [
      I32EnumAttrCase<"none", 0>, // 0.5·x·(1 + erf(x/√2))
      I32EnumAttrCase<"tanh", 1>  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_GeluApproximationAttr
    : EnumAttr<Enc_Dialect, Enc_GeluApproximation, "approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Enc_GluKind : I32EnumAttr<"GluKind",
    "the activation of a gated linear unit's first half", [
      I32EnumAttrCase<"geglu", 0>,      // erf GELU (ModernBERT's "gelu")
      I32EnumAttrCase<"geglu_tanh", 1>, // tanh-approximated GELU
      I32EnumAttrCase<"swiglu", 2>      // SiLU, x·sigmoid(x) (Qwen3, Llama-style)
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_GluKindAttr : EnumAttr<Enc_Dialect, Enc_GluKind, "glu"> {
  let assemblyFormat = "`<` $value `>`";
}

def Enc_RotaryLayout : I32EnumAttr<"RotaryLayout",
    "which dims of a head rotary embedding rotates together", [
      I32EnumAttrCase<"half", 0>,       // f with f + R/2 (rotate_half: GPT-NeoX, ModernBERT, Qwen)
      I32EnumAttrCase<"interleaved", 1> // 2f with 2f + 1 (GPT-J)
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_RotaryLayoutAttr : EnumAttr<Enc_Dialect, Enc_RotaryLayout, "rotary"> {
  let assemblyFormat = "`<` $value `>`";
}

def Enc_PoolingMode : I32EnumAttr<"PoolingMode",
    "how token states become one sentence embedding", [
      I32EnumAttrCase<"cls", 0>,  // token 0
      I32EnumAttrCase<"mean", 1>, // the mean of the valid tokens
      I32EnumAttrCase<"last", 2>, // the last valid token (lengths[b] - 1)
      I32EnumAttrCase<"splade", 3> // max over the valid tokens of log(1 + relu(x)) (SPLADE)
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_PoolingModeAttr : EnumAttr<Enc_Dialect, Enc_PoolingMode, "pooling"> {
  let assemblyFormat = "`<` $value `>`";
}

def Enc_Padding : I32EnumAttr<"Padding",
    "which keys of a padded sequence are valid", [
      I32EnumAttrCase<"right", 0>, // key j of sequence b is valid iff j < lengths[b]
      I32EnumAttrCase<"left", 1>   // named so the verifier can refuse it clearly
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_PaddingAttr : EnumAttr<Enc_Dialect, Enc_Padding, "padding"> {
  let assemblyFormat = "`<` $value `>`";
}

// The kinds of the import-level arithmetic ops (enc.binary, enc.unary) that
// frontends of decomposed graphs (ONNX) emit and the recognition passes fold
// into the ops above; no backend runs them.
def Enc_BinaryKind : I32EnumAttr<"BinaryKind",
    "elementwise arithmetic with broadcasting", [
      I32EnumAttrCase<"add", 0>,
      I32EnumAttrCase<"sub", 1>,
      I32EnumAttrCase<"mul", 2>,
      I32EnumAttrCase<"div", 3>,
      I32EnumAttrCase<"pow", 4>
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_BinaryKindAttr : EnumAttr<Enc_Dialect, Enc_BinaryKind, "binary"> {
  let assemblyFormat = "`<` $value `>`";
}

def Enc_UnaryKind : I32EnumAttr<"UnaryKind",
    "elementwise function", [
      I32EnumAttrCase<"sqrt", 0>,
      I32EnumAttrCase<"erf", 1>,
      I32EnumAttrCase<"tanh", 2>
    ]> {
  let cppNamespace = "::mlir::enc";
  let genSpecializedAttr = 0;
}
def Enc_UnaryKindAttr : EnumAttr<Enc_Dialect, Enc_UnaryKind, "unary"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ENC_ENUMS_TD
