// RUN: enc-opt %s -enc-fuse-attention -split-input-file | FileCheck %s
// enc-fuse-attention: split_heads -> Q.K^T -> scale_mask_softmax -> .V ->
// merge_heads becomes one enc.attention on merged [B, S, H] tensors.

// Three separate inputs.
// CHECK-LABEL: func.func @qkv_separate
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x8xf32>, %[[K:.*]]: tensor<?x?x8xf32>, %[[V:.*]]: tensor<?x?x8xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[O:.*]] = enc.attention %[[Q]], %[[K]], %[[V]], %[[LEN]] {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-SAME: : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @qkv_separate(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// q, k, v are the slices 0, 1, 2 of one enc.split: the packed form reads the
// split's input, and the split disappears.
// CHECK-LABEL: func.func @qkv_packed
// CHECK-SAME: (%[[QKV:.*]]: tensor<?x?x24xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[O:.*]] = enc.attention %[[QKV]], %[[LEN]] {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-SAME: : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @qkv_packed(%qkv: tensor<?x?x24xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %q, %k, %v = enc.split %qkv {parts = 3 : i64} : tensor<?x?x24xf32> -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// Split slices in another order (k first): not the packed layout, so the
// three-input form reads the slices and the split stays.
// CHECK-LABEL: func.func @qkv_split_reordered
// CHECK: %[[S:.*]]:3 = enc.split
// CHECK-NEXT: %[[O:.*]] = enc.attention %[[S]]#1, %[[S]]#0, %[[S]]#2, %{{.*}} {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @qkv_split_reordered(%qkv: tensor<?x?x24xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %k, %q, %v = enc.split %qkv {parts = 3 : i64} : tensor<?x?x24xf32> -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// Negative: the attention probabilities are also returned.
// CHECK-LABEL: func.func @probs_other_user
// CHECK-NOT: enc.attention
// CHECK: %[[P:.*]] = enc.scale_mask_softmax
// CHECK: enc.merge_heads
// CHECK: return %{{.*}}, %[[P]]
func.func @probs_other_user(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?x?xf32>) {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c, %p : tensor<?x?x8xf32>, tensor<?x2x?x?xf32>
}

// -----

// Negative: the split-heads view of q is used elsewhere.
// CHECK-LABEL: func.func @split_heads_other_user
// CHECK-NOT: enc.attention
// CHECK: %[[QH:.*]] = enc.split_heads
// CHECK: enc.merge_heads
// CHECK: return %{{.*}}, %[[QH]]
func.func @split_heads_other_user(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?x4xf32>) {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c, %qh : tensor<?x?x8xf32>, tensor<?x2x?x4xf32>
}

// -----

// Negative: the softmax chain was not fused (mask + softmax still separate),
// so there is no scale_mask_softmax to absorb.
// CHECK-LABEL: func.func @unfused_softmax
// CHECK-NOT: enc.attention
// CHECK: enc.softmax
// CHECK: enc.merge_heads
func.func @unfused_softmax(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %m = enc.mask %s, %len : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %p = enc.softmax %m : tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// Negative: q and k are split into different numbers of heads (the shapes
// are dynamic, so the IR verifies, but the heads disagree).
// CHECK-LABEL: func.func @head_counts_differ
// CHECK-NOT: enc.attention
// CHECK: enc.merge_heads
func.func @head_counts_differ(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x?x?x?xf32>
  %kh = enc.split_heads %k {num_heads = 4 : i64} : tensor<?x?x8xf32> -> tensor<?x?x?x?xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x?x?x?xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x?x?x?xf32>, tensor<?xi32>) -> tensor<?x?x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %c = enc.merge_heads %ch : tensor<?x?x?x?xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// The same graph with agreeing head counts and dynamic head dims fuses
// (contrast with @head_counts_differ).
// CHECK-LABEL: func.func @dynamic_heads
// CHECK-NEXT: %[[O:.*]] = enc.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @dynamic_heads(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x?x?x?xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x?x?x?xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x?x?x?xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x?x?x?xf32>, tensor<?xi32>) -> tensor<?x?x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %c = enc.merge_heads %ch : tensor<?x?x?x?xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// MPNet: a relative position bias between the scale and the masked softmax
// (enc-fuse-scale-mask-softmax leaves scale_mask_softmax {scale = 1} after
// it). The attention takes the table as its position_bias and the scale op's
// factor as its scale.
// CHECK-LABEL: func.func @relative_position_bias
// CHECK-SAME: (%[[QKV:.*]]: tensor<?x?x24xf32>, %[[LEN:.*]]: tensor<?xi32>, %[[T:.*]]: tensor<32x2xf32>)
// CHECK-NEXT: %[[O:.*]] = enc.attention %[[QKV]], %[[LEN]] position_bias(%[[T]]) {max_distance = 128 : i64, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-SAME: : (tensor<?x?x24xf32>, tensor<?xi32>, tensor<32x2xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @relative_position_bias(%qkv: tensor<?x?x24xf32>, %len: tensor<?xi32>, %t: tensor<32x2xf32>) -> tensor<?x?x8xf32> {
  %q, %k, %v = enc.split %qkv {parts = 3 : i64} : tensor<?x?x24xf32> -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %sc = enc.scale %s {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
  %b = enc.relative_position_bias %sc, %t {max_distance = 128 : i64} : (tensor<?x2x?x?xf32>, tensor<32x2xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %b, %len {padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// The same chain unfused (mask and softmax apart, as with
// --disable-pass fuse-scale-mask-softmax), three inputs, a scale of 1 folded
// away: the attention's scale is 1.
// CHECK-LABEL: func.func @relative_position_bias_unfused_softmax
// CHECK: enc.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} position_bias(%{{.*}}) {max_distance = 64 : i64, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 1.000000e+00 : f32}
// CHECK-NOT: enc.softmax
func.func @relative_position_bias_unfused_softmax(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>, %t: tensor<16x2xf32>) -> tensor<?x?x8xf32> {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %b = enc.relative_position_bias %s, %t {max_distance = 64 : i64} : (tensor<?x2x?x?xf32>, tensor<16x2xf32>) -> tensor<?x2x?x?xf32>
  %m = enc.mask %b, %len : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %p = enc.softmax %m : tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// A scale_mask_softmax scale other than 1 after the bias would scale the bias
// too, which enc.attention cannot express: nothing fuses.
// CHECK-LABEL: func.func @relative_position_bias_scaled_after
// CHECK-NOT: enc.attention
// CHECK: enc.relative_position_bias
// CHECK: enc.scale_mask_softmax
func.func @relative_position_bias_scaled_after(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>, %t: tensor<32x2xf32>) -> tensor<?x?x8xf32> {
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %b = enc.relative_position_bias %s, %t {max_distance = 128 : i64} : (tensor<?x2x?x?xf32>, tensor<32x2xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %b, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// An enc.attention already there (the HF frontend's) on one split's three
// parts in order takes the packed form, its attributes kept; parts out of
// order, or grouped key/value heads, stay unpacked.
// CHECK-LABEL: func.func @pack_existing
// CHECK-SAME: (%[[QKV:.*]]: tensor<?x?x24xf32>, %[[LEN:.*]]: tensor<?xi32>, %[[T:.*]]: tensor<32x2xf32>)
// CHECK-NEXT: %[[S:.*]]:3 = enc.split %[[QKV]]
// CHECK-NEXT: %[[A:.*]] = enc.attention %[[QKV]], %[[LEN]] position_bias(%[[T]]) {max_distance = 128 : i64, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-SAME: (tensor<?x?x24xf32>, tensor<?xi32>, tensor<32x2xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: %[[B:.*]] = enc.attention %[[S]]#1, %[[S]]#0, %[[S]]#2, %[[LEN]]
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @pack_existing(%qkv: tensor<?x?x24xf32>, %len: tensor<?xi32>, %t: tensor<32x2xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %q, %k, %v = enc.split %qkv {parts = 3 : i64} : tensor<?x?x24xf32> -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  %a = enc.attention %q, %k, %v, %len position_bias(%t) {max_distance = 128 : i64, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?xi32>, tensor<32x2xf32>) -> tensor<?x?x8xf32>
  %b = enc.attention %k, %q, %v, %len {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  return %a, %b : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}
