//===- ModelFamily.h - What differs between Hugging Face architectures ----===//
//
// One ModelFamily per file under families/ (bert, roberta, distilbert): the
// config.json fields it reads, its checkpoint's tensor names, the texts of its
// special tokens and the enc graph it emits, built from the shared pieces of
// EncoderEmitter. ModelFamily.cpp lists them; adding a family is one new
// file, one line there, and its tests.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_MODELFAMILY_H
#define ENCC_FRONTENDS_HF_MODELFAMILY_H

#include "frontends/hf/HFImport.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace encc {

class ConfigFields;
class EncoderEmitter;

/// Default texts of the special tokens; tokenizer_config.json overrides them.
struct SpecialTokenTexts {
  std::string unk, cls, sep, pad;
};

class ModelFamily {
public:
  virtual ~ModelFamily() = default;

  /// The config.json model_type values this family reads.
  virtual llvm::ArrayRef<llvm::StringRef> modelTypes() const = 0;

  /// The family that reads this config when one model_type names more than
  /// one architecture (BERT's with ALiBi is JinaBERT); default: this one.
  virtual const ModelFamily &variant(const ConfigFields &) const { return *this; }

  /// Reads the dims and the family's own fields into `config`: everything but
  /// model_type, vocab_size, max_position_embeddings and the activation,
  /// which parseModelConfig reads for every family.
  virtual llvm::Error readConfig(const ConfigFields &fields, ModelConfig &config) const = 0;

  /// The config.json key that names the activation.
  virtual const char *activationKey() const { return "hidden_act"; }
  /// Whether the feed-forward is gated (act(gate) * up: GeGLU, SwiGLU), which
  /// admits SiLU; BERT's is act(x) with a GELU epilogue.
  virtual bool gatedFeedForward() const { return false; }

  /// The canonical tensor names (no checkpoint prefix).
  virtual ModelWeightNames weightNames(const ModelConfig &config) const = 0;

  /// Every tensor the graph names, with its shape. Default: the BERT layout of
  /// weightNames (embeddings, then per layer q/k/v/out, two norms, FFN).
  virtual std::vector<WeightSpec> expectedWeights(const ModelConfig &config) const;

  /// Prefixes under which checkpoints store the tensors ("bert.", ""), tried in
  /// order against the word embedding's name.
  virtual std::vector<std::string> checkpointPrefixes(const ModelConfig &config) const = 0;

  /// Special token texts when tokenizer_config.json does not name them.
  virtual SpecialTokenTexts specialTokens() const = 0;

  /// Whether a folder without a WordPiece vocabulary still imports (BPE and
  /// Unigram tokenizers: the model then runs on token ids only).
  virtual bool vocabularyOptional() const { return false; }

  /// The SentencePiece model file a folder of this family may carry instead
  /// of tokenizer.json, read as the XLM-R converter reads it
  /// (SentencePieceModel.h); empty: none.
  virtual std::string sentencePieceFile(const ModelConfig &) const { return ""; }

  /// The tensor names of the family's *ForSequenceClassification head; an
  /// error when the family has no supported head. Default: none.
  virtual llvm::Expected<ClassifierWeightNames> classifierNames(const ModelConfig &config) const;

  /// The head's tensors (HFImport's expectedWeights appends them). Default:
  /// `dense` [hidden, hidden] and `out` [labels, hidden], each with a bias.
  virtual std::vector<WeightSpec> classifierWeights(const ModelConfig &config,
                                                    const ClassifierWeightNames &head) const;

  /// Emits the head on the last hidden state [B, S, H] and returns the
  /// scores [B, labels]. Default: out(tanh(dense(hidden[CLS]))), BERT's pooler
  /// and RoBERTa's head.
  virtual mlir::Value emitClassifier(EncoderEmitter &emitter, mlir::Value hidden) const;

  /// The family's masked-LM head (splade pooling); an error when it has no
  /// supported one. Default: none.
  virtual llvm::Expected<MlmHeadNames> mlmHeadNames(const ModelConfig &config) const;

  /// Weight-name globs that `--quantize=int8` keeps in float by default
  /// (ModelDescription::int8KeepFloat). Default: none.
  virtual std::vector<std::string> int8KeepFloat() const { return {}; }

  /// Emits the encoder (embeddings and layers) and returns the last hidden
  /// state; pooling is emitted after it for every family. Default: BERT's
  /// post-LayerNorm encoder.
  virtual mlir::Value emitEncoder(EncoderEmitter &emitter) const;
};

/// hidden_size, num_hidden_layers, num_attention_heads and intermediate_size
/// (required), as BERT and most families name them.
llvm::Error readEncoderDims(const ConfigFields &fields, ModelConfig &config);

/// The activation config.json's `key` names: absent is gelu (erf), the tanh
/// spellings are GeluTanh, silu / swish (`gated` feed-forwards only: SwiGLU)
/// Silu, null or anything else is an error naming the key.
llvm::Error readActivation(const ConfigFields &fields, const char *key, Activation &out, bool gated = false);

/// rope_parameters[layerType].rope_theta (transformers 5.x's per-layer-type
/// rotary; a null layerType: rope_parameters.rope_theta, one for every layer;
/// rope_type default only), else config.json's `legacyKey`, else `fallback`:
/// ModernBERT's and Gemma 3's global and local thetas, Qwen3's.
llvm::Error readLayerRopeTheta(const ConfigFields &fields, const char *layerType, const char *legacyKey,
                               double fallback, double &theta);

/// Which of the `layers` layers are sliding-window ones: layer_types
/// (transformers 5.x: full_attention / sliding_attention, one per layer) when
/// the config lists it, else fallback(i). Errors name the field. Empty for
/// over 1024 layers (parseModelConfig refuses those before anything is built
/// per layer).
llvm::Expected<std::vector<bool>> readSlidingLayers(const ConfigFields &fields, int64_t layers,
                                                    llvm::function_ref<bool(int64_t)> fallback);

/// The family that reads `modelType`, or null.
const ModelFamily *findModelFamily(llvm::StringRef modelType);

/// Every supported model_type, comma-separated, for error messages.
std::string supportedModelTypes();

} // namespace encc

#endif // ENCC_FRONTENDS_HF_MODELFAMILY_H
