// RUN: enc-opt %s -enc-pipeline | FileCheck %s
// RUN: enc-opt %s -enc-pipeline | FileCheck %s --check-prefix=GONE
// RUN: enc-opt %s -enc-pipeline > %t
// RUN: grep -c "enc.attention " %t | FileCheck %s --check-prefix=TWO
// RUN: grep -c "epilogue = #enc.epilogue<gelu>" %t | FileCheck %s --check-prefix=TWO
// RUN: grep -c "enc.add_layernorm " %t | FileCheck %s --check-prefix=FOUR
// RUN: grep -c "enc.linear " %t | FileCheck %s --check-prefix=EIGHT
// RUN: grep -c "enc.layernorm " %t | FileCheck %s --check-prefix=ONE
// The whole enc pipeline on a 2-layer MiniLM-shaped encoder (hidden 384,
// 12 heads, intermediate 1536) as the HF frontend emits it. Per layer the
// result is one packed attention, one Linear with a GELU epilogue and two
// add_layernorm; no softmax, mask or scale is left.

// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x?xi32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK: %[[EMB:.*]] = enc.embedding %[[IDS]]
// CHECK: %[[X0:.*]] = enc.layernorm %[[EMB]]

// Layer 0.
// CHECK: %[[W0:.*]] = enc.weight "encoder.layer.0.attention.self.query.weight+encoder.layer.0.attention.self.key.weight+encoder.layer.0.attention.self.value.weight" : tensor<1152x384xf32>
// CHECK-NEXT: %[[B0:.*]] = enc.weight "encoder.layer.0.attention.self.query.bias+encoder.layer.0.attention.self.key.bias+encoder.layer.0.attention.self.value.bias" : tensor<1152xf32>
// CHECK-NEXT: %[[QKV0:.*]] = enc.linear %[[X0]], %[[W0]], %[[B0]] : (tensor<?x?x384xf32>, tensor<1152x384xf32>, tensor<1152xf32>) -> tensor<?x?x1152xf32>
// CHECK-NEXT: %[[A0:.*]] = enc.attention %[[QKV0]], %[[LEN]] {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
// CHECK: %[[O0:.*]] = enc.linear %[[A0]], %{{.*}}, %{{.*}} : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
// CHECK: %[[Y0:.*]] = enc.add_layernorm %[[O0]], %[[X0]], %{{.*}}, %{{.*}} {epsilon = 9.99999996E-13 : f32}
// CHECK: %[[I0:.*]] = enc.linear %[[Y0]], %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
// CHECK: %[[D0:.*]] = enc.linear %[[I0]], %{{.*}}, %{{.*}} : (tensor<?x?x1536xf32>, tensor<384x1536xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
// CHECK: %[[X1:.*]] = enc.add_layernorm %[[D0]], %[[Y0]], %{{.*}}, %{{.*}} {epsilon = 9.99999996E-13 : f32}

// Layer 1.
// CHECK: %[[W1:.*]] = enc.weight "encoder.layer.1.attention.self.query.weight+encoder.layer.1.attention.self.key.weight+encoder.layer.1.attention.self.value.weight" : tensor<1152x384xf32>
// CHECK-NEXT: %[[B1:.*]] = enc.weight "encoder.layer.1.attention.self.query.bias+encoder.layer.1.attention.self.key.bias+encoder.layer.1.attention.self.value.bias" : tensor<1152xf32>
// CHECK-NEXT: %[[QKV1:.*]] = enc.linear %[[X1]], %[[W1]], %[[B1]]
// CHECK-NEXT: %[[A1:.*]] = enc.attention %[[QKV1]], %[[LEN]] {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 0.176776692 : f32}
// CHECK: %[[O1:.*]] = enc.linear %[[A1]]
// CHECK: %[[Y1:.*]] = enc.add_layernorm %[[O1]], %[[X1]]
// CHECK: %[[I1:.*]] = enc.linear %[[Y1]], %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu>}
// CHECK: %[[D1:.*]] = enc.linear %[[I1]]
// CHECK: %[[X2:.*]] = enc.add_layernorm %[[D1]], %[[Y1]]

// CHECK: %[[PM:.*]] = enc.pool %[[X2]], %[[LEN]] {mode = #enc.pooling<mean>}
// CHECK: %[[N:.*]] = enc.l2norm %[[PM]]
// CHECK: return %[[X2]], %[[N]]

// None of the unfused ops survive.
// GONE-NOT: enc.softmax
// GONE-NOT: enc.mask
// GONE-NOT: enc.scale
// GONE-NOT: enc.div
// GONE-NOT: enc.split
// GONE-NOT: enc.matmul
// GONE-NOT: enc.merge_heads
// GONE-NOT: enc.gelu
// GONE-NOT: enc.split_heads
// GONE-NOT: enc.add %
// GONE: return

// Exact op counts: per layer one attention, four Linears (QKV, output,
// intermediate with GELU epilogue, output) and two add_layernorm; the only
// plain layernorm left is the embeddings one.
// ONE: {{^}}1{{$}}
// TWO: {{^}}2{{$}}
// FOUR: {{^}}4{{$}}
// EIGHT: {{^}}8{{$}}
func.func @forward(%ids: tensor<?x?xi32>, %lengths: tensor<?xi32>)
    -> (tensor<?x?x384xf32>, tensor<?x384xf32>) {
  %word = enc.weight "embeddings.word_embeddings.weight" : tensor<30522x384xf32>
  %pos = enc.weight "embeddings.position_embeddings.weight" : tensor<512x384xf32>
  %type = enc.weight "embeddings.token_type_embeddings.weight" : tensor<2x384xf32>
  %eg = enc.weight "embeddings.LayerNorm.weight" : tensor<384xf32>
  %eb = enc.weight "embeddings.LayerNorm.bias" : tensor<384xf32>
  %emb = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : i64}
      : (tensor<?x?xi32>, tensor<30522x384xf32>, tensor<512x384xf32>, tensor<2x384xf32>) -> tensor<?x?x384xf32>
  %x0 = enc.layernorm %emb, %eg, %eb {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>

  // Layer 0: self-attention.
  %wq0 = enc.weight "encoder.layer.0.attention.self.query.weight" : tensor<384x384xf32>
  %bq0 = enc.weight "encoder.layer.0.attention.self.query.bias" : tensor<384xf32>
  %wk0 = enc.weight "encoder.layer.0.attention.self.key.weight" : tensor<384x384xf32>
  %bk0 = enc.weight "encoder.layer.0.attention.self.key.bias" : tensor<384xf32>
  %wv0 = enc.weight "encoder.layer.0.attention.self.value.weight" : tensor<384x384xf32>
  %bv0 = enc.weight "encoder.layer.0.attention.self.value.bias" : tensor<384xf32>
  %q0 = enc.linear %x0, %wq0, %bq0 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %qh0 = enc.split_heads %q0 {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %k0 = enc.linear %x0, %wk0, %bk0 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %kh0 = enc.split_heads %k0 {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %v0 = enc.linear %x0, %wv0, %bv0 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %vh0 = enc.split_heads %v0 {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %s0 = enc.matmul %qh0, %kh0 {transpose_b} : (tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x?xf32>
  %ss0 = enc.scale %s0 {factor = 0.176776695 : f32} : tensor<?x12x?x?xf32>
  %m0 = enc.mask %ss0, %lengths : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p0 = enc.softmax %m0 : tensor<?x12x?x?xf32>
  %ch0 = enc.matmul %p0, %vh0 : (tensor<?x12x?x?xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x32xf32>
  %c0 = enc.merge_heads %ch0 : tensor<?x12x?x32xf32> -> tensor<?x?x384xf32>
  %wo0 = enc.weight "encoder.layer.0.attention.output.dense.weight" : tensor<384x384xf32>
  %bo0 = enc.weight "encoder.layer.0.attention.output.dense.bias" : tensor<384xf32>
  %o0 = enc.linear %c0, %wo0, %bo0 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %r0 = enc.add %o0, %x0 : tensor<?x?x384xf32>
  %g10 = enc.weight "encoder.layer.0.attention.output.LayerNorm.weight" : tensor<384xf32>
  %b10 = enc.weight "encoder.layer.0.attention.output.LayerNorm.bias" : tensor<384xf32>
  %y0 = enc.layernorm %r0, %g10, %b10 {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  // Layer 0: feed-forward.
  %wi0 = enc.weight "encoder.layer.0.intermediate.dense.weight" : tensor<1536x384xf32>
  %bi0 = enc.weight "encoder.layer.0.intermediate.dense.bias" : tensor<1536xf32>
  %i0 = enc.linear %y0, %wi0, %bi0 : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  %gi0 = enc.gelu %i0 {approximate = #enc.approximation<none>} : tensor<?x?x1536xf32>
  %wd0 = enc.weight "encoder.layer.0.output.dense.weight" : tensor<384x1536xf32>
  %bd0 = enc.weight "encoder.layer.0.output.dense.bias" : tensor<384xf32>
  %d0 = enc.linear %gi0, %wd0, %bd0 : (tensor<?x?x1536xf32>, tensor<384x1536xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %r20 = enc.add %d0, %y0 : tensor<?x?x384xf32>
  %g20 = enc.weight "encoder.layer.0.output.LayerNorm.weight" : tensor<384xf32>
  %b20 = enc.weight "encoder.layer.0.output.LayerNorm.bias" : tensor<384xf32>
  %x1 = enc.layernorm %r20, %g20, %b20 {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>

  // Layer 1: self-attention.
  %wq1 = enc.weight "encoder.layer.1.attention.self.query.weight" : tensor<384x384xf32>
  %bq1 = enc.weight "encoder.layer.1.attention.self.query.bias" : tensor<384xf32>
  %wk1 = enc.weight "encoder.layer.1.attention.self.key.weight" : tensor<384x384xf32>
  %bk1 = enc.weight "encoder.layer.1.attention.self.key.bias" : tensor<384xf32>
  %wv1 = enc.weight "encoder.layer.1.attention.self.value.weight" : tensor<384x384xf32>
  %bv1 = enc.weight "encoder.layer.1.attention.self.value.bias" : tensor<384xf32>
  %q1 = enc.linear %x1, %wq1, %bq1 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %qh1 = enc.split_heads %q1 {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %k1 = enc.linear %x1, %wk1, %bk1 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %kh1 = enc.split_heads %k1 {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %v1 = enc.linear %x1, %wv1, %bv1 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %vh1 = enc.split_heads %v1 {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x32xf32>
  %s1 = enc.matmul %qh1, %kh1 {transpose_b} : (tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x?xf32>
  %ss1 = enc.scale %s1 {factor = 0.176776695 : f32} : tensor<?x12x?x?xf32>
  %m1 = enc.mask %ss1, %lengths : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p1 = enc.softmax %m1 : tensor<?x12x?x?xf32>
  %ch1 = enc.matmul %p1, %vh1 : (tensor<?x12x?x?xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x32xf32>
  %c1 = enc.merge_heads %ch1 : tensor<?x12x?x32xf32> -> tensor<?x?x384xf32>
  %wo1 = enc.weight "encoder.layer.1.attention.output.dense.weight" : tensor<384x384xf32>
  %bo1 = enc.weight "encoder.layer.1.attention.output.dense.bias" : tensor<384xf32>
  %o1 = enc.linear %c1, %wo1, %bo1 : (tensor<?x?x384xf32>, tensor<384x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %r1 = enc.add %o1, %x1 : tensor<?x?x384xf32>
  %g11 = enc.weight "encoder.layer.1.attention.output.LayerNorm.weight" : tensor<384xf32>
  %b11 = enc.weight "encoder.layer.1.attention.output.LayerNorm.bias" : tensor<384xf32>
  %y1 = enc.layernorm %r1, %g11, %b11 {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  // Layer 1: feed-forward.
  %wi1 = enc.weight "encoder.layer.1.intermediate.dense.weight" : tensor<1536x384xf32>
  %bi1 = enc.weight "encoder.layer.1.intermediate.dense.bias" : tensor<1536xf32>
  %i1 = enc.linear %y1, %wi1, %bi1 : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1536xf32>) -> tensor<?x?x1536xf32>
  %gi1 = enc.gelu %i1 {approximate = #enc.approximation<none>} : tensor<?x?x1536xf32>
  %wd1 = enc.weight "encoder.layer.1.output.dense.weight" : tensor<384x1536xf32>
  %bd1 = enc.weight "encoder.layer.1.output.dense.bias" : tensor<384xf32>
  %d1 = enc.linear %gi1, %wd1, %bd1 : (tensor<?x?x1536xf32>, tensor<384x1536xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  %r21 = enc.add %d1, %y1 : tensor<?x?x384xf32>
  %g21 = enc.weight "encoder.layer.1.output.LayerNorm.weight" : tensor<384xf32>
  %b21 = enc.weight "encoder.layer.1.output.LayerNorm.bias" : tensor<384xf32>
  %x2 = enc.layernorm %r21, %g21, %b21 {epsilon = 1.0e-12 : f32}
      : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>

  // Mean pooling + normalisation.
  %pm = enc.pool %x2, %lengths {mode = #enc.pooling<mean>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
  %n = enc.l2norm %pm : tensor<?x384xf32>
  return %x2, %n : tensor<?x?x384xf32>, tensor<?x384xf32>
}
