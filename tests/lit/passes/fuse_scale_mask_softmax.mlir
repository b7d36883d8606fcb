// RUN: enc-opt %s -enc-fuse-scale-mask-softmax -split-input-file | FileCheck %s
// enc-fuse-scale-mask-softmax: softmax(mask(scale(s))) and its variants ->
// scale_mask_softmax(s).

// The form the HF frontend emits: scale, then mask, then softmax.
// CHECK-LABEL: func.func @scale_mask_softmax
// CHECK-SAME: (%[[S:.*]]: tensor<?x12x?x?xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %[[S]], %[[LEN]] {padding = #enc.padding<right>, scale = 0.176776692 : f32}
// CHECK-SAME: : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
// CHECK-NEXT: return %[[P]]
func.func @scale_mask_softmax(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x12x?x?xf32> {
  %a = enc.scale %s {factor = 0.176776695 : f32} : tensor<?x12x?x?xf32>
  %m = enc.mask %a, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p = enc.softmax %m : tensor<?x12x?x?xf32>
  return %p : tensor<?x12x?x?xf32>
}

// -----

// Mask applied before the scale.
// CHECK-LABEL: func.func @mask_then_scale
// CHECK-SAME: (%[[S:.*]]: tensor<2x4x8x8xf32>, %[[LEN:.*]]: tensor<2xi32>)
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %[[S]], %[[LEN]] {padding = #enc.padding<right>, scale = 2.500000e-01 : f32}
// CHECK-NEXT: return %[[P]]
func.func @mask_then_scale(%s: tensor<2x4x8x8xf32>, %len: tensor<2xi32>) -> tensor<2x4x8x8xf32> {
  %m = enc.mask %s, %len : (tensor<2x4x8x8xf32>, tensor<2xi32>) -> tensor<2x4x8x8xf32>
  %a = enc.scale %m {factor = 0.25 : f32} : tensor<2x4x8x8xf32>
  %p = enc.softmax %a : tensor<2x4x8x8xf32>
  return %p : tensor<2x4x8x8xf32>
}

// -----

// An ONNX-style frontend divides by sqrt(d) instead: scale = 1/8.
// CHECK-LABEL: func.func @div_mask_softmax
// CHECK-SAME: (%[[S:.*]]: tensor<?x12x?x?xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %[[S]], %[[LEN]] {padding = #enc.padding<right>, scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[P]]
func.func @div_mask_softmax(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x12x?x?xf32> {
  %a = enc.div %s {divisor = 8.0 : f32} : tensor<?x12x?x?xf32>
  %m = enc.mask %a, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p = enc.softmax %m : tensor<?x12x?x?xf32>
  return %p : tensor<?x12x?x?xf32>
}

// -----

// Division after the mask (positive divisor keeps -inf at -inf).
// CHECK-LABEL: func.func @mask_then_div
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %{{.*}}, %{{.*}} {padding = #enc.padding<right>, scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[P]]
func.func @mask_then_div(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x12x?x?xf32> {
  %m = enc.mask %s, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %a = enc.div %m {divisor = 8.0 : f32} : tensor<?x12x?x?xf32>
  %p = enc.softmax %a : tensor<?x12x?x?xf32>
  return %p : tensor<?x12x?x?xf32>
}

// -----

// The scale was folded into Q: only mask + softmax, scale 1.
// CHECK-LABEL: func.func @no_scale
// CHECK-SAME: (%[[S:.*]]: tensor<?x12x?x?xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %[[S]], %[[LEN]] {padding = #enc.padding<right>, scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[P]]
func.func @no_scale(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x12x?x?xf32> {
  %m = enc.mask %s, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p = enc.softmax %m : tensor<?x12x?x?xf32>
  return %p : tensor<?x12x?x?xf32>
}

// -----

// Scales on both sides of the mask multiply: 0.5 * 0.25.
// CHECK-LABEL: func.func @scales_both_sides
// CHECK-SAME: (%[[S:.*]]: tensor<?x12x?x?xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %[[S]], %[[LEN]] {padding = #enc.padding<right>, scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[P]]
func.func @scales_both_sides(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x12x?x?xf32> {
  %a = enc.scale %s {factor = 0.5 : f32} : tensor<?x12x?x?xf32>
  %m = enc.mask %a, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %b = enc.scale %m {factor = 0.25 : f32} : tensor<?x12x?x?xf32>
  %p = enc.softmax %b : tensor<?x12x?x?xf32>
  return %p : tensor<?x12x?x?xf32>
}

// -----

// The raw scores may have other users; only the intermediates may not.
// CHECK-LABEL: func.func @scores_other_user
// CHECK-SAME: (%[[S:.*]]: tensor<?x12x?x?xf32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %[[S]], %[[LEN]]
// CHECK-NEXT: %[[T:.*]] = enc.add %[[S]], %[[P]]
func.func @scores_other_user(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x12x?x?xf32> {
  %a = enc.scale %s {factor = 0.5 : f32} : tensor<?x12x?x?xf32>
  %m = enc.mask %a, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p = enc.softmax %m : tensor<?x12x?x?xf32>
  %t = enc.add %s, %p : tensor<?x12x?x?xf32>
  return %t : tensor<?x12x?x?xf32>
}

// -----

// Negative: softmax on a non-attention tensor (no mask in front): no change.
// CHECK-LABEL: func.func @softmax_no_mask
// CHECK-NEXT: %[[A:.*]] = enc.scale %{{.*}} {factor = 5.000000e-01 : f32} : tensor<?x3xf32>
// CHECK-NEXT: %[[P:.*]] = enc.softmax %[[A]] : tensor<?x3xf32>
// CHECK-NEXT: return %[[P]]
func.func @softmax_no_mask(%logits: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %a = enc.scale %logits {factor = 0.5 : f32} : tensor<?x3xf32>
  %p = enc.softmax %a : tensor<?x3xf32>
  return %p : tensor<?x3xf32>
}

// -----

// Negative: the masked scores are used elsewhere too.
// CHECK-LABEL: func.func @mask_other_user
// CHECK-NOT: enc.scale_mask_softmax
// CHECK: %[[A:.*]] = enc.scale
// CHECK-NEXT: %[[M:.*]] = enc.mask %[[A]]
// CHECK-NEXT: %[[P:.*]] = enc.softmax %[[M]]
// CHECK-NEXT: return %[[P]], %[[M]]
func.func @mask_other_user(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> (tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>) {
  %a = enc.scale %s {factor = 0.5 : f32} : tensor<?x12x?x?xf32>
  %m = enc.mask %a, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p = enc.softmax %m : tensor<?x12x?x?xf32>
  return %p, %m : tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>
}

// -----

// The scaled scores are used elsewhere too: the scale stays and only mask +
// softmax fuse (on the scaled scores, scale 1).
// CHECK-LABEL: func.func @scale_other_user
// CHECK: %[[A:.*]] = enc.scale %{{.*}} {factor = 5.000000e-01 : f32}
// CHECK-NEXT: %[[P:.*]] = enc.scale_mask_softmax %[[A]], %{{.*}} {padding = #enc.padding<right>, scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[P]], %[[A]]
func.func @scale_other_user(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> (tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>) {
  %a = enc.scale %s {factor = 0.5 : f32} : tensor<?x12x?x?xf32>
  %m = enc.mask %a, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %p = enc.softmax %m : tensor<?x12x?x?xf32>
  return %p, %a : tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>
}

// -----

// Negative: a negative factor after the mask would turn -inf into +inf.
// CHECK-LABEL: func.func @negative_scale_after_mask
// CHECK-NOT: enc.scale_mask_softmax
// CHECK: enc.mask
// CHECK-NEXT: enc.scale
// CHECK-NEXT: enc.softmax
func.func @negative_scale_after_mask(%s: tensor<?x12x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x12x?x?xf32> {
  %m = enc.mask %s, %len : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  %a = enc.scale %m {factor = -0.5 : f32} : tensor<?x12x?x?xf32>
  %p = enc.softmax %a : tensor<?x12x?x?xf32>
  return %p : tensor<?x12x?x?xf32>
}
