// RUN: enc-opt %s -enc-fuse-residual-layernorm -split-input-file | FileCheck %s
// enc-fuse-residual-layernorm: layernorm(add(a, b)) -> add_layernorm(a, b).

// The residual connection of a BERT layer.
// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[A:.*]]: tensor<?x?x8xf32>, %[[R:.*]]: tensor<?x?x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = enc.add_layernorm %[[A]], %[[R]], %[[G]], %[[B]] {epsilon = 9.99999996E-13 : f32}
// CHECK-SAME: : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @residual(%a: tensor<?x?x8xf32>, %r: tensor<?x?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %s = enc.add %a, %r : tensor<?x?x8xf32>
  %y = enc.layernorm %s, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Two chained layer norms (attention output, then FFN output) both fuse; the
// first result feeds the second residual.
// CHECK-LABEL: func.func @chained
// CHECK: %[[Y1:.*]] = enc.add_layernorm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32}
// CHECK: %[[Y2:.*]] = enc.add_layernorm %{{.*}}, %[[Y1]], %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: enc.layernorm
// CHECK-NOT: enc.add
// CHECK: return %[[Y2]]
func.func @chained(%a: tensor<2x4x8xf32>, %r: tensor<2x4x8xf32>, %w: tensor<8x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %s1 = enc.add %a, %r : tensor<2x4x8xf32>
  %y1 = enc.layernorm %s1, %g, %b {epsilon = 1.0e-5 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %d = enc.linear %y1, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %s2 = enc.add %d, %y1 : tensor<2x4x8xf32>
  %y2 = enc.layernorm %s2, %g, %b {epsilon = 1.0e-5 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %y2 : tensor<2x4x8xf32>
}

// -----

// Negative: the sum has another user, so the add must stay.
// CHECK-LABEL: func.func @add_other_user
// CHECK: %[[S:.*]] = enc.add
// CHECK-NEXT: %[[Y:.*]] = enc.layernorm %[[S]]
// CHECK-NEXT: return %[[Y]], %[[S]]
func.func @add_other_user(%a: tensor<?x?x8xf32>, %r: tensor<?x?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %s = enc.add %a, %r : tensor<?x?x8xf32>
  %y = enc.layernorm %s, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y, %s : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Negative: a layernorm without a residual add in front (the embeddings LN).
// CHECK-LABEL: func.func @no_add
// CHECK-NOT: enc.add_layernorm
// CHECK: enc.layernorm
func.func @no_add(%a: tensor<?x?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y = enc.layernorm %a, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
