//===- Passes.td - Fusion and quantisation passes of enc --*- tablegen -*-===//
//
// One record per pass; each is implemented in the .cpp file named after the
// record. The passes have no anchor op: they rewrite every enc op nested in
// the op they run on (a module or a function).
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_TD
#define ENC_PASSES_TD

include "mlir/Pass/PassBase.td"

def DecomposePass : Pass<"enc-decompose"> {
  let summary = "spell fused ops as the unfused op sequence";
  let description = [{
    The HF frontend emits `enc.attention` as the model means it; this pass
    writes it the way an exporter would, which is what `encc report`'s
    baseline and `--pipeline=none` run and what `enc-fuse-scale-mask-softmax`
    and `enc-fuse-attention` fuse back:

    ```
    attention(q, k, v, len) {num_heads = h, scale = a[, position_bias(t)]}
      => merge_heads(matmul(softmax(mask(
           [relative_position_bias(](scale(matmul(split_heads(q), split_heads(k)) {transpose_b}, a)[, t)]),
           len)), split_heads(v)))
    ```

    A packed `attention(qkv)` reads `enc.split {parts = 3}` of `qkv`. An
    attention with no unfused spelling in the op set stays as it is and is
    counted: a sliding window, a causal mask, ALiBi, grouped key/value heads, bf16
    arithmetic.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numDecomposed", "num-decomposed", "Number of attentions decomposed">,
    Statistic<"numKept", "num-kept", "Number of attentions with no unfused spelling, kept fused">,
  ];
}

def FuseQKVPass : Pass<"enc-fuse-qkv"> {
  let summary = "merge the Q, K and V projections into one Linear + split";
  let description = [{
    Three `enc.linear` ops that read the same input, have no epilogue, take
    `enc.weight` weights of the same `[N, K]` shape and either all have an
    `enc.weight` bias or none, become one Linear over the concatenated weight
    `[3N, K]` (named `"<q>+<k>+<v>"`, biases likewise) followed by
    `enc.split {parts = 3}`:

    ```
    %q = enc.linear %x, %wq, %bq    %qkv = enc.linear %x, %wqkv, %bqkv
    %k = enc.linear %x, %wk, %bk => %q, %k, %v = enc.split %qkv {parts = 3 : i64}
    %v = enc.linear %x, %wv, %bv
    ```

    Linears are taken in program order. When the `EncDialect` has a
    `WeightStore`, the concatenated tensors are written into it (if absent);
    otherwise only the IR is rewritten.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of Q/K/V Linear triples merged">,
    Statistic<"numWeightsCreated", "num-weights-created",
              "Number of concatenated tensors written into the WeightStore">,
  ];
}

def FuseScaleMaskSoftmaxPass : Pass<"enc-fuse-scale-mask-softmax"> {
  let summary = "fuse scale, key-padding mask and softmax into one op";
  let description = [{
    ```
    softmax(mask(scale(s, a), len))   => scale_mask_softmax(s, len) {scale = a}
    softmax(scale(mask(s, len), a))   => scale_mask_softmax(s, len) {scale = a}   (a > 0)
    softmax(mask(div(s, d), len))     => scale_mask_softmax(s, len) {scale = 1/d}
    softmax(mask(s, len))             => scale_mask_softmax(s, len) {scale = 1.0}
    ```

    Chains of `enc.scale`/`enc.div` on either side of the mask are
    multiplied; the factors applied after the mask must have a positive
    product (a negative one would turn `-inf` into `+inf`). Every
    intermediate value must have no other user. A softmax not fed by a mask
    is left alone.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of softmax chains fused">,
    Statistic<"numUnscaled", "num-unscaled",
              "Number of fused chains without a scale (scale folded into Q)">,
  ];
}

def FuseAttentionPass : Pass<"enc-fuse-attention"> {
  let summary = "fuse split-heads, QKᵀ, scale_mask_softmax, ·V and merge-heads";
  let description = [{
    ```
    merge_heads(matmul(scale_mask_softmax(matmul(split_heads(q), split_heads(k)) {transpose_b}),
                       split_heads(v)))
      => attention(q, k, v, len) {num_heads, scale, padding}
    ```

    The probabilities may also hold MPNet's relative position bias,
    `scale_mask_softmax(relative_position_bias(scale(scores, s), table), len)
    {scale = 1}` (or unfused, `softmax(mask(...))`): the attention then takes
    the table as its `position_bias` (with `max_distance`) and `s` as its
    scale.
    When `q`, `k`, `v` are results 0, 1, 2 of one `enc.split {parts = 3}`,
    the packed form `attention(qkv, len)` reads the split's input instead.
    All intermediates must have no other user and the head counts agree.

    An `enc.attention` already there (the HF frontend emits it) whose `q`,
    `k`, `v` are one split's three parts (after `enc-fuse-qkv`) takes the
    packed form too, its attributes kept; grouped key/value heads stay
    unpacked.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of attention blocks fused">,
    Statistic<"numPacked", "num-packed",
              "Number of attentions given the packed qkv form">,
  ];
}

def FuseBiasGeluPass : Pass<"enc-fuse-bias-gelu"> {
  let summary = "fold a GELU into the preceding Linear's epilogue";
  let description = [{
    ```
    gelu(linear(x, w, b), approximate = #enc.approximation<none>)  => linear(x, w, b) {epilogue = #enc.epilogue<gelu>}
    gelu(linear(x, w, b), approximate = #enc.approximation<tanh>)  => linear(x, w, b) {epilogue = #enc.epilogue<gelu_tanh>}
    ```

    The Linear must have no epilogue and no other user.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of GELUs fused into a Linear">,
  ];
}

def FuseResidualLayerNormPass : Pass<"enc-fuse-residual-layernorm"> {
  let summary = "fuse a residual addition into the following LayerNorm";
  let description = [{
    ```
    layernorm(add(a, b), g, beta)  => add_layernorm(a, b, g, beta)
    ```

    The add must have no other user.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of add + layernorm pairs fused">,
  ];
}

def QuantizeLinearInt8Pass : Pass<"enc-quantize-linear-int8"> {
  let summary = "int8 Linears: quantise weights per channel, activations per token";
  let description = [{
    Every `enc.linear` whose weight is an f32 `enc.weight` (and whose weight
    name matches no `skip` pattern) becomes a per-token activation
    quantisation plus an int8 Linear that keeps the epilogue and the bias:

    ```
    %y = enc.linear %x, %w, %b {epilogue = #enc.epilogue<gelu>}
      =>
    %wq = enc.weight "<w>.q8" : tensor<NxKxi8>
    %ws = enc.weight "<w>.q8scale" : tensor<Nxf32>
    %xq, %xs = enc.quantize %x : tensor<..xKxf32> -> (tensor<..xKxui8>, tensor<..xf32>)
    %y = enc.qlinear %xq, %xs, %wq, %ws, %b {epilogue = #enc.epilogue<gelu>, w_scale_max = .., w_scale_min = ..}
    ```

    One `enc.quantize` per distinct input value (Linears sharing `%x` share
    it). Weights are symmetric per output channel:
    `s_n = max_k |W[n,k]| / 127`, `q = clamp(rne(W * (127 / max)), -127, 127)`
    (the formula of `quantizeWeightsQ8`, enc_qgemm.h). With `embeddings`
    (default on), the f32 word table of `enc.embedding` becomes `<w>.q8`
    `[V, H]` i8 plus `<w>.q8scale` `[V]` (row-wise, same formula) and the
    embedding takes the `word_scale` operand; position and token-type
    tables stay f32.

    When the `EncDialect` has a `WeightStore`, the int8 tensors and scales
    are written into it (if absent) and `w_scale_min`/`w_scale_max` summarise
    the scales; a Linear whose weight is missing from the store stays f32.
    Without a store only the IR is rewritten. Replaced f32 `enc.weight` ops
    that lose their last user are erased (the store keeps the f32 data).

    `calibration` names a text file of static activation ranges, one
    `<weight name> <absmax>` per line (`#` comments): the quantize feeding
    the Linear with that weight gets `static_scale = absmax / 127` (when it
    feeds several Linears, all must be listed; the largest absmax is used).
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let options = [
    ListOption<"skip", "skip", "std::string",
               "Glob patterns on weight names to keep in f32 "
               "(e.g. *attention.output*,encoder.layer.5.*)">,
    Option<"embeddings", "embeddings", "bool", "true",
           "Also store the word-embedding table as int8 with per-row scales">,
    Option<"calibration", "calibration", "std::string", "\"\"",
           "File of static activation ranges (<weight name> <absmax> lines)">,
  ];
  let statistics = [
    Statistic<"numQuantized", "num-quantized", "Number of Linears made int8">,
    Statistic<"numSkipped", "num-skipped",
              "Number of Linears (and word tables) kept f32 by a skip pattern">,
    Statistic<"numQuantizeOps", "num-quantize-ops",
              "Number of enc.quantize ops created">,
    Statistic<"numEmbeddings", "num-embeddings",
              "Number of word-embedding tables made int8">,
  ];
}

def ConvertLinearBf16Pass : Pass<"enc-convert-linear-bf16"> {
  let summary = "bf16 Linears: bf16 weights and activations, fp32 accumulation";
  let description = [{
    Every `enc.linear` whose weight is an f32 `enc.weight` `[N, K]` with an
    even K (and whose weight name matches no `skip` pattern) takes bf16
    operands; bias and epilogue stay f32, and so does the result unless a
    rounding is folded into it (below):

    ```
    %y = enc.linear %x, %w, %b {epilogue = #enc.epilogue<gelu>}
      =>
    %wb = enc.weight "<w>.bf16" : tensor<NxKxbf16>
    %xb = enc.to_bf16 %x : tensor<..xKxf32> -> tensor<..xKxbf16>
    %y = enc.linear %xb, %wb, %b {epilogue = #enc.epilogue<gelu>}
    ```

    One `enc.to_bf16` per distinct input value (Linears sharing `%x` share
    it). Where `%x` is the result of an `enc.attention` or of a bf16
    `enc.linear` and the rounding is its only user, the rounding is folded
    into that producer instead: its result type becomes bf16 (its kernel
    rounds as it stores; the values are those of the `enc.to_bf16`):

    ```
    %a = enc.attention %qkv, %len {...} : (...) -> tensor<..xKxf32>
    %y = enc.linear %a, %w
      =>
    %a = enc.attention %qkv, %len {...} : (...) -> tensor<..xKxbf16>
    %y = enc.linear %a, %wb
    ```

    Weights are rounded to nearest, ties to even (`toBf16Bits` of
    enc_bf16.h). With a `WeightStore` the bf16 weights are written into it
    (if absent); a Linear whose weight is missing from the store stays f32.
    With `embeddings` (the default) an `enc.embedding`'s f32 word table
    becomes bf16 as well: the gather widens its rows exactly and adds the f32
    position and type rows (half the bytes of the largest table; a word table
    tied to a Linear, SPLADE's decoder, is that Linear's bf16 tensor).
    Everything else (LayerNorm, softmax, attention, GELU, residuals) stays
    f32. Replaced f32 `enc.weight` ops that lose their last user are erased.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let options = [
    ListOption<"skip", "skip", "std::string",
               "Glob patterns on weight names to keep in f32">,
    Option<"embeddings", "embeddings", "bool", "true",
           "Also make enc.embedding's f32 word tables bf16">,
  ];
}

def ConvertAttentionBf16Pass : Pass<"enc-convert-attention-bf16"> {
  let summary = "attention with a bf16 p·v (bf16 probabilities and values, f32 sums)";
  let description = [{
    Sets `bf16_pv` on every `enc.attention`: `sum_j p_j v_j` becomes a bf16
    dot product over the probabilities and values rounded to bf16 (nearest,
    ties to even), with exact products and f32 sums; `<q, k>`, the scale and
    the softmax stay f32. Half the multiply instructions of that half of the
    attention on AVX512-BF16 CPUs (vdpbf16ps); the same numbers, widened to
    f32, elsewhere.

    ```
    %o = enc.attention %qkv, %len {num_heads = 12 : i64, ...}
      =>
    %o = enc.attention %qkv, %len {bf16_pv, num_heads = 12 : i64, ...}
    ```

    bf16 q and k as well were tried and left out: the scores move by ~1e-3
    relative, which the softmax amplifies (MiniLM's min token cosine vs
    fp32 fell below the bf16 and int8 gates).

    On CPUs with AMX tiles the kernels also take q·kᵀ on tiles, as three
    bf16 products of q's and k's bf16 high and low parts (within ~2^-17 of
    |q||k|), which moves the gates by ~3e-6.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numConverted", "num-converted", "Number of attentions given a bf16 p·v">,
  ];
}

def ConvertAttentionBf16AmxPass : Pass<"enc-convert-attention-bf16-amx"> {
  let summary = "attention in bf16 on CPUs with AMX tiles only (the int8 tier's)";
  let description = [{
    Sets `bf16_amx` on every `enc.attention`: bf16 attention (q·kᵀ as three
    bf16 tile products of split operands, p·v over bf16 probabilities and
    values, f32 sums) in the x86-64-v4-amx code object, where it is
    1.05-2.4x faster than f32 attention; f32 on every other code object and
    device (bf16 p·v was 7-25% slower than f32 on an AVX-512 Xeon without
    AMX and on AVX2). `--quantize=int8` appends it.

    ```
    %o = enc.attention %qkv, %len {num_heads = 12 : i64, ...}
      =>
    %o = enc.attention %qkv, %len {bf16_amx, num_heads = 12 : i64, ...}
    ```
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numConverted", "num-converted", "Number of attentions made bf16 on AMX tiles">,
  ];
}

def FormFusionGroupsPass : Pass<"enc-form-fusion-groups"> {
  let summary = "chains one kernel computes become enc.fusion groups";
  let description = [{
    The last pass before codegen (the compiler runs it after the pipeline
    and the precision passes). Each chain below becomes an `enc.fusion` at
    the place of its first op, yielding the values used after it:

    ```
    %n = enc.add_layernorm %x, %r, %g, %b
    %q, %s = enc.quantize %n
      =>
    %n, %q, %s = enc.fusion -> (...) {
      %0 = enc.add_layernorm %x, %r, %g, %b
      %1, %2 = enc.quantize %0
      enc.yield %0, %1, %2
    }
    ```

    - `enc.layernorm` / `enc.add_layernorm` + the first `enc.quantize` or
      `enc.to_bf16` of its result;
    - `enc.embedding` + the `enc.layernorm` that is its only user (+ that
      layernorm's conversion);
    - `enc.pool` + the `enc.l2norm` that is its only user.

    A backend computes a group with one kernel where it has one for the
    chain (CPU: layernorm + a dynamic quantize or to_bf16; CUDA: all three
    kinds, static-scale quantize included), else op by op. Weights an op of
    a group reads are moved above the group.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numGroups", "num-groups", "Number of enc.fusion groups formed">,
    Statistic<"numGroupedOps", "num-grouped-ops", "Number of ops moved into them">,
  ];
}

//===----------------------------------------------------------------------===//
// Recognition: decomposed arithmetic (ONNX graphs) -> the ops above. The ONNX
// frontend runs these after lowering; they change nothing in an HF import.
//===----------------------------------------------------------------------===//

def RecognizeLayerNormPass : Pass<"enc-recognize-layernorm"> {
  let summary = "LayerNorm from its decomposed form";
  let description = [{
    ```
    %m = reduce_mean(x); %d = x - %m; %v = reduce_mean(%d ^ 2 | %d * %d)
    %n = %d / sqrt(%v + eps); (%n * gamma) + beta   =>  layernorm(x, gamma, beta) {epsilon = eps}
    ```

    Operands of the commutative add and mul in either order. gamma and beta
    must be `enc.weight` vectors of the last dim, eps a scalar `enc.constant`
    > 0. Every intermediate has no user outside the pattern.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numRecognized", "num-recognized", "Number of LayerNorms recognised">,
  ];
}

def RecognizeGeluPass : Pass<"enc-recognize-gelu"> {
  let summary = "erf and tanh GELU from their elementwise forms";
  let description = [{
    ```
    0.5 * x * (1 + erf(x / √2 | x * (1/√2)))                       => gelu(x) {approximate = none}
    0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 * (x ^ 3 | x*x*x)))) => gelu(x) {approximate = tanh}
    ```

    The product may be associated and ordered in any way (`(x * 0.5) * (..)`,
    `0.5 * (x * (..))`, ...); `x + 0.044715·x³` may be `enc.add` (what a
    frontend emits for two tensors of one shape); constants are scalar
    `enc.constant`s matched to a relative 1e-4. Every intermediate has no user outside the pattern.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numRecognized", "num-recognized", "Number of GELUs recognised">,
  ];
}

def RecognizeLinearBiasPass : Pass<"enc-recognize-linear-bias"> {
  let summary = "a bias added after a Linear becomes the Linear's bias";
  let description = [{
    ```
    binary<add>(linear(x, w), b) | binary<add>(b, linear(x, w))  =>  linear(x, w, b)
    ```

    The Linear has no bias and no epilogue and no other user; `b` is an
    `enc.weight` vector of the Linear's output width.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numRecognized", "num-recognized", "Number of biases folded into Linears">,
  ];
}

def LowerScalarArithmeticPass : Pass<"enc-lower-scalar-arithmetic"> {
  let summary = "arithmetic with a scalar constant -> enc.scale / enc.div; tanh -> enc.tanh";
  let description = [{
    ```
    binary<mul>(x, c) | binary<mul>(c, x)  =>  scale(x) {factor = c}
    binary<div>(x, c)                       =>  div(x) {divisor = c}    (c finite, nonzero)
    unary<tanh>(x)                          =>  tanh(x)
    ```

    `c` a scalar (or splat) `enc.constant` and the result of `x`'s type. Run
    after the GELU and LayerNorm recognition, whose patterns contain such
    products.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "Number of ops lowered">,
  ];
}

#endif // ENC_PASSES_TD
