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

// An exporter wrote K before Q (ORT-optimised DistilBERT): the attention block
// says which is which, so the slices follow Q, K, V and the merged Linear sits
// where the first of the three was.
// CHECK-LABEL: func.func @roles_kqv
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK: %[[W:.*]] = enc.weight "q+k+v" : tensor<24x8xf32>
// CHECK-NEXT: %[[QKV:.*]] = enc.linear %[[X]], %[[W]]
// CHECK-NEXT: %[[S:.*]]:3 = enc.split %[[QKV]]
// CHECK-NEXT: %[[KH:.*]] = enc.split_heads %[[S]]#1
// CHECK-NEXT: %[[QH:.*]] = enc.split_heads %[[S]]#0
// CHECK-NEXT: %[[VH:.*]] = enc.split_heads %[[S]]#2
// CHECK-NEXT: enc.matmul %[[QH]], %[[KH]] {transpose_b}
func.func @roles_kqv(%x: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> tensor<?x?x8xf32> {
  %wq = enc.weight "q" : tensor<8x8xf32>
  %wk = enc.weight "k" : tensor<8x8xf32>
  %wv = enc.weight "v" : tensor<8x8xf32>
  %k = enc.linear %x, %wk : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %q = enc.linear %x, %wq : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %v = enc.linear %x, %wv : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %p = enc.scale_mask_softmax %s, %len {padding = #enc.padding<right>, scale = 0.5 : f32} : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  return %c : tensor<?x?x8xf32>
}

// -----

// Negative for roles: two of the Linears feed the same side (both as keys of
// their own products), so program order stays.
// CHECK-LABEL: func.func @roles_ambiguous
// CHECK: enc.weight "k+q+v"
func.func @roles_ambiguous(%x: tensor<?x?x8xf32>, %a: tensor<?x2x?x4xf32>) -> (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>, tensor<?x?x8xf32>) {
  %wq = enc.weight "q" : tensor<8x8xf32>
  %wk = enc.weight "k" : tensor<8x8xf32>
  %wv = enc.weight "v" : tensor<8x8xf32>
  %k = enc.linear %x, %wk : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %q = enc.linear %x, %wq : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %v = enc.linear %x, %wv : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s1 = enc.matmul %a, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %s2 = enc.matmul %a, %qh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  return %s1, %s2, %v : tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>, tensor<?x?x8xf32>
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
