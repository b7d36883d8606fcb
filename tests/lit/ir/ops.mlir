// RUN: enc-opt %s | enc-opt | FileCheck %s
// RUN: enc-opt %s -mlir-print-op-generic | enc-opt | FileCheck %s
// Round trip of every enc op (parse, print, re-parse, print) on a
// BERT/MiniLM-shaped layer with dynamic batch and sequence.

// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x?xi32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-SAME: -> (tensor<?x?x384xf32>, tensor<?x384xf32>)
func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>)
    -> (tensor<?x?x384xf32>, tensor<?x384xf32>) {
  // CHECK: %[[WORD:.*]] = enc.weight "embeddings.word_embeddings.weight" : tensor<30522x384xf32>
  %word = enc.weight "embeddings.word_embeddings.weight" : tensor<30522x384xf32>
  // CHECK: %[[POS:.*]] = enc.weight "embeddings.position_embeddings.weight" : tensor<512x384xf32>
  %pos = enc.weight "embeddings.position_embeddings.weight" : tensor<512x384xf32>
  // CHECK: %[[TYPE:.*]] = enc.weight "embeddings.token_type_embeddings.weight" : tensor<2x384xf32>
  %type = enc.weight "embeddings.token_type_embeddings.weight" : tensor<2x384xf32>
  %eg = enc.weight "embeddings.LayerNorm.weight" : tensor<384xf32>
  %eb = enc.weight "embeddings.LayerNorm.bias" : tensor<384xf32>
  // CHECK: %[[EMB:.*]] = enc.embedding %[[IDS]], %[[WORD]], %[[POS]], %[[TYPE]] {position_offset = 0 : i64}
  // CHECK-SAME: : (tensor<?x?xi32>, tensor<30522x384xf32>, tensor<512x384xf32>, tensor<2x384xf32>) -> tensor<?x?x384xf32>
  %emb = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : i64}
      : (tensor<?x?xi32>, tensor<30522x384xf32>, tensor<512x384xf32>, tensor<2x384xf32>) -> tensor<?x?x384xf32>
  // CHECK: %[[X:.*]] = enc.layernorm %[[EMB]], %{{.*}}, %{{.*}} {epsilon = 9.99999996E-13 : f32}
  // CHECK-SAME: : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %x = enc.layernorm %emb, %eg, %eb {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>

  // Self-attention.
  %wq = enc.weight "encoder.layer.0.attention.self.query.weight" : tensor<384x384xf32>
  %bq = enc.weight "encoder.layer.0.attention.self.query.bias" : tensor<384xf32>
  %wk = enc.weight "encoder.layer.0.attention.self.key.weight" : tensor<384x384xf32>
  %bk = enc.weight "encoder.layer.0.attention.self.key.bias" : tensor<384xf32>
  %wv = enc.weight "encoder.layer.0.attention.self.value.weight" : tensor<384x384xf32>
  // CHECK: %[[Q:.*]] = enc.linear %[[X]], %{{.*}}, %{{.*}} : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %q = enc.linear %x, %wq, %bq : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %k = enc.linear %x, %wk, %bk : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  // The bias is optional.
  // CHECK: %[[V:.*]] = enc.linear %[[X]], %{{.*}} : (tensor<?x?x384xf32>, tensor<384x384xf32>) -> tensor<?x?x384xf32>
  %v = enc.linear %x, %wv : (tensor<?x?x384xf32>, tensor<384x384xf32>) -> tensor<?x?x384xf32>
  // CHECK: %[[QH:.*]] = enc.split_heads %[[Q]] {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %qh = enc.split_heads %q {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %kh = enc.split_heads %k {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %vh = enc.split_heads %v {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  // CHECK: %[[S:.*]] = enc.matmul %[[QH]], %{{.*}} {transpose_b} : (tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x?xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x?xf32>
  // CHECK: %[[SS:.*]] = enc.scale %[[S]] {factor = 0.176776692 : f32} : tensor<?x12x?x?xf32>
  %ss = enc.scale %s {factor = 0.176776695 : f32} : tensor<?x12x?x?xf32>
  // CHECK: %[[M:.*]] = enc.mask %[[SS]], %[[LEN]] : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %m = enc.mask %ss, %lengths : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  // CHECK: %[[P:.*]] = enc.softmax %[[M]] : tensor<?x12x?x?xf32>
  %p = enc.softmax %m : tensor<?x12x?x?xf32>
  // CHECK: %[[CH:.*]] = enc.matmul %[[P]], %{{.*}} : (tensor<?x12x?x?xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x32xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x12x?x?xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x32xf32>
  // CHECK: %[[C:.*]] = enc.merge_heads %[[CH]] : tensor<?x12x?x32xf32> -> tensor<?x?x384xf32>
  %c = enc.merge_heads %ch : tensor<?x12x?x32xf32> -> tensor<?x?x384xf32>
  %wo = enc.weight "encoder.layer.0.attention.output.dense.weight" : tensor<384x384xf32>
  %bo = enc.weight "encoder.layer.0.attention.output.dense.bias" : tensor<384xf32>
  %o = enc.linear %c, %wo, %bo : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  // CHECK: %[[R1:.*]] = enc.add %{{.*}}, %[[X]] : tensor<?x?x384xf32>
  %r1 = enc.add %o, %x : tensor<?x?x384xf32>
  %g1 = enc.weight "encoder.layer.0.attention.output.LayerNorm.weight" : tensor<384xf32>
  %b1 = enc.weight "encoder.layer.0.attention.output.LayerNorm.bias" : tensor<384xf32>
  %y = enc.layernorm %r1, %g1, %b1 {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>

  // Feed-forward: once unfused, once with a fused epilogue.
  %wi = enc.weight "encoder.layer.0.intermediate.dense.weight" : tensor<1536x384xf32>
  %bi = enc.weight "encoder.layer.0.intermediate.dense.bias" : tensor<1536xf32>
  // CHECK: %[[I:.*]] = enc.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  %i = enc.linear %y, %wi, %bi : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  // CHECK: enc.gelu %[[I]] {approximate = #enc.approximation<none>} : tensor<?x?x1536xf32>
  %gi = enc.gelu %i {approximate = #enc.approximation<none>} : tensor<?x?x1536xf32>
  // CHECK: enc.gelu %[[I]] {approximate = #enc.approximation<tanh>} : tensor<?x?x1536xf32>
  %gt = enc.gelu %i {approximate = #enc.approximation<tanh>} : tensor<?x?x1536xf32>
  // CHECK: enc.linear %{{.*}}, %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  %fused = enc.linear %y, %wi, %bi {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  // CHECK: enc.linear %{{.*}}, %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu_tanh>}
  %fusedt = enc.linear %y, %wi, %bi {epilogue = #enc.epilogue<gelu_tanh>} : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  // Rotary position embedding of a query or key tensor.
  // CHECK: enc.rotary %[[I]] {layout = #enc.rotary<half>, num_heads = 12 : i64, rotary_dim = 128 : i64, theta = 1.600000e+05 : f32} : tensor<?x?x1536xf32>
  %rot = enc.rotary %i {layout = #enc.rotary<half>, num_heads = 12 : i64, rotary_dim = 128 : i64, theta = 1.6e5 : f32} : tensor<?x?x1536xf32>
  // Gated: one Linear's 2I outputs, act(first half) * second half.
  // CHECK: enc.glu %[[I]] {kind = #enc.glu<geglu>} : (tensor<?x?x1536xf32>) -> tensor<?x?x768xf32>
  %glu = enc.glu %i {kind = #enc.glu<geglu>} : (tensor<?x?x1536xf32>) -> tensor<?x?x768xf32>
  // CHECK: enc.glu %[[I]] {kind = #enc.glu<swiglu>}
  %swi = enc.glu %i {kind = #enc.glu<swiglu>} : (tensor<?x?x1536xf32>) -> tensor<?x?x768xf32>
  %gsum = enc.add %gi, %fused : tensor<?x?x1536xf32>
  %gsum2 = enc.add %gt, %fusedt : tensor<?x?x1536xf32>
  %gsum3 = enc.add %gsum, %gsum2 : tensor<?x?x1536xf32>
  %wd = enc.weight "encoder.layer.0.output.dense.weight" : tensor<384x1536xf32>
  %bd = enc.weight "encoder.layer.0.output.dense.bias" : tensor<384xf32>
  %d = enc.linear %gsum3, %wd, %bd : (tensor<?x?x1536xf32>, tensor<384x1536xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %r2 = enc.add %d, %y : tensor<?x?x384xf32>
  %g2 = enc.weight "encoder.layer.0.output.LayerNorm.weight" : tensor<384xf32>
  %b2 = enc.weight "encoder.layer.0.output.LayerNorm.bias" : tensor<384xf32>
  // CHECK: %[[H:.*]] = enc.layernorm
  %h = enc.layernorm %r2, %g2, %b2 {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>

  // Pooling.
  // CHECK: %[[PM:.*]] = enc.pool %[[H]], %[[LEN]] {mode = #enc.pooling<mean>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
  %pm = enc.pool %h, %lengths {mode = #enc.pooling<mean>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
  // CHECK: %[[PC:.*]] = enc.pool %[[H]], %[[LEN]] {mode = #enc.pooling<cls>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
  %pc = enc.pool %h, %lengths {mode = #enc.pooling<cls>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
  %pp = enc.add %pm, %pc : tensor<?x384xf32>
  // CHECK: %[[N:.*]] = enc.l2norm %{{.*}} : tensor<?x384xf32>
  %n = enc.l2norm %pp : tensor<?x384xf32>
  // CHECK: return %[[H]], %[[N]] : tensor<?x?x384xf32>, tensor<?x384xf32>
  return %h, %n : tensor<?x?x384xf32>, tensor<?x384xf32>
}

// Static shapes and a nonzero position offset (RoBERTa-style) also round trip.
// CHECK-LABEL: func.func @static_shapes
func.func @static_shapes(%ids: tensor<2x8xi32>, %word: tensor<100x16xf32>, %pos: tensor<16x16xf32>,
                         %type: tensor<1x16xf32>) -> tensor<2x8x16xf32> {
  // CHECK: enc.embedding %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {position_offset = 2 : i64} : (tensor<2x8xi32>, tensor<100x16xf32>, tensor<16x16xf32>, tensor<1x16xf32>) -> tensor<2x8x16xf32>
  %e = enc.embedding %ids, %word, %pos, %type {position_offset = 2 : i64}
      : (tensor<2x8xi32>, tensor<100x16xf32>, tensor<16x16xf32>, tensor<1x16xf32>) -> tensor<2x8x16xf32>
  // RoBERTa's positions past literal pad ids round trip too.
  // CHECK: enc.embedding %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {position_offset = 2 : i64, position_pad_id = 1 : i64}
  %ep = enc.embedding %ids, %word, %pos, %type {position_offset = 2 : i64, position_pad_id = 1 : i64}
      : (tensor<2x8xi32>, tensor<100x16xf32>, tensor<16x16xf32>, tensor<1x16xf32>) -> tensor<2x8x16xf32>
  // CHECK: enc.matmul %{{.*}}, %{{.*}} : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
  %w = enc.weight "w" : tensor<2x16x4xf32>
  %m = enc.matmul %e, %w : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
  return %e : tensor<2x8x16xf32>
}

// The ops the fusion passes produce (issue 3) round trip too.
// CHECK-LABEL: func.func @fused_ops
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x384xf32>, %[[S:.*]]: tensor<?x12x?x?xf32>, %[[LEN:.*]]: tensor<?xi32>)
func.func @fused_ops(%x: tensor<?x?x384xf32>, %s: tensor<?x12x?x?xf32>, %lengths: tensor<?xi32>)
    -> (tensor<?x?x384xf32>, tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>) {
  // CHECK: %[[D:.*]] = enc.div %[[S]] {divisor = 5.65685415 : f32} : tensor<?x12x?x?xf32>
  %d = enc.div %s {divisor = 5.65685415 : f32} : tensor<?x12x?x?xf32>
  // The default padding is not printed; an explicit "right" parses.
  // CHECK: %[[M:.*]] = enc.mask %[[D]], %[[LEN]] : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %m = enc.mask %d, %lengths {padding = #enc.padding<right>} : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  // CHECK: %[[P:.*]] = enc.scale_mask_softmax %[[S]], %[[LEN]] {padding = #enc.padding<right>, scale = 0.176776692 : f32}
  // CHECK-SAME: : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p = enc.scale_mask_softmax %s, %lengths {padding = #enc.padding<right>, scale = 0.176776695 : f32}
      : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %w = enc.weight "qkv.weight" : tensor<1152x384xf32>
  %b = enc.weight "qkv.bias" : tensor<1152xf32>
  // CHECK: %[[QKV:.*]] = enc.linear
  %qkv = enc.linear %x, %w, %b : (tensor<?x?x384xf32>, tensor<1152x384xf32>, tensor<1152xf32>) -> tensor<?x?x1152xf32>
  // CHECK: %[[SP:.*]]:3 = enc.split %[[QKV]] {parts = 3 : i64} : tensor<?x?x1152xf32> -> (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>)
  %q, %k, %v = enc.split %qkv {parts = 3 : i64}
      : tensor<?x?x1152xf32> -> (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>)
  // CHECK: %[[A3:.*]] = enc.attention %[[SP]]#0, %[[SP]]#1, %[[SP]]#2, %[[LEN]] {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
  // CHECK-SAME: : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  %a3 = enc.attention %q, %k, %v, %lengths {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776695 : f32}
      : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  // CHECK: %[[A1:.*]] = enc.attention %[[QKV]], %[[LEN]] {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
  // CHECK-SAME: : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  %a1 = enc.attention %qkv, %lengths {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776695 : f32}
      : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  // A local layer: keys within 64 of the query (ModernBERT's window of 128).
  // CHECK: enc.attention %[[QKV]], %[[LEN]] {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32, window = 64 : i64}
  %aw = enc.attention %qkv, %lengths {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776695 : f32, window = 64 : i64}
      : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  // Causal (decoder-style embedders), alone and with a window.
  // CHECK: enc.attention %[[QKV]], %[[LEN]] {causal, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
  %ac = enc.attention %qkv, %lengths {causal, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776695 : f32}
      : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  // CHECK: enc.attention %[[QKV]], %[[LEN]] {causal, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32, window = 512 : i64}
  %acw = enc.attention %qkv, %lengths {causal, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776695 : f32, window = 512 : i64}
      : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  // ALiBi (JinaBERT): a distance bias per head, no operand.
  // CHECK: enc.attention %[[QKV]], %[[LEN]] {alibi, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
  %aa = enc.attention %qkv, %lengths {alibi, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776695 : f32}
      : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  // MPNet's relative position bias, unfused and in the attention.
  %rt = enc.weight "encoder.relative_attention_bias.weight" : tensor<32x12xf32>
  // CHECK: %[[RB:.*]] = enc.relative_position_bias %[[S]], %{{.*}} {max_distance = 128 : i64} : (tensor<?x12x?x?xf32>, tensor<32x12xf32>) -> tensor<?x12x?x?xf32>
  %rb = enc.relative_position_bias %s, %rt {max_distance = 128 : i64} : (tensor<?x12x?x?xf32>, tensor<32x12xf32>) -> tensor<?x12x?x?xf32>
  // CHECK: enc.attention %[[QKV]], %[[LEN]] position_bias(%{{.*}}) {max_distance = 128 : i64, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.250000e-01 : f32}
  // CHECK-SAME: : (tensor<?x?x1152xf32>, tensor<?xi32>, tensor<32x12xf32>) -> tensor<?x?x384xf32>
  %ab = enc.attention %qkv, %lengths position_bias(%rt) {max_distance = 128 : i64, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.125 : f32}
      : (tensor<?x?x1152xf32>, tensor<?xi32>, tensor<32x12xf32>) -> tensor<?x?x384xf32>
  %g = enc.weight "ln.weight" : tensor<384xf32>
  %be = enc.weight "ln.bias" : tensor<384xf32>
  // CHECK: %[[Y:.*]] = enc.add_layernorm %[[A3]], %[[A1]], %{{.*}}, %{{.*}} {epsilon = 9.99999996E-13 : f32}
  // CHECK-SAME: : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %y = enc.add_layernorm %a3, %a1, %g, %be {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  // CHECK: return %[[Y]], %[[M]], %[[P]]
  return %y, %m, %p : tensor<?x?x384xf32>, tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>
}

// The int8 ops (issue 4) round trip: per-token quantize (dynamic and
// static), qlinear with and without bias / epilogue / scale summary, and the
// embedding with an i8 word table + per-row scales.
// CHECK-LABEL: func.func @int8_ops
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x?xi32>, %[[X:.*]]: tensor<?x?x384xf32>)
func.func @int8_ops(%ids: tensor<?x?xi32>, %x: tensor<?x?x384xf32>)
    -> (tensor<?x?x1536xf32>, tensor<?x?x4xf32>, tensor<?x?x384xf32>) {
  // CHECK: %[[XQ:.*]], %[[XS:.*]] = enc.quantize %[[X]] : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
  %xq, %xs = enc.quantize %x : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
  // CHECK: %[[YQ:.*]], %[[YS:.*]] = enc.quantize %[[X]] {static_scale = 5.000000e-02 : f32} : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
  %yq, %ys = enc.quantize %x {static_scale = 0.05 : f32} : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
  // CHECK: %[[WQ:.*]] = enc.weight "i.weight.q8" : tensor<1536x384xi8>
  // CHECK: %[[WS:.*]] = enc.weight "i.weight.q8scale" : tensor<1536xf32>
  // CHECK: %[[B:.*]] = enc.weight "i.bias" : tensor<1536xf32>
  %wq = enc.weight "i.weight.q8" : tensor<1536x384xi8>
  %ws = enc.weight "i.weight.q8scale" : tensor<1536xf32>
  %b = enc.weight "i.bias" : tensor<1536xf32>
  // CHECK: %[[H:.*]] = enc.qlinear %[[XQ]], %[[XS]], %[[WQ]], %[[WS]], %[[B]] {epilogue = #enc.epilogue<gelu>, w_scale_max = 2.000000e-02 : f32, w_scale_min = 1.000000e-03 : f32}
  // CHECK-SAME: : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<1536x384xi8>, tensor<1536xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  %h = enc.qlinear %xq, %xs, %wq, %ws, %b {epilogue = #enc.epilogue<gelu>, w_scale_min = 1.0e-3 : f32, w_scale_max = 2.0e-2 : f32}
      : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<1536x384xi8>, tensor<1536xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  %w2 = enc.weight "o.weight.q8" : tensor<4x384xi8>
  %s2 = enc.weight "o.weight.q8scale" : tensor<4xf32>
  // The default epilogue is not printed; no bias, no summary.
  // CHECK: %[[O:.*]] = enc.qlinear %[[YQ]], %[[YS]], %{{.*}}, %{{.*}} : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<4x384xi8>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %o = enc.qlinear %yq, %ys, %w2, %s2 {epilogue = #enc.epilogue<none>}
      : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<4x384xi8>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %word = enc.weight "word.q8" : tensor<100x384xi8>
  %wsc = enc.weight "word.q8scale" : tensor<100xf32>
  %pos = enc.weight "pos" : tensor<16x384xf32>
  %typ = enc.weight "type" : tensor<2x384xf32>
  // CHECK: %[[E:.*]] = enc.embedding %[[IDS]], %{{.*}}, %{{.*}}, %{{.*}} word_scale %{{.*}} {position_offset = 0 : i64}
  // CHECK-SAME: : (tensor<?x?xi32>, tensor<100x384xi8>, tensor<16x384xf32>, tensor<2x384xf32>, tensor<100xf32>) -> tensor<?x?x384xf32>
  %e = enc.embedding %ids, %word, %pos, %typ word_scale %wsc {position_offset = 0 : i64}
      : (tensor<?x?xi32>, tensor<100x384xi8>, tensor<16x384xf32>, tensor<2x384xf32>, tensor<100xf32>) -> tensor<?x?x384xf32>
  // CHECK: return %[[H]], %[[O]], %[[E]]
  return %h, %o, %e : tensor<?x?x1536xf32>, tensor<?x?x4xf32>, tensor<?x?x384xf32>
}

// Token type ids (a text pair's segments), alone and with an int8 word
// table: the two optional operands keep their places in both forms.
// CHECK-LABEL: func.func @typed_embedding
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x?xi32>, %[[TIDS:.*]]: tensor<?x?xi32>)
func.func @typed_embedding(%ids: tensor<?x?xi32>, %types: tensor<?x?xi32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %word = enc.weight "word" : tensor<100x8xf32>
  %wq = enc.weight "word.q8" : tensor<100x8xi8>
  %wsc = enc.weight "word.q8scale" : tensor<100xf32>
  %pos = enc.weight "pos" : tensor<16x8xf32>
  %typ = enc.weight "type" : tensor<2x8xf32>
  // CHECK: enc.embedding %[[IDS]], %{{.*}}, %{{.*}}, %{{.*}} type_ids %[[TIDS]] {position_offset = 0 : i64}
  // CHECK-SAME: : (tensor<?x?xi32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %e = enc.embedding %ids, %word, %pos, %typ type_ids %types {position_offset = 0 : i64}
      : (tensor<?x?xi32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  // CHECK: enc.embedding %[[IDS]], %{{.*}}, %{{.*}}, %{{.*}} word_scale %{{.*}} type_ids %[[TIDS]] {position_offset = 2 : i64}
  // CHECK-SAME: : (tensor<?x?xi32>, tensor<100x8xi8>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<100xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %q = enc.embedding %ids, %wq, %pos, %typ word_scale %wsc type_ids %types {position_offset = 2 : i64}
      : (tensor<?x?xi32>, tensor<100x8xi8>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<100xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return %e, %q : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// The import-level arithmetic of decomposed graphs (ONNX), which the
// recognition passes fold away.
// CHECK-LABEL: func.func @import_level
func.func @import_level(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) -> tensor<?x?x8xf32> {
  // CHECK: enc.constant dense<2.000000e+00> : tensor<f32>
  %two = enc.constant dense<2.0> : tensor<f32>
  // CHECK: enc.reduce_mean %{{.*}} : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %m = enc.reduce_mean %x : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  // CHECK: enc.binary %{{.*}}, %{{.*}} {kind = #enc.binary<sub>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %d = enc.binary %x, %m {kind = #enc.binary<sub>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  // CHECK: enc.binary %{{.*}}, %{{.*}} {kind = #enc.binary<pow>} : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %p = enc.binary %d, %two {kind = #enc.binary<pow>} : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  // CHECK: enc.unary %{{.*}} {kind = #enc.unary<erf>} : tensor<?x?x8xf32>
  %e = enc.unary %p {kind = #enc.unary<erf>} : tensor<?x?x8xf32>
  // CHECK: enc.binary %{{.*}}, %{{.*}} {kind = #enc.binary<mul>} : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %y = enc.binary %g, %e {kind = #enc.binary<mul>} : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// Qwen3's pieces: grouped key/value heads (16 query heads of 128, 2048 wide,
// not the hidden size, over 8 key/value heads, 1024 wide), causal; RMSNorm
// over the hidden state and per head (the q/k norms).
// CHECK-LABEL: func.func @grouped_attention_rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x1024xf32>, %[[Q:.*]]: tensor<?x?x2048xf32>, %[[K:.*]]: tensor<?x?x1024xf32>, %[[L:.*]]: tensor<?xi32>)
func.func @grouped_attention_rms_norm(%x: tensor<?x?x1024xf32>, %q: tensor<?x?x2048xf32>, %k: tensor<?x?x1024xf32>,
                                      %lengths: tensor<?xi32>)
    -> (tensor<?x?x2048xf32>, tensor<?x?x1024xf32>, tensor<?x?x2048xf32>) {
  // CHECK: enc.attention %[[Q]], %[[K]], %[[K]], %[[L]] {causal, num_heads = 16 : i64, num_kv_heads = 8 : i64, padding = #enc.padding<right>, scale = 0.0883883461 : f32}
  // CHECK-SAME: : (tensor<?x?x2048xf32>, tensor<?x?x1024xf32>, tensor<?x?x1024xf32>, tensor<?xi32>) -> tensor<?x?x2048xf32>
  %a = enc.attention %q, %k, %k, %lengths {causal, num_heads = 16 : i64, num_kv_heads = 8 : i64, padding = #enc.padding<right>, scale = 0.0883883461 : f32}
      : (tensor<?x?x2048xf32>, tensor<?x?x1024xf32>, tensor<?x?x1024xf32>, tensor<?xi32>) -> tensor<?x?x2048xf32>
  %g = enc.weight "norm.weight" : tensor<1024xf32>
  %hg = enc.weight "q_norm.weight" : tensor<128xf32>
  // CHECK: enc.rms_norm %[[X]], %{{.*}} {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x1024xf32>, tensor<1024xf32>) -> tensor<?x?x1024xf32>
  %n = enc.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<?x?x1024xf32>, tensor<1024xf32>) -> tensor<?x?x1024xf32>
  // CHECK: enc.rms_norm %[[Q]], %{{.*}} {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x2048xf32>, tensor<128xf32>) -> tensor<?x?x2048xf32>
  %qn = enc.rms_norm %q, %hg {epsilon = 1.0e-6 : f32} : (tensor<?x?x2048xf32>, tensor<128xf32>) -> tensor<?x?x2048xf32>
  return %a, %n, %qn : tensor<?x?x2048xf32>, tensor<?x?x1024xf32>, tensor<?x?x2048xf32>
}
