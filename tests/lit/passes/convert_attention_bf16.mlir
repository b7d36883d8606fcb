// RUN: enc-opt %s -enc-convert-attention-bf16 -split-input-file | FileCheck %s
// RUN: enc-opt %s '-enc-pipeline=passes=convert-attention-bf16' -split-input-file | FileCheck %s
// RUN: enc-opt %s -enc-convert-attention-bf16 -enc-convert-attention-bf16 -split-input-file | FileCheck %s
// enc-convert-attention-bf16: every enc.attention gets `bf16_pv` (p·v over
// bf16 probabilities and values); operands, types and the other attributes
// stay. Running it twice changes nothing more.

// CHECK-LABEL: func.func @packed
// CHECK-SAME: (%[[QKV:[^:]*]]: tensor<?x?x24xf32>, %[[L:[^:]*]]: tensor<?xi32>)
// CHECK-NEXT: %[[O:.*]] = enc.attention %[[QKV]], %[[L]] {bf16_pv, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-SAME: : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @packed(%qkv: tensor<?x?x24xf32>, %l: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %o = enc.attention %qkv, %l {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// -----

// Three inputs, and an odd head size (keys are paired, not head dimensions).
// CHECK-LABEL: func.func @three_inputs
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x?x6xf32>, %[[KV:[^:]*]]: tensor<?x?x6xf32>, %[[L:[^:]*]]: tensor<?xi32>)
// CHECK-NEXT: enc.attention %[[Q]], %[[KV]], %[[KV]], %[[L]] {bf16_pv, num_heads = 2 : i64
// CHECK-SAME: : (tensor<?x?x6xf32>, tensor<?x?x6xf32>, tensor<?x?x6xf32>, tensor<?xi32>) -> tensor<?x?x6xf32>
// CHECK-NOT: bf16
func.func @three_inputs(%q: tensor<?x?x6xf32>, %kv: tensor<?x?x6xf32>, %l: tensor<?xi32>) -> tensor<?x?x6xf32> {
  %o = enc.attention %q, %kv, %kv, %l {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x?x6xf32>, tensor<?x?x6xf32>, tensor<?x?x6xf32>, tensor<?xi32>) -> tensor<?x?x6xf32>
  return %o : tensor<?x?x6xf32>
}
