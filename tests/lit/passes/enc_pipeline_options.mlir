// RUN: enc-opt %s -enc-pipeline=passes=fuse-scale-mask-softmax | FileCheck %s --check-prefix=SMS
// RUN: enc-opt %s -enc-pipeline=passes=fuse-scale-mask-softmax,fuse-attention | FileCheck %s --check-prefix=ATT
// RUN: enc-opt %s -enc-pipeline=passes=fuse-qkv,fuse-scale-mask-softmax,fuse-attention | FileCheck %s --check-prefix=PACKED
// RUN: enc-opt %s -enc-pipeline=passes=fuse-attention | FileCheck %s --check-prefix=NOSMS
// RUN: not enc-opt %s -enc-pipeline=passes=canonicalize,fuse-everything 2>&1 | FileCheck %s --check-prefix=ERR
// The `passes` option of -enc-pipeline runs the named steps in order, so a
// prefix or subset of the pipeline can be inspected (what `encc report` and
// --disable-pass do).

// SMS-LABEL: func.func @layer
// SMS: enc.split_heads
// SMS: enc.scale_mask_softmax %{{.*}}, %{{.*}} {padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// SMS: enc.merge_heads
// SMS: enc.gelu

// Without fuse-qkv, attention takes q, k, v separately.
// ATT-LABEL: func.func @layer
// ATT-COUNT-3: enc.linear
// ATT-NEXT: enc.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32}
// ATT-NOT: enc.softmax
// ATT: enc.gelu

// With fuse-qkv first, the packed form.
// PACKED-LABEL: func.func @layer
// PACKED: %[[QKV:.*]] = enc.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
// PACKED-NEXT: enc.attention %[[QKV]], %{{.*}} {num_heads = 2 : i64, padding = #enc.padding<right>, scale = 5.000000e-01 : f32} : (tensor<?x?x24xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
// PACKED-NOT: enc.split

// fuse-attention alone finds no scale_mask_softmax: no change.
// NOSMS-NOT: enc.attention
// NOSMS: enc.softmax

// ERR: unknown pass 'fuse-everything'; expected one of: canonicalize, fuse-qkv, fuse-scale-mask-softmax, fuse-attention, fuse-bias-gelu, fuse-residual-layernorm

func.func @layer(%x: tensor<?x?x8xf32>, %len: tensor<?xi32>) -> tensor<?x?x16xf32> {
  %wq = enc.weight "q.w" : tensor<8x8xf32>
  %bq = enc.weight "q.b" : tensor<8xf32>
  %wk = enc.weight "k.w" : tensor<8x8xf32>
  %bk = enc.weight "k.b" : tensor<8xf32>
  %wv = enc.weight "v.w" : tensor<8x8xf32>
  %bv = enc.weight "v.b" : tensor<8xf32>
  %q = enc.linear %x, %wq, %bq : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %k = enc.linear %x, %wk, %bk : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %v = enc.linear %x, %wv, %bv : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %qh = enc.split_heads %q {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %kh = enc.split_heads %k {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %vh = enc.split_heads %v {num_heads = 2 : i64} : tensor<?x?x8xf32> -> tensor<?x2x?x4xf32>
  %s = enc.matmul %qh, %kh {transpose_b} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %ss = enc.scale %s {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
  %m = enc.mask %ss, %len : (tensor<?x2x?x?xf32>, tensor<?xi32>) -> tensor<?x2x?x?xf32>
  %p = enc.softmax %m : tensor<?x2x?x?xf32>
  %ch = enc.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %c = enc.merge_heads %ch : tensor<?x2x?x4xf32> -> tensor<?x?x8xf32>
  %wi = enc.weight "i.w" : tensor<16x8xf32>
  %i = enc.linear %c, %wi : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %g = enc.gelu %i {approximate = #enc.approximation<none>} : tensor<?x?x16xf32>
  return %g : tensor<?x?x16xf32>
}
