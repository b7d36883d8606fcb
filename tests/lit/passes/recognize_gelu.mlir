// RUN: enc-opt %s -enc-recognize-gelu -split-input-file | FileCheck %s
// enc-recognize-gelu: elementwise GELU forms -> enc.gelu.

// torch's erf export: (x * (erf(x / √2) + 1)) * 0.5.
// CHECK-LABEL: func.func @erf_torch
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>)
// CHECK-NEXT: %[[G:.*]] = enc.gelu %[[X]] {approximate = #enc.approximation<none>}
// CHECK-NEXT: return %[[G]]
func.func @erf_torch(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %r2 = enc.constant dense<1.41421354> : tensor<f32>
  %one = enc.constant dense<1.0> : tensor<f32>
  %half = enc.constant dense<0.5> : tensor<f32>
  %a = enc.binary %x, %r2 {kind = #enc.binary<div>} : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %e = enc.unary %a {kind = #enc.unary<erf>} : tensor<?x?x16xf32>
  %p = enc.binary %e, %one {kind = #enc.binary<add>} : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %m = enc.binary %x, %p {kind = #enc.binary<mul>} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %g = enc.binary %m, %half {kind = #enc.binary<mul>} : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  return %g : tensor<?x?x16xf32>
}

// -----

// Variant: 0.5 first, x * (1/√2), 1 + erf.
// CHECK-LABEL: func.func @erf_reassociated
// CHECK-NEXT: enc.gelu %{{.*}} {approximate = #enc.approximation<none>}
// CHECK-NEXT: return
func.func @erf_reassociated(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %ir2 = enc.constant dense<0.707106769> : tensor<f32>
  %one = enc.constant dense<1.0> : tensor<f32>
  %half = enc.constant dense<0.5> : tensor<f32>
  %hx = enc.binary %half, %x {kind = #enc.binary<mul>} : (tensor<f32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %a = enc.binary %x, %ir2 {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %e = enc.unary %a {kind = #enc.unary<erf>} : tensor<?x16xf32>
  %p = enc.binary %one, %e {kind = #enc.binary<add>} : (tensor<f32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %g = enc.binary %hx, %p {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %g : tensor<?x16xf32>
}

// -----

// HF gelu_new: 0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 * pow(x, 3)))).
// CHECK-LABEL: func.func @tanh_pow
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>)
// CHECK-NEXT: %[[G:.*]] = enc.gelu %[[X]] {approximate = #enc.approximation<tanh>}
// CHECK-NEXT: return %[[G]]
func.func @tanh_pow(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %three = enc.constant dense<3.0> : tensor<f32>
  %k = enc.constant dense<0.044715> : tensor<f32>
  %c = enc.constant dense<0.797884583> : tensor<f32>
  %one = enc.constant dense<1.0> : tensor<f32>
  %half = enc.constant dense<0.5> : tensor<f32>
  %hx = enc.binary %half, %x {kind = #enc.binary<mul>} : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %x3 = enc.binary %x, %three {kind = #enc.binary<pow>} : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %kx3 = enc.binary %k, %x3 {kind = #enc.binary<mul>} : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %in = enc.binary %x, %kx3 {kind = #enc.binary<add>} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %arg = enc.binary %c, %in {kind = #enc.binary<mul>} : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %t = enc.unary %arg {kind = #enc.unary<tanh>} : tensor<?x?x16xf32>
  %p = enc.binary %one, %t {kind = #enc.binary<add>} : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %g = enc.binary %hx, %p {kind = #enc.binary<mul>} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %g : tensor<?x?x16xf32>
}

// -----

// Variant: x³ as x * x * x.
// CHECK-LABEL: func.func @tanh_cube_product
// CHECK-NEXT: enc.gelu %{{.*}} {approximate = #enc.approximation<tanh>}
// CHECK-NEXT: return
func.func @tanh_cube_product(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %k = enc.constant dense<0.044715> : tensor<f32>
  %c = enc.constant dense<0.797884583> : tensor<f32>
  %one = enc.constant dense<1.0> : tensor<f32>
  %half = enc.constant dense<0.5> : tensor<f32>
  %xx = enc.binary %x, %x {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %x3 = enc.binary %xx, %x {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %kx3 = enc.binary %x3, %k {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %in = enc.binary %kx3, %x {kind = #enc.binary<add>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %arg = enc.binary %in, %c {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %t = enc.unary %arg {kind = #enc.unary<tanh>} : tensor<?x16xf32>
  %p = enc.binary %t, %one {kind = #enc.binary<add>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %m = enc.binary %x, %p {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %g = enc.binary %m, %half {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  return %g : tensor<?x16xf32>
}

// -----

// Negative: erf(x / 2) is not GELU; nor is a wrong half (0.25).
// CHECK-LABEL: func.func @wrong_constants
// CHECK-NOT: enc.gelu
// CHECK: enc.unary
// CHECK-NOT: enc.gelu
func.func @wrong_constants(%x: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %two = enc.constant dense<2.0> : tensor<f32>
  %r2 = enc.constant dense<1.41421354> : tensor<f32>
  %one = enc.constant dense<1.0> : tensor<f32>
  %half = enc.constant dense<0.5> : tensor<f32>
  %quarter = enc.constant dense<0.25> : tensor<f32>
  %a = enc.binary %x, %two {kind = #enc.binary<div>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %e = enc.unary %a {kind = #enc.unary<erf>} : tensor<?x16xf32>
  %p = enc.binary %e, %one {kind = #enc.binary<add>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %m = enc.binary %x, %p {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %g = enc.binary %m, %half {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %a2 = enc.binary %x, %r2 {kind = #enc.binary<div>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %e2 = enc.unary %a2 {kind = #enc.unary<erf>} : tensor<?x16xf32>
  %p2 = enc.binary %e2, %one {kind = #enc.binary<add>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %m2 = enc.binary %x, %p2 {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %g2 = enc.binary %m2, %quarter {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  return %g, %g2 : tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// Negative: 1 + erf(..) is also returned, so the product must stay.
// CHECK-LABEL: func.func @inner_escapes
// CHECK-NOT: enc.gelu
func.func @inner_escapes(%x: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %r2 = enc.constant dense<1.41421354> : tensor<f32>
  %one = enc.constant dense<1.0> : tensor<f32>
  %half = enc.constant dense<0.5> : tensor<f32>
  %a = enc.binary %x, %r2 {kind = #enc.binary<div>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %e = enc.unary %a {kind = #enc.unary<erf>} : tensor<?x16xf32>
  %p = enc.binary %e, %one {kind = #enc.binary<add>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %m = enc.binary %x, %p {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %g = enc.binary %m, %half {kind = #enc.binary<mul>} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  return %g, %p : tensor<?x16xf32>, tensor<?x16xf32>
}
