// RUN: enc-opt %s -enc-lower-scalar-arithmetic -split-input-file | FileCheck %s
// enc-lower-scalar-arithmetic: x * c -> scale, x / c -> div, unary<tanh> -> tanh.

// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x?x?xf32>, %[[P:.*]]: tensor<?x8xf32>)
// CHECK-NEXT: %[[D:.*]] = enc.div %[[X]] {divisor = 5.65685415 : f32}
// CHECK-NEXT: %[[S:.*]] = enc.scale %[[D]] {factor = 5.000000e-01 : f32}
// CHECK-NEXT: %[[T:.*]] = enc.tanh %[[P]]
// CHECK-NEXT: return %[[S]], %[[T]]
func.func @scalars(%x: tensor<?x2x?x?xf32>, %p: tensor<?x8xf32>) -> (tensor<?x2x?x?xf32>, tensor<?x8xf32>) {
  %d = enc.constant dense<5.65685415> : tensor<f32>
  %h = enc.constant dense<0.5> : tensor<f32>
  %a = enc.binary %x, %d {kind = #enc.binary<div>} : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %b = enc.binary %h, %a {kind = #enc.binary<mul>} : (tensor<f32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %t = enc.unary %p {kind = #enc.unary<tanh>} : tensor<?x8xf32>
  return %b, %t : tensor<?x2x?x?xf32>, tensor<?x8xf32>
}

// -----

// Negatives: division of a constant by a tensor, by zero, and a
// multiplication by a vector stay (the frontend then names them).
// CHECK-LABEL: func.func @negatives
// CHECK-COUNT-3: enc.binary
func.func @negatives(%x: tensor<?x8xf32>, %v: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %one = enc.constant dense<1.0> : tensor<f32>
  %zero = enc.constant dense<0.0> : tensor<f32>
  %a = enc.binary %one, %x {kind = #enc.binary<div>} : (tensor<f32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %b = enc.binary %x, %zero {kind = #enc.binary<div>} : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  %c = enc.binary %x, %v {kind = #enc.binary<mul>} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %a, %b, %c : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
