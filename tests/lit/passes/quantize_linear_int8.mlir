// RUN: enc-opt %s -enc-quantize-linear-int8 -split-input-file | FileCheck %s
// RUN: enc-opt %s '-enc-quantize-linear-int8=skip=*attention.output*,encoder.layer.5.* embeddings=false' -split-input-file | FileCheck %s --check-prefix=SKIP
// RUN: enc-opt %s '-enc-pipeline=passes=canonicalize,quantize-linear-int8 quantize-skip=down' -split-input-file | FileCheck %s --check-prefix=PIPE
// RUN: printf '# absmax per Linear input\nl0.q.weight 6.35\nl0.k.weight 12.7\nl0.v.weight 1.0\nffn.in.weight 3.0\n' > %t.calib
// RUN: enc-opt %s -enc-quantize-linear-int8=calibration=%t.calib -split-input-file | FileCheck %s --check-prefix=CALIB
// RUN: printf 'l0.q.weight lots\n' > %t.bad
// RUN: not enc-opt %s -enc-quantize-linear-int8=calibration=%t.bad -split-input-file 2>&1 | FileCheck %s --check-prefix=BADCAL
// RUN: not enc-opt %s -enc-quantize-linear-int8=calibration=%t.missing -split-input-file 2>&1 | FileCheck %s --check-prefix=NOCAL
// An unclosed bracket or quote in the options is refused (MLIR's option parser would loop).
// RUN: not enc-opt %s '-enc-quantize-linear-int8=skip=[' 2>&1 | FileCheck %s --check-prefix=UNBALANCED
// RUN: not enc-opt %s '--pass-pipeline=builtin.module(enc-quantize-linear-int8{skip="a})' 2>&1 | FileCheck %s --check-prefix=UNBALANCED
// UNBALANCED: enc-opt: error: unbalanced brackets or quotes in the pass options of
// enc-quantize-linear-int8: enc.linear with an f32 enc.weight -> enc.quantize
// (per token, one per distinct input) + enc.qlinear over "<w>.q8" /
// "<w>.q8scale", keeping bias and epilogue; the word table of enc.embedding
// becomes i8 + per-row scales. Without a WeightStore (enc-opt) only the IR is
// rewritten and the scale summary (w_scale_min/max) is absent.
// BADCAL: error: enc-quantize-linear-int8: {{.*}}.bad:1: expected '<weight name> <absmax > 0>' but got 'l0.q.weight lots'
// NOCAL: error: enc-quantize-linear-int8: cannot read calibration file '{{.*}}.missing'

// One Linear with a bias and a GELU epilogue; the f32 weight op disappears,
// the bias stays f32.
// CHECK-LABEL: func.func @ffn
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-NEXT: %[[XQ:.*]], %[[XS:.*]] = enc.quantize %[[X]] : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
// CHECK-NEXT: %[[WQ:.*]] = enc.weight "ffn.in.weight.q8" : tensor<16x8xi8>
// CHECK-NEXT: %[[WS:.*]] = enc.weight "ffn.in.weight.q8scale" : tensor<16xf32>
// CHECK-NEXT: %[[B:.*]] = enc.weight "ffn.in.bias" : tensor<16xf32>
// CHECK-NEXT: %[[H:.*]] = enc.qlinear %[[XQ]], %[[XS]], %[[WQ]], %[[WS]], %[[B]] {epilogue = #enc.epilogue<gelu>}
// CHECK-SAME: : (tensor<?x?x8xui8>, tensor<?x?xf32>, tensor<16x8xi8>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NOT: enc.linear
// CHECK-NOT: "ffn.in.weight" :
// CHECK: return %[[H]]
// CALIB-LABEL: func.func @ffn
// CALIB: enc.quantize %{{.*}} {static_scale = 0.0236220472 : f32}
func.func @ffn(%x: tensor<?x?x8xf32>) -> tensor<?x?x16xf32> {
  %w = enc.weight "ffn.in.weight" : tensor<16x8xf32>
  %b = enc.weight "ffn.in.bias" : tensor<16xf32>
  %h = enc.linear %x, %w, %b {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %h : tensor<?x?x16xf32>
}

// -----

// Q, K and V read one input: one quantize feeds the three qlinears; the
// gelu_tanh epilogue is kept. A Linear on a computed value gets its quantize
// right after the producer.
// CHECK-LABEL: func.func @shared_input
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK: %[[XQ:.*]], %[[XS:.*]] = enc.quantize %[[X]]
// CHECK-NOT: enc.quantize
// CHECK: %[[Q:.*]] = enc.qlinear %[[XQ]], %[[XS]], %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<?x?x8xf32>
// CHECK: %[[K:.*]] = enc.qlinear %[[XQ]], %[[XS]], %{{.*}}, %{{.*}} : {{.*}} -> tensor<?x?x8xf32>
// CHECK: %[[V:.*]] = enc.qlinear %[[XQ]], %[[XS]], %{{.*}}, %{{.*}} {epilogue = #enc.epilogue<gelu_tanh>} : {{.*}} -> tensor<?x?x8xf32>
// CHECK: %[[S:.*]] = enc.add %[[Q]], %[[K]]
// CHECK-NEXT: %[[SQ:.*]], %[[SS:.*]] = enc.quantize %[[S]] : tensor<?x?x8xf32> -> (tensor<?x?x8xui8>, tensor<?x?xf32>)
// CHECK: %[[O:.*]] = enc.qlinear %[[SQ]], %[[SS]]
// CHECK: return %[[O]], %[[V]]
// Calibrated: the shared quantize takes the largest absmax of its Linears
// (12.7 -> 0.1); the second input has no entry, so it stays dynamic.
// CALIB-LABEL: func.func @shared_input
// CALIB: enc.quantize %{{.*}} {static_scale = 1.000000e-01 : f32}
// CALIB: enc.quantize %{{.*}} : tensor
func.func @shared_input(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %wq = enc.weight "l0.q.weight" : tensor<8x8xf32>
  %bq = enc.weight "l0.q.bias" : tensor<8xf32>
  %wk = enc.weight "l0.k.weight" : tensor<8x8xf32>
  %wv = enc.weight "l0.v.weight" : tensor<8x8xf32>
  %q = enc.linear %x, %wq, %bq : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %k = enc.linear %x, %wk : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %v = enc.linear %x, %wv {epilogue = #enc.epilogue<gelu_tanh>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %s = enc.add %q, %k : tensor<?x?x8xf32>
  %wo = enc.weight "l0.o.weight" : tensor<8x8xf32>
  %o = enc.linear %s, %wo : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %o, %v : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Skip patterns match weight names: the attention output and everything in
// layer 5 stay f32 (and so keep their f32 weights); the others are int8.
// CHECK-LABEL: func.func @skip
// CHECK-COUNT-3: enc.qlinear
// CHECK-NOT: enc.linear
// SKIP-LABEL: func.func @skip
// SKIP-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// SKIP: %[[XQ:.*]], %[[XS:.*]] = enc.quantize %[[X]]
// SKIP-DAG: %[[WA:.*]] = enc.weight "encoder.layer.0.attention.output.dense.weight" : tensor<8x8xf32>
// SKIP-DAG: %[[W5:.*]] = enc.weight "encoder.layer.5.intermediate.dense.weight" : tensor<8x8xf32>
// SKIP-DAG: %[[WI:.*]] = enc.weight "encoder.layer.0.intermediate.dense.weight.q8" : tensor<8x8xi8>
// SKIP: %[[A:.*]] = enc.linear %[[X]], %[[WA]]
// SKIP: %[[I:.*]] = enc.qlinear %[[XQ]], %[[XS]], %[[WI]]
// SKIP: %[[L5:.*]] = enc.linear %[[X]], %[[W5]]
// SKIP: return %[[A]], %[[I]], %[[L5]]
func.func @skip(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %wa = enc.weight "encoder.layer.0.attention.output.dense.weight" : tensor<8x8xf32>
  %wi = enc.weight "encoder.layer.0.intermediate.dense.weight" : tensor<8x8xf32>
  %w5 = enc.weight "encoder.layer.5.intermediate.dense.weight" : tensor<8x8xf32>
  %a = enc.linear %x, %wa : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %i = enc.linear %x, %wi : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %l5 = enc.linear %x, %w5 : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %a, %i, %l5 : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// The packed Q/K/V Linear of enc-fuse-qkv (a "+"-joined weight) is one more
// Linear; the split stays f32.
// CHECK-LABEL: func.func @fused_qkv
// CHECK: enc.weight "q+k+v.q8" : tensor<24x8xi8>
// CHECK: %[[QKV:.*]] = enc.qlinear {{.*}} -> tensor<?x?x24xf32>
// CHECK-NEXT: enc.split %[[QKV]] {parts = 3 : i64}
func.func @fused_qkv(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %w = enc.weight "q+k+v" : tensor<24x8xf32>
  %qkv = enc.linear %x, %w : (tensor<?x?x8xf32>, tensor<24x8xf32>) -> tensor<?x?x24xf32>
  %q, %k, %v = enc.split %qkv {parts = 3 : i64} : tensor<?x?x24xf32> -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return %q, %k, %v : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// One weight read by Linears on two inputs: one int8 weight pair, two
// quantizes.
// CHECK-LABEL: func.func @shared_weight
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[Y:.*]]: tensor<?x?x8xf32>)
// CHECK-NEXT: %[[XQ:.*]], %[[XS:.*]] = enc.quantize %[[X]]
// CHECK-NEXT: %[[YQ:.*]], %[[YS:.*]] = enc.quantize %[[Y]]
// CHECK-NEXT: %[[WQ:.*]] = enc.weight "w.q8" : tensor<4x8xi8>
// CHECK-NEXT: %[[WS:.*]] = enc.weight "w.q8scale" : tensor<4xf32>
// CHECK-NEXT: enc.qlinear %[[XQ]], %[[XS]], %[[WQ]], %[[WS]]
// CHECK-NEXT: enc.qlinear %[[YQ]], %[[YS]], %[[WQ]], %[[WS]]
// CHECK-NEXT: return
func.func @shared_weight(%x: tensor<?x?x8xf32>, %y: tensor<?x?x8xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %w = enc.weight "w" : tensor<4x8xf32>
  %a = enc.linear %x, %w : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
  %b = enc.linear %y, %w : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
  return %a, %b : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// Negative: a weight that is not an enc.weight (a function argument) and an
// f32 weight that another op also reads (it stays, the Linear is still
// quantised).
// CHECK-LABEL: func.func @not_a_weight
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[W:.*]]: tensor<4x8xf32>)
// CHECK-NOT: enc.quantize
// CHECK: %[[Y:.*]] = enc.linear %[[X]], %[[W]] : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
// CHECK-NOT: enc.quantize
// CHECK-NOT: enc.qlinear
// CHECK: return %[[Y]]
func.func @not_a_weight(%x: tensor<?x?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x?x4xf32> {
  %y = enc.linear %x, %w : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}

// -----

// CHECK-LABEL: func.func @weight_with_other_user
// CHECK: %[[W:.*]] = enc.weight "w" : tensor<8x8xf32>
// CHECK: enc.qlinear
// CHECK: %[[A:.*]] = enc.add %[[W]], %[[W]]
// CHECK: return {{.*}}, %[[A]]
func.func @weight_with_other_user(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<8x8xf32>) {
  %w = enc.weight "w" : tensor<8x8xf32>
  %y = enc.linear %x, %w : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %a = enc.add %w, %w : tensor<8x8xf32>
  return %y, %a : tensor<?x?x8xf32>, tensor<8x8xf32>
}

// -----

// The word table becomes i8 + per-row scales; position and token-type tables
// stay f32. With embeddings=false (SKIP run) it stays f32.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x?xi32>)
// CHECK-DAG: %[[WQ:.*]] = enc.weight "word.weight.q8" : tensor<100x8xi8>
// CHECK-DAG: %[[WS:.*]] = enc.weight "word.weight.q8scale" : tensor<100xf32>
// CHECK-DAG: %[[P:.*]] = enc.weight "pos.weight" : tensor<16x8xf32>
// CHECK-DAG: %[[T:.*]] = enc.weight "type.weight" : tensor<2x8xf32>
// CHECK: enc.embedding %[[IDS]], %[[WQ]], %[[P]], %[[T]] word_scale %[[WS]] {position_offset = 2 : i64}
// CHECK-SAME: : (tensor<?x?xi32>, tensor<100x8xi8>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<100xf32>) -> tensor<?x?x8xf32>
// CHECK-NOT: "word.weight" :
// SKIP-LABEL: func.func @embedding
// SKIP: enc.embedding %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {position_offset = 2 : i64} : (tensor<?x?xi32>, tensor<100x8xf32>,
func.func @embedding(%ids: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %w = enc.weight "word.weight" : tensor<100x8xf32>
  %p = enc.weight "pos.weight" : tensor<16x8xf32>
  %t = enc.weight "type.weight" : tensor<2x8xf32>
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 2 : i64} : (tensor<?x?xi32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  return %e : tensor<?x?x8xf32>
}

// -----

// A Linear reading another Linear's result: the second quantize reads the
// first qlinear (whose result also stays visible to other users).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK: %[[XQ:.*]], %[[XS:.*]] = enc.quantize %[[X]]
// CHECK: %[[H:.*]] = enc.qlinear %[[XQ]], %[[XS]]
// CHECK-NEXT: %[[HQ:.*]], %[[HS:.*]] = enc.quantize %[[H]] : tensor<?x?x16xf32> -> (tensor<?x?x16xui8>, tensor<?x?xf32>)
// CHECK: %[[O:.*]] = enc.qlinear %[[HQ]], %[[HS]], %{{.*}}, %{{.*}} : (tensor<?x?x16xui8>, tensor<?x?xf32>, tensor<8x16xi8>, tensor<8xf32>) -> tensor<?x?x8xf32>
// CHECK: return %[[O]], %[[H]]
// Through enc-pipeline with a skip pattern: "down" stays f32.
// PIPE-LABEL: func.func @chain
// PIPE: %[[H:.*]] = enc.qlinear
// PIPE-NOT: enc.quantize
// PIPE: enc.linear %[[H]], %{{.*}} : (tensor<?x?x16xf32>, tensor<8x16xf32>)
func.func @chain(%x: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %w1 = enc.weight "up" : tensor<16x8xf32>
  %w2 = enc.weight "down" : tensor<8x16xf32>
  %h = enc.linear %x, %w1 {epilogue = #enc.epilogue<gelu>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %o = enc.linear %h, %w2 : (tensor<?x?x16xf32>, tensor<8x16xf32>) -> tensor<?x?x8xf32>
  return %o, %h : tensor<?x?x8xf32>, tensor<?x?x16xf32>
}
