//===- ConfigTest.cpp - config.json parsing of the frontend ---------------===//
#include "frontends/hf/HFImport.h"
#include "frontends/hf/ModelFamily.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

#include <gtest/gtest.h>

using namespace encc;

namespace {

const char *kBert = R"({"model_type":"bert","hidden_size":384,"num_hidden_layers":6,
  "num_attention_heads":12,"intermediate_size":1536,"vocab_size":30522,
  "max_position_embeddings":512,"type_vocab_size":2,"hidden_act":"gelu",
  "layer_norm_eps":1e-12,"pad_token_id":0})";

std::string error(const std::string &text) {
  auto c = parseModelConfig(text, "M/config.json");
  if (c)
    return "<no error>";
  return llvm::toString(c.takeError());
}

/// kBert with `key` replaced by `value` (raw JSON) or removed (value empty).
std::string bertWith(const std::string &key, const std::string &value) {
  std::string s = kBert;
  size_t at = s.find("\"" + key + "\":");
  EXPECT_NE(at, std::string::npos) << key;
  size_t end = s.find_first_of(",}", s.find(':', at));
  if (value.empty())
    return s.erase(at, end - at + (s[end] == ',' ? 1 : 0));
  return s.replace(at, end - at, "\"" + key + "\":" + value);
}

TEST(ModelConfig, ParsesBert) {
  auto c = parseModelConfig(kBert, "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->modelType, "bert");
  EXPECT_EQ(c->hidden, 384);
  EXPECT_EQ(c->layers, 6);
  EXPECT_EQ(c->heads, 12);
  EXPECT_EQ(c->intermediate, 1536);
  EXPECT_EQ(c->vocab, 30522);
  EXPECT_EQ(c->maxPositions, 512);
  EXPECT_EQ(c->typeVocab, 2);
  EXPECT_EQ(c->hiddenAct, Activation::Gelu);
  EXPECT_DOUBLE_EQ(c->layerNormEps, 1e-12);
  EXPECT_EQ(c->positionOffset, 0);
  EXPECT_EQ(c->maxSeq, 512);
}

/// kBert as a BertForSequenceClassification with this id2label (raw JSON).
std::string classifierWith(const std::string &id2label) {
  std::string s = kBert;
  return s.insert(1, "\"architectures\":[\"BertForSequenceClassification\"],\"id2label\":" + id2label + ",");
}

TEST(ModelConfig, ClassifierLabelsComeFromId2Label) {
  auto c = parseModelConfig(classifierWith(R"({"1":"entailment","0":"contradiction","2":"neutral"})"), "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->numLabels, 3);
  EXPECT_EQ(c->labels, (std::vector<std::string>{"contradiction", "entailment", "neutral"})); // by id, not file order
  EXPECT_EQ(c->scoreActivation, "identity");
  EXPECT_EQ(describe(*c).labels, c->labels);

  EXPECT_NE(error(classifierWith(R"({"0":"a","2":"b"})")).find("id2label's keys must be the label ids 0 to 1, got '2'"),
            std::string::npos);
  EXPECT_NE(error(classifierWith(R"({"0":"a","01":"b"})")).find("got '01'"), std::string::npos);
  EXPECT_NE(error(classifierWith(R"({"0":"a","x":"b"})")).find("got 'x'"), std::string::npos);
  EXPECT_NE(error(classifierWith(R"({"0":""})")).find("id2label['0'] must be a UTF-8 string of 1 to 256 bytes"),
            std::string::npos);
  EXPECT_NE(error(classifierWith(R"({"0":5})")).find("id2label['0'] must be"), std::string::npos);
  EXPECT_NE(error(classifierWith("{\"0\":\"" + std::string(257, 'a') + "\"}")).find("1 to 256 bytes"),
            std::string::npos);
}

TEST(ModelConfig, RobertaOffsetsPositionsByPadPlusOne) {
  std::string s = kBert;
  s.replace(s.find("\"bert\""), 6, "\"roberta\"");
  s.replace(s.find("\"pad_token_id\":0"), 16, "\"pad_token_id\":1");
  s.replace(s.find("\"max_position_embeddings\":512"), 29, "\"max_position_embeddings\":514");
  auto c = parseModelConfig(s, "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->positionOffset, 2);
  EXPECT_EQ(c->maxSeq, 512);
}

TEST(ModelConfig, ParsesDistilbert) {
  auto c = parseModelConfig(R"({"model_type":"distilbert","dim":768,"n_layers":6,"n_heads":12,
    "hidden_dim":3072,"activation":"gelu","vocab_size":30522,"max_position_embeddings":512})",
                            "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->hidden, 768);
  EXPECT_EQ(c->intermediate, 3072);
  EXPECT_EQ(c->typeVocab, 0);
  EXPECT_DOUBLE_EQ(c->layerNormEps, 1e-12);
}

TEST(ModelConfig, ParsesMpnet) {
  auto c = parseModelConfig(R"({"model_type":"mpnet","hidden_size":768,"num_hidden_layers":12,
    "num_attention_heads":12,"intermediate_size":3072,"hidden_act":"gelu","layer_norm_eps":1e-05,
    "vocab_size":30527,"max_position_embeddings":514,"pad_token_id":1,"relative_attention_num_buckets":32})",
                            "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->typeVocab, 0);
  EXPECT_EQ(c->positionOffset, 2);
  EXPECT_EQ(c->maxSeq, 512);
  EXPECT_DOUBLE_EQ(c->layerNormEps, 1e-5);
  ModelWeightNames n = modelWeightNames(*c);
  EXPECT_TRUE(n.tokenTypeSynthetic);
  EXPECT_EQ(n.layers.at(3).attnOut, "encoder.layer.3.attention.attn.o");
  EXPECT_EQ(n.layers.at(3).attnNorm, "encoder.layer.3.attention.LayerNorm");
  auto w = expectedWeights(*c);
  EXPECT_EQ(w.back().name, "encoder.relative_attention_bias.weight");
  EXPECT_EQ(w.back().shape, (std::vector<int64_t>{32, 12}));
  EXPECT_EQ(c->family->specialTokens().cls, "<s>");
  EXPECT_EQ(c->family->checkpointPrefixes(*c), (std::vector<std::string>{"mpnet.", ""}));
}

TEST(ModelConfig, TanhGeluSpellings) {
  for (const char *act : {"gelu_new", "gelu_pytorch_tanh", "gelu_fast"}) {
    auto c = parseModelConfig(bertWith("hidden_act", std::string("\"") + act + "\""), "M");
    ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
    EXPECT_EQ(c->hiddenAct, Activation::GeluTanh) << act;
  }
}

TEST(ModelConfig, ErrorUnknownModelType) {
  EXPECT_EQ(error(bertWith("model_type", "\"gpt2\"")),
            "M/config.json: model_type 'gpt2' is not supported (supported: bert, roberta, "
            "xlm-roberta, camembert, distilbert, mpnet, modernbert, qwen3, gemma3_text, llama, mistral, qwen2)");
  EXPECT_EQ(error(bertWith("model_type", "")),
            "M/config.json: field 'model_type' is missing (expected a string)");
}

TEST(ModelConfig, ErrorMissingOrMistypedField) {
  EXPECT_EQ(error(bertWith("hidden_size", "")),
            "M/config.json: field 'hidden_size' is missing (expected an integer)");
  EXPECT_EQ(error(bertWith("hidden_size", "\"384\"")),
            "M/config.json: field 'hidden_size' is a string, expected an integer");
  EXPECT_EQ(error(bertWith("num_hidden_layers", "6.5")),
            "M/config.json: field 'num_hidden_layers' is a float, expected an integer");
  EXPECT_EQ(error(bertWith("vocab_size", "0")),
            "M/config.json: field 'vocab_size' is 0, expected an integer in [1, 2^31]");
  EXPECT_EQ(error(bertWith("layer_norm_eps", "\"x\"")),
            "M/config.json: field 'layer_norm_eps' is a string, expected a number");
  EXPECT_EQ(error("[1]"), "M/config.json: expected a JSON object");
  EXPECT_EQ(error("{"), "M/config.json: not valid JSON");
}

TEST(ModelConfig, ErrorDecoderConfigs) {
  std::string s = kBert;
  s.insert(1, R"("is_decoder":true,)");
  EXPECT_EQ(error(s), "M/config.json: field 'is_decoder' is true: decoder models (causal attention, cross "
                      "attention) are not supported; encc compiles encoders");
  s = kBert;
  s.insert(1, R"("add_cross_attention":true,)");
  EXPECT_NE(error(s).find("field 'add_cross_attention' is true"), std::string::npos);
  s = kBert;
  s.insert(1, R"("is_decoder":"yes",)");
  EXPECT_EQ(error(s), "M/config.json: field 'is_decoder' is a string, expected a boolean");
  s = kBert;
  s.insert(1, R"("is_decoder":false,"add_cross_attention":null,)");
  EXPECT_EQ(error(s), "<no error>");
}

TEST(ModelConfig, ErrorHeadsDoNotDivideHidden) {
  EXPECT_EQ(error(bertWith("num_attention_heads", "5")),
            "M/config.json: hidden size 384 is not divisible by the number of attention heads 5");
}

TEST(ModelConfig, ErrorUnsupportedActivationAndPositions) {
  EXPECT_EQ(error(bertWith("hidden_act", "\"relu\"")),
            "M/config.json: hidden_act 'relu' is not supported (supported: gelu, gelu_new, "
            "gelu_pytorch_tanh, gelu_fast)");
  std::string s = std::string(kBert);
  s.insert(1, R"("position_embedding_type":"relative_key",)");
  EXPECT_EQ(error(s), "M/config.json: position_embedding_type 'relative_key' is not supported "
                      "(supported: absolute; alibi: JinaBERT, model_type bert only)");
}

/// `base` (kBert by default) as jina-embeddings-v2 writes it: ALiBi and
/// `ffn` ("" leaves feed_forward_type out), `extra` fields first.
std::string jinaWith(const std::string &extra, const std::string &ffn = "geglu", std::string base = kBert) {
  base.insert(1, extra + R"("position_embedding_type":"alibi",)" +
                     (ffn.empty() ? "" : R"("feed_forward_type":")" + ffn + "\","));
  return base;
}

TEST(ModelConfig, JinaBertIsBertWithAlibi) {
  auto c = parseModelConfig(jinaWith(""), "M/config.json");
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_NE(c->family, findModelFamily("bert"));
  ASSERT_EQ(c->layerAttention.size(), size_t(c->layers));
  for (const ModelConfig::LayerAttention &l : c->layerAttention)
    EXPECT_TRUE(l.alibi && l.window < 0 && !l.causal && l.ropeTheta == 0);
  // Every tensor but the position table comes from the checkpoint; the
  // feed-forward is one bias-free gated Linear [2I, H], mlp.wo and its norm.
  bool gated = false;
  for (const WeightSpec &w : c->family->expectedWeights(*c)) {
    EXPECT_EQ(w.zeros, w.name == "embeddings.position_embeddings.weight") << w.name;
    EXPECT_EQ(w.name.find("intermediate"), std::string::npos) << w.name;
    if (w.name == "encoder.layer.0.mlp.gated_layers.weight") {
      gated = true;
      EXPECT_EQ(w.shape, (std::vector<int64_t>{2 * c->intermediate, c->hidden}));
    }
    EXPECT_NE(w.name, "encoder.layer.0.mlp.gated_layers.bias");
  }
  EXPECT_TRUE(gated);
  // RoBERTa with ALiBi is no known model: refused as before.
  std::string r = jinaWith("");
  r.replace(r.find("\"bert\""), 6, "\"roberta\"");
  EXPECT_NE(error(r).find("position_embedding_type 'alibi' is not supported"), std::string::npos) << error(r);
}

TEST(ModelConfig, JinaBertErrors) {
  EXPECT_EQ(error(jinaWith("", "original")),
            "M/config.json: JinaBERT (position_embedding_type alibi) with feed_forward_type 'original' is not "
            "supported (supported: geglu, jina-embeddings-v2's)");
  EXPECT_NE(error(jinaWith("", "")).find("feed_forward_type 'original' is not supported"), std::string::npos);
  EXPECT_EQ(error(jinaWith("", "geglu", bertWith("hidden_act", "\"gelu_new\""))),
            "M/config.json: JinaBERT's GeGLU with hidden_act 'gelu_new' is not supported (supported: gelu, the erf "
            "GELU)");
  EXPECT_EQ(error(jinaWith(R"("auto_map":{"AutoModel":"jinaai/jina-bert-v2-qk-post-norm--modeling_bert.JinaBertModel"},)")),
            "M/config.json: auto_map names 'jinaai/jina-bert-v2-qk-post-norm--modeling_bert.JinaBertModel': JinaBERT "
            "with q/k norms (jina-bert-v2-qk-post-norm) is not supported");
  EXPECT_EQ(error(jinaWith(R"("auto_map":{"AutoModel":"jinaai/jina-bert-implementation--modeling_bert.JinaBertModel"},)")),
            "<no error>");
  EXPECT_NE(error(jinaWith(R"("architectures":["JinaBertForSequenceClassification"],"num_labels":1,)"))
                .find("JinaBERT (position_embedding_type alibi): sequence-classification heads are not supported"),
            std::string::npos);
}

} // namespace

namespace {

TEST(ModelFamily, RegistryReadsEveryListedModelType) {
  for (const char *type : {"bert", "roberta", "xlm-roberta", "camembert", "distilbert", "mpnet", "modernbert", "qwen3",
                           "gemma3_text", "llama", "mistral", "qwen2"}) {
    const ModelFamily *f = findModelFamily(type);
    ASSERT_NE(f, nullptr) << type;
    EXPECT_TRUE(llvm::is_contained(f->modelTypes(), llvm::StringRef(type))) << type;
    EXPECT_NE(supportedModelTypes().find(type), std::string::npos) << type;
  }
  EXPECT_EQ(findModelFamily("gpt2"), nullptr);
  EXPECT_EQ(findModelFamily(""), nullptr);
  EXPECT_EQ(findModelFamily("roberta"), findModelFamily("camembert"));
  EXPECT_NE(findModelFamily("bert"), findModelFamily("roberta"));
  EXPECT_EQ(supportedModelTypes(),
            "bert, roberta, xlm-roberta, camembert, distilbert, mpnet, modernbert, qwen3, gemma3_text, llama, mistral, "
            "qwen2");
}

TEST(ModelFamily, FamiliesDifferWhereTheirCheckpointsDo) {
  auto bert = parseModelConfig(kBert, "M/config.json");
  ASSERT_TRUE(bool(bert)) << llvm::toString(bert.takeError());
  EXPECT_EQ(bert->family, findModelFamily("bert"));
  EXPECT_EQ(bert->family->specialTokens().cls, "[CLS]");
  EXPECT_FALSE(bert->family->vocabularyOptional());
  EXPECT_EQ(bert->family->checkpointPrefixes(*bert), (std::vector<std::string>{"bert.", ""}));
  EXPECT_EQ(modelWeightNames(*bert).layers.at(5).inter, "encoder.layer.5.intermediate.dense");
  // 3 embedding tables + LayerNorm (2) + 16 per layer.
  EXPECT_EQ(expectedWeights(*bert).size(), 5u + 16u * 6u);

  std::string s = kBert;
  s.replace(s.find("\"bert\""), 6, "\"xlm-roberta\"");
  auto xlmr = parseModelConfig(s, "M/config.json");
  ASSERT_TRUE(bool(xlmr)) << llvm::toString(xlmr.takeError());
  EXPECT_EQ(xlmr->family->specialTokens().cls, "<s>");
  EXPECT_TRUE(xlmr->family->vocabularyOptional());
  EXPECT_EQ(xlmr->family->checkpointPrefixes(*xlmr),
            (std::vector<std::string>{"roberta.", "xlm-roberta.", ""}));
  EXPECT_EQ(xlmr->positionOffset, 1); // pad_token_id 0 in kBert

  auto distil = parseModelConfig(R"({"model_type":"distilbert","dim":64,"n_layers":2,"n_heads":4,
    "hidden_dim":128,"vocab_size":100,"max_position_embeddings":32})",
                                 "M/config.json");
  ASSERT_TRUE(bool(distil)) << llvm::toString(distil.takeError());
  ModelWeightNames n = modelWeightNames(*distil);
  EXPECT_TRUE(n.tokenTypeSynthetic);
  EXPECT_EQ(n.layers.at(1).query, "transformer.layer.1.attention.q_lin");
  auto w = expectedWeights(*distil);
  auto tokenType = std::find_if(w.begin(), w.end(), [&](const WeightSpec &s) {
    return s.name == "embeddings.token_type_embeddings.weight";
  });
  ASSERT_NE(tokenType, w.end());
  EXPECT_EQ(tokenType->shape, (std::vector<int64_t>{1, 64}));
}

TEST(ModelFamily, DescriptionCarriesWhatTheArtifactRecords) {
  auto c = parseModelConfig(kBert, "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  c->pooling = Pooling::Cls;
  c->normalize = true;
  c->maxSeq = 77;
  ModelDescription d = describe(*c);
  EXPECT_EQ(d.architecture, "bert");
  EXPECT_EQ(d.hidden, 384);
  EXPECT_EQ(d.layers, 6);
  EXPECT_EQ(d.heads, 12);
  EXPECT_EQ(d.intermediate, 1536);
  EXPECT_EQ(d.vocab, 30522);
  EXPECT_EQ(d.maxSeq, 77);
  EXPECT_EQ(d.activation, Activation::Gelu);
  EXPECT_DOUBLE_EQ(d.layerNormEps, 1e-12);
  EXPECT_EQ(d.pooling, Pooling::Cls);
  EXPECT_TRUE(d.normalize);
}

} // namespace

namespace {

const char *kModernBert = R"({"model_type":"modernbert","hidden_size":48,"num_hidden_layers":4,
  "num_attention_heads":3,"intermediate_size":40,"vocab_size":100,"max_position_embeddings":64,
  "global_attn_every_n_layers":3,"local_attention":11,"global_rope_theta":80000.0,"local_rope_theta":5000.0})";

/// kModernBert with extra fields (raw JSON members) appended.
std::string modernBertWith(const std::string &members) {
  std::string s = kModernBert;
  return s.insert(s.size() - 1, "," + members);
}

TEST(ModelConfig, ParsesModernBertLegacyKeys) {
  auto c = parseModelConfig(kModernBert, "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->typeVocab, 0);
  EXPECT_DOUBLE_EQ(c->layerNormEps, 1e-5); // norm_eps's default; layer_norm_eps is not read
  EXPECT_FALSE(c->normBias || c->attentionBias || c->mlpBias || c->classifierBias);
  ASSERT_EQ(c->layerAttention.size(), 4u);
  // Every third layer from 0 global; the half window is local_attention // 2.
  const int64_t windows[] = {-1, 5, 5, -1};
  const double thetas[] = {80000.0, 5000.0, 5000.0, 80000.0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c->layerAttention[i].window, windows[i]) << i;
    EXPECT_DOUBLE_EQ(c->layerAttention[i].ropeTheta, thetas[i]) << i;
  }
  EXPECT_EQ(c->classifierPooling, Pooling::Cls);
}

TEST(ModelConfig, ModernBertFiveKeysOverrideTheLegacyOnes) {
  auto c = parseModelConfig(
      modernBertWith(R"("layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"],
        "rope_parameters":{"full_attention":{"rope_type":"default","rope_theta":1000.0},
                           "sliding_attention":{"rope_theta":20.0}},
        "norm_eps":1e-6,"layer_norm_eps":0.1,"norm_bias":true,"classifier_pooling":"mean")"),
      "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  ASSERT_EQ(c->layerAttention.size(), 4u);
  EXPECT_EQ(c->layerAttention[0].window, 5);
  EXPECT_DOUBLE_EQ(c->layerAttention[0].ropeTheta, 20.0);
  EXPECT_EQ(c->layerAttention[1].window, -1);
  EXPECT_DOUBLE_EQ(c->layerAttention[1].ropeTheta, 1000.0);
  EXPECT_DOUBLE_EQ(c->layerNormEps, 1e-6);
  EXPECT_TRUE(c->normBias);
  EXPECT_EQ(c->classifierPooling, Pooling::Mean);
}

TEST(ModelConfig, ModernBertErrorsNameTheField) {
  EXPECT_EQ(error(modernBertWith(R"("layer_types":["full_attention"])")),
            "M/config.json: layer_types lists 1 layers, num_hidden_layers is 4");
  EXPECT_EQ(error(modernBertWith(
                R"("layer_types":["full_attention","chunked_attention","full_attention","full_attention"])")),
            "M/config.json: layer_types[1] 'chunked_attention' is not supported (supported: full_attention, "
            "sliding_attention)");
  EXPECT_EQ(error(modernBertWith(R"("layer_types":"full_attention")")),
            "M/config.json: field 'layer_types' is a string, expected an array of strings");
  EXPECT_EQ(error(modernBertWith(R"("rope_parameters":{"full_attention":{"rope_type":"yarn"}})")),
            "M/config.json: rope_parameters.full_attention: rope_type 'yarn' is not supported (supported: default)");
  EXPECT_EQ(error(modernBertWith(R"("rope_parameters":[1])")),
            "M/config.json: field 'rope_parameters' is an array, expected an object");
  EXPECT_EQ(error(modernBertWith(R"("rope_parameters":{"sliding_attention":{"rope_theta":-3}})")),
            "M/config.json: rope_parameters.sliding_attention: field 'rope_theta' is -3.000000, expected a number "
            "in (1, 1e+12)");
  EXPECT_EQ(error(modernBertWith(R"("classifier_pooling":"max")")),
            "M/config.json: classifier_pooling 'max' is not supported (supported: cls, mean)");
  EXPECT_EQ(error(modernBertWith(R"("hidden_activation":"relu")")),
            "M/config.json: hidden_activation 'relu' is not supported (supported: gelu, gelu_new, "
            "gelu_pytorch_tanh, gelu_fast, silu)");
  // SiLU: the gated feed-forward's only (ModernBERT's act(input) * gate is then SwiGLU), not a classifier
  // head's, nor BERT's ungated GELU epilogue.
  auto silu = parseModelConfig(modernBertWith(R"("hidden_activation":"silu")"), "M/config.json");
  ASSERT_TRUE(bool(silu)) << llvm::toString(silu.takeError());
  EXPECT_EQ(silu->hiddenAct, Activation::Silu);
  EXPECT_EQ(error(modernBertWith(R"("classifier_activation":"silu")")),
            "M/config.json: classifier_activation 'silu' is not supported (supported: gelu, gelu_new, "
            "gelu_pytorch_tanh, gelu_fast)");
  EXPECT_EQ(error(bertWith("hidden_act", R"("silu")")),
            "M/config.json: hidden_act 'silu' is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, "
            "gelu_fast)");
  EXPECT_EQ(error(modernBertWith(R"("head_dim":32)")),
            "M/config.json: head_dim 32 differs from hidden_size / num_attention_heads 16 (ModernBERT's attention "
            "uses the latter)");
  EXPECT_EQ(error(modernBertWith(R"("local_attention":0)")),
            "M/config.json: field 'local_attention' is 0, expected an integer in [1, 2^31]");
}

// Qwen3-Embedding-0.6B's config.json as the hub has it (transformers 4.51 keys).
const char *kQwen3 = R"({"model_type":"qwen3","architectures":["Qwen3ForCausalLM"],"hidden_size":1024,
  "num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":3072,
  "vocab_size":151669,"max_position_embeddings":32768,"rms_norm_eps":1e-06,"rope_theta":1000000,"rope_scaling":null,
  "use_sliding_window":false,"sliding_window":null,"max_window_layers":28,"hidden_act":"silu",
  "attention_bias":false,"tie_word_embeddings":true})";

std::string qwen3With(const std::string &members) {
  std::string s = kQwen3;
  return s.insert(s.size() - 1, "," + members);
}

TEST(ModelConfig, ParsesQwen3EmbeddingConfig) {
  auto c = parseModelConfig(kQwen3, "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->heads, 16);
  EXPECT_EQ(c->keyValueHeads(), 8);
  EXPECT_EQ(c->headDimension(), 128); // not hidden / heads = 64
  EXPECT_DOUBLE_EQ(c->layerNormEps, 1e-6);
  EXPECT_EQ(c->hiddenAct, Activation::Silu);
  EXPECT_EQ(c->typeVocab, 0);
  EXPECT_FALSE(c->attentionBias);
  ASSERT_EQ(c->layerAttention.size(), 28u);
  for (const ModelConfig::LayerAttention &l : c->layerAttention) {
    EXPECT_TRUE(l.causal);
    EXPECT_EQ(l.window, -1);
    EXPECT_DOUBLE_EQ(l.ropeTheta, 1e6);
  }
  // Every tensor of the checkpoint, with gate_proj and up_proj read as one gated Linear.
  const std::vector<WeightSpec> w = expectedWeights(*c);
  auto find = [&](const std::string &name) -> const WeightSpec * {
    for (const WeightSpec &s : w)
      if (s.name == name)
        return &s;
    return nullptr;
  };
  ASSERT_NE(find("layers.27.self_attn.q_proj.weight"), nullptr);
  EXPECT_EQ(find("layers.0.self_attn.q_proj.weight")->shape, (std::vector<int64_t>{2048, 1024}));
  EXPECT_EQ(find("layers.0.self_attn.k_proj.weight")->shape, (std::vector<int64_t>{1024, 1024}));
  EXPECT_EQ(find("layers.0.self_attn.o_proj.weight")->shape, (std::vector<int64_t>{1024, 2048}));
  EXPECT_EQ(find("layers.0.self_attn.k_norm.weight")->shape, (std::vector<int64_t>{128}));
  EXPECT_EQ(find("layers.0.self_attn.q_proj.bias"), nullptr);
  const WeightSpec *gateUp = find("layers.3.mlp.gate_up_proj.weight");
  ASSERT_NE(gateUp, nullptr);
  EXPECT_EQ(gateUp->shape, (std::vector<int64_t>{6144, 1024}));
  EXPECT_EQ(gateUp->concatOf,
            (std::vector<std::string>{"layers.3.mlp.gate_proj.weight", "layers.3.mlp.up_proj.weight"}));
}

TEST(ModelConfig, Qwen3LayerTypesAndSlidingWindows) {
  // 5.x keys: rope_parameters, layer_types (which win over use_sliding_window).
  auto c = parseModelConfig(qwen3With(R"("num_hidden_layers":3,"layer_types":["full_attention","sliding_attention",
      "full_attention"],"sliding_window":7,"rope_parameters":{"rope_type":"default","rope_theta":5000.0})"),
                            "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  ASSERT_EQ(c->layerAttention.size(), 3u);
  EXPECT_EQ(c->layerAttention[0].window, -1);
  EXPECT_EQ(c->layerAttention[1].window, 6); // the 7 most recent keys, the query's own included
  EXPECT_DOUBLE_EQ(c->layerAttention[1].ropeTheta, 5000.0);
  // The legacy keys: sliding layers from max_window_layers on.
  auto legacy = parseModelConfig(
      qwen3With(R"("num_hidden_layers":4,"use_sliding_window":true,"sliding_window":16,"max_window_layers":2)"),
      "M/config.json");
  ASSERT_TRUE(bool(legacy)) << llvm::toString(legacy.takeError());
  const int64_t windows[] = {-1, -1, 15, 15};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(legacy->layerAttention[i].window, windows[i]) << i;
}

TEST(ModelConfig, Qwen3ErrorsNameTheField) {
  EXPECT_EQ(error(qwen3With(R"("num_key_value_heads":5)")),
            "M/config.json: num_key_value_heads 5 does not divide the number of attention heads 16");
  EXPECT_EQ(error(qwen3With(R"("head_dim":127)")), "M/config.json: head_dim 127 must be even and in [2, 1024]");
  EXPECT_EQ(error(qwen3With(R"("rope_scaling":{"rope_type":"yarn","factor":4.0})")),
            "M/config.json: rope_scaling is set; scaled rotary positions (yarn, linear, dynamic) are not supported "
            "(only rope_scaling null)");
  EXPECT_EQ(error(qwen3With(R"("rope_parameters":{"rope_type":"linear","factor":2.0})")),
            "M/config.json: rope_parameters: rope_type 'linear' is not supported (supported: default)");
  EXPECT_EQ(error(qwen3With(R"("hidden_act":"relu")")),
            "M/config.json: hidden_act 'relu' is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, "
            "gelu_fast, silu)");
  EXPECT_EQ(error(qwen3With(R"("layer_types":["full_attention"])")),
            "M/config.json: layer_types lists 1 layers, num_hidden_layers is 28");
  EXPECT_EQ(error(qwen3With(R"("sliding_window":0)")),
            "M/config.json: field 'sliding_window' is 0, expected an integer in [1, 2^31]");
}

// EmbeddingGemma-300m's config.json as the hub has it (transformers 4.56 keys).
const char *kEmbeddingGemma = R"({"model_type":"gemma3_text","architectures":["Gemma3TextModel"],"hidden_size":768,
  "num_hidden_layers":6,"num_attention_heads":3,"num_key_value_heads":1,"head_dim":256,"intermediate_size":1152,
  "vocab_size":262144,"max_position_embeddings":2048,"rms_norm_eps":1e-06,"rope_theta":1000000.0,
  "rope_local_base_freq":10000.0,"rope_scaling":null,"sliding_window":512,"use_bidirectional_attention":true,
  "query_pre_attn_scalar":256,"hidden_activation":"gelu_pytorch_tanh","attn_logit_softcapping":null,
  "final_logit_softcapping":null,"attention_bias":false,
  "layer_types":["sliding_attention","sliding_attention","sliding_attention","sliding_attention",
                 "sliding_attention","full_attention"]})";

std::string gemmaWith(const std::string &members) {
  std::string s = kEmbeddingGemma;
  return s.insert(s.size() - 1, "," + members);
}

TEST(ModelConfig, ParsesEmbeddingGemmaConfig) {
  auto c = parseModelConfig(kEmbeddingGemma, "M/config.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->keyValueHeads(), 1);
  EXPECT_EQ(c->headDimension(), 256);
  EXPECT_DOUBLE_EQ(c->attentionScale, 1.0 / 16.0); // query_pre_attn_scalar^-0.5
  EXPECT_EQ(c->hiddenAct, Activation::GeluTanh);
  ASSERT_EQ(c->layerAttention.size(), 6u);
  // Bidirectional: sliding layers see sliding_window // 2 keys either side.
  EXPECT_EQ(c->layerAttention[0].window, 256);
  EXPECT_FALSE(c->layerAttention[0].causal);
  EXPECT_DOUBLE_EQ(c->layerAttention[0].ropeTheta, 1e4);
  EXPECT_EQ(c->layerAttention[5].window, -1);
  EXPECT_DOUBLE_EQ(c->layerAttention[5].ropeTheta, 1e6);
  // Every RMSNorm weight is read as 1 + weight.
  for (const WeightSpec &w : expectedWeights(*c))
    if (w.name.find("norm") != std::string::npos)
      EXPECT_TRUE(w.addOne) << w.name;
  // A causal Gemma 3: the sliding_window most recent keys.
  auto causal = parseModelConfig(gemmaWith(R"("use_bidirectional_attention":false)"), "M/config.json");
  ASSERT_TRUE(bool(causal)) << llvm::toString(causal.takeError());
  EXPECT_TRUE(causal->layerAttention[0].causal);
  EXPECT_EQ(causal->layerAttention[0].window, 511);
}

TEST(ModelConfig, Gemma3ErrorsNameTheField) {
  EXPECT_EQ(error(gemmaWith(R"("attn_logit_softcapping":50.0)")),
            "M/config.json: attn_logit_softcapping is set; soft-capped attention scores are not supported");
  EXPECT_EQ(error(gemmaWith(R"("rope_scaling":{"rope_type":"linear","factor":8.0})")),
            "M/config.json: rope_scaling is set; scaled rotary positions (yarn, linear, dynamic) are not supported "
            "(only rope_scaling null)");
  EXPECT_EQ(error(gemmaWith(R"("rope_parameters":{"full_attention":{"rope_type":"linear","factor":8.0}})")),
            "M/config.json: rope_parameters.full_attention: rope_type 'linear' is not supported (supported: "
            "default)");
  EXPECT_EQ(error(gemmaWith(R"("layer_types":["chunked_attention","full_attention","full_attention",
      "full_attention","full_attention","full_attention"])")),
            "M/config.json: layer_types[0] 'chunked_attention' is not supported (supported: full_attention, "
            "sliding_attention)");
  EXPECT_EQ(error(gemmaWith(R"("query_pre_attn_scalar":0)")),
            "M/config.json: field 'query_pre_attn_scalar' is 0.000000, expected a number in (0, 1e+09)");
}

} // namespace
