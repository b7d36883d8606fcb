// A tiny BERT folder (sentence-transformers layout, mean pooling + Normalize)
// imports to embeddings, two post-LayerNorm layers, pooling and l2norm.
// RUN: rm -rf %t && make-tiny-model %t --hidden 32 --layers 2 --heads 4 --intermediate 48 --vocab 100 --max-positions 40 --seed 3
// RUN: enc-import %t | FileCheck %s
// RUN: enc-import %t --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// CHECK: // model_type=bert hidden=32 layers=2 heads=4 intermediate=48 vocab=100 max_seq=40 act=gelu pooling=mean normalize=1
// CHECK: // weights=37 {{.*}} vocab_tokens=100 lowercase=1 cls=2 sep=3 unk=1 pad=0
// CHECK-LABEL: func.func @forward
// BERT has two token types: @forward takes their ids as a third argument.
// CHECK-SAME: (%[[IDS:[^:]*]]: tensor<?x?xi32>, %[[LEN:[^:]*]]: tensor<?xi32>, %[[TIDS:[^:]*]]: tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>)
// CHECK: %[[WORD:.*]] = enc.weight "embeddings.word_embeddings.weight" : tensor<100x32xf32>
// CHECK: %[[POS:.*]] = enc.weight "embeddings.position_embeddings.weight" : tensor<40x32xf32>
// CHECK: %[[TYPE:.*]] = enc.weight "embeddings.token_type_embeddings.weight" : tensor<2x32xf32>
// CHECK: %[[ELNW:.*]] = enc.weight "embeddings.LayerNorm.weight" : tensor<32xf32>
// CHECK: %[[ELNB:.*]] = enc.weight "embeddings.LayerNorm.bias" : tensor<32xf32>
// Every weight of layer 0 is captured, so each op below is tied to its own tensors.
// CHECK: %[[QW:.*]] = enc.weight "encoder.layer.0.attention.self.query.weight" : tensor<32x32xf32>
// CHECK: %[[QB:.*]] = enc.weight "encoder.layer.0.attention.self.query.bias" : tensor<32xf32>
// CHECK: %[[KW:.*]] = enc.weight "encoder.layer.0.attention.self.key.weight" : tensor<32x32xf32>
// CHECK: %[[KB:.*]] = enc.weight "encoder.layer.0.attention.self.key.bias" : tensor<32xf32>
// CHECK: %[[VW:.*]] = enc.weight "encoder.layer.0.attention.self.value.weight" : tensor<32x32xf32>
// CHECK: %[[VB:.*]] = enc.weight "encoder.layer.0.attention.self.value.bias" : tensor<32xf32>
// CHECK: %[[OW:.*]] = enc.weight "encoder.layer.0.attention.output.dense.weight" : tensor<32x32xf32>
// CHECK: %[[OB:.*]] = enc.weight "encoder.layer.0.attention.output.dense.bias" : tensor<32xf32>
// CHECK: %[[ALNW:.*]] = enc.weight "encoder.layer.0.attention.output.LayerNorm.weight" : tensor<32xf32>
// CHECK: %[[ALNB:.*]] = enc.weight "encoder.layer.0.attention.output.LayerNorm.bias" : tensor<32xf32>
// CHECK: %[[IW:.*]] = enc.weight "encoder.layer.0.intermediate.dense.weight" : tensor<48x32xf32>
// CHECK: %[[IB:.*]] = enc.weight "encoder.layer.0.intermediate.dense.bias" : tensor<48xf32>
// CHECK: %[[FW:.*]] = enc.weight "encoder.layer.0.output.dense.weight" : tensor<32x48xf32>
// CHECK: %[[FB:.*]] = enc.weight "encoder.layer.0.output.dense.bias" : tensor<32xf32>
// CHECK: %[[FLNW:.*]] = enc.weight "encoder.layer.0.output.LayerNorm.weight" : tensor<32xf32>
// CHECK: %[[FLNB:.*]] = enc.weight "encoder.layer.0.output.LayerNorm.bias" : tensor<32xf32>
// CHECK: %[[Q1W:.*]] = enc.weight "encoder.layer.1.attention.self.query.weight" : tensor<32x32xf32>
// CHECK: %[[Q1B:.*]] = enc.weight "encoder.layer.1.attention.self.query.bias" : tensor<32xf32>
// CHECK: %[[LLNW:.*]] = enc.weight "encoder.layer.1.output.LayerNorm.weight" : tensor<32xf32>
// CHECK: %[[LLNB:.*]] = enc.weight "encoder.layer.1.output.LayerNorm.bias" : tensor<32xf32>
// CHECK-NOT: enc.weight

// CHECK: %[[EMB:.*]] = enc.embedding %[[IDS]], %[[WORD]], %[[POS]], %[[TYPE]] type_ids %[[TIDS]] {position_offset = 0 : i64}
// CHECK: %[[X0:.*]] = enc.layernorm %[[EMB]], %[[ELNW]], %[[ELNB]] {epsilon = 9.99999996E-13 : f32}

// Layer 0: attention, as the model means it (the decompose pass spells it
// out: tests/lit/passes/decompose.mlir).
// CHECK: %[[Q:.*]] = enc.linear %[[X0]], %[[QW]], %[[QB]] : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
// CHECK: %[[K:.*]] = enc.linear %[[X0]], %[[KW]], %[[KB]] :
// CHECK: %[[V:.*]] = enc.linear %[[X0]], %[[VW]], %[[VB]] :
// CHECK: %[[C:.*]] = enc.attention %[[Q]], %[[K]], %[[V]], %[[LEN]] {num_heads = 4 : i64, padding = #enc.padding<right>, scale = 0.353553385 : f32} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?xi32>) -> tensor<?x?x32xf32>
// CHECK: %[[O:.*]] = enc.linear %[[C]], %[[OW]], %[[OB]] :
// CHECK: %[[R:.*]] = enc.add %[[O]], %[[X0]] : tensor<?x?x32xf32>
// CHECK: %[[A:.*]] = enc.layernorm %[[R]], %[[ALNW]], %[[ALNB]] {epsilon = 9.99999996E-13 : f32}
// CHECK-NOT: enc.softmax
// Layer 0: feed-forward.
// CHECK: %[[H:.*]] = enc.linear %[[A]], %[[IW]], %[[IB]] : {{.*}} -> tensor<?x?x48xf32>
// CHECK: %[[G:.*]] = enc.gelu %[[H]] {approximate = #enc.approximation<none>} : tensor<?x?x48xf32>
// CHECK: %[[F:.*]] = enc.linear %[[G]], %[[FW]], %[[FB]] : {{.*}} -> tensor<?x?x32xf32>
// CHECK: %[[R2:.*]] = enc.add %[[F]], %[[A]]
// CHECK: %[[X1:.*]] = enc.layernorm %[[R2]], %[[FLNW]], %[[FLNB]] {epsilon = 9.99999996E-13 : f32}

// Layer 1 reads layer 0's output; the last LayerNorm feeds pooling.
// CHECK: enc.linear %[[X1]], %[[Q1W]], %[[Q1B]] :
// CHECK: enc.attention
// CHECK-NOT: enc.attention
// CHECK: enc.gelu
// CHECK-NOT: enc.gelu
// CHECK: %[[LAST:.*]] = enc.layernorm %{{.*}}, %[[LLNW]], %[[LLNB]]
// CHECK-NEXT: %[[POOL:.*]] = enc.pool %[[LAST]], %[[LEN]] {mode = #enc.pooling<mean>} : (tensor<?x?x32xf32>, tensor<?xi32>) -> tensor<?x32xf32>
// CHECK-NEXT: %[[NORM:.*]] = enc.l2norm %[[POOL]] : tensor<?x32xf32>
// CHECK-NEXT: return %[[LAST]], %[[NORM]]

// Ops carry the HF module they come from.
// LOC: enc.linear {{.*}} loc(#[[QLOC:loc[0-9]+]])
// LOC: #[[QLOC]] = loc("encoder.layer.0.attention.self.query"(
