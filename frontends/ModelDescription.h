//===- ModelDescription.h - What every frontend tells the rest ------------===//
//
// The frontend-neutral facts about an imported model that the driver and the
// artifact writer need (the artifact's Metadata and Tokenizer tables), and
// what an import hands over: this, the enc module and its weights. The Hugging
// Face frontend fills it from config.json; an ONNX frontend fills it from the
// graph. No MLIR here: the artifact writer includes it.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_MODELDESCRIPTION_H
#define ENCC_FRONTENDS_MODELDESCRIPTION_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace encc {

/// How token states become the model's second output (sentence-transformers'
/// Pooling module): none (no pooled output), the first token, the mean of
/// the valid tokens, or the last valid token (decoder-style embedders).
/// Splade: SPLADE's sparse lexical weights, the maximum over the valid tokens
/// of log(1 + relu) of the masked-LM head's logits (a vocabulary-wide output).
enum class Pooling { None, Cls, Mean, Last, Splade };
inline constexpr const char *kPoolingNames = "none, cls, mean, last, splade";

inline const char *poolingName(Pooling p) {
  switch (p) {
  case Pooling::None: return "none";
  case Pooling::Cls: return "cls";
  case Pooling::Mean: return "mean";
  case Pooling::Last: return "last";
  case Pooling::Splade: return "splade";
  }
  return "?"; // unreachable: the switch is exhaustive (-Werror=switch)
}

/// The Pooling named `name` (as --pooling and the artifact spell it), or none.
inline std::optional<Pooling> parsePooling(std::string_view name) {
  for (Pooling p : {Pooling::None, Pooling::Cls, Pooling::Mean, Pooling::Last, Pooling::Splade})
    if (name == poolingName(p))
      return p;
  return std::nullopt;
}

/// The feed-forward activation: GELU in its erf form (HF "gelu"), its tanh
/// approximation ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"), or SiLU
/// ("silu": gated feed-forwards only, SwiGLU).
enum class Activation { Gelu, GeluTanh, Silu };

/// As the artifact's Metadata.hidden_act records it ("gelu" | "gelu_new" | "silu").
inline const char *activationName(Activation a) {
  switch (a) {
  case Activation::Gelu: return "gelu";
  case Activation::GeluTanh: return "gelu_new";
  case Activation::Silu: return "silu";
  }
  return "?"; // unreachable (-Werror=switch)
}

/// One way a multi-vector model encodes a text (artifact.fbs TokenRole):
/// ColBERT's query and document. Cut to maxLength tokens, the marker (-1:
/// none) after the first token, padded to maxLength with expansionId (-1:
/// not padded), which attention sees as keys only where expansionAttended;
/// the tokens with an id in skipIds give no vector.
struct TokenRoleDescription {
  std::string name;
  int32_t markerId = -1, maxLength = 0, expansionId = -1;
  bool expansionAttended = false;
  std::vector<int32_t> skipIds;
};

/// A per-token output beside the pooled one (artifact.fbs TokenHead):
/// bge-m3's sparse head (one weight per token; a text's lexical weights are
/// the largest positive one per token id, skipIds left out) and its ColBERT
/// head (a normalised vector per token, the first skipLeading dropped), or a
/// ColBERT checkpoint's vectors (its only output; roles say how a query and a
/// document are encoded).
struct TokenHeadDescription {
  enum class Kind { LexicalWeights, MultiVector } kind = Kind::LexicalWeights;
  int32_t skipLeading = 0;
  std::vector<int32_t> skipIds;
  std::vector<TokenRoleDescription> roles;
};

struct ModelDescription {
  std::string architecture; ///< the source's name for it: HF model_type ("bert", ...)
  int64_t hidden = 0, layers = 0, heads = 0, intermediate = 0, vocab = 0;
  int64_t maxSeq = 0;         ///< the compiled maximum sequence length
  int64_t typeVocab = 0;      ///< token types; >= 2: @forward takes type ids
  Activation activation = Activation::Gelu;
  double layerNormEps = 1e-12;
  Pooling pooling = Pooling::None;
  bool normalize = false;       ///< L2-normalise the pooled output
  /// The pooled output's width where Dense modules project it to another
  /// than the hidden size; 0: the hidden size.
  int64_t embeddingDim = 0;
  int64_t pooledWidth() const { return embeddingDim ? embeddingDim : hidden; }
  /// Prompts a text may be given before tokenisation (sentence-transformers'
  /// `prompts`: name, text), and the default one's name ("" none).
  std::vector<std::pair<std::string, std::string>> prompts;
  std::string defaultPrompt;
  /// sentence-transformers' similarity_fn_name (none named: cosine, its default).
  enum class Similarity { Cosine, Dot, Euclidean, Manhattan } similarity = Similarity::Cosine;
  /// > 0: a sequence-classification head; the second output is [B, numLabels]
  /// logits instead of a pooled embedding (pooling is then "none").
  int64_t numLabels = 0;
  std::string scoreActivation; ///< "sigmoid" | "identity" (CrossEncoder's)
  /// The labels' names (config.json's id2label, in label order): numLabels
  /// names, or none where the config names none.
  std::vector<std::string> labels;
  /// Weight-name globs `--quantize=int8` keeps in float for this model, added
  /// to --quantize-skip (the family's advice: MPNet's word embeddings).
  std::vector<std::string> int8KeepFloat;
  /// Weight-name globs every reduced-precision tier (int8, bf16) keeps in
  /// float: bge-m3's sparse head, one output column whose weights sit on
  /// relu's threshold (a rounded product moves entries in or out).
  std::vector<std::string> keepFloat;
  /// The outputs after the pooled one, in order (@forward's results 2, 3, ...).
  std::vector<TokenHeadDescription> tokenHeads;
};

enum class TokenizerKind { WordPiece, ByteLevelBPE, Unigram };

/// A token cut out of the text before pre-tokenisation (tokenizers' AddedToken).
struct AddedTokenData {
  std::string content;
  int32_t id = 0;
  bool special = true, lstrip = false, rstrip = false, normalized = false;
};

/// One normalizer of a Unigram or BPE tokenizer (artifact.fbs NormalizerStep).
struct NormalizerStepData {
  enum class Kind { Precompiled, Replace, Strip, Nfc, Prepend } kind = Kind::Replace;
  std::string charsmap;           ///< Precompiled: the decoded map
  std::string pattern, content;   ///< Replace; Prepend: content
  int32_t minRepeat = 0;          ///< Replace: 0 each occurrence; n: runs of n or more
  bool stripLeft = false, stripRight = false; ///< Strip
  bool stripSpacesOnly = false;               ///< Strip: only U+0020, not all White_Space
};

/// One step of a tokenizer.json decoder (artifact.fbs DecoderStep).
struct DecoderStepData {
  enum class Kind { WordPiece, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Bpe, Unsupported } kind =
      Kind::Fuse;
  std::string text, content; ///< prefix / replacement / pattern / character / suffix / type; Replace's content
  bool cleanup = false, prepend = true;
  int32_t start = 0, stop = 0;
};

/// The tokenizer as the artifact stores it (runtime/schema/artifact.fbs).
struct TokenizerData {
  TokenizerKind kind = TokenizerKind::WordPiece;
  std::vector<std::string> vocab; ///< id -> token; empty: no tokenizer (`note` says why)
  // WordPiece.
  bool lowercase = true, stripAccents = true, splitChinese = true;
  int32_t unkId = -1, clsId = -1, sepId = -1, padId = -1;
  std::string maskToken; ///< tokenizer_config.json's mask_token ("" none); ColBERT's query expansion pads with it
  // ByteLevelBPE (unkId -1: none).
  std::vector<std::pair<int32_t, int32_t>> merges; ///< vocab ids, in rank order
  std::vector<AddedTokenData> addedTokens;
  bool addPrefixSpace = false, ignoreMerges = false, fuseUnk = false;
  /// The pre-tokenizer's regex: the ByteLevel one (GPT-2), or a Split's before
  /// a ByteLevel without its own (Qwen2; Cl100k: GPT-4 / Llama 3); with the
  /// Chars alphabet none (Whole: Llama 2), a split after spaces (Gemma) or
  /// a Metaspace pre-tokenizer (the metaspace fields; transformers'
  /// non-legacy Llama / Mistral files).
  enum class BpeSplit { Gpt2, Qwen2, Cl100k, Whole, SpaceMergedWithPrevious, Metaspace } bpeSplit = BpeSplit::Gpt2;
  /// The initial symbols: bytes in GPT-2's alphabet, or characters (with
  /// byteFallback: <0xXX> tokens for those outside the vocabulary).
  enum class BpeAlphabet { Bytes, Chars } bpeAlphabet = BpeAlphabet::Bytes;
  std::vector<int32_t> templateIds; ///< one sequence's post-processing; -1 = the text
  /// What the post-processor does to the pieces' offsets (RobertaProcessing /
  /// ByteLevel with trim_offsets; KeepPrefixSpace: with add_prefix_space).
  enum class OffsetTrim { None, Trim, TrimKeepPrefixSpace } offsetTrim = OffsetTrim::None;
  /// A text pair's post-processing: ids with -1 / -2 for the two texts, and
  /// each entry's token type (BPE, Unigram; empty: none; WordPiece's is built in).
  std::vector<int32_t> pairTemplateIds, pairTypeIds;
  // Unigram (and addedTokens, templateIds, unkId; byteFallback and the
  // metaspace fields also BPE's).
  std::vector<double> scores;
  bool byteFallback = false;
  std::vector<NormalizerStepData> normalizers;
  bool whitespaceSplit = false;
  std::string metaspaceReplacement = "\xE2\x96\x81"; ///< U+2581
  enum class Prepend { Always, First, Never } metaspacePrepend = Prepend::Always;
  bool metaspaceSplit = true;
  /// The decoder (tokenizer.json's, or WordPiece's "##" with cleanup for a
  /// vocab.txt); empty: none (token strings joined by spaces).
  std::vector<DecoderStepData> decoders;
  std::string note; ///< why `vocab` is empty, if it is; or what of the tokenizer files is not followed
};

} // namespace encc

#endif // ENCC_FRONTENDS_MODELDESCRIPTION_H
