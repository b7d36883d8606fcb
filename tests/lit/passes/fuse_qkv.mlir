// RUN: enc-opt %s -enc-fuse-qkv -split-input-file | FileCheck %s
// enc-fuse-qkv: three Linears reading one input -> one Linear over the
// concatenated weights + enc.split. Without a WeightStore (enc-opt) only the
// IR is rewritten.

// The Q/K/V projections of a BERT layer.
// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-DAG: %[[W:.*]] = enc.weight "l0.q.weight+l0.k.weight+l0.v.weight" : tensor<24x8xf32>
// CHECK-DAG: %[[B:.*]] = enc.weight "l0.q.bias+l0.k.bias+l0.v.bias" : tensor<24xf32>
// CHECK: %[[QKV:.*]] = enc.linear %[[X]], %[[W]], %[[B]] : (tensor<?x?x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
// CHECK-NEXT: %[[S:.*]]:3 = enc.split %[[QKV]] {parts = 3 : i64} : tensor<?x?x24xf32> -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
// CHECK-NOT: enc.linear
// CHECK: return %[[S]]#0, %[[S]]#1, %[[S]]#2
func.func @qkv(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %wq = enc.weight "l0.q.weight" : tensor<8x8xf32>
  %bq = enc.weight "l0.q.bias" : tensor<8xf32>
  %wk = enc.weight "l0.k.weight" : tensor<8x8xf32>
  %bk = enc.weight "l0.k.bias" : tensor<8xf32>
  %wv = enc.weight "l0.v.weight" : tensor<8x8xf32>
  %bv = enc.weight "l0.v.bias" : tensor<8xf32>
  %q = enc.linear %x, %wq, %bq : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %k = enc.linear %x, %wk, %bk : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %v = enc.linear %x, %wv, %bv : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %q, %k, %v : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Without biases (and N != K): the merged Linear has no bias either; the
// slices keep their program order (v is defined first here).
// CHECK-LABEL: func.func @no_bias_program_order
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>)
// CHECK: %[[W:.*]] = enc.weight "v+q+k" : tensor<12x8xf32>
// CHECK-NEXT: %[[QKV:.*]] = enc.linear %[[X]], %[[W]] : (tensor<2x5x8xf32>, tensor<12x8xf32>) -> tensor<2x5x12xf32>
// CHECK-NEXT: %[[S:.*]]:3 = enc.split %[[QKV]] {parts = 3 : i64} : tensor<2x5x12xf32> -> (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>)
// CHECK: return %[[S]]#1, %[[S]]#2, %[[S]]#0
func.func @no_bias_program_order(%x: tensor<2x5x8xf32>) -> (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  %wq = enc.weight "q" : tensor<4x8xf32>
  %wk = enc.weight "k" : tensor<4x8xf32>
  %wv = enc.weight "v" : tensor<4x8xf32>
  %v = enc.linear %x, %wv : (tensor<2x5x8xf32>, tensor<4x8xf32>) -> tensor<2x5x4xf32>
  %q = enc.linear %x, %wq : (tensor<2x5x8xf32>, tensor<4x8xf32>) -> tensor<2x5x4xf32>
  %k = enc.linear %x, %wk : (tensor<2x5x8xf32>, tensor<4x8xf32>) -> tensor<2x5x4xf32>
  return %q, %k, %v : tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
}

// -----

// A fourth Linear on the same input stays as it is; the first three merge.
// CHECK-LABEL: func.func @four_linears
// CHECK: enc.weight "a+b+c" : tensor<24x8xf32>
// CHECK: enc.split
// CHECK: %[[D:.*]] = enc.linear %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK: return %{{.*}}#0, %{{.*}}#1, %{{.*}}#2, %[[D]]
func.func @four_linears(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %wa = enc.weight "a" : tensor<8x8xf32>
  %wb = enc.weight "b" : tensor<8x8xf32>
  %wc = enc.weight "c" : tensor<8x8xf32>
  %wd = enc.weight "d" : tensor<8x8xf32>
  %a = enc.linear %x, %wa : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %b = enc.linear %x, %wb : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %c = enc.linear %x, %wc : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %d = enc.linear %x, %wd : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %a, %b, %c, %d : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: the three Linears read different inputs.
// CHECK-LABEL: func.func @different_inputs
// CHECK-NOT: enc.split
// CHECK-COUNT-3: enc.linear
// CHECK-NOT: enc.split
func.func @different_inputs(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %wq = enc.weight "q" : tensor<8x8xf32>
  %wk = enc.weight "k" : tensor<8x8xf32>
  %wv = enc.weight "v" : tensor<8x8xf32>
  %q = enc.linear %x, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %k = enc.linear %y, %wk : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %v = enc.linear %x, %wv : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: one Linear has an epilogue.
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: enc.split
// CHECK-COUNT-3: enc.linear
// CHECK-NOT: enc.split
func.func @epilogue(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %wq = enc.weight "q" : tensor<8x8xf32>
  %wk = enc.weight "k" : tensor<8x8xf32>
  %wv = enc.weight "v" : tensor<8x8xf32>
  %q = enc.linear %x, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %k = enc.linear %x, %wk {epilogue = #enc.epilogue<gelu>} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %v = enc.linear %x, %wv : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: only two of the three have a bias.
// CHECK-LABEL: func.func @missing_bias
// CHECK-NOT: enc.split
// CHECK-COUNT-3: enc.linear
// CHECK-NOT: enc.split
func.func @missing_bias(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %wq = enc.weight "q" : tensor<8x8xf32>
  %bq = enc.weight "q.b" : tensor<8xf32>
  %wk = enc.weight "k" : tensor<8x8xf32>
  %bk = enc.weight "k.b" : tensor<8xf32>
  %wv = enc.weight "v" : tensor<8x8xf32>
  %q = enc.linear %x, %wq, %bq : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %k = enc.linear %x, %wk, %bk : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %v = enc.linear %x, %wv : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: output sizes differ (N = 8, 8, 4).
// CHECK-LABEL: func.func @mismatched_n
// CHECK-NOT: enc.split
// CHECK-COUNT-3: enc.linear
// CHECK-NOT: enc.split
func.func @mismatched_n(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>) {
  %wq = enc.weight "q" : tensor<8x8xf32>
  %wk = enc.weight "k" : tensor<8x8xf32>
  %wv = enc.weight "v" : tensor<4x8xf32>
  %q = enc.linear %x, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %k = enc.linear %x, %wk : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %v = enc.linear %x, %wv : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>
}

// -----

// Negative: a weight that is not an enc.weight cannot be concatenated at
// compile time.
// CHECK-LABEL: func.func @weight_not_named
// CHECK-NOT: enc.split
// CHECK-COUNT-3: enc.linear
// CHECK-NOT: enc.split
func.func @weight_not_named(%x: tensor<?x8xf32>, %wv: tensor<8x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %wq = enc.weight "q" : tensor<8x8xf32>
  %wk = enc.weight "k" : tensor<8x8xf32>
  %q = enc.linear %x, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %k = enc.linear %x, %wk : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %v = enc.linear %x, %wv : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
