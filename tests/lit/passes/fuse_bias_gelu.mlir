// RUN: enc-opt %s -enc-fuse-bias-gelu -split-input-file | FileCheck %s
// enc-fuse-bias-gelu: gelu(linear(x, w, b)) -> linear(x, w, b) {epilogue}.

// The erf form (HF "gelu") becomes epilogue "gelu".
// CHECK-LABEL: func.func @erf
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[L:.*]] = enc.linear %[[X]], %[[W]], %[[B]] {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: return %[[L]]
func.func @erf(%x: tensor<?x?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %h = enc.linear %x, %w, %b : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %g = enc.gelu %h {approximate = #enc.approximation<none>} : tensor<?x?x16xf32>
  return %g : tensor<?x?x16xf32>
}

// -----

// The tanh form (HF "gelu_new") stays distinct: epilogue "gelu_tanh".
// CHECK-LABEL: func.func @tanh
// CHECK-NEXT: %[[L:.*]] = enc.linear %{{.*}}, %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu_tanh>}
// CHECK-NOT: enc.gelu
// CHECK: return %[[L]]
func.func @tanh(%x: tensor<?x?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %h = enc.linear %x, %w, %b : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %g = enc.gelu %h {approximate = #enc.approximation<tanh>} : tensor<?x?x16xf32>
  return %g : tensor<?x?x16xf32>
}

// -----

// A Linear without bias takes the epilogue too.
// CHECK-LABEL: func.func @no_bias
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<16x8xf32>)
// CHECK-NEXT: %[[L:.*]] = enc.linear %[[X]], %[[W]] {epilogue = #enc.epilogue<gelu>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[L]]
func.func @no_bias(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %h = enc.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %g = enc.gelu %h {approximate = #enc.approximation<none>} : tensor<4x16xf32>
  return %g : tensor<4x16xf32>
}

// -----

// Negative: the Linear's output has another user, so it must stay unfused.
// CHECK-LABEL: func.func @other_user
// CHECK: %[[H:.*]] = enc.linear
// CHECK-NOT: epilogue
// CHECK-SAME: -> tensor<?x?x16xf32>
// CHECK-NEXT: %[[G:.*]] = enc.gelu %[[H]] {approximate = #enc.approximation<none>}
// CHECK-NEXT: return %[[G]], %[[H]]
func.func @other_user(%x: tensor<?x?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %h = enc.linear %x, %w, %b : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %g = enc.gelu %h {approximate = #enc.approximation<none>} : tensor<?x?x16xf32>
  return %g, %h : tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// -----

// Negative: a Linear that already has an epilogue is not fused again.
// CHECK-LABEL: func.func @has_epilogue
// CHECK: %[[H:.*]] = enc.linear %{{.*}}, %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu>}
// CHECK-NEXT: %[[G:.*]] = enc.gelu %[[H]] {approximate = #enc.approximation<none>}
// CHECK-NEXT: return %[[G]]
func.func @has_epilogue(%x: tensor<?x?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %h = enc.linear %x, %w, %b {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %g = enc.gelu %h {approximate = #enc.approximation<none>} : tensor<?x?x16xf32>
  return %g : tensor<?x?x16xf32>
}

// -----

// Negative: a GELU not fed by a Linear (here: a matmul) is left alone.
// CHECK-LABEL: func.func @not_linear
// CHECK: %[[M:.*]] = enc.matmul
// CHECK-NEXT: enc.gelu %[[M]] {approximate = #enc.approximation<none>}
func.func @not_linear(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  %m = enc.matmul %a, %b : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %g = enc.gelu %m {approximate = #enc.approximation<none>} : tensor<2x4x4xf32>
  return %g : tensor<2x4x4xf32>
}
