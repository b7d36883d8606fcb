// RUN: enc-opt %s -cse -canonicalize | FileCheck %s
// enc ops are Pure: CSE merges identical ops, dead ones are erased.

// CHECK-LABEL: func.func @dedup_and_dce
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
func.func @dedup_and_dce(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  // CHECK: %[[W:.*]] = enc.weight "w" : tensor<8x8xf32>
  // CHECK-NOT: enc.weight
  %w1 = enc.weight "w" : tensor<8x8xf32>
  %w2 = enc.weight "w" : tensor<8x8xf32>
  // CHECK: %[[Y:.*]] = enc.linear %[[X]], %[[W]]
  %y1 = enc.linear %x, %w1 : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %y2 = enc.linear %x, %w2 : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  // CHECK-NOT: enc.softmax
  %dead = enc.softmax %y1 : tensor<?x?x8xf32>
  // CHECK: %[[S:.*]] = enc.add %[[Y]], %[[Y]] : tensor<?x?x8xf32>
  %s = enc.add %y1, %y2 : tensor<?x?x8xf32>
  // CHECK: return %[[S]]
  return %s : tensor<?x?x8xf32>
}

// Different names are different weights and must stay apart.
// CHECK-LABEL: func.func @distinct_weights
// CHECK: enc.weight "a"
// CHECK: enc.weight "b"
func.func @distinct_weights() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = enc.weight "a" : tensor<4xf32>
  %b = enc.weight "b" : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
