// Unsupported or inconsistent model folders: one line naming the file, the
// field or tensor, and what was expected; exit code 1.

// RUN: not enc-import %t.absent 2>&1 | FileCheck %s --check-prefix=ABSENT
// ABSENT: error: {{.*}}.absent: not a Hugging Face model folder (no config.json)

// RUN: rm -rf %t && make-tiny-model %t --layers 1 --heads 2
// RUN: cp %t/config.json %t/config.orig

// RUN: sed -i 's/"model_type": "bert"/"model_type": "gpt2"/' %t/config.json
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: {{.*}}/config.json: model_type 'gpt2' is not supported (supported: bert, roberta, xlm-roberta, camembert, distilbert, mpnet, modernbert, qwen3, gemma3_text, llama, mistral, qwen2)

// RUN: sed 's/"num_attention_heads": 2/"num_attention_heads": 5/' %t/config.orig > %t/config.json
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: {{.*}}/config.json: hidden size 64 is not divisible by the number of attention heads 5

// RUN: sed 's/"hidden_size": 64,//' %t/config.orig > %t/config.json
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}/config.json: field 'hidden_size' is missing (expected an integer)

// RUN: sed 's/"hidden_act": "gelu"/"hidden_act": "swish"/' %t/config.orig > %t/config.json
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=ACT
// ACT: error: {{.*}}/config.json: hidden_act 'swish' is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, gelu_fast)

// RUN: sed 's/"intermediate_size": 128/"intermediate_size": 100/' %t/config.orig > %t/config.json
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: {{.*}}/model.safetensors: tensor 'encoder.layer.0.intermediate.dense.weight' has shape [128, 64], expected [100, 64]

// RUN: cp %t/config.orig %t/config.json
// RUN: not enc-import %t --max-seq 65 2>&1 | FileCheck %s --check-prefix=MAXSEQ
// MAXSEQ: error: {{.*}}: --max-seq 65 is out of range [1, 64] (the model's position table)

// RUN: not enc-import %t --pooling max 2>&1 | FileCheck %s --check-prefix=POOLOPT
// POOLOPT: error: --pooling expects one of none, cls, mean, last, splade, got 'max'

// RUN: sed -i 's/"pooling_mode_max_tokens": false/"pooling_mode_max_tokens": true/' %t/1_Pooling/config.json
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=POOL
// POOL: error: {{.*}}/1_Pooling/config.json: pooling modes {pooling_mode_max_tokens, pooling_mode_mean_tokens} are not supported (supported: exactly one of pooling_mode_cls_token, pooling_mode_mean_tokens, pooling_mode_lasttoken)

// RUN: rm %t/modules.json
// RUN: head -c 100 %t/model.safetensors > %t/model.cut && mv %t/model.cut %t/model.safetensors
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: error: {{.*}}/model.safetensors: header length {{[0-9]+}} exceeds the file size 100

// RUN: rm %t/model.safetensors && touch %t/pytorch_model.bin
// RUN: not enc-import %t 2>&1 | FileCheck %s --check-prefix=BIN
// BIN: error: {{.*}}: only model.safetensors is supported for now, found pytorch_model.bin
