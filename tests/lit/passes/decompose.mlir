// RUN: enc-opt %s -enc-decompose -split-input-file | FileCheck %s
// RUN: enc-opt %s -enc-decompose -enc-fuse-scale-mask-softmax -enc-fuse-attention -split-input-file | FileCheck %s --check-prefix=BACK
// enc-decompose: the frontend's enc.attention spelled as split heads, Q.K^T,
// scale, mask, softmax, .V, merge heads; the recognition passes fuse it back
// into the op it came from (BACK).

// Three separate inputs.
// CHECK-LABEL: func.func @qkv_separate
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x8xf32>, %[[K:.*]]: tensor<?x?x8xf32>, %[[V:.*]]: tensor<?x?x8xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[QH:.*]] = enc.split_heads %[[Q]] {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
// CHECK-NEXT: %[[KH:.*]] = enc.split_heads %[[K]] {num_heads = 2 : i64}
// CHECK-NEXT: %[[VH:.*]] = enc.split_heads %[[V]] {num_heads = 2 : i64}
// CHECK-NEXT: %[[S:.*]] = enc.matmul %[[QH]], %[[KH]] {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
// CHECK-NEXT: %[[SS:.*]] = enc.scale %[[S]] {factor = 5.000000e-01 : f32}
// CHECK-NEXT: %[[M:.*]] = enc.mask %[[SS]], %[[LEN]]
// CHECK-NEXT: %[[P:.*]] = enc.softmax %[[M]]
// CHECK-NEXT: %[[CH:.*]] = enc.matmul %[[P]], %[[VH]] : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
// CHECK-NEXT: %[[O:.*]] = enc.merge_heads %[[CH]] : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[O]]
// BACK-LABEL: func.func @qkv_separate
// BACK-NEXT: enc.attention %arg0, %arg1, %arg2, %arg3 {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// BACK-NEXT: return
func.func @qkv_separate(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %o = enc.attention %q, %k, %v, %len {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// -----

// Packed: the three slices of one enc.split; MPNet's relative position bias
// after the scale.
// CHECK-LABEL: func.func @packed_with_position_bias
// CHECK-SAME: (%[[QKV:.*]]: tensor<?x?x24xf32>, %[[LEN:.*]]: tensor<?xi32>, %[[T:.*]]: tensor<32x2xf32>)
// CHECK-NEXT: %[[Q:.*]]:3 = enc.split %[[QKV]] {parts = 3 : i64} : tensor<?x?x24xf32> -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
// CHECK-NEXT: enc.split_heads %[[Q]]#0
// CHECK-NEXT: enc.split_heads %[[Q]]#1
// CHECK-NEXT: enc.split_heads %[[Q]]#2
// CHECK-NEXT: enc.matmul
// CHECK-NEXT: %[[SS:.*]] = enc.scale %{{.*}} {factor = 2.500000e-01 : f32}
// CHECK-NEXT: %[[B:.*]] = enc.relative_position_bias %[[SS]], %[[T]] {max_distance = 128 : i64}
// CHECK-NEXT: enc.mask %[[B]], %[[LEN]]
// CHECK-NEXT: enc.softmax
// CHECK-NEXT: enc.matmul
// CHECK-NEXT: enc.merge_heads
// CHECK-NEXT: return
// BACK-LABEL: func.func @packed_with_position_bias
// BACK-NEXT: enc.attention %arg0, %arg1 position_bias(%arg2) {max_distance = 128 : i64, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 2.500000e-01 : f32}
// BACK-NEXT: return
func.func @packed_with_position_bias(%qkv: tensor<?x?x24xf32>, %len: tensor<?xi32>, %t: tensor<32x2xf32>) -> tensor<?x?x8xf32> {
  %o = enc.attention %qkv, %len position_bias(%t) {max_distance = 128 : i64, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.25 : f32}
      : (tensor<?x?x24xf32>, tensor<?xi32>, tensor<32x2xf32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// -----

// No unfused spelling (enc.mask masks padding only; split_heads splits one
// head count; no op adds ALiBi's distance bias): windows, causal masks,
// grouped key/value heads and ALiBi stay fused.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT: enc.attention {{.*}}window = 2
// CHECK-NEXT: enc.attention {{.*}}causal
// CHECK-NEXT: enc.attention {{.*}}num_kv_heads = 1
// CHECK-NEXT: enc.attention {{.*}}{alibi
// CHECK-NEXT: return
func.func @kept(%q: tensor<?x?x8xf32>, %kv: tensor<?x?x4xf32>, %len: tensor<?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %w = enc.attention %q, %q, %q, %len {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32, window = 2 : i64}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  %c = enc.attention %q, %q, %q, %len {causal, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  %g = enc.attention %q, %kv, %kv, %len {num_heads = 2 : i64, num_kv_heads = 1 : i64, padding = #enc.padding<right>, scale = 0.5 : f32}
      : (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  %a = enc.attention %q, %q, %q, %len {alibi, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  return %w, %c, %g, %a : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}
