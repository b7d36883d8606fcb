// RUN: enc-opt %s -enc-convert-linear-bf16 -split-input-file | FileCheck %s
// RUN: enc-opt %s '-enc-convert-linear-bf16=skip=*attention.output*' -split-input-file | FileCheck %s --check-prefix=SKIP
// RUN: enc-opt %s '-enc-pipeline=passes=canonicalize,convert-linear-bf16' -split-input-file | FileCheck %s --check-prefix=PIPE
// RUN: enc-opt %s '-enc-convert-linear-bf16=embeddings=false' -split-input-file | FileCheck %s --check-prefix=NOEMB
// enc-convert-linear-bf16: enc.linear with an f32 enc.weight [N, K] (K even)
// -> enc.to_bf16 of its input (one per distinct input, right after the
// producer) + enc.linear over bf16 operands and the weight "<w>.bf16";
// bias, epilogue and result stay f32. Without a WeightStore (enc-opt) only
// the IR is rewritten.

// CHECK-LABEL: func.func @ffn
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-NEXT: %[[XB:.*]] = enc.to_bf16 %[[X]] : tensor<?x?x8xf32> -> tensor<?x?x8xbf16>
// CHECK-NEXT: %[[WB:.*]] = enc.weight "ffn.in.weight.bf16" : tensor<16x8xbf16>
// CHECK-NEXT: %[[B:.*]] = enc.weight "ffn.in.bias" : tensor<16xf32>
// CHECK-NEXT: %[[H:.*]] = enc.linear %[[XB]], %[[WB]], %[[B]] {epilogue = #enc.epilogue<gelu>}
// CHECK-SAME: : (tensor<?x?x8xbf16>, tensor<16x8xbf16>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NOT: "ffn.in.weight" :
// CHECK: return %[[H]]
// PIPE-LABEL: func.func @ffn
// PIPE: enc.to_bf16
func.func @ffn(%x: tensor<?x?x8xf32>) -> tensor<?x?x16xf32> {
  %w = enc.weight "ffn.in.weight" : tensor<16x8xf32>
  %b = enc.weight "ffn.in.bias" : tensor<16xf32>
  %h = enc.linear %x, %w, %b {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %h : tensor<?x?x16xf32>
}

// -----

// Q, K and V read one input: one to_bf16 feeds the three Linears; a Linear on
// a computed value gets its to_bf16 right after the producer. A weight with
// an odd K stays f32 (the kernels take k in pairs), and the weight read by
// two Linears is converted once.
// CHECK-LABEL: func.func @shared_input
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x8xf32>,
// CHECK: %[[XB:.*]] = enc.to_bf16 %[[X]]
// CHECK-NOT: enc.to_bf16
// CHECK: %[[WK:.*]] = enc.weight "l0.k.weight.bf16" : tensor<8x8xbf16>
// CHECK: %[[Q:.*]] = enc.linear %[[XB]], %{{.*}}, %{{.*}} : (tensor<?x?x8xbf16>, tensor<8x8xbf16>, tensor<8xf32>)
// CHECK: %[[K:.*]] = enc.linear %[[XB]], %[[WK]] : (tensor<?x?x8xbf16>, tensor<8x8xbf16>)
// CHECK: %[[S:.*]] = enc.add %[[Q]], %[[K]]
// CHECK-NEXT: %[[SB:.*]] = enc.to_bf16 %[[S]] : tensor<?x?x8xf32> -> tensor<?x?x8xbf16>
// CHECK: %[[O:.*]] = enc.linear %[[SB]], %[[WK]] : (tensor<?x?x8xbf16>, tensor<8x8xbf16>)
// CHECK: %[[P:.*]] = enc.linear %{{.*}}, %{{.*}} : (tensor<?x?x7xf32>, tensor<4x7xf32>)
// CHECK: return %[[O]], %[[P]]
// SKIP-LABEL: func.func @shared_input
// SKIP-COUNT-3: enc.linear {{.*}}xbf16
// SKIP: enc.linear {{.*}}xf32
func.func @shared_input(%x: tensor<?x?x8xf32>, %y: tensor<?x?x7xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x4xf32>) {
  %wq = enc.weight "l0.q.weight" : tensor<8x8xf32>
  %bq = enc.weight "l0.q.bias" : tensor<8xf32>
  %wk = enc.weight "l0.k.weight" : tensor<8x8xf32>
  %q = enc.linear %x, %wq, %bq : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %k = enc.linear %x, %wk : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %s = enc.add %q, %k : tensor<?x?x8xf32>
  %o = enc.linear %s, %wk : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %wp = enc.weight "l0.attention.output.weight" : tensor<4x7xf32>
  %p = enc.linear %y, %wp : (tensor<?x?x7xf32>, tensor<4x7xf32>) -> tensor<?x?x4xf32>
  return %o, %p : tensor<?x?x8xf32>, tensor<?x?x4xf32>
}

// -----

// Skip patterns match weight names: the attention output stays f32.
// SKIP-LABEL: func.func @skip
// SKIP: enc.linear {{.*}} : (tensor<?x?x8xbf16>, tensor<8x8xbf16>)
// SKIP: enc.linear {{.*}} : (tensor<?x?x8xf32>, tensor<8x8xf32>)
// SKIP-NOT: enc.to_bf16
func.func @skip(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %w1 = enc.weight "l0.intermediate.weight" : tensor<8x8xf32>
  %w2 = enc.weight "l0.attention.output.weight" : tensor<8x8xf32>
  %a = enc.linear %x, %w1 : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %b = enc.linear %a, %w2 : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %a, %b : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// A rounding whose only input user is it, produced by an enc.attention or a
// bf16 enc.linear, is folded into the producer: the result type becomes bf16
// (the kernel rounds as it stores) and no enc.to_bf16 is left for it. The
// attention output and the FFN's GELU output fold; the layer input (also
// returned) and the sum feeding two Linears' rounding do not.
// CHECK-LABEL: func.func @fold_into_producer
// CHECK-SAME: (%[[QKV:[^:]*]]: tensor<?x?x24xf32>, %[[L:[^:]*]]: tensor<?xi32>, %[[X:[^:]*]]: tensor<?x?x8xf32>)
// CHECK: %[[XB:.*]] = enc.to_bf16 %[[X]]
// CHECK: %[[A:.*]] = enc.attention %[[QKV]], %[[L]] {{.*}} -> tensor<?x?x8xbf16>
// CHECK-NOT: enc.to_bf16
// CHECK: %[[O:.*]] = enc.linear %[[A]], %{{.*}} : (tensor<?x?x8xbf16>, tensor<8x8xbf16>) -> tensor<?x?x8xf32>
// CHECK: %[[H:.*]] = enc.linear %[[XB]], %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x8xbf16>, tensor<16x8xbf16>, tensor<16xf32>) -> tensor<?x?x16xbf16>
// CHECK-NOT: enc.to_bf16
// CHECK: %[[D:.*]] = enc.linear %[[H]], %{{.*}} : (tensor<?x?x16xbf16>, tensor<8x16xbf16>) -> tensor<?x?x8xf32>
// CHECK: return %[[O]], %[[D]], %[[X]]
// PIPE-LABEL: func.func @fold_into_producer
// SKIP-LABEL: func.func @fold_into_producer
// PIPE: enc.attention {{.*}} -> tensor<?x?x8xbf16>
func.func @fold_into_producer(%qkv: tensor<?x?x24xf32>, %len: tensor<?xi32>, %x: tensor<?x?x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %a = enc.attention %qkv, %len {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32}
      : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  %wo = enc.weight "l0.attention.output.dense.weight" : tensor<8x8xf32>
  %o = enc.linear %a, %wo : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %wi = enc.weight "l0.intermediate.dense.weight" : tensor<16x8xf32>
  %bi = enc.weight "l0.intermediate.dense.bias" : tensor<16xf32>
  %h = enc.linear %x, %wi, %bi {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %wd = enc.weight "l0.output.dense.weight" : tensor<8x16xf32>
  %d = enc.linear %h, %wd : (tensor<?x?x16xf32>, tensor<8x16xf32>) -> tensor<?x?x8xf32>
  return %o, %d, %x : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// The word table of enc.embedding becomes bf16 (embeddings=true, the default);
// the position and type tables stay f32. A table tied to a Linear (SPLADE's
// decoder) is one bf16 weight for both. With embeddings=false it stays f32.

// CHECK-LABEL: func.func @tied_word_table
// CHECK: %[[WB:.*]] = enc.weight "word.bf16" : tensor<50x8xbf16>
// CHECK: enc.embedding %{{.*}}, %[[WB]], %{{.*}}, %{{.*}} {position_offset = 0 : i64}
// CHECK-SAME: (tensor<?x?xi32>, tensor<50x8xbf16>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
// CHECK: enc.linear %{{.*}}, %[[WB]]
// CHECK-NOT: "word" :
// NOEMB-LABEL: func.func @tied_word_table
// NOEMB: %[[WB:.*]] = enc.weight "word.bf16" : tensor<50x8xbf16>
// NOEMB: %[[W:.*]] = enc.weight "word" : tensor<50x8xf32>
// NOEMB: enc.embedding %{{.*}}, %[[W]], %{{.*}}, %{{.*}} {position_offset = 0 : i64}
// NOEMB-SAME: (tensor<?x?xi32>, tensor<50x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>)
// NOEMB: enc.linear %{{.*}}, %[[WB]]
// SKIP-LABEL: func.func @tied_word_table
// SKIP: enc.embedding %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {position_offset = 0 : i64}
// SKIP-SAME: tensor<50x8xbf16>
func.func @tied_word_table(%ids: tensor<?x?xi32>) -> tensor<?x?x50xf32> {
  %word = enc.weight "word" : tensor<50x8xf32>
  %pos = enc.weight "pos" : tensor<16x8xf32>
  %type = enc.weight "type" : tensor<2x8xf32>
  %e = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<50x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  %logits = enc.linear %e, %word : (tensor<?x?x8xf32>, tensor<50x8xf32>) -> tensor<?x?x50xf32>
  return %logits : tensor<?x?x50xf32>
}
