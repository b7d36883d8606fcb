// RUN: enc-opt %s -canonicalize -split-input-file | FileCheck %s
// Folders and canonicalization patterns of the enc ops (the "canonicalize"
// step of the enc pipeline).

// scale by 1 folds away.
// CHECK-LABEL: func.func @scale_by_one
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @scale_by_one(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = enc.scale %x {factor = 1.0 : f32} : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// Two scales become one.
// CHECK-LABEL: func.func @scale_scale
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = enc.scale %[[X]] {factor = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @scale_scale(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = enc.scale %x {factor = 0.5 : f32} : tensor<?x4xf32>
  %b = enc.scale %a {factor = 0.25 : f32} : tensor<?x4xf32>
  return %b : tensor<?x4xf32>
}

// -----

// Scales that multiply to 1 disappear.
// CHECK-LABEL: func.func @scale_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @scale_inverse(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = enc.scale %x {factor = 4.0 : f32} : tensor<?x4xf32>
  %b = enc.scale %a {factor = 0.25 : f32} : tensor<?x4xf32>
  return %b : tensor<?x4xf32>
}

// -----

// div(x, d) becomes scale(x, 1/d); div by 1 folds.
// CHECK-LABEL: func.func @div
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = enc.scale %[[X]] {factor = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[Y]], %[[X]]
func.func @div(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = enc.div %x {divisor = 8.0 : f32} : tensor<?x4xf32>
  %b = enc.div %x {divisor = 1.0 : f32} : tensor<?x4xf32>
  return %a, %b : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A div followed by a scale combines into one scale.
// CHECK-LABEL: func.func @div_scale
// CHECK-NEXT: enc.scale %{{.*}} {factor = 2.500000e-01 : f32}
// CHECK-NEXT: return
func.func @div_scale(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = enc.div %x {divisor = 8.0 : f32} : tensor<?x4xf32>
  %b = enc.scale %a {factor = 2.0 : f32} : tensor<?x4xf32>
  return %b : tensor<?x4xf32>
}

// -----

// merge_heads(split_heads(x)) -> x and split_heads(merge_heads(y)) -> y.
// CHECK-LABEL: func.func @heads_roundtrip
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[Y:.*]]: tensor<?x2x?x4xf32>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @heads_roundtrip(%x: tensor<?x?x8xf32>, %y: tensor<?x2x?x4xf32>) -> (tensor<?x?x8xf32>, tensor<?x2x?x4xf32>) {
  %a = enc.split_heads %x {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %b = enc.merge_heads %a : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  %c = enc.merge_heads %y : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  %d = enc.split_heads %c {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  return %b, %d : tensor<?x?x8xf32>, tensor<?x2x?x4xf32>
}

// -----

// Negative: a different head count, or a type that would change, does not fold.
// CHECK-LABEL: func.func @heads_no_fold
// CHECK: enc.merge_heads
// CHECK-NEXT: %[[D:.*]] = enc.split_heads %{{.*}} {num_heads = 4 : i64}
// CHECK: %[[E:.*]] = enc.split_heads
// CHECK-NEXT: %[[F:.*]] = enc.merge_heads %[[E]] : tensor<2x2x3x4xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[D]], %[[F]]
func.func @heads_no_fold(%y: tensor<?x2x?x4xf32>, %z: tensor<2x3x8xf32>) -> (tensor<?x4x?x2xf32>, tensor<?x?x8xf32>) {
  %c = enc.merge_heads %y : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  %d = enc.split_heads %c {num_heads = 4 : i64} : tensor<?x?x8xf32> -> tensor<?x4x?x2xf32>
  %e = enc.split_heads %z {num_heads = 2 : i64} : tensor<2x3x8xf32> -> tensor<2x2x3x4xf32>
  %f = enc.merge_heads %e : tensor<2x2x3x4xf32> -> tensor<?x?x8xf32>
  return %d, %f : tensor<?x4x?x2xf32>, tensor<?x?x8xf32>
}

// -----

// Negative: scale by something else than 1 stays.
// CHECK-LABEL: func.func @scale_kept
// CHECK-NEXT: enc.scale %{{.*}} {factor = 5.000000e-01 : f32}
func.func @scale_kept(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = enc.scale %x {factor = 0.5 : f32} : tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}

// -----

// A scale on Q (DistilBERT's q / sqrt(d)) moves past the product onto the scores.
// CHECK-LABEL: func.func @scale_into_matmul
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x?x16xf32>, %[[K:.*]]: tensor<?x2x?x16xf32>)
// CHECK-NEXT: %[[S:.*]] = enc.matmul %[[Q]], %[[K]] {transpose_b}
// CHECK-NEXT: %[[R:.*]] = enc.scale %[[S]] {factor = 2.500000e-01 : f32}
// CHECK-NEXT: return %[[R]]
func.func @scale_into_matmul(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>) -> tensor<?x2x?x?xf32> {
  %qs = enc.scale %q {factor = 0.25 : f32} : tensor<?x2x?x16xf32>
  %s = enc.matmul %qs, %k {transpose_b} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x?xf32>
  return %s : tensor<?x2x?x?xf32>
}

// -----

// Negative: the scaled Q has another user, so it stays.
// CHECK-LABEL: func.func @scale_shared
// CHECK: enc.scale %{{.*}} {factor = 2.500000e-01 : f32} : tensor<?x2x?x16xf32>
// CHECK-NEXT: enc.matmul
// CHECK-NOT: enc.scale
func.func @scale_shared(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>) -> (tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>) {
  %qs = enc.scale %q {factor = 0.25 : f32} : tensor<?x2x?x16xf32>
  %s = enc.matmul %qs, %k {transpose_b} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x?xf32>
  return %s, %qs : tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>
}
