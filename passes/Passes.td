//===- Passes.td - Fusion passes of the enc dialect --------------*- tablegen -*-===//
//
// One record per pass; each is implemented in the .cpp file named after the
// record. The passes have no anchor op: they rewrite every enc op nested in
// the op they run on (a module or a function).
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_TD
#define ENC_PASSES_TD

include "mlir/Pass/PassBase.td"

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

    When `q`, `k`, `v` are results 0, 1, 2 of one `enc.split {parts = 3}`,
    the packed form `attention(qkv, len)` reads the split's input instead.
    All intermediates must have no other user and the head counts agree.
  }];
  let dependentDialects = ["mlir::enc::EncDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of attention blocks fused">,
    Statistic<"numPacked", "num-packed",
              "Number of fused attentions in the packed qkv form">,
  ];
}

def FuseBiasGeluPass : Pass<"enc-fuse-bias-gelu"> {
  let summary = "fold a GELU into the preceding Linear's epilogue";
  let description = [{
    ```
    gelu(linear(x, w, b), approximate = "none")  => linear(x, w, b) {epilogue = "gelu"}
    gelu(linear(x, w, b), approximate = "tanh")  => linear(x, w, b) {epilogue = "gelu_tanh"}
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

#endif // ENC_PASSES_TD
