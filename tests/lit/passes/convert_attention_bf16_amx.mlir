// RUN: enc-opt %s -enc-convert-attention-bf16-amx -split-input-file | FileCheck %s
// RUN: enc-opt %s '-enc-pipeline=passes=convert-attention-bf16-amx' -split-input-file | FileCheck %s
// RUN: enc-opt %s -enc-convert-attention-bf16-amx -enc-convert-attention-bf16 -split-input-file | FileCheck %s
// enc-convert-attention-bf16-amx (the int8 tier's): every enc.attention gets
// `bf16_amx` (bf16 on CPUs with AMX tiles, f32 elsewhere), not `bf16_pv`;
// operands, types and the other attributes stay. An attention with either
// form is left alone (the bf16 tier's pass after it adds nothing).

// CHECK-LABEL: func.func @packed
// CHECK-SAME: (%[[QKV:[^:]*]]: tensor<?x?x24xf32>, %[[L:[^:]*]]: tensor<?xi32>)
// CHECK-NEXT: %[[O:.*]] = enc.attention %[[QKV]], %[[L]] {bf16_amx, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// CHECK-SAME: : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
// CHECK-NOT: bf16_pv
// CHECK: return %[[O]]
func.func @packed(%qkv: tensor<?x?x24xf32>, %l: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %o = enc.attention %qkv, %l {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// -----

// Already bf16 everywhere: left as it is.
// CHECK-LABEL: func.func @already_bf16_pv
// CHECK-NEXT: enc.attention {{.*}} {bf16_pv, num_heads = 2 : i64
// CHECK-NOT: bf16_amx
func.func @already_bf16_pv(%qkv: tensor<?x?x24xf32>, %l: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %o = enc.attention %qkv, %l {bf16_pv, num_heads = 2 : i64, padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
