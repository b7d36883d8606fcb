// RUN: enc-opt %s -enc-form-fusion-groups -split-input-file | FileCheck %s
// enc-form-fusion-groups: the chains one kernel computes become enc.fusion
// groups at the place of their first op, yielding the values used after them.

// add_layernorm + the quantize of its result (the int8 tier): the group
// yields the f32 rows (the next residual reads them) and both quantize results.
// CHECK-LABEL: func.func @layernorm_quantize
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[R:.*]]: tensor<?x?x8xf32>)
// CHECK:      %[[F:.*]]:3 = enc.fusion -> (tensor<?x?x8xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>) {
// CHECK-NEXT:   %[[N:.*]] = enc.add_layernorm %[[X]], %[[R]]
// CHECK-NEXT:   %[[Q:.*]], %[[S:.*]] = enc.quantize %[[N]]
// CHECK-NEXT:   enc.yield %[[N]], %[[Q]], %[[S]] : tensor<?x?x8xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>
// CHECK-NEXT: }
// CHECK:      %[[Y:.*]] = enc.qlinear %[[F]]#1, %[[F]]#2
// CHECK:      enc.add %[[Y]], %[[F]]#0
func.func @layernorm_quantize(%x: tensor<?x?x8xf32>, %r: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %g = enc.weight "ln.weight" : tensor<8xf32>
  %b = enc.weight "ln.bias" : tensor<8xf32>
  %n = enc.add_layernorm %x, %r, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %w = enc.weight "fc.weight.q8" : tensor<8x8xi8>
  %ws = enc.weight "fc.weight.q8scale" : tensor<8xf32>
  %q, %s = enc.quantize %n : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
  %y = enc.qlinear %q, %s, %w, %ws : (tensor<?x?x8xui8>, tensor<?x?xf32>, tensor<8x8xi8>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %z = enc.add %y, %n : tensor<?x?x8xf32>
  return %z : tensor<?x?x8xf32>
}

// -----

// A layernorm + to_bf16 (the bf16 tier) whose f32 rows nothing else reads:
// only the rounded rows are yielded.
// CHECK-LABEL: func.func @layernorm_to_bf16
// CHECK:      %[[F:.*]] = enc.fusion -> (tensor<?x?x8xbf16>) {
// CHECK-NEXT:   %[[N:.*]] = enc.layernorm
// CHECK-NEXT:   %[[C:.*]] = enc.to_bf16 %[[N]]
// CHECK-NEXT:   enc.yield %[[C]] : tensor<?x?x8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @layernorm_to_bf16(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) -> tensor<?x?x8xbf16> {
  %n = enc.layernorm %x, %g, %g {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %c = enc.to_bf16 %n : tensor<?x?x8xf32> -> tensor<?x?x8xbf16>
  return %c : tensor<?x?x8xbf16>
}

// -----

// embedding + the layernorm that is its only user + that layernorm's
// quantize: one group of three. The layernorm's weights, defined after the
// embedding, move above the group.
// CHECK-LABEL: func.func @embedding_layernorm_quantize
// CHECK:      %[[G:.*]] = enc.weight "emb.ln.weight"
// CHECK-NEXT: %[[B:.*]] = enc.weight "emb.ln.bias"
// CHECK-NEXT: %[[F:.*]]:3 = enc.fusion -> (tensor<?x?x8xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>) {
// CHECK-NEXT:   %[[E:.*]] = enc.embedding
// CHECK-NEXT:   %[[N:.*]] = enc.layernorm %[[E]], %[[G]], %[[B]]
// CHECK-NEXT:   %[[Q:.*]], %[[S:.*]] = enc.quantize %[[N]]
// CHECK-NEXT:   enc.yield %[[N]], %[[Q]], %[[S]]
// CHECK-NEXT: }
func.func @embedding_layernorm_quantize(%ids: tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>) {
  %word = enc.weight "word" : tensor<10x8xf32>
  %pos = enc.weight "pos" : tensor<16x8xf32>
  %type = enc.weight "type" : tensor<2x8xf32>
  %e = enc.embedding %ids, %word, %pos, %type {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  %g = enc.weight "emb.ln.weight" : tensor<8xf32>
  %b = enc.weight "emb.ln.bias" : tensor<8xf32>
  %n = enc.layernorm %e, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %q, %s = enc.quantize %n : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
  return %n, %q, %s : tensor<?x?x8xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>
}

// -----

// pool + the l2norm that is its only user.
// CHECK-LABEL: func.func @pool_l2norm
// CHECK:      %[[F:.*]] = enc.fusion -> (tensor<?x8xf32>) {
// CHECK-NEXT:   %[[P:.*]] = enc.pool
// CHECK-NEXT:   %[[L:.*]] = enc.l2norm %[[P]]
// CHECK-NEXT:   enc.yield %[[L]] : tensor<?x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @pool_l2norm(%h: tensor<?x?x8xf32>, %lengths: tensor<?xi32>) -> tensor<?x8xf32> {
  %p = enc.pool %h, %lengths {mode = #enc.pooling<mean>} : (tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %l = enc.l2norm %p : tensor<?x8xf32>
  return %l : tensor<?x8xf32>
}

// -----

// Negative: an embedding read by more than its layernorm, a pooled vector
// also returned unnormalised, a layernorm with no conversion of its result,
// and a quantize of an argument: no groups. Two quantizes of one layernorm:
// only the first joins it.
// CHECK-LABEL: func.func @no_groups
// CHECK-NOT:  enc.fusion
// CHECK:      return
func.func @no_groups(%ids: tensor<?x?xi32>, %x: tensor<?x?x8xf32>, %lengths: tensor<?xi32>, %w: tensor<10x8xf32>, %t: tensor<2x8xf32>, %g: tensor<8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>) {
  %e = enc.embedding %ids, %w, %w, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<10x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  %n = enc.layernorm %e, %g, %g {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %s = enc.add %n, %e : tensor<?x?x8xf32>
  %p = enc.pool %s, %lengths {mode = #enc.pooling<cls>} : (tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %l = enc.l2norm %p : tensor<?x8xf32>
  %q, %qs = enc.quantize %x : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
  return %s, %p, %l, %q, %qs : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @first_conversion
// CHECK:      %[[F:.*]]:3 = enc.fusion
// CHECK-NEXT:   %[[N:.*]] = enc.layernorm
// CHECK-NEXT:   enc.quantize %[[N]] :
// CHECK-NEXT:   enc.yield
// CHECK-NEXT: }
// CHECK-NEXT: enc.quantize %[[F]]#0 {static_scale
func.func @first_conversion(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) -> (tensor<?x?x8xui8>, tensor<?x?xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>) {
  %n = enc.layernorm %x, %g, %g {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %q1, %s1 = enc.quantize %n : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
  %q2, %s2 = enc.quantize %n {static_scale = 0.05 : f32} : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
  return %q1, %s1, %q2, %s2 : tensor<?x?x8xui8>, tensor<?x?xf32>, tensor<?x?x8xui8>, tensor<?x?xf32>
}

// -----

// A qlinear whose float result only its quantize reads (the FFN's GELU
// Linear in the int8 tier): a group that yields the quantised rows alone.
// A qlinear whose float result is also read elsewhere stays ungrouped.
// CHECK-LABEL: func.func @qlinear_quantize
// CHECK:      %[[F:.*]]:2 = enc.fusion -> (tensor<?x16xui8>, tensor<?xf32>) {
// CHECK-NEXT:   %[[Y:.*]] = enc.qlinear
// CHECK-NEXT:   %[[Q:.*]], %[[S:.*]] = enc.quantize %[[Y]]
// CHECK-NEXT:   enc.yield %[[Q]], %[[S]] : tensor<?x16xui8>, tensor<?xf32>
// CHECK-NEXT: }
// CHECK:      %[[Z:.*]] = enc.qlinear %[[F]]#0, %[[F]]#1
// CHECK-NEXT: enc.quantize %[[Z]]
// CHECK-NOT:  enc.fusion
// CHECK:      return
func.func @qlinear_quantize(%x: tensor<?x8xui8>, %xs: tensor<?xf32>) -> (tensor<?x16xui8>, tensor<?x16xf32>) {
  %w = enc.weight "up.q8" : tensor<16x8xi8>
  %ws = enc.weight "up.q8scale" : tensor<16xf32>
  %y = enc.qlinear %x, %xs, %w, %ws {epilogue = #enc.epilogue<gelu>} : (tensor<?x8xui8>, tensor<?xf32>, tensor<16x8xi8>, tensor<16xf32>) -> tensor<?x16xf32>
  %q, %s = enc.quantize %y : tensor<?x16xf32> -> (tensor<?x16xui8>, tensor<?xf32>)
  %w2 = enc.weight "mid.q8" : tensor<16x16xi8>
  %ws2 = enc.weight "mid.q8scale" : tensor<16xf32>
  %z = enc.qlinear %q, %s, %w2, %ws2 : (tensor<?x16xui8>, tensor<?xf32>, tensor<16x16xi8>, tensor<16xf32>) -> tensor<?x16xf32>
  %q2, %s2 = enc.quantize %z : tensor<?x16xf32> -> (tensor<?x16xui8>, tensor<?xf32>)
  return %q2, %z : tensor<?x16xui8>, tensor<?x16xf32>
}

// -----

// A qlinear whose float result only a residual add_layernorm reads (the
// attention output and FFN down projections in the int8 tier): one group with
// that add_layernorm and the quantize of its rows; the group yields the
// LayerNorm's rows (the next residual) and the quantised rows.
// CHECK-LABEL: func.func @qlinear_add_layernorm_quantize
// CHECK:      %[[G:.*]] = enc.weight "ln.weight"
// CHECK-NEXT: %[[B:.*]] = enc.weight "ln.bias"
// CHECK-NEXT: %[[F:.*]]:3 = enc.fusion -> (tensor<?x8xf32>, tensor<?x8xui8>, tensor<?xf32>) {
// CHECK-NEXT:   %[[Y:.*]] = enc.qlinear
// CHECK-NEXT:   %[[N:.*]] = enc.add_layernorm %[[Y]], %{{.*}}, %[[G]], %[[B]]
// CHECK-NEXT:   %[[Q:.*]], %[[S:.*]] = enc.quantize %[[N]]
// CHECK-NEXT:   enc.yield %[[N]], %[[Q]], %[[S]]
// CHECK-NEXT: }
func.func @qlinear_add_layernorm_quantize(%x: tensor<?x16xui8>, %xs: tensor<?xf32>, %r: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xui8>, tensor<?xf32>) {
  %w = enc.weight "down.q8" : tensor<8x16xi8>
  %ws = enc.weight "down.q8scale" : tensor<8xf32>
  %y = enc.qlinear %x, %xs, %w, %ws : (tensor<?x16xui8>, tensor<?xf32>, tensor<8x16xi8>, tensor<8xf32>) -> tensor<?x8xf32>
  %g = enc.weight "ln.weight" : tensor<8xf32>
  %b = enc.weight "ln.bias" : tensor<8xf32>
  %n = enc.add_layernorm %y, %r, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %q, %s = enc.quantize %n : tensor<?x8xf32> -> (tensor<?x8xui8>, tensor<?xf32>)
  return %n, %q, %s : tensor<?x8xf32>, tensor<?x8xui8>, tensor<?xf32>
}
