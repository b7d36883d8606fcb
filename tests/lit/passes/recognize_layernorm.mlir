// RUN: enc-opt %s -enc-recognize-layernorm -split-input-file | FileCheck %s
// enc-recognize-layernorm: the decomposed LayerNorm torch.onnx.export writes
// (opset < 17) -> enc.layernorm.

// The form torch exports: mean, x - mean, pow 2, mean, + eps, sqrt, div, * gamma, + beta.
// CHECK-LABEL: func.func @torch_form
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-DAG: %[[G:.*]] = enc.weight "ln.weight"
// CHECK-DAG: %[[B:.*]] = enc.weight "ln.bias"
// CHECK: %[[L:.*]] = enc.layernorm %[[X]], %[[G]], %[[B]] {epsilon = 9.99999996E-13 : f32}
// CHECK-NOT: enc.binary
// CHECK-NOT: enc.reduce_mean
// CHECK: return %[[L]]
func.func @torch_form(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %g = enc.weight "ln.weight" : tensor<8xf32>
  %b = enc.weight "ln.bias" : tensor<8xf32>
  %two = enc.constant dense<2.0> : tensor<f32>
  %eps = enc.constant dense<1.0e-12> : tensor<f32>
  %m = enc.reduce_mean %x : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %d = enc.binary %x, %m {kind = #enc.binary<sub>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %p = enc.binary %d, %two {kind = #enc.binary<pow>} : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %v = enc.reduce_mean %p : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %e = enc.binary %v, %eps {kind = #enc.binary<add>} : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = enc.unary %e {kind = #enc.unary<sqrt>} : tensor<?x?x1xf32>
  %n = enc.binary %d, %s {kind = #enc.binary<div>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = enc.binary %n, %g {kind = #enc.binary<mul>} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %z = enc.binary %y, %b {kind = #enc.binary<add>} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %z : tensor<?x?x8xf32>
}

// -----

// Variant: the square as d * d, commuted mul / adds, eps first.
// CHECK-LABEL: func.func @commuted
// CHECK: enc.layernorm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: enc.binary
func.func @commuted(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %g = enc.weight "ln.weight" : tensor<8xf32>
  %b = enc.weight "ln.bias" : tensor<8xf32>
  %eps = enc.constant dense<1.0e-5> : tensor<f32>
  %m = enc.reduce_mean %x : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %d = enc.binary %x, %m {kind = #enc.binary<sub>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %p = enc.binary %d, %d {kind = #enc.binary<mul>} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %v = enc.reduce_mean %p : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %e = enc.binary %eps, %v {kind = #enc.binary<add>} : (tensor<f32>, tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %s = enc.unary %e {kind = #enc.unary<sqrt>} : tensor<?x?x1xf32>
  %n = enc.binary %d, %s {kind = #enc.binary<div>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = enc.binary %g, %n {kind = #enc.binary<mul>} : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %z = enc.binary %b, %y {kind = #enc.binary<add>} : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %z : tensor<?x?x8xf32>
}

// -----

// Negative: the centred value is also returned, so the chain must stay.
// CHECK-LABEL: func.func @centred_escapes
// CHECK-NOT: enc.layernorm
// CHECK: enc.reduce_mean
func.func @centred_escapes(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %g = enc.weight "ln.weight" : tensor<8xf32>
  %b = enc.weight "ln.bias" : tensor<8xf32>
  %two = enc.constant dense<2.0> : tensor<f32>
  %eps = enc.constant dense<1.0e-12> : tensor<f32>
  %m = enc.reduce_mean %x : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %d = enc.binary %x, %m {kind = #enc.binary<sub>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %p = enc.binary %d, %two {kind = #enc.binary<pow>} : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %v = enc.reduce_mean %p : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %e = enc.binary %v, %eps {kind = #enc.binary<add>} : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = enc.unary %e {kind = #enc.unary<sqrt>} : tensor<?x?x1xf32>
  %n = enc.binary %d, %s {kind = #enc.binary<div>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = enc.binary %n, %g {kind = #enc.binary<mul>} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %z = enc.binary %y, %b {kind = #enc.binary<add>} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %z, %d : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Negative: a cube is not a variance (pow 3), and the mean of a different tensor is not centring.
// CHECK-LABEL: func.func @not_a_variance
// CHECK-NOT: enc.layernorm
func.func @not_a_variance(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %g = enc.weight "ln.weight" : tensor<8xf32>
  %b = enc.weight "ln.bias" : tensor<8xf32>
  %three = enc.constant dense<3.0> : tensor<f32>
  %eps = enc.constant dense<1.0e-12> : tensor<f32>
  %m = enc.reduce_mean %x : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %d = enc.binary %x, %m {kind = #enc.binary<sub>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %p = enc.binary %d, %three {kind = #enc.binary<pow>} : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %v = enc.reduce_mean %p : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %e = enc.binary %v, %eps {kind = #enc.binary<add>} : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = enc.unary %e {kind = #enc.unary<sqrt>} : tensor<?x?x1xf32>
  %n = enc.binary %d, %s {kind = #enc.binary<div>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = enc.binary %n, %g {kind = #enc.binary<mul>} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %z = enc.binary %y, %b {kind = #enc.binary<add>} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %z : tensor<?x?x8xf32>
}
