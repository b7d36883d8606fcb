// Pooling/normalize from the folder and their command-line overrides; roberta
// position offset; the tanh GELU; f16 storage and a "roberta." prefix.

// CLS pooling without Normalize: one pool, no l2norm.
// RUN: rm -rf %t.cls && make-tiny-model %t.cls --layers 1 --pooling cls --no-normalize
// RUN: enc-import %t.cls | FileCheck %s --check-prefix=CLS
// CLS: pooling=cls normalize=0
// CLS-LABEL: func.func @forward
// CLS-SAME: -> (tensor<?x?x64xf32>, tensor<?x64xf32>)
// CLS: %[[P:.*]] = enc.pool %{{.*}}, %{{.*}} {mode = #enc.pooling<cls>}
// CLS-NOT: enc.l2norm
// CLS: return %{{.*}}, %[[P]]

// --pooling none: the hidden state only.
// RUN: enc-import %t.cls --pooling none | FileCheck %s --check-prefix=NONE
// NONE: pooling=none normalize=0
// NONE-LABEL: func.func @forward
// NONE-SAME: -> tensor<?x?x64xf32>
// NONE-NOT: enc.pool
// NONE: return %{{.*}} : tensor<?x?x64xf32>

// --pooling mean --normalize 1 overrides the folder's cls.
// RUN: enc-import %t.cls --pooling mean --normalize 1 --max-seq 16 | FileCheck %s --check-prefix=MEAN
// MEAN: max_seq=16 act=gelu pooling=mean normalize=1
// MEAN: enc.pool {{.*}} {mode = #enc.pooling<mean>}
// MEAN-NEXT: enc.l2norm

// No modules.json at all (pooling none in the writer): mean + normalize by default.
// RUN: rm -rf %t.plain && make-tiny-model %t.plain --layers 1 --pooling none
// RUN: enc-import %t.plain | FileCheck %s --check-prefix=PLAIN
// PLAIN: max_seq=64 act=gelu pooling=mean normalize=1
// PLAIN: enc.l2norm

// RoBERTa: positions start at pad_token_id + 1 = 2; tanh GELU; F16 weights
// with the "roberta." prefix import under their canonical names.
// RUN: rm -rf %t.rob && make-tiny-model %t.rob --model-type roberta --layers 1 --act gelu_new --dtype F16 --weight-prefix roberta. --type-vocab 1
// RUN: enc-import %t.rob | FileCheck %s --check-prefix=ROB
// ROB: model_type=roberta {{.*}} max_seq=62 act=gelu_new
// ROB: enc.weight "embeddings.word_embeddings.weight" : tensor<120x64xf32>
// ROB: enc.weight "embeddings.token_type_embeddings.weight" : tensor<1x64xf32>
// ROB-NOT: roberta.
// One token type: no type ids.
// ROB: enc.embedding %{{[a-z0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {position_offset = 2 : i64, position_pad_id = 1 : i64}
// ROB: enc.gelu %{{.*}} {approximate = #enc.approximation<tanh>}
