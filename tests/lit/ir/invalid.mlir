// RUN: enc-opt %s -split-input-file -verify-diagnostics
// One case per verifier rule of the enc ops.

// A weight's shape must be static.
func.func @weight_dynamic() {
  // expected-error @+1 {{'enc.weight' op expects a static shape but got 'tensor<?x4xf32>'}}
  %w = enc.weight "w" : tensor<?x4xf32>
  return
}

// -----

func.func @weight_empty_name() {
  // expected-error @+1 {{expects a non-empty weight name}}
  %w = enc.weight "" : tensor<4xf32>
  return
}

// -----

// Element types come from the ODS constraints.
func.func @weight_f64() {
  // expected-error @+1 {{'enc.weight' op result #0 must be ranked tensor of 32-bit float or 8-bit signless integer or 32-bit signless integer or bfloat16 type values}}
  %w = enc.weight "w" : tensor<4xf64>
  return
}

// -----

func.func @embedding_ids_rank(%ids: tensor<?xi32>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{expects ids of rank 2 but got 'tensor<?xi32>'}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_ids_type(%ids: tensor<?x?xi64>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer values}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi64>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_pad_id(%ids: tensor<?x?xi32>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{position_pad_id -1 must be >= 0}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 2 : i64, position_pad_id = -1 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_hidden(%ids: tensor<?x?xi32>, %w: tensor<10x8xf32>, %p: tensor<16x6xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{expects position table dim 1 to equal word table dim 1 (8) but got 6}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<16x6xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_type_hidden(%ids: tensor<?x?xi32>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x4xf32>) {
  // expected-error @+1 {{expects token-type table dim 1 to equal word table dim 1 (8) but got 4}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x4xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_result(%ids: tensor<2x?xi32>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{expects result dim 0 to equal ids dim 0 (2) but got 3}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<2x?xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<3x?x8xf32>
  return
}

// -----

func.func @embedding_result_hidden(%ids: tensor<?x?xi32>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal word table dim 1 (8) but got 16}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @embedding_positions(%ids: tensor<?x16xi32>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{expects sequence length + position_offset <= 16 position rows but got 18}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 2 : i64} : (tensor<?x16xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x16x8xf32>
  return
}

// -----

func.func @embedding_negative_offset(%ids: tensor<?x?xi32>, %w: tensor<10x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{expects position_offset >= 0 but got -1}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = -1 : i64} : (tensor<?x?xi32>, tensor<10x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @linear_mixed_types(%x: tensor<?x?x384xf32>, %w: tensor<1536x384xbf16>) {
  // expected-error @+1 {{expects x and weight of one element type (both f32 or both bf16) but got 'f32' and 'bf16'}}
  %y = enc.linear %x, %w : (tensor<?x?x384xf32>, tensor<1536x384xbf16>) -> tensor<?x?x1536xf32>
  return
}

// -----

func.func @linear_bf16_result_of_f32(%x: tensor<?x?x384xf32>, %w: tensor<1536x384xf32>) {
  // expected-error @+1 {{expects an f32 result for f32 operands (a bf16 result only over bf16 x and weight)}}
  %y = enc.linear %x, %w : (tensor<?x?x384xf32>, tensor<1536x384xf32>) -> tensor<?x?x1536xbf16>
  return
}

// -----

func.func @to_bf16_shape(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal x dim 2 (384) but got 256}}
  %y = enc.to_bf16 %x : tensor<?x?x384xf32> -> tensor<?x?x256xbf16>
  return
}

// -----

func.func @linear_k(%x: tensor<?x?x384xf32>, %w: tensor<1536x256xf32>) {
  // expected-error @+1 {{expects x dim 2 to equal weight dim 1 (256) but got 384}}
  %y = enc.linear %x, %w : (tensor<?x?x384xf32>, tensor<1536x256xf32>) -> tensor<?x?x1536xf32>
  return
}

// -----

func.func @linear_n(%x: tensor<?x?x384xf32>, %w: tensor<1536x384xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal weight dim 0 (1536) but got 384}}
  %y = enc.linear %x, %w : (tensor<?x?x384xf32>, tensor<1536x384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<?x?x384xf32>, %w: tensor<1536x384xf32>, %b: tensor<384xf32>) {
  // expected-error @+1 {{expects bias dim 0 to equal weight dim 0 (1536) but got 384}}
  %y = enc.linear %x, %w, %b : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<384xf32>) -> tensor<?x?x1536xf32>
  return
}

// -----

func.func @linear_bias_rank(%x: tensor<?x?x384xf32>, %w: tensor<1536x384xf32>, %b: tensor<1x1536xf32>) {
  // expected-error @+1 {{expects bias of rank 1 but got 'tensor<1x1536xf32>'}}
  %y = enc.linear %x, %w, %b : (tensor<?x?x384xf32>, tensor<1536x384xf32>, tensor<1x1536xf32>) -> tensor<?x?x1536xf32>
  return
}

// -----

func.func @linear_leading(%x: tensor<4x?x384xf32>, %w: tensor<1536x384xf32>) {
  // expected-error @+1 {{expects result dim 0 to equal x dim 0 (4) but got 2}}
  %y = enc.linear %x, %w : (tensor<4x?x384xf32>, tensor<1536x384xf32>) -> tensor<2x?x1536xf32>
  return
}

// -----

func.func @linear_result_rank(%x: tensor<?x?x384xf32>, %w: tensor<1536x384xf32>) {
  // expected-error @+1 {{expects result of rank 3 but got 'tensor<?x1536xf32>'}}
  %y = enc.linear %x, %w : (tensor<?x?x384xf32>, tensor<1536x384xf32>) -> tensor<?x1536xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<?x?x384xf32>, %w: tensor<384xf32>) {
  // expected-error @+1 {{expects weight of rank 2 but got 'tensor<384xf32>'}}
  %y = enc.linear %x, %w : (tensor<?x?x384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

// Closed sets are enum attributes: an unknown value does not parse.
func.func @linear_epilogue(%x: tensor<?x?x384xf32>, %w: tensor<384x384xf32>) {
  // expected-error @+2 {{expected ::mlir::enc::Epilogue to be one of: none, gelu, gelu_tanh}}
  // expected-error @+1 {{failed to parse Enc_EpilogueAttr}}
  %y = enc.linear %x, %w {epilogue = #enc.epilogue<relu>} : (tensor<?x?x384xf32>, tensor<384x384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

// The string spelling of earlier versions is refused, not reinterpreted.
func.func @linear_epilogue_string(%x: tensor<?x?x384xf32>, %w: tensor<384x384xf32>) {
  // expected-error @+1 {{'enc.linear' op attribute 'epilogue' failed to satisfy constraint: what a Linear applies to its result elementwise}}
  %y = enc.linear %x, %w {epilogue = "gelu"} : (tensor<?x?x384xf32>, tensor<384x384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<?x12x?x32xf32>, %b: tensor<?x32xf32>) {
  // expected-error @+1 {{expects b of rank 4 but got 'tensor<?x32xf32>'}}
  %c = enc.matmul %a, %b : (tensor<?x12x?x32xf32>, tensor<?x32xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<?x12x?x32xf32>, %b: tensor<?x6x32x?xf32>) {
  // expected-error @+1 {{expects b batch dim 1 to equal a batch dim 1 (12) but got 6}}
  %c = enc.matmul %a, %b : (tensor<?x12x?x32xf32>, tensor<?x6x32x?xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @matmul_result_batch(%a: tensor<?x12x?x32xf32>, %b: tensor<?x12x32x?xf32>) {
  // expected-error @+1 {{expects result batch dim 1 to equal a batch dim 1 (12) but got 4}}
  %c = enc.matmul %a, %b : (tensor<?x12x?x32xf32>, tensor<?x12x32x?xf32>) -> tensor<?x4x?x?xf32>
  return
}

// -----

// Without transpose_b the contraction dim of b is its second-to-last.
func.func @matmul_contraction(%a: tensor<?x12x?x32xf32>, %b: tensor<?x12x16x?xf32>) {
  // expected-error @+1 {{expects b contraction dim 2 to equal a dim 3 (32) but got 16}}
  %c = enc.matmul %a, %b : (tensor<?x12x?x32xf32>, tensor<?x12x16x?xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

// With transpose_b it is the last.
func.func @matmul_contraction_transposed(%a: tensor<?x12x?x32xf32>, %b: tensor<?x12x?x16xf32>) {
  // expected-error @+1 {{expects b contraction dim 3 (transpose_b) to equal a dim 3 (32) but got 16}}
  %c = enc.matmul %a, %b {transpose_b} : (tensor<?x12x?x32xf32>, tensor<?x12x?x16xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

// The same operands are valid without transpose_b; the result then has b's last dim.
func.func @matmul_n(%a: tensor<?x12x?x32xf32>, %b: tensor<?x12x32x8xf32>) {
  // expected-error @+1 {{expects result dim 3 to equal b dim 3 (8) but got 32}}
  %c = enc.matmul %a, %b : (tensor<?x12x?x32xf32>, tensor<?x12x32x8xf32>) -> tensor<?x12x?x32xf32>
  return
}

// -----

func.func @matmul_n_transposed(%a: tensor<?x12x?x32xf32>, %b: tensor<?x12x8x32xf32>) {
  // expected-error @+1 {{expects result dim 3 to equal b dim 2 (8) but got 16}}
  %c = enc.matmul %a, %b {transpose_b} : (tensor<?x12x?x32xf32>, tensor<?x12x8x32xf32>) -> tensor<?x12x?x16xf32>
  return
}

// -----

func.func @matmul_m(%a: tensor<?x12x8x32xf32>, %b: tensor<?x12x32x32xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal a dim 2 (8) but got 16}}
  %c = enc.matmul %a, %b : (tensor<?x12x8x32xf32>, tensor<?x12x32x32xf32>) -> tensor<?x12x16x32xf32>
  return
}

// -----

func.func @add_types(%a: tensor<?x?x384xf32>, %b: tensor<?x?x256xf32>) {
  // expected-error @+1 {{'enc.add' op failed to verify that all of {lhs, rhs, result} have same type}}
  %c = "enc.add"(%a, %b) : (tensor<?x?x384xf32>, tensor<?x?x256xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @scale_attr(%a: tensor<?x4xf32>) {
  // expected-error @+1 {{'enc.scale' op requires attribute 'factor'}}
  %c = enc.scale %a : tensor<?x4xf32>
  return
}

// -----

func.func @mask_rank(%s: tensor<?x?x?xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects scores of rank 4 but got 'tensor<?x?x?xf32>'}}
  %m = enc.mask %s, %l : (tensor<?x?x?xf32>, tensor<?xi32>) -> tensor<?x?x?xf32>
  return
}

// -----

func.func @mask_lengths_rank(%s: tensor<?x12x?x?xf32>, %l: tensor<?x?xi32>) {
  // expected-error @+1 {{expects lengths of rank 1 but got 'tensor<?x?xi32>'}}
  %m = enc.mask %s, %l : (tensor<?x12x?x?xf32>, tensor<?x?xi32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @mask_lengths_type(%s: tensor<?x12x?x?xf32>, %l: tensor<?xi64>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer values}}
  %m = enc.mask %s, %l : (tensor<?x12x?x?xf32>, tensor<?xi64>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @mask_batch(%s: tensor<2x12x?x?xf32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{expects lengths dim 0 to equal scores dim 0 (2) but got 3}}
  %m = enc.mask %s, %l : (tensor<2x12x?x?xf32>, tensor<3xi32>) -> tensor<2x12x?x?xf32>
  return
}

// -----

func.func @mask_result(%s: tensor<?x12x?x?xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects result dim 1 to equal scores dim 1 (12) but got 6}}
  %m = enc.mask %s, %l : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x6x?x?xf32>
  return
}

// -----

func.func @softmax_rank(%x: tensor<f32>) {
  // expected-error @+1 {{expects x of rank >= 1 but got 'tensor<f32>'}}
  %p = enc.softmax %x : tensor<f32>
  return
}

// -----

func.func @layernorm_gamma(%x: tensor<?x?x384xf32>, %g: tensor<256xf32>, %b: tensor<384xf32>) {
  // expected-error @+1 {{expects gamma dim 0 to equal x dim 2 (384) but got 256}}
  %y = enc.layernorm %x, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x384xf32>, tensor<256xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @layernorm_beta(%x: tensor<?x?x384xf32>, %g: tensor<384xf32>, %b: tensor<1x384xf32>) {
  // expected-error @+1 {{expects beta of rank 1 but got 'tensor<1x384xf32>'}}
  %y = enc.layernorm %x, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<1x384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @layernorm_result(%x: tensor<?x?x384xf32>, %g: tensor<384xf32>, %b: tensor<384xf32>) {
  // expected-error @+1 {{expects result to have the rank of x (3) but got 'tensor<?x384xf32>'}}
  %y = enc.layernorm %x, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x384xf32>
  return
}

// -----

func.func @layernorm_epsilon(%x: tensor<?x?x384xf32>, %g: tensor<384xf32>, %b: tensor<384xf32>) {
  // expected-error @+1 {{expects epsilon > 0 but got 0}}
  %y = enc.layernorm %x, %g, %b {epsilon = 0.0 : f32} : (tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @gelu_mode(%x: tensor<?x?x1536xf32>) {
  // expected-error @+2 {{expected ::mlir::enc::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Enc_GeluApproximationAttr}}
  %y = enc.gelu %x {approximate = #enc.approximation<fast>} : tensor<?x?x1536xf32>
  return
}

// -----

func.func @rotary_dim(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{rotary_dim 66 must be even and in [2, head dim 64]}}
  %y = enc.rotary %x {layout = #enc.rotary<half>, num_heads = 12 : i64, rotary_dim = 66 : i64, theta = 1.0e4 : f32} : tensor<?x?x768xf32>
  return
}

// -----

func.func @rotary_heads(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{expects a static last dim divisible by num_heads (7)}}
  %y = enc.rotary %x {layout = #enc.rotary<half>, num_heads = 7 : i64, rotary_dim = 64 : i64, theta = 1.0e4 : f32} : tensor<?x?x768xf32>
  return
}

// -----

func.func @rotary_theta(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{theta 1.000000e+00 must be a finite number above 1}}
  %y = enc.rotary %x {layout = #enc.rotary<half>, num_heads = 12 : i64, rotary_dim = 64 : i64, theta = 1.0 : f32} : tensor<?x?x768xf32>
  return
}

// -----

func.func @glu_kind(%x: tensor<?x?x1536xf32>) {
  // expected-error @+2 {{expected ::mlir::enc::GluKind to be one of: geglu, geglu_tanh, swiglu}}
  // expected-error @+1 {{failed to parse Enc_GluKindAttr}}
  %y = enc.glu %x {kind = #enc.glu<reglu>} : (tensor<?x?x1536xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @glu_halves(%x: tensor<?x?x1536xf32>) {
  // expected-error @+1 {{result last dim 1536 is not half of x's 1536}}
  %y = enc.glu %x {kind = #enc.glu<geglu>} : (tensor<?x?x1536xf32>) -> tensor<?x?x1536xf32>
  return
}

// -----

func.func @glu_odd(%x: tensor<?x?x1535xf32>) {
  // expected-error @+1 {{expects a static, even last dim of x (both halves), got 1535}}
  %y = enc.glu %x {kind = #enc.glu<geglu>} : (tensor<?x?x1535xf32>) -> tensor<?x?x767xf32>
  return
}

// -----

func.func @split_heads_divisible(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects x dim 2 to be divisible by num_heads (5) but got 384}}
  %y = enc.split_heads %x {num_heads = 5 : i64} : tensor<?x?x384xf32> -> tensor<?x5x?x76xf32>
  return
}

// -----

func.func @split_heads_positive(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects num_heads > 0 but got 0}}
  %y = enc.split_heads %x {num_heads = 0 : i64} : tensor<?x?x384xf32> -> tensor<?x?x?x?xf32>
  return
}

// -----

func.func @split_heads_heads(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects result dim 1 to equal num_heads (12) but got 6}}
  %y = enc.split_heads %x {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x6x?x32xf32>
  return
}

// -----

func.func @split_heads_head_dim(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects result dim 3 to equal x dim 2 / num_heads (32) but got 64}}
  %y = enc.split_heads %x {num_heads = 12 : i64} : tensor<?x?x384xf32> -> tensor<?x12x?x64xf32>
  return
}

// -----

func.func @split_heads_seq(%x: tensor<?x7x384xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal x dim 1 (7) but got 8}}
  %y = enc.split_heads %x {num_heads = 12 : i64} : tensor<?x7x384xf32> -> tensor<?x12x8x32xf32>
  return
}

// -----

func.func @split_heads_rank(%x: tensor<?x384xf32>) {
  // expected-error @+1 {{expects x of rank 3 but got 'tensor<?x384xf32>'}}
  %y = enc.split_heads %x {num_heads = 12 : i64} : tensor<?x384xf32> -> tensor<?x12x?x32xf32>
  return
}

// -----

func.func @merge_heads_hidden(%x: tensor<?x12x?x32xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal x dim 1 * x dim 3 (384) but got 256}}
  %y = enc.merge_heads %x : tensor<?x12x?x32xf32> -> tensor<?x?x256xf32>
  return
}

// -----

func.func @merge_heads_rank(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects x of rank 4 but got 'tensor<?x?x384xf32>'}}
  %y = enc.merge_heads %x : tensor<?x?x384xf32> -> tensor<?x?x384xf32>
  return
}

// -----

func.func @merge_heads_seq(%x: tensor<?x12x5x32xf32>) {
  // expected-error @+1 {{expects result dim 1 to equal x dim 2 (5) but got 6}}
  %y = enc.merge_heads %x : tensor<?x12x5x32xf32> -> tensor<?x6x384xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<?x384xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects x of rank 3 but got 'tensor<?x384xf32>'}}
  %p = enc.pool %x, %l {mode = #enc.pooling<mean>} : (tensor<?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
  return
}

// -----

func.func @pool_result_rank(%x: tensor<?x?x384xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects result of rank 2 but got 'tensor<?x?x384xf32>'}}
  %p = enc.pool %x, %l {mode = #enc.pooling<mean>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @pool_hidden(%x: tensor<?x?x384xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects result dim 1 to equal x dim 2 (384) but got 256}}
  %p = enc.pool %x, %l {mode = #enc.pooling<cls>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x256xf32>
  return
}

// -----

func.func @pool_lengths(%x: tensor<4x?x384xf32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{expects lengths dim 0 to equal x dim 0 (4) but got 3}}
  %p = enc.pool %x, %l {mode = #enc.pooling<cls>} : (tensor<4x?x384xf32>, tensor<3xi32>) -> tensor<4x384xf32>
  return
}

// -----

func.func @pool_mode(%x: tensor<?x?x384xf32>, %l: tensor<?xi32>) {
  // expected-error @+2 {{expected ::mlir::enc::PoolingMode to be one of: cls, mean}}
  // expected-error @+1 {{failed to parse Enc_PoolingModeAttr}}
  %p = enc.pool %x, %l {mode = #enc.pooling<max>} : (tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x384xf32>
  return
}

// -----

func.func @l2norm_rank(%x: tensor<f32>) {
  // expected-error @+1 {{expects x of rank >= 1 but got 'tensor<f32>'}}
  %p = enc.l2norm %x : tensor<f32>
  return
}

// -----

// Fused ops (issue 3).
func.func @div_zero(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'enc.div' op expects a finite nonzero divisor but got 0}}
  %y = enc.div %x {divisor = 0.0 : f32} : tensor<?x4xf32>
  return
}

// -----

// Only right padding is implemented: other conventions are rejected.
func.func @mask_left_padding(%s: tensor<?x12x?x?xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.mask' op expects padding to be right (key j of sequence b is valid iff j < lengths[b]; other mask conventions are not supported) but got left}}
  %m = enc.mask %s, %l {padding = #enc.padding<left>} : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @sms_left_padding(%s: tensor<?x12x?x?xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.scale_mask_softmax' op expects padding to be right}}
  %p = enc.scale_mask_softmax %s, %l {padding = #enc.padding<left>, scale = 1.0 : f32} : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

// The padding convention is explicit on the fused ops: it cannot be omitted.
func.func @sms_no_padding(%s: tensor<?x12x?x?xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{requires attribute 'padding'}}
  %p = enc.scale_mask_softmax %s, %l {scale = 1.0 : f32} : (tensor<?x12x?x?xf32>, tensor<?xi32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @sms_rank(%s: tensor<?x?x?xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.scale_mask_softmax' op expects scores of rank 4 but got 'tensor<?x?x?xf32>'}}
  %p = enc.scale_mask_softmax %s, %l {padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x?xf32>, tensor<?xi32>) -> tensor<?x?x?xf32>
  return
}

// -----

func.func @sms_lengths(%s: tensor<4x12x?x?xf32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{expects lengths dim 0 to equal scores dim 0 (4) but got 3}}
  %p = enc.scale_mask_softmax %s, %l {padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<4x12x?x?xf32>, tensor<3xi32>) -> tensor<4x12x?x?xf32>
  return
}

// -----

func.func @attention_alibi_and_table(%q: tensor<?x?x1152xf32>, %l: tensor<?xi32>, %t: tensor<32x12xf32>) {
  // expected-error @+1 {{'enc.attention' op expects one position scheme: alibi or a position_bias, not both}}
  %a = enc.attention %q, %l position_bias(%t) {alibi, max_distance = 128 : i64, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>, tensor<32x12xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_two_bf16_forms(%q: tensor<?x?x1152xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.attention' op expects one bf16 form: bf16_pv (everywhere) or bf16_amx (on AMX tiles), not both}}
  %a = enc.attention %q, %l {bf16_amx, bf16_pv, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_window(%q: tensor<?x?x1152xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.attention' op expects window >= 0 (keys |i - j| <= window) but got -1}}
  %a = enc.attention %q, %l {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32, window = -1 : i64} : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_two_inputs(%q: tensor<?x?x384xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.attention' op expects 1 (packed qkv) or 3 (q, k, v) inputs before lengths but got 2}}
  %a = enc.attention %q, %q, %l {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_no_lengths(%q: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects the attention inputs followed by lengths}}
  %a = enc.attention %q {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_kv_shape(%q: tensor<?x?x384xf32>, %k: tensor<?x?x256xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects k dim 2 to equal q dim 2 (384) but got 256}}
  %a = enc.attention %q, %k, %q, %l {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x384xf32>, tensor<?x?x256xf32>, tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<?x?x384xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects the hidden size (384) to be divisible by num_heads (7)}}
  %a = enc.attention %q, %q, %q, %l {num_heads = 7 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_packed_hidden(%qkv: tensor<?x?x1152xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects result dim 2 to equal qkv dim 2 / 3 (384) but got 1152}}
  %a = enc.attention %qkv, %l {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x1152xf32>
  return
}

// -----

func.func @attention_packed_divisible(%qkv: tensor<?x?x1000xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects qkv dim 2 to be divisible by 3 but got 1000}}
  %a = enc.attention %qkv, %l {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1000xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_padding(%q: tensor<?x?x384xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.attention' op expects padding to be right}}
  %a = enc.attention %q, %q, %q, %l {num_heads = 12 : i64, padding = #enc.padding<left>, scale = 1.0 : f32} : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @split_count(%x: tensor<?x12xf32>) {
  // expected-error @+1 {{'enc.split' op expects 3 results (parts) but got 2}}
  %a, %b = enc.split %x {parts = 3 : i64} : tensor<?x12xf32> -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @split_divisible(%x: tensor<?x10xf32>) {
  // expected-error @+1 {{expects x dim 1 to be divisible by parts (3) but got 10}}
  %a, %b, %c = enc.split %x {parts = 3 : i64} : tensor<?x10xf32> -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
  return
}

// -----

func.func @split_slice(%x: tensor<?x12xf32>) {
  // expected-error @+1 {{expects result 1 dim 1 to equal x dim 1 / parts (4) but got 5}}
  %a, %b, %c = enc.split %x {parts = 3 : i64} : tensor<?x12xf32> -> (tensor<?x4xf32>, tensor<?x5xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @add_layernorm_residual(%x: tensor<?x?x384xf32>, %r: tensor<?x?x256xf32>, %g: tensor<384xf32>) {
  // expected-error @+1 {{'enc.add_layernorm' op expects residual dim 2 to equal x dim 2 (384) but got 256}}
  %y = enc.add_layernorm %x, %r, %g, %g {epsilon = 1.0e-12 : f32} : (tensor<?x?x384xf32>, tensor<?x?x256xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @add_layernorm_gamma(%x: tensor<?x?x384xf32>, %g: tensor<256xf32>, %b: tensor<384xf32>) {
  // expected-error @+1 {{expects gamma dim 0 to equal x dim 2 (384) but got 256}}
  %y = enc.add_layernorm %x, %x, %g, %b {epsilon = 1.0e-12 : f32} : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<256xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @add_layernorm_epsilon(%x: tensor<?x?x384xf32>, %g: tensor<384xf32>) {
  // expected-error @+1 {{expects epsilon > 0 but got 0}}
  %y = enc.add_layernorm %x, %x, %g, %g {epsilon = 0.0 : f32} : (tensor<?x?x384xf32>, tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @quantize_values_shape(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{'enc.quantize' op expects values dim 2 to equal x dim 2 (384) but got 256}}
  %q, %s = enc.quantize %x : tensor<?x?x384xf32> -> (tensor<?x?x256xui8>, tensor<?x?xf32>)
  return
}

// -----

func.func @quantize_scales_rank(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects scales of rank 2 but got 'tensor<?x?x384xf32>'}}
  %q, %s = enc.quantize %x : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?x384xf32>)
  return
}

// -----

func.func @quantize_scales_dim(%x: tensor<2x?x384xf32>) {
  // expected-error @+1 {{expects scales dim 0 to equal x dim 0 (2) but got 3}}
  %q, %s = enc.quantize %x : tensor<2x?x384xf32> -> (tensor<2x?x384xui8>, tensor<3x?xf32>)
  return
}

// -----

func.func @quantize_signed_values(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 8-bit unsigned integer values}}
  %q, %s = enc.quantize %x : tensor<?x?x384xf32> -> (tensor<?x?x384xi8>, tensor<?x?xf32>)
  return
}

// -----

func.func @quantize_static_scale(%x: tensor<?x?x384xf32>) {
  // expected-error @+1 {{expects a finite static_scale > 0 but got 0}}
  %q, %s = enc.quantize %x {static_scale = 0.0 : f32} : tensor<?x?x384xf32> -> (tensor<?x?x384xui8>, tensor<?x?xf32>)
  return
}

// -----

func.func @qlinear_k(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x256xi8>, %ws: tensor<16xf32>) {
  // expected-error @+1 {{'enc.qlinear' op expects x dim 2 to equal weight dim 1 (256) but got 384}}
  %y = enc.qlinear %xq, %xs, %w, %ws : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x256xi8>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @qlinear_w_scale(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x384xi8>, %ws: tensor<8xf32>) {
  // expected-error @+1 {{expects w_scale dim 0 to equal weight dim 0 (16) but got 8}}
  %y = enc.qlinear %xq, %xs, %w, %ws : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x384xi8>, tensor<8xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @qlinear_x_scale(%xq: tensor<?x?x384xui8>, %xs: tensor<?xf32>, %w: tensor<16x384xi8>, %ws: tensor<16xf32>) {
  // expected-error @+1 {{expects x_scale of rank 2 but got 'tensor<?xf32>'}}
  %y = enc.qlinear %xq, %xs, %w, %ws : (tensor<?x?x384xui8>, tensor<?xf32>, tensor<16x384xi8>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @qlinear_f32_weight(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x384xf32>, %ws: tensor<16xf32>) {
  // expected-error @+1 {{operand #2 must be ranked tensor of 8-bit signless integer values}}
  %y = enc.qlinear %xq, %xs, %w, %ws : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x384xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @qlinear_bias(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x384xi8>, %ws: tensor<16xf32>, %b: tensor<15xf32>) {
  // expected-error @+1 {{expects bias dim 0 to equal weight dim 0 (16) but got 15}}
  %y = enc.qlinear %xq, %xs, %w, %ws, %b : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x384xi8>, tensor<16xf32>, tensor<15xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @qlinear_result(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x384xi8>, %ws: tensor<16xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal weight dim 0 (16) but got 32}}
  %y = enc.qlinear %xq, %xs, %w, %ws : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x384xi8>, tensor<16xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @qlinear_epilogue(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x384xi8>, %ws: tensor<16xf32>) {
  // expected-error @+2 {{expected ::mlir::enc::Epilogue to be one of: none, gelu, gelu_tanh}}
  // expected-error @+1 {{failed to parse Enc_EpilogueAttr}}
  %y = enc.qlinear %xq, %xs, %w, %ws {epilogue = #enc.epilogue<relu>} : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x384xi8>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @qlinear_scale_summary(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x384xi8>, %ws: tensor<16xf32>) {
  // expected-error @+1 {{expects both w_scale_min and w_scale_max or neither}}
  %y = enc.qlinear %xq, %xs, %w, %ws {w_scale_min = 1.0e-3 : f32} : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x384xi8>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @qlinear_scale_order(%xq: tensor<?x?x384xui8>, %xs: tensor<?x?xf32>, %w: tensor<16x384xi8>, %ws: tensor<16xf32>) {
  // expected-error @+1 {{expects 0 <= w_scale_min <= w_scale_max}}
  %y = enc.qlinear %xq, %xs, %w, %ws {w_scale_min = 2.0e-3 : f32, w_scale_max = 1.0e-3 : f32} : (tensor<?x?x384xui8>, tensor<?x?xf32>, tensor<16x384xi8>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @embedding_i8_without_scale(%ids: tensor<?x?xi32>, %w: tensor<100x8xi8>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{expects a word_scale operand with an i8 word table}}
  %e = enc.embedding %ids, %w, %p, %t {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<100x8xi8>, tensor<16x8xf32>, tensor<2x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_f32_with_scale(%ids: tensor<?x?xi32>, %w: tensor<100x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>, %s: tensor<100xf32>) {
  // expected-error @+1 {{expects no word_scale with an f32 or bf16 word table}}
  %e = enc.embedding %ids, %w, %p, %t word_scale %s {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<100xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_word_scale_rows(%ids: tensor<?x?xi32>, %w: tensor<100x8xi8>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>, %s: tensor<99xf32>) {
  // expected-error @+1 {{expects word_scale dim 0 to equal word table dim 0 (100) but got 99}}
  %e = enc.embedding %ids, %w, %p, %t word_scale %s {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<100x8xi8>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<99xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_type_ids_rank(%ids: tensor<?x?xi32>, %w: tensor<100x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>, %tid: tensor<?xi32>) {
  // expected-error @+1 {{expects type_ids of rank 2 but got 'tensor<?xi32>'}}
  %e = enc.embedding %ids, %w, %p, %t type_ids %tid {position_offset = 0 : i64} : (tensor<?x?xi32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_type_ids_shape(%ids: tensor<2x?xi32>, %w: tensor<100x8xf32>, %p: tensor<16x8xf32>, %t: tensor<2x8xf32>, %tid: tensor<3x?xi32>) {
  // expected-error @+1 {{expects type_ids dim 0 to equal ids dim 0 (2) but got 3}}
  %e = enc.embedding %ids, %w, %p, %t type_ids %tid {position_offset = 0 : i64} : (tensor<2x?xi32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<3x?xi32>) -> tensor<2x?x8xf32>
  return
}

// -----

func.func @binary_no_broadcast(%x: tensor<?x?x8xf32>, %v: tensor<6xf32>) {
  // expected-error @+1 {{expects operands that broadcast but got 'tensor<?x?x8xf32>' and 'tensor<6xf32>'}}
  %y = enc.binary %x, %v {kind = #enc.binary<add>} : (tensor<?x?x8xf32>, tensor<6xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @binary_result_shape(%x: tensor<?x?x8xf32>, %m: tensor<?x?x1xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal the broadcast shape dim 2 (8) but got 1}}
  %y = enc.binary %x, %m {kind = #enc.binary<sub>} : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  return
}

// -----

func.func @binary_kind() {
  %c = enc.constant dense<1.0> : tensor<f32>
  // expected-error @+2 {{expected ::mlir::enc::BinaryKind to be one of: add, sub, mul, div, pow}}
  // expected-error @+1 {{failed to parse Enc_BinaryKindAttr}}
  %y = enc.binary %c, %c {kind = #enc.binary<max>} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @reduce_mean_keeps_last(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{expects result dim 2 to equal x with the last dim 1 dim 2 (1) but got 8}}
  %m = enc.reduce_mean %x : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return
}

// -----

func.func @constant_too_large() {
  // expected-error @+1 {{expects at most 64 elements (larger constants are weights) but got 65}}
  %c = enc.constant dense<1.0> : tensor<65xf32>
  return
}

// -----

func.func @constant_not_f32() {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float values, but got 'tensor<i32>'}}
  %c = enc.constant dense<1> : tensor<i32>
  return
}

// -----

func.func @relative_position_bias_heads(%s: tensor<?x12x?x?xf32>, %t: tensor<32x8xf32>) {
  // expected-error @+1 {{expects position bias table dim 1 to equal the head count (12) but got 8}}
  %r = enc.relative_position_bias %s, %t {max_distance = 128 : i64} : (tensor<?x12x?x?xf32>, tensor<32x8xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @relative_position_bias_odd_buckets(%s: tensor<?x12x?x?xf32>, %t: tensor<31x12xf32>) {
  // expected-error @+1 {{expects a static, even number of position buckets >= 4 (table dim 0) but got 31}}
  %r = enc.relative_position_bias %s, %t {max_distance = 128 : i64} : (tensor<?x12x?x?xf32>, tensor<31x12xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @relative_position_bias_distance(%s: tensor<?x12x?x?xf32>, %t: tensor<32x12xf32>) {
  // expected-error @+1 {{expects max_distance > num_buckets / 4 (8) but got 8}}
  %r = enc.relative_position_bias %s, %t {max_distance = 8 : i64} : (tensor<?x12x?x?xf32>, tensor<32x12xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @relative_position_bias_not_square(%s: tensor<2x12x5x7xf32>, %t: tensor<32x12xf32>) {
  // expected-error @+1 {{expects scores dim 3 to equal scores dim 2 (5) but got 7}}
  %r = enc.relative_position_bias %s, %t {max_distance = 128 : i64} : (tensor<2x12x5x7xf32>, tensor<32x12xf32>) -> tensor<2x12x5x7xf32>
  return
}

// -----

func.func @attention_bias_without_distance(%qkv: tensor<?x?x1152xf32>, %l: tensor<?xi32>, %t: tensor<32x12xf32>) {
  // expected-error @+1 {{expects max_distance with a position_bias}}
  %a = enc.attention %qkv, %l position_bias(%t) {num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>, tensor<32x12xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_distance_without_bias(%qkv: tensor<?x?x1152xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{expects max_distance only with a position_bias}}
  %a = enc.attention %qkv, %l {max_distance = 128 : i64, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @attention_bias_heads(%qkv: tensor<?x?x1152xf32>, %l: tensor<?xi32>, %t: tensor<32x6xf32>) {
  // expected-error @+1 {{expects position bias table dim 1 to equal the head count (12) but got 6}}
  %a = enc.attention %qkv, %l position_bias(%t) {max_distance = 128 : i64, num_heads = 12 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>, tensor<32x6xf32>) -> tensor<?x?x384xf32>
  return
}

// -----

// A fusion group's results have the types of what its enc.yield names.
func.func @fusion_result_types(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{expects its results to have the types of the yielded values}}
  %f = enc.fusion -> (tensor<?x?x8xf32>) {
    %n = enc.layernorm %x, %g, %g {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %c = enc.to_bf16 %n : tensor<?x?x8xf32> -> tensor<?x?x8xbf16>
    enc.yield %c : tensor<?x?x8xbf16>
  }
  return
}

// -----

// A group of one op is no group.
func.func @fusion_one_op(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{expects at least two ops in its body}}
  %f = enc.fusion -> (tensor<?x?x8xbf16>) {
    %c = enc.to_bf16 %x : tensor<?x?x8xf32> -> tensor<?x?x8xbf16>
    enc.yield %c : tensor<?x?x8xbf16>
  }
  return
}

// -----

// Weights stay outside groups.
func.func @fusion_weight(%x: tensor<?x?x8xf32>) {
  %f = enc.fusion -> (tensor<?x?x8xbf16>) {
    // expected-error @+1 {{cannot be in an enc.fusion (enc compute ops only)}}
    %g = enc.weight "g" : tensor<8xf32>
    %n = enc.layernorm %x, %g, %g {epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %c = enc.to_bf16 %n : tensor<?x?x8xf32> -> tensor<?x?x8xbf16>
    enc.yield %c : tensor<?x?x8xbf16>
  }
  return
}

// -----

func.func @attention_kv_heads(%q: tensor<?x?x768xf32>, %k: tensor<?x?x256xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.attention' op expects num_kv_heads to divide num_heads (12) but got 5}}
  %a = enc.attention %q, %k, %k, %l {num_heads = 12 : i64, num_kv_heads = 5 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x768xf32>, tensor<?x?x256xf32>, tensor<?x?x256xf32>, tensor<?xi32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @attention_kv_width(%q: tensor<?x?x768xf32>, %k: tensor<?x?x256xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.attention' op expects k dim 2 to equal q with num_kv_heads heads dim 2 (192) but got 256}}
  %a = enc.attention %q, %k, %k, %l {num_heads = 12 : i64, num_kv_heads = 3 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x768xf32>, tensor<?x?x256xf32>, tensor<?x?x256xf32>, tensor<?xi32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @attention_kv_packed(%qkv: tensor<?x?x1152xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'enc.attention' op expects q, k and v (not one packed qkv) with num_kv_heads}}
  %a = enc.attention %qkv, %l {num_heads = 12 : i64, num_kv_heads = 4 : i64, padding = #enc.padding<right>, scale = 1.0 : f32} : (tensor<?x?x1152xf32>, tensor<?xi32>) -> tensor<?x?x384xf32>
  return
}

// -----

func.func @rms_norm_group(%x: tensor<?x?x768xf32>, %g: tensor<100xf32>) {
  // expected-error @+1 {{'enc.rms_norm' op expects a static gamma size that divides x's static last dim, got gamma [100] for x's 768}}
  %y = enc.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<?x?x768xf32>, tensor<100xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @rms_norm_eps(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>) {
  // expected-error @+1 {{'enc.rms_norm' op expects a finite epsilon >= 0 but got -1.000000e+00}}
  %y = enc.rms_norm %x, %g {epsilon = -1.0 : f32} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return
}
