//===- HFImport.h - Hugging Face model folder -> enc module + weights -----===//
//
// Reads a Hugging Face model folder (config.json, model.safetensors, vocab.txt
// or tokenizer.json, optional sentence-transformers modules.json) and builds
// the `@forward` function of the enc dialect plus the WeightStore its
// `enc.weight` ops name. What differs between architectures lives in one
// ModelFamily per file (families/, listed in ModelFamilies.cpp). Every error
// is one line naming the file and field.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_HFIMPORT_H
#define ENCC_FRONTENDS_HF_HFIMPORT_H

#include "frontends/ImportedModel.h"
#include "ir/WeightStore.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace encc {

class ModelFamily;

/// config.json as the HF frontend reads it; describe() gives the
/// frontend-neutral ModelDescription the rest of the compiler sees.
struct ModelConfig {
  std::string modelType;               ///< config.json model_type ("bert", "roberta", ...)
  const ModelFamily *family = nullptr; ///< the family that reads this model_type
  int64_t hidden = 0, layers = 0, heads = 0, intermediate = 0, vocab = 0;
  int64_t maxPositions = 0;
  int64_t typeVocab = 0; ///< 0 for distilbert (no token types)
  /// Grouped-query attention's key/value heads and a head dim independent of
  /// hidden / heads (Qwen3's num_key_value_heads, head_dim); 0: heads and
  /// hidden / heads.
  int64_t kvHeads = 0, headDim = 0;
  int64_t keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
  int64_t headDimension() const { return headDim > 0 ? headDim : hidden / heads; }
  /// The attention scores' scale; 0: 1 / sqrt(head dim) (Gemma 3's is
  /// query_pre_attn_scalar^-0.5).
  double attentionScale = 0;
  /// The model distinguishes token types (BERT's two segments of a text
  /// pair): @forward takes type ids as a third argument.
  bool hasTypeIds() const { return typeVocab > 1; }
  double layerNormEps = 1e-12;
  Activation hiddenAct = Activation::Gelu;
  int64_t positionOffset = 0; ///< 0 for bert; pad_token_id + 1 for roberta-likes
  /// Roberta-likes: positions count the non-pad ids (transformers'
  /// create_position_ids_from_input_ids; enc.embedding's position_pad_id); -1: none.
  int64_t positionPadId = -1;
  /// Compiled maximum sequence length: ImportOptions::maxSeq, else
  /// sentence_bert_config.json max_seq_length, else maxPositions - positionOffset.
  int64_t maxSeq = 0;
  Pooling pooling = Pooling::None;
  bool normalize = false;       ///< L2-normalise the pooled output
  /// config_sentence_transformers.json: (name, text) prompts, in file order,
  /// and the name of the one applied by default ("" none).
  std::vector<std::pair<std::string, std::string>> prompts;
  std::string defaultPrompt;
  ModelDescription::Similarity similarity = ModelDescription::Similarity::Cosine; ///< similarity_fn_name
  /// The Pooling config that sets include_prompt false ("" when it is true).
  std::string poolingSkipsPrompt;
  /// sentence-transformers Dense modules after the pooling, in order:
  /// pooled = act(pooled · Wᵀ + b) (EmbeddingGemma's two projections, LaBSE's
  /// tanh layer); their weights are the module folder's model.safetensors.
  struct DenseModule {
    std::string dir; ///< the module's folder, relative to the model's; "" the checkpoint's linear.*
    int64_t in = 0, out = 0;
    bool bias = true, tanh = false; ///< tanh: Tanh, else Identity
  };
  std::vector<DenseModule> dense;
  /// The sentence embedding's width: the last Dense module's, else hidden.
  /// SPLADE's: the vocabulary.
  int64_t embeddingDim() const { return pooling == Pooling::Splade ? vocab : dense.empty() ? hidden : dense.back().out; }
  /// config.json's tie_word_embeddings: the masked-LM decoder is the word
  /// embedding matrix (SPLADE reads it so).
  bool tieWordEmbeddings = true;
  /// A sequence-classification head (architectures: *ForSequenceClassification,
  /// a cross-encoder / reranker): numLabels > 0 scores per sequence instead of
  /// a pooled embedding.
  int64_t numLabels = 0;
  /// What sentence-transformers' CrossEncoder applies to the logits:
  /// "sigmoid" | "identity" (sbert_ce_default_activation_function, else sigmoid
  /// for one label and identity for more).
  std::string scoreActivation;
  /// id2label's names in label order (empty: the config has no id2label).
  std::vector<std::string> labels;
  bool classifies() const { return numLabels > 0; }
  /// FlagEmbedding's BGE-M3 heads beside the checkpoint, read by
  /// readTokenHeads: the sparse head (sparse_linear: hidden -> 1, then relu)
  /// and the ColBERT head (colbert_linear: hidden -> colbertDim, then L2
  /// normalisation; 0: none), both over every token's last hidden state.
  bool sparseHead = false;
  int64_t colbertDim = 0;
  /// The ids the sparse head's lexical weights leave out (FlagEmbedding's
  /// cls, eos, pad and unk tokens), set once the tokenizer is read.
  std::vector<int32_t> sparseSkipIds;
  /// A PyLate ColBERT checkpoint (modules.json: the Transformer, then
  /// pylate's Dense modules): every token's last hidden state through the
  /// Dense modules, L2-normalised, is the model's only output. How a query
  /// and a document are tokenised comes from config_sentence_transformers.json
  /// (PyLate's defaults where a field is absent); the roles' ids are resolved
  /// once the tokenizer is read (resolveColbertRoles).
  struct Colbert {
    std::vector<DenseModule> dense;                           ///< per token, in order
    std::string queryPrefix = "[Q] ", documentPrefix = "[D] "; ///< marker tokens; "" none
    int64_t queryLength = 32, documentLength = 180;
    bool queryExpansion = true, attendExpansion = false;
    std::vector<std::string> skiplist; ///< tokens whose document vectors are left out
    std::vector<TokenRoleDescription> roles;
    int64_t dim() const { return dense.back().out; }
  };
  std::optional<Colbert> colbert;

  /// One layer's attention beyond BERT's (every valid key, positions from the
  /// embedding table): ModernBERT's global and local layers.
  struct LayerAttention {
    int64_t window = -1;  ///< query s sees keys |s - j| <= window (causal: s - window <= j); -1: every valid key
    double ropeTheta = 0; ///< rotary positions (rotate_half, the whole head) with this theta; 0: none
    bool causal = false;  ///< query s sees only keys j <= s (decoder-style embedders)
    bool alibi = false;   ///< ALiBi: head h adds -slope_h * |s - j| to the scaled scores (JinaBERT)
  };
  /// Per layer; empty for the BERT-shaped families.
  std::vector<LayerAttention> layerAttention;
  /// Which tensors carry a bias (ModernBERT's attention_bias, mlp_bias,
  /// norm_bias, classifier_bias; BERT's all do). A bias-free norm gets an
  /// all-zero beta (WeightSpec::zeros).
  bool attentionBias = true, mlpBias = true, normBias = true, classifierBias = true;
  /// A classification head's activation and the hidden state it reads
  /// (ModernBERT's classifier_activation and classifier_pooling).
  Activation classifierAct = Activation::Gelu;
  Pooling classifierPooling = Pooling::Cls;
};

/// The frontend-neutral part of `config`.
ModelDescription describe(const ModelConfig &config);

struct ImportOptions {
  int64_t maxSeq = 0;  ///< 0 = from the model folder
  std::optional<Pooling> pooling; ///< unset = from the model folder
  int normalize = -1;  ///< -1 = from the model folder; 0/1 override
  /// Set: no model.safetensors is read; every weight is generated from this
  /// seed (randomWeights) and the vocabulary is optional (benchmarking shapes).
  std::optional<uint64_t> randomWeightsSeed;
  /// Accept NaN / infinite weights (they make every output NaN); by default
  /// they are an error naming the tensor.
  bool allowNonFinite = false;
  /// Compile the per-token heads a folder carries beside its checkpoint
  /// (bge-m3's sparse_linear / colbert_linear); false: the pooled output only.
  bool tokenHeads = true;
  /// ONNX models only (frontends/ImportModel.h): the folder with config.json
  /// and the tokenizer files; "" = the model file's folder.
  std::string tokenizerDir;
};

/// Imports the model folder `dir`. Loads the func and enc dialects into `ctx`.
/// Without modules.json the pooling is "mean" with normalize = true (the
/// sentence-transformers default for plain encoders); `opts` overrides both.
llvm::Expected<ImportedModel> importHFModel(mlir::MLIRContext &ctx, const std::string &dir,
                                            const ImportOptions &opts);

//===----------------------------------------------------------------------===//
// The pieces importHFModel is made of (exposed for tests and tools)
//===----------------------------------------------------------------------===//

/// Fills config.sparseHead and colbertDim from FlagEmbedding's BGE-M3 head
/// files in `dir` (sparse_linear.safetensors, colbert_linear.safetensors:
/// an nn.Linear's "weight" and "bias"); a .pt without its .safetensors is an
/// error that says how to convert it. The heads need cls pooling.
llvm::Error readTokenHeads(const std::string &dir, ModelConfig &config);

/// A PyLate Dense module's config.json (`sub` of `dir`) appended to
/// config.colbert's projections (created by the first).
llvm::Error readColbertDense(const std::string &dir, const std::string &sub, ModelConfig &config);

/// config.colbert's settings from config_sentence_transformers.json's
/// PyLate fields (`j`, read from `path`), and the compiled length.
llvm::Error readColbertConfig(const std::string &path, const nlohmann::ordered_json &j, ModelConfig &config);

/// Whether `dir`'s config.json names a Stanford colbert-ai checkpoint
/// (architectures[0] HF_ColBERT).
llvm::Expected<bool> isStanfordColbert(const std::string &dir);

/// config.colbert of a Stanford colbert-ai checkpoint: the projection in the
/// checkpoint ('linear.weight'), artifact.metadata's settings.
llvm::Error readStanfordColbert(const std::string &dir, ModelConfig &config);

/// config.colbert's roles (query, document) with the ids of `tok`: the
/// markers, the mask token for the query expansion, the skiplist's ids
/// (unknown words: the unknown token's id, as PyLate's convert_tokens_to_ids).
llvm::Error resolveColbertRoles(const TokenizerData &tok, const std::string &dir, ModelConfig &config);

/// Parses config.json text with the family its model_type names; `path`
/// prefixes errors. Leaves maxSeq, pooling and normalize at their defaults.
llvm::Expected<ModelConfig> parseModelConfig(const std::string &text, const std::string &path);

/// Fills pooling, normalize and (if set there) maxSeq from the
/// sentence-transformers files of `dir` (modules.json, the Pooling module's
/// config.json, sentence_bert_config.json). No modules.json: mean + normalize.
llvm::Error readSentenceTransformersConfig(const std::string &dir, ModelConfig &config);

/// Reads vocab.txt, else tokenizer.json (WordPiece), plus tokenizer_config.json.
llvm::Expected<TokenizerData> readTokenizer(const std::string &dir, const ModelConfig &config);

/// One weight the model needs: canonical name (no "bert."-style prefix) and shape.
struct WeightSpec {
  std::string name;
  std::vector<int64_t> shape;
  /// Stored under exactly `name`, outside the checkpoint prefix (a
  /// classification head's "classifier.weight" beside "bert.*").
  bool unprefixed = false;
  /// Not in the checkpoint: an all-zero tensor the graph reads in place of a
  /// part the model does not have (DistilBERT's token types, a bias-free
  /// norm's beta, ModernBERT's absolute positions).
  bool zeros = false;
  /// Stored as these checkpoint tensors (names like `name`'s, under the same
  /// prefix), equal parts concatenated along dim 0: Qwen3's gate_proj and
  /// up_proj as one gated Linear. Empty: stored as `name`.
  std::vector<std::string> concatOf;
  /// The graph reads 1 + the stored tensor (Gemma's RMSNorm scales by
  /// 1 + weight).
  bool addOne = false;
  /// Stored in this safetensors file of the model's folder (a
  /// sentence-transformers module's) as `stored`, instead of the checkpoint;
  /// without a file, `stored` names it in the checkpoint (colbert-ai's
  /// linear.weight).
  std::string file, stored;
};

/// The two dense layers of a sequence-classification head: scores =
/// out(tanh(dense(hidden[CLS]))), names without .weight/.bias.
struct ClassifierWeightNames {
  std::string dense, out;
  bool denseUnprefixed = false, outUnprefixed = true;
};

/// A masked-LM head (SPLADE: sentence-transformers' MLMTransformer): the
/// transform's dense layer and norm (names without .weight / .bias), then the
/// decoder, tied to the word embeddings, with its own bias `bias` (a whole
/// tensor name); all stored outside the checkpoint prefix.
struct MlmHeadNames {
  std::string dense, norm, bias;
};

/// Canonical tensor names of a BERT-style model (the family's choice), used by
/// the IR emitter and the loader.
struct LayerWeightNames {
  std::string query, key, value, attnOut, attnNorm, inter, out, outNorm; ///< without .weight/.bias
};
struct ModelWeightNames {
  std::string word, position, tokenType, embNorm;
  /// Models without token types (distilbert) get a synthesized all-zero
  /// [1, hidden] table under `tokenType` + ".weight" (WeightSpec::zeros).
  bool tokenTypeSynthetic = false;
  std::vector<LayerWeightNames> layers;
};
/// config.family's names for the model's tensors.
ModelWeightNames modelWeightNames(const ModelConfig &config);

/// The enc weights' module name of sentence-transformers Dense module i after
/// the pooling ("dense.0.linear").
inline std::string denseModuleName(size_t i) { return "dense." + std::to_string(i) + ".linear"; }
/// The enc.weight prefix of a ColBERT checkpoint's i-th per-token Dense module.
inline std::string colbertDenseName(size_t i) { return "colbert_dense." + std::to_string(i) + ".linear"; }

/// Every tensor `enc.weight` will name, with the shape the config implies.
std::vector<WeightSpec> expectedWeights(const ModelConfig &config);

/// Every weight of expectedWeights(config), generated deterministically from
/// `seed` and the tensor name, BERT-init-like: matrices ~ N(0, 0.02) (a sum of
/// uniforms), LayerNorm gammas 1, biases and betas 0. F32.
mlir::enc::WeightStore randomWeights(const ModelConfig &config, uint64_t seed);

/// Builds and verifies the enc module for `config` (weights by name only).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildEncModule(mlir::MLIRContext &ctx, const ModelConfig &config, const std::string &sourceName);

} // namespace encc

#endif // ENCC_FRONTENDS_HF_HFIMPORT_H
