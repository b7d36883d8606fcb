// RUN: enc-opt %s -enc-recognize-linear-bias -split-input-file | FileCheck %s
// enc-recognize-linear-bias: binary<add>(linear(x, w), b) -> linear(x, w, b).

// torch writes the bias first: Add(bias, MatMul(x, W)).
// CHECK-LABEL: func.func @bias_first
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-DAG: %[[W:.*]] = enc.weight "q.weight"
// CHECK-DAG: %[[B:.*]] = enc.weight "q.bias"
// CHECK: %[[L:.*]] = enc.linear %[[X]], %[[W]], %[[B]] : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: return %[[L]]
func.func @bias_first(%x: tensor<?x?x8xf32>) -> tensor<?x?x16xf32> {
  %w = enc.weight "q.weight" : tensor<16x8xf32>
  %b = enc.weight "q.bias" : tensor<16xf32>
  %l = enc.linear %x, %w : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %y = enc.binary %b, %l {kind = #enc.binary<add>} : (tensor<16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// Variant: the bias second.
// CHECK-LABEL: func.func @bias_second
// CHECK: enc.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>)
// CHECK-NOT: enc.binary
func.func @bias_second(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = enc.weight "q.weight" : tensor<16x8xf32>
  %b = enc.weight "q.bias" : tensor<16xf32>
  %l = enc.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %y = enc.binary %l, %b {kind = #enc.binary<add>} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Negatives: the Linear already has a bias; the Linear's result has another
// user; a subtraction; a bias that is not a weight.
// CHECK-LABEL: func.func @negatives
// CHECK-COUNT-4: enc.binary
func.func @negatives(%x: tensor<4x8xf32>, %c: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %w = enc.weight "q.weight" : tensor<16x8xf32>
  %b = enc.weight "q.bias" : tensor<16xf32>
  %l1 = enc.linear %x, %w, %b : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %y1 = enc.binary %l1, %b {kind = #enc.binary<add>} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %l2 = enc.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %y2 = enc.binary %l2, %b {kind = #enc.binary<add>} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %l3 = enc.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %y3 = enc.binary %l3, %b {kind = #enc.binary<sub>} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %l4 = enc.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %y4 = enc.binary %l4, %c {kind = #enc.binary<add>} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y1, %y2, %l2, %y3, %y4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
