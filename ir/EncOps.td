//===- EncOps.td - Operations of the enc dialect ----------------*- tablegen -*-===//
//
// One op per row of the IR table in docs/architecture.md. Shapes are checked
// by the C++ verifiers in EncOps.cpp; a dynamic dim (`?`) matches anything.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_OPS_TD
#define ENC_OPS_TD

include "ir/EncDialect.td"
include "ir/EncEnums.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Enc_F32Tensor : RankedTensorOf<[F32]>;
def Enc_I32Tensor : RankedTensorOf<[I32]>;
def Enc_I8Tensor : RankedTensorOf<[I8]>;
def Enc_U8Tensor : RankedTensorOf<[UI8]>;
def Enc_BF16Tensor : RankedTensorOf<[BF16]>;
def Enc_LinearOperand : RankedTensorOf<[F32, BF16]>;
def Enc_WordTable : RankedTensorOf<[F32, I8, BF16]>;
def Enc_WeightTensor : RankedTensorOf<[F32, I8, I32, BF16]>;

//===----------------------------------------------------------------------===//
// Weights and embeddings
//===----------------------------------------------------------------------===//

def Enc_WeightOp : Enc_Op<"weight", [Pure]> {
  let summary = "a named weight of the module's WeightStore";
  let description = [{
    Produces the weight tensor stored under `name` in the `WeightStore` that
    travels with the module. The shape must be fully static.

    Example:

    ```mlir
    %w = enc.weight "bert.encoder.layer.0.attention.self.query.weight" : tensor<384x384xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Enc_WeightTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Enc_EmbeddingOp : Enc_Op<"embedding", [Pure, AttrSizedOperandSegments]> {
  let summary = "word + position + token-type embedding lookup";
  let description = [{
    `result[b, s, :] = word[ids[b, s]] + pos[s + position_offset] + type[t]`
    with `t = type_ids[b, s]` when the optional `type_ids` operand (`[B, S]`
    i32, the segment of a text pair: 0 for the first text, 1 for the second)
    is given, else `t = 0`. `ids` is `[B, S]` i32; the three tables are
    `[rows, H]` with the same `H`; the result is `[B, S, H]`. Ids and type ids
    outside their table are clamped to it by the kernels (the runtime refuses
    them before a run).

    `position_pad_id = p` (RoBERTa, XLM-R, CamemBERT, MPNet: transformers'
    `create_position_ids_from_input_ids`): the position of token `s` is
    `p + (the number of ids != p among ids[b, 0..s])` when `ids[b, s] != p`,
    and `p` when it is the pad id itself, instead of `s + position_offset`
    (the same for text without a literal pad token inside it).

    The word table may be int8 (written by `enc-quantize-linear-int8`): then
    the optional `word_scale` operand `[rows]` f32 is required and the gather
    dequantises row-wise, `word[v, :] = float(word_q[v, :]) * word_scale[v]`
    (symmetric, no zero point); the computation stays float. The word table
    may be bf16 (written by `enc-convert-linear-bf16` with `embeddings`): its
    rows are widened exactly and the sum is f32. An f32 or bf16 word table
    takes no `word_scale`.

    Example:

    ```mlir
    %e = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : i64}
        : (tensor<?x?xi32>, tensor<30522x384xf32>, tensor<512x384xf32>, tensor<2x384xf32>)
        -> tensor<?x?x384xf32>
    %e = enc.embedding %ids, %word_q, %pos, %type word_scale %word_s {position_offset = 0 : i64}
        : (tensor<?x?xi32>, tensor<30522x384xi8>, tensor<512x384xf32>, tensor<2x384xf32>, tensor<30522xf32>)
        -> tensor<?x?x384xf32>
    %e = enc.embedding %ids, %word, %pos, %type type_ids %types {position_offset = 0 : i64}
        : (tensor<?x?xi32>, tensor<30522x384xf32>, tensor<512x384xf32>, tensor<2x384xf32>, tensor<?x?xi32>)
        -> tensor<?x?x384xf32>
    ```
  }];
  let arguments = (ins Enc_I32Tensor:$ids, Enc_WordTable:$word,
                   Enc_F32Tensor:$pos, Enc_F32Tensor:$token_type,
                   I64Attr:$position_offset,
                   Optional<Enc_F32Tensor>:$word_scale,
                   Optional<Enc_I32Tensor>:$type_ids,
                   OptionalAttr<I64Attr>:$position_pad_id);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $ids `,` $word `,` $pos `,` $token_type (`word_scale` $word_scale^)?
    (`type_ids` $type_ids^)? attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    // The f32 form (no word_scale), as the frontends build it; `type_ids`
    // may be null (every token of type 0); `position_pad_id` < 0: none.
    OpBuilder<(ins "Type":$result, "Value":$ids, "Value":$word, "Value":$pos,
                   "Value":$token_type, "uint64_t":$position_offset,
                   "Value":$type_ids, CArg<"int64_t", "-1">:$position_pad_id), [{
      build($_builder, $_state, result, ids, word, pos, token_type,
            position_offset, Value(), type_ids,
            position_pad_id >= 0 ? $_builder.getI64IntegerAttr(position_pad_id) : IntegerAttr());
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the word table is int8 (with a `word_scale` operand).
    bool isQuantized() { return static_cast<bool>(getWordScale()); }
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Enc_LinearOp : Enc_Op<"linear", [Pure]> {
  let summary = "x · Wᵀ + b over the last axis, with an optional fused epilogue";
  let description = [{
    `x` is `[..., K]`, `W` is `[N, K]` (PyTorch `nn.Linear` layout), the
    optional `bias` is `[N]`; the result is `[..., N]` with the leading dims
    of `x`. `epilogue` (`none`, `gelu`, `gelu_tanh`) is applied to the result
    elementwise; frontends emit `none` and fusion passes set the others.

    `x` and `W` are both f32 or both bf16 (`enc-convert-linear-bf16`): bf16
    operands are multiplied exactly and summed in f32; the bias stays f32.
    The result is f32, or, for bf16 operands, bf16: the f32 result (epilogue
    included) rounded to nearest, ties to even, as `enc.to_bf16` rounds it
    (`enc-convert-linear-bf16` folds a rounding that is the result's only
    user into the op, so the kernel writes bf16).

    Example:

    ```mlir
    %q = enc.linear %x, %w, %b
        : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
    %h = enc.linear %x, %w, %b {epilogue = #enc.epilogue<gelu>}
        : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
    %n = enc.linear %x, %w : (tensor<?x?x384xf32>, tensor<384x384xf32>) -> tensor<?x?x384xf32>
    %b = enc.linear %xb, %wb, %b
        : (tensor<?x?x384xbf16>, tensor<1536x384xbf16>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
    %r = enc.linear %xb, %wb, %b {epilogue = #enc.epilogue<gelu>}
        : (tensor<?x?x384xbf16>, tensor<1536x384xbf16>, tensor<1536xf32>) -> tensor<?x?x1536xbf16>
    ```
  }];
  let arguments = (ins Enc_LinearOperand:$x, Enc_LinearOperand:$weight,
                   Optional<Enc_F32Tensor>:$bias,
                   DefaultValuedAttr<Enc_EpilogueAttr, "::mlir::enc::Epilogue::none">:$epilogue);
  let results = (outs Enc_LinearOperand:$result);
  let assemblyFormat = [{
    $x `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_ToBf16Op : Enc_Op<"to_bf16", [Pure]> {
  let summary = "rounds f32 activations to bf16 (nearest, ties to even)";
  let description = [{
    `result` has the shape of `x`; each element is `x` rounded to the
    nearest bf16, ties to even (NaN stays NaN, overflow gives inf):
    `toBf16Bits` of `enc_bf16.h`. The input of bf16 `enc.linear`s.

    Example:

    ```mlir
    %xb = enc.to_bf16 %x : tensor<?x?x384xf32> -> tensor<?x?x384xbf16>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x);
  let results = (outs Enc_BF16Tensor:$result);
  let assemblyFormat = [{
    $x attr-dict `:` type($x) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Enc_QuantizeOp : Enc_Op<"quantize", [Pure]> {
  let summary = "per-token u8 quantisation of activations (zero point 128)";
  let description = [{
    `x` is `[..., K]` f32. Each row (token) `m` gets one scale and K u8 values:

    `s_m = max_k |x[m, k]| / 127`,
    `q[m, k] = clamp(round_half_even(x[m, k] / s_m) + 128, 0, 255)`
    (all-zero rows: `s_m = 0`, `q = 128`) - `quantizeRowQ8` of
    `enc_qgemm.h`. `values` has the shape of `x` (ui8); `scales` has the
    leading dims of `x` (`[...]`, one per row).

    With `static_scale` (calibration) every row uses that scale instead of
    its own (values outside `+-127 * static_scale` saturate); `scales` is
    still produced and holds `static_scale` in every entry.

    Example:

    ```mlir
    %xq, %xs = enc.quantize %x : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
    %yq, %ys = enc.quantize %y {static_scale = 5.000000e-02 : f32}
        : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, OptionalAttr<F32Attr>:$static_scale);
  let results = (outs Enc_U8Tensor:$values, Enc_F32Tensor:$scales);
  let assemblyFormat = [{
    $x attr-dict `:` type($x) `->` `(` type($values) `,` type($scales) `)`
  }];
  let hasVerifier = 1;
}

def Enc_QLinearOp : Enc_Op<"qlinear", [Pure]> {
  let summary = "int8 linear: u8 activations x s8 weights, dequantised, with epilogue";
  let description = [{
    The int8 form of `enc.linear`. `x` is `[..., K]` ui8 (zero point 128)
    with per-row scales `x_scale` `[...]` (from `enc.quantize`), `weight`
    is `[N, K]` i8 (symmetric per output channel) with scales `w_scale`
    `[N]`, the optional `bias` is `[N]` f32; the result is `[..., N]` f32:

    `acc[m, n] = sum_k x[m, k] * weight[n, k]` (int32),
    `y[m, n] = epilogue(float(acc - 128 * sum_k weight[n, k]) * x_scale[m] * w_scale[n] + bias[n])`.

    `epilogue` is as for `enc.linear` (`none`, `gelu`, `gelu_tanh`).
    `w_scale_min` / `w_scale_max` summarise the per-channel weight scales so
    the textual IR shows them without dumping them (informational; absent
    when the pass ran without a WeightStore).

    Example:

    ```mlir
    %h = enc.qlinear %xq, %xs, %wq, %ws, %b {epilogue = #enc.epilogue<gelu>, w_scale_max = 2.1e-03 : f32, w_scale_min = 4.0e-04 : f32}
        : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<1536x384xi8>, tensor<1536xf32>, tensor<1536xf32>)
        -> tensor<?x?x1536xf32>
    ```
  }];
  let arguments = (ins Enc_U8Tensor:$x, Enc_F32Tensor:$x_scale,
                   Enc_I8Tensor:$weight, Enc_F32Tensor:$w_scale,
                   Optional<Enc_F32Tensor>:$bias,
                   DefaultValuedAttr<Enc_EpilogueAttr, "::mlir::enc::Epilogue::none">:$epilogue,
                   OptionalAttr<F32Attr>:$w_scale_min,
                   OptionalAttr<F32Attr>:$w_scale_max);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $x `,` $x_scale `,` $weight `,` $w_scale (`,` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_MatmulOp : Enc_Op<"matmul", [Pure]> {
  let summary = "batched matrix product over the leading dims";
  let description = [{
    `a` is `[..., M, K]`; `b` is `[..., K, N]`, or `[..., N, K]` with
    `transpose_b`; the result is `[..., M, N]`. Batch dims of `a`, `b` and the
    result must agree.

    Example (attention scores, then context):

    ```mlir
    %s = enc.matmul %q, %k {transpose_b}
        : (tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x?xf32>
    %c = enc.matmul %p, %v
        : (tensor<?x12x?x?xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x32xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$a, Enc_F32Tensor:$b, UnitAttr:$transpose_b);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$a `,` $b attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  // matmul(scale(a, f), b) -> scale(matmul(a, b), f): a scale on Q (DistilBERT
  // divides Q by √d) moves onto the scores, where the attention fusion takes it.
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise and normalisation
//===----------------------------------------------------------------------===//

def Enc_AddOp : Enc_Op<"add", [Pure, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "elementwise addition of two same-typed tensors";
  let description = [{
    Example (residual connection):

    ```mlir
    %r = enc.add %a, %b : tensor<?x?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$lhs, Enc_F32Tensor:$rhs);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Enc_ScaleOp : Enc_Op<"scale", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "multiplication by a constant factor";
  let description = [{
    `result = x * factor`.

    Example:

    ```mlir
    %s = enc.scale %x {factor = 0.176776692 : f32} : tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, F32Attr:$factor);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  // scale(x, 1) -> x; scale(scale(x, a), b) -> scale(x, a*b).
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Enc_DivOp : Enc_Op<"div", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "division by a constant divisor";
  let description = [{
    `result = x / divisor` (what ONNX-style frontends emit for the attention
    scale `1/sqrt(d)`). Canonicalizes to `enc.scale` by `1/divisor`.

    Example:

    ```mlir
    %s = enc.div %x {divisor = 5.65685415 : f32} : tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, F32Attr:$divisor);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Enc_MaskOp : Enc_Op<"mask", [Pure]> {
  let summary = "additive key-padding mask on attention scores";
  let description = [{
    `scores` is `[B, heads, S, S]`, `lengths` is `[B]` i32. Every key column
    `j >= lengths[b]` becomes `-inf`; other entries pass through. The result
    has the type of `scores`.

    `padding` names the convention: `#enc.padding<right>` (the default and the only one
    accepted today) means key `j` of sequence `b` is valid iff
    `j < lengths[b]`. Left padding or arbitrary 0/1 masks are rejected by the
    verifier rather than computed wrongly.

    Example:

    ```mlir
    %m = enc.mask %s, %lengths : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$scores, Enc_I32Tensor:$lengths,
                   DefaultValuedAttr<Enc_PaddingAttr, "::mlir::enc::Padding::right">:$padding);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $scores `,` $lengths attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_SoftmaxOp : Enc_Op<"softmax", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "softmax over the last axis";
  let description = [{
    Example:

    ```mlir
    %p = enc.softmax %m : tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Enc_ScaleMaskSoftmaxOp : Enc_Op<"scale_mask_softmax", [Pure]> {
  let summary = "fused scale, key-padding mask and softmax over attention scores";
  let description = [{
    `scores` is `[B, heads, S, S]`, `lengths` is `[B]` i32; the result has
    the type of `scores`:
    `result[b, h, i, j] = softmax_j(scale * scores[b, h, i, j])` over the
    valid keys `j < lengths[b]`, and exactly `0` for padded keys. Same as
    `enc.softmax(enc.mask(enc.scale(scores, scale), lengths))`.
    `padding` must be `#enc.padding<right>` (see `enc.mask`).

    Example:

    ```mlir
    %p = enc.scale_mask_softmax %s, %lengths {padding = #enc.padding<right>, scale = 0.176776692 : f32}
        : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$scores, Enc_I32Tensor:$lengths,
                   F32Attr:$scale, Enc_PaddingAttr:$padding);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $scores `,` $lengths attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_RelativePositionBiasOp : Enc_Op<"relative_position_bias",
                                        [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "bucketed relative position bias added to attention scores (MPNet)";
  let description = [{
    `scores` is `[B, heads, S, S]`, `table` is `[num_buckets, heads]` (an
    `enc.weight`; `num_buckets` static and even):
    `result[b, h, i, j] = scores[b, h, i, j] + table[bucket(j - i), h]`, with
    `bucket` the bidirectional bucketing of transformers' MPNet
    (`relative_position_bucket`, computed in f32 as it does): half the
    buckets for keys before the query, half for keys after; distances below
    `num_buckets / 4` exact, longer ones on a log scale up to `max_distance`.
    The bias depends on `j - i` only, so packing sequences does not change it.

    Example:

    ```mlir
    %r = enc.relative_position_bias %s, %table {max_distance = 128 : i64}
        : (tensor<?x12x?x?xf32>, tensor<32x12xf32>) -> tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$scores, Enc_F32Tensor:$table, I64Attr:$max_distance);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $scores `,` $table attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_AttentionOp : Enc_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "fused multi-head self-attention on merged-head tensors";
  let description = [{
    Scaled dot-product attention with a key-padding mask, on tensors in the
    merged `[B, S, H]` layout (split/merge heads absorbed), `H = heads * D`:

    `out[b, s, h*D + d] = sum_j p_j * v[b, j, h*D + d]` with
    `p = softmax_j(scale * <q[b, s, hD:(h+1)D], k[b, j, hD:(h+1)D]>)` over
    the valid keys `j < lengths[b]` (`padding = #enc.padding<right>`).

    `inputs` is either `q, k, v` (each `[B, S, H]`) or one packed `qkv`
    `[B, S, 3H]` with `q = qkv[..., 0:H]`, `k = qkv[..., H:2H]`,
    `v = qkv[..., 2H:3H]`. The result is `[B, S, H]`.

    `position_bias` (with `max_distance`): an `enc.relative_position_bias`
    table `[num_buckets, heads]` whose bias is added to the scaled scores
    before the softmax, `softmax_j(scale * <q_s, k_j> + table[bucket(j - s), h])`.

    `num_kv_heads = g` (grouped-query attention, Qwen3 / Llama-style; absent:
    `num_heads`): k and v hold `g` heads of the same head dim `D = H / heads`,
    `[B, S, g * D]`, and query head `h` attends with key/value head
    `h / (heads / g)`; `g` divides `num_heads`; three inputs only. `H` is the
    query width, independent of the model's hidden size (Qwen3's
    `head_dim * heads`).

    `alibi` (ALiBi, Press et al.; JinaBERT / jina-embeddings-v2): head `h`
    adds `-m_h * |s - j|` to the scaled score of key `j` for query `s`, with
    the standard slopes of `num_heads` heads: `m_h = 2^(-8 (h + 1) / n)` for
    `n` a power of two, else the `P` slopes of the power of two `P` below
    `n` followed by the even-indexed slopes of `2P` heads (the first
    `n - P`). Not with `position_bias`.

    `window = w` (a local layer, ModernBERT's sliding window of `2w` keys):
    query `s` sees only the valid keys `j` with `|s - j| <= w`; `causal`
    (decoder-style embedders): only the keys `j <= s`; both: `s - w <= j <= s`.
    Without them, every valid key.

    `bf16_pv` (set by `enc-convert-attention-bf16`): `sum_j p_j v_j` is a bf16
    dot product, `p_j` and `v` rounded to bf16 (nearest, ties to even), exact
    products, f32 sums; `<q, k>`, the scale and the softmax stay f32.

    `bf16_amx` (set by `enc-convert-attention-bf16-amx`, the int8
    tier's): on CPUs with AMX tiles (the x86-64-v4-amx code object) `<q, k>`
    is the sum of three bf16 tile products of q's and k's bf16 high and low
    parts (hi·hi + hi·lo + lo·hi: within ~2^-17 of |q||k|) and `sum_j p_j v_j`
    as with `bf16_pv`, f32 sums; on every other code object and device the
    attention is f32. Not with `bf16_pv`.

    The result is f32, or bf16: the f32 result rounded to nearest, ties to
    even, as `enc.to_bf16` rounds it (`enc-convert-linear-bf16` folds a
    rounding that is the result's only user into the op).

    Example:

    ```mlir
    %o = enc.attention %q, %k, %v, %lengths {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
        : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
    %p = enc.attention %qkv, %lengths {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
        : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
    %b = enc.attention %qkv, %lengths {bf16_pv, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
        : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
    %m = enc.attention %qkv, %lengths position_bias(%table) {max_distance = 128 : i64, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.125 : f32}
        : (tensor<?x?x2304xf32>, tensor<?xi32>, tensor<32x12xf32>) -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Variadic<Enc_F32Tensor>:$inputs, Enc_I32Tensor:$lengths,
                   Optional<Enc_F32Tensor>:$position_bias,
                   I64Attr:$num_heads, F32Attr:$scale, Enc_PaddingAttr:$padding,
                   UnitAttr:$bf16_pv, UnitAttr:$bf16_amx, OptionalAttr<I64Attr>:$max_distance,
                   OptionalAttr<I64Attr>:$window, UnitAttr:$causal,
                   OptionalAttr<I64Attr>:$num_kv_heads, UnitAttr:$alibi);
  let results = (outs Enc_LinearOperand:$result);
  // `%q, %k, %v, %lengths` / `%qkv, %lengths`: the last operand is `lengths`.
  let assemblyFormat = [{
    custom<AttentionOperands>($inputs, $lengths) (`position_bias` `(` $position_bias^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for the single-input `qkv` form.
    bool isPacked() { return getInputs().size() == 1; }
    /// The key/value heads: num_kv_heads, else num_heads.
    int64_t kvHeads() {
      return getNumKvHeadsAttr() ? getNumKvHeadsAttr().getInt() : static_cast<int64_t>(getNumHeads());
    }
  }];
}

def Enc_SplitOp : Enc_Op<"split", [Pure]> {
  let summary = "equal slices of the last axis";
  let description = [{
    Splits `x` `[..., parts*N]` into `parts` results `[..., N]`; result `i`
    is `x[..., i*N:(i+1)*N]`. Produced by `enc-fuse-qkv` when the attention
    that reads the three slices is not fused.

    Example:

    ```mlir
    %q, %k, %v = enc.split %qkv {parts = 3 : i64}
        : tensor<?x?x1152xf32> -> (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>)
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, I64Attr:$parts);
  let results = (outs Variadic<Enc_F32Tensor>:$outputs);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` `(` type($outputs) `)`";
  let hasVerifier = 1;
}

def Enc_AddLayerNormOp : Enc_Op<"add_layernorm", [Pure]> {
  let summary = "residual addition followed by layer normalisation";
  let description = [{
    `result = layernorm(x + residual)` with `gamma`, `beta` and `epsilon` as
    in `enc.layernorm`. `x` and `residual` have the same shape; the result
    has the type of `x`.

    Example:

    ```mlir
    %y = enc.add_layernorm %x, %r, %g, %b {epsilon = 9.99999996E-13 : f32}
        : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, Enc_F32Tensor:$residual,
                   Enc_F32Tensor:$gamma, Enc_F32Tensor:$beta, F32Attr:$epsilon);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $x `,` $residual `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_LayerNormOp : Enc_Op<"layernorm", [Pure]> {
  let summary = "layer normalisation over the last axis";
  let description = [{
    `result = (x - mean) / sqrt(var + epsilon) * gamma + beta`, statistics over
    the last axis (biased variance). `gamma` and `beta` are `[H]` where `H` is
    the last dim of `x`; the result has the type of `x`.

    Example:

    ```mlir
    %y = enc.layernorm %x, %g, %b {epsilon = 9.99999996E-13 : f32}
        : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, Enc_F32Tensor:$gamma,
                   Enc_F32Tensor:$beta, F32Attr:$epsilon);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_RmsNormOp : Enc_Op<"rms_norm", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "RMS normalisation of each group of the last axis";
  let description = [{
    `gamma` is `[G]` and `G` divides the last dim of `x`: each contiguous
    group of `G` elements of the last axis is normalised on its own,
    `result = x / sqrt(mean(x^2) + epsilon) * gamma` (no mean subtracted, no
    beta; T5 / Llama / Qwen3's RMSNorm). `G` equal to the last dim is the
    usual norm over the hidden state; `G = head_dim` on `[B, S, heads * D]`
    is Qwen3's per-head q/k norm. Statistics in f32.

    Example:

    ```mlir
    %y = enc.rms_norm %x, %g {epsilon = 9.99999997E-7 : f32}
        : (tensor<?x?x1024xf32>, tensor<1024xf32>) -> tensor<?x?x1024xf32>
    %q = enc.rms_norm %qp, %qg {epsilon = 9.99999997E-7 : f32}
        : (tensor<?x?x2048xf32>, tensor<128xf32>) -> tensor<?x?x2048xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, Enc_F32Tensor:$gamma, F32Attr:$epsilon);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Enc_GeluOp : Enc_Op<"gelu", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "GELU activation";
  let description = [{
    `approximate = #enc.approximation<none>`: `0.5·x·(1 + erf(x/√2))` (HF `gelu`);
    `approximate = #enc.approximation<tanh>`: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`
    (HF `gelu_new`).

    Example:

    ```mlir
    %g = enc.gelu %h {approximate = #enc.approximation<none>} : tensor<?x?x1536xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, Enc_GeluApproximationAttr:$approximate);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def Enc_RotaryOp : Enc_Op<"rotary", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "rotary position embedding of every head of a query or key tensor";
  let description = [{
    `x` is `[B, S, N*D]` (`N = num_heads` heads of `D` dims, merged); token
    `s` of each sequence is at position `s` (right padding: the positions of
    the real tokens do not depend on the padding). In each head the first
    `R = rotary_dim` dims are rotated in pairs by the angle
    `s * theta^(-2f/R)` of pair `f < R/2`; the other `D - R` dims pass
    through. `layout = #enc.rotary<half>` pairs dim `f` with `f + R/2`
    (`rotate_half`: `y_f = x_f cos - x_{f+R/2} sin`,
    `y_{f+R/2} = x_{f+R/2} cos + x_f sin`); `interleaved` pairs `2f` with
    `2f + 1`. The frequencies, angles, cosines and sines are f32, as
    transformers computes them.

    Example:

    ```mlir
    %qr = enc.rotary %q {layout = #enc.rotary<half>, num_heads = 12 : i64, rotary_dim = 64 : i64, theta = 1.6E+5 : f32}
        : tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, I64Attr:$num_heads, I64Attr:$rotary_dim, F32Attr:$theta,
                   Enc_RotaryLayoutAttr:$layout);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Enc_GluOp : Enc_Op<"glu", [Pure]> {
  let summary = "gated linear unit: act(first half) times the second half";
  let description = [{
    `x` is `[..., 2I]` (one Linear's output holding both halves, as
    ModernBERT's `Wi` and a fused gate/up projection are); the result is
    `[..., I]` with `result[..., i] = act(x[..., i]) * x[..., I + i]`, where
    `kind = #enc.glu<geglu>` is erf GELU, `geglu_tanh` the tanh form and
    `swiglu` SiLU, `x * sigmoid(x)`.

    Example:

    ```mlir
    %g = enc.glu %h {kind = #enc.glu<geglu>} : (tensor<?x?x2304xf32>) -> tensor<?x?x1152xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, Enc_GluKindAttr:$kind);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Enc_TanhOp : Enc_Op<"tanh", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "tanh activation";
  let description = [{
    `result = tanh(x)` elementwise: the activation of the pooler / dense
    layer of a sequence-classification head (BERT's pooler, RoBERTa's
    classification head).

    Example:

    ```mlir
    %t = enc.tanh %d : tensor<?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def Enc_L2NormOp : Enc_Op<"l2norm", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "L2 normalisation over the last axis";
  let description = [{
    `result = x / max(‖x‖₂, 1e-12)` per row.

    Example:

    ```mlir
    %n = enc.l2norm %p : tensor<?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention layout
//===----------------------------------------------------------------------===//

def Enc_SplitHeadsOp : Enc_Op<"split_heads", [Pure]> {
  let summary = "[B, S, heads·D] -> [B, heads, S, D]";
  let description = [{
    Example:

    ```mlir
    %qh = enc.split_heads %q {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, I64Attr:$num_heads);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  // split_heads(merge_heads(x)) -> x (same heads, same type).
  let hasFolder = 1;
}

def Enc_MergeHeadsOp : Enc_Op<"merge_heads", [Pure]> {
  let summary = "[B, heads, S, D] -> [B, S, heads·D]";
  let description = [{
    The inverse of `enc.split_heads`.

    Example:

    ```mlir
    %c = enc.merge_heads %ch : tensor<?x12x?x32xf32> -> tensor<?x?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  // merge_heads(split_heads(x)) -> x (same type).
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Enc_PoolOp : Enc_Op<"pool", [Pure]> {
  let summary = "sentence embedding from token states";
  let description = [{
    `x` is `[B, S, H]`, `lengths` `[B]` i32; the result is `[B, H]`.
    `mode = #enc.pooling<cls>` takes token 0; `#enc.pooling<mean>` averages the first
    `lengths[b]` tokens; `#enc.pooling<last>` takes token `lengths[b] - 1` (zeros for an
    empty sequence); `#enc.pooling<splade>` (SPLADE, on masked-LM logits, `H` the
    vocabulary) takes the maximum over the valid tokens of `log(1 + relu(x))`
    (sentence-transformers' SpladePooling, max strategy; zeros for an empty sequence).

    Example:

    ```mlir
    %p = enc.pool %h, %lengths {mode = #enc.pooling<mean>}
        : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, Enc_I32Tensor:$lengths, Enc_PoolingModeAttr:$mode);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = [{
    $x `,` $lengths attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Import-level arithmetic (decomposed graphs; folded away before codegen)
//===----------------------------------------------------------------------===//

def Enc_ConstantOp : Enc_Op<"constant", [Pure, ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "a small f32 constant (the scalars of decomposed arithmetic)";
  let description = [{
    A dense f32 constant of at most 64 elements, as an ONNX graph's `Constant`
    nodes and scalar initialisers give them (LayerNorm's epsilon, GELU's 0.5 and
    √2). Larger tensors are weights (`enc.weight`). The recognition passes read
    these values; no backend runs this op.

    Example:

    ```mlir
    %half = enc.constant dense<5.000000e-01> : tensor<f32>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Enc_BinaryOp : Enc_Op<"binary", [Pure]> {
  let summary = "elementwise add / sub / mul / div / pow with broadcasting";
  let description = [{
    `result = lhs (kind) rhs` with NumPy (ONNX) broadcasting: shapes are aligned
    on the right and a dim of 1 stretches. What frontends of decomposed graphs
    emit; the recognition passes (`enc-recognize-layernorm`,
    `enc-recognize-gelu`, `enc-recognize-linear-bias`,
    `enc-lower-scalar-arithmetic`) rewrite it into the fused ops. No backend
    runs it: one left after them is an error naming its source.

    Example (LayerNorm's centring):

    ```mlir
    %d = enc.binary %x, %m {kind = #enc.binary<sub>}
        : (tensor<?x?x384xf32>, tensor<?x?x1xf32>) -> tensor<?x?x384xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$lhs, Enc_F32Tensor:$rhs, Enc_BinaryKindAttr:$kind);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Enc_UnaryOp : Enc_Op<"unary", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "elementwise sqrt / erf / tanh of decomposed arithmetic";
  let description = [{
    Import-level, like `enc.binary`: the recognition passes fold it into
    `enc.layernorm` / `enc.gelu`; a tanh that is not part of a GELU becomes
    `enc.tanh`. No backend runs it.

    Example:

    ```mlir
    %e = enc.unary %x {kind = #enc.unary<erf>} : tensor<?x?x1536xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x, Enc_UnaryKindAttr:$kind);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def Enc_ReduceMeanOp : Enc_Op<"reduce_mean", [Pure]> {
  let summary = "mean over the last axis, keeping it as a dim of 1";
  let description = [{
    Import-level (LayerNorm's two means); folded by `enc-recognize-layernorm`.

    Example:

    ```mlir
    %m = enc.reduce_mean %x : tensor<?x?x384xf32> -> tensor<?x?x1xf32>
    ```
  }];
  let arguments = (ins Enc_F32Tensor:$x);
  let results = (outs Enc_F32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion groups: ops one kernel computes
//===----------------------------------------------------------------------===//

def Enc_FusionOp : Enc_Op<"fusion", [Pure, SingleBlock]> {
  let summary = "a group of ops that a backend may compute in one kernel";
  let description = [{
    The body holds enc ops in order, each reading values from above or from
    earlier ops of the body; `enc.yield` names the values used after the
    group, which become its results. `enc-form-fusion-groups` makes the
    groups (the last pass before codegen); a backend computes a group with
    one kernel where it has one for that chain of ops, else op by op with
    the same numbers. The groups `enc-form-fusion-groups` forms:

    - an `enc.layernorm` / `enc.add_layernorm` with the `enc.quantize` or
      `enc.to_bf16` of its result (one pass over each row writes both);
    - an `enc.embedding` with the `enc.layernorm` that is its only user
      (and that layernorm's conversion, as above);
    - an `enc.pool` with the `enc.l2norm` that is its only user.

    Example:

    ```mlir
    %y, %q, %s = enc.fusion -> (tensor<?x?x384xf32>, tensor<?x?x384xui8>, tensor<?x?xf32>) {
      %n = enc.add_layernorm %x, %r, %g, %b {epsilon = 9.99999996E-13 : f32}
          : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
      %nq, %ns = enc.quantize %n : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
      enc.yield %n, %nq, %ns : tensor<?x?x384xf32>, tensor<?x?x384xui8>, tensor<?x?xf32>
    }
    ```
  }];
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`->` `(` type($results) `)` attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Enc_YieldOp : Enc_Op<"yield", [Pure, Terminator, HasParent<"FusionOp">]> {
  let summary = "the values of an enc.fusion used after it";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // ENC_OPS_TD
