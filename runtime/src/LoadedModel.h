//===- LoadedModel.h - Everything a loaded artifact owns ------------------===//
//
// The verified mapping, the loaded code (the CPU code object and thread pool,
// or the CUDA model: device context, weights, kernels), and the tokenizer:
// immutable after load and shared (shared_ptr) by the C handle and every
// session, so sessions outlive a released model handle safely.
//
// The device option picks the backend: "cpu", "cuda[:N]", or "auto" (CUDA
// when the artifact has a CUDA plan and the device loads, else CPU).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_LOADEDMODEL_H
#define ENCRT_LOADEDMODEL_H

#include "Artifact.h"
#include "CodeModule.h"
#include "ThreadPool.h"
#include "token_decoder.h"
#include "tokenizer.h"

#include <memory>
#include <string>

namespace encrt::rt {

namespace cuda {
class CudaModel;
struct DeviceChoice;
}

/// encrt_model_options.max_text_bytes when 0.
constexpr int64_t kDefaultMaxTextBytes = int64_t(1) << 20;

struct LoadOptions {
  int numThreads = 0;            ///< 0: all cores
  int64_t maxTextBytes = kDefaultMaxTextBytes; ///< longer texts are refused
  const char *cpuTarget = nullptr; ///< null: best supported
  const char *device = nullptr;  ///< null/"auto", "cpu", "cuda", "cuda:N"
  TrustPolicy trust;             ///< what the artifact must meet before it is read
  int32_t maxSeqLength = 0;      ///< texts cut to this many tokens; 0: the compiled maximum
};

/// One way a multi-vector model encodes a text (artifact.fbs TokenRole;
/// checked at load): ColBERT's query or document.
struct TokenRoleInfo {
  std::string name;
  int32_t markerId = -1;        ///< inserted after the first token; -1: none
  int32_t maxLength = 0;        ///< tokens at most, the marker included
  int32_t expansionId = -1;     ///< >= 0: padded to maxLength with it
  bool expansionAttended = false;
  std::vector<int32_t> skipIds; ///< ids whose vectors are left out, sorted
  /// Expansion tokens that attend to the text but are not attended to.
  bool unattendedTail() const { return expansionId >= 0 && !expansionAttended; }
};

/// A text's ids as a role encodes it: `attended` of them are attention keys
/// (the rest, an unattended expansion tail, only attend).
struct RoleEncoding {
  std::vector<int32_t> ids;
  int32_t attended = 0;
};

/// A per-token output of the CPU plan (artifact.fbs TokenHead; checked at load).
struct TokenHeadInfo {
  encm::TokenHeadKind kind;
  uint32_t output = 0;          ///< its index in the plan's outputs
  int64_t width = 0;            ///< floats per token
  int32_t skipLeading = 0;      ///< multi-vector: rows dropped at each text's start
  std::vector<int32_t> skipIds; ///< lexical weights: ids never weighted, sorted
  std::vector<TokenRoleInfo> roles; ///< multi-vector: empty, or one of them per encode
};

class LoadedModel {
public:
  /// Throws Failure.
  static std::shared_ptr<LoadedModel> load(const std::string &path,
                                           const LoadOptions &options);
  ~LoadedModel();

  const Artifact &artifact() const { return *artifact_; }
  const encm::Model &model() const { return artifact_->model(); }
  const encm::Metadata &metadata() const { return *model().metadata(); }
  /// The CPU code object and pool: only when !onCuda().
  const CodeModule &code() const { return *code_; }
  ThreadPool &pool() const { return *pool_; }
  /// The CUDA backend's model, or null when running on the CPU.
  const cuda::CudaModel *cudaModel() const { return cuda_.get(); }
  bool onCuda() const { return cuda_ != nullptr; }
  /// Null when the artifact carries no tokenizer.
  const Tokenizer *tokenizer() const { return tokenizer_.get(); }
  /// Of the plan that runs: a pooled embedding (not a classifier's scores).
  bool hasPooledOutput() const;
  /// A sequence-classification head: output 1 is [B, numLabels()] logits.
  bool classifies() const { return numLabels() > 0; }
  int32_t numLabels() const { return metadata().num_labels(); }
  /// The labels' names (numLabels(): id2label's, else LABEL_i).
  const std::vector<std::string> &labels() const { return labels_; }
  /// "sigmoid" | "identity" for a classifier, else "".
  const std::string &scoreActivation() const { return scoreActivation_; }
  /// What the Linears of the CPU plan compute in: "int8" (compiled with
  /// quantize-linear-int8), "bf16" (convert-linear-bf16) or "fp32".
  const std::string &precision() const { return precision_; }
  /// The pooled embedding's width: the hidden size, or what the
  /// sentence-transformers Dense modules project it to (embedding_dim).
  int64_t embeddingDim() const {
    return metadata().embedding_dim() ? metadata().embedding_dim() : metadata().hidden_size();
  }
  /// Floats per sequence of output 1: numLabels() or embeddingDim().
  int64_t secondOutputWidth() const { return classifies() ? numLabels() : embeddingDim(); }
  /// The token heads, in output order (empty: none).
  const std::vector<TokenHeadInfo> &tokenHeads() const { return tokenHeads_; }
  /// The head of `kind`, or null.
  const TokenHeadInfo *tokenHead(encm::TokenHeadKind kind) const;
  /// Whether encrt_session_encode gives sparse outputs: SPLADE pooling or a
  /// lexical-weights head.
  bool hasSparseOutput() const;
  /// Floats per vector of the multi-vector head; 0: none.
  int64_t multivectorDim() const;
  /// The multi-vector head's roles (empty: none).
  const std::vector<TokenRoleInfo> &roles() const;
  /// The role named `name`; null when the model has none and `name` is null.
  /// Throws Failure (ENCRT_INVALID_ARGUMENT) for a name the model lacks, a
  /// name where it has no roles, or none where it has them.
  const TokenRoleInfo *role(const char *name) const;
  /// Steps of the plan that runs.
  int32_t numSteps() const;
  /// Step `index` (< numSteps()) of the plan that runs.
  const encm::Step &step(uint32_t index) const;
  /// "cpu" or "cuda:N <GPU name>".
  const std::string &device() const { return device_; }

  /// Stable strings for encrt_model_info.
  const std::string &architecture() const { return architecture_; }
  const std::string &pooling() const { return pooling_; }

  /// [CLS] ids [SEP] truncated to max_seq; throws Failure without a
  /// tokenizer or for a text over the byte limit (named "texts[index]" when
  /// index >= 0, else "text"). `prompt` goes before the text (as
  /// sentence-transformers prepends it: one string, then tokenised).
  std::vector<int32_t> encode(std::string_view text, int64_t index = -1, std::string_view prompt = {}) const;

  /// encode() as `role` encodes a text: truncated to its max length (and the
  /// load's max_seq_length), its marker after the first token, its expansion
  /// to the max length.
  RoleEncoding encode(std::string_view text, int64_t index, std::string_view prompt, const TokenRoleInfo &role) const;

  /// The prompts (name, text) in the artifact's order.
  const std::vector<std::pair<std::string, std::string>> &prompts() const { return prompts_; }
  /// The text of the default prompt ("" when there is none).
  const std::string &defaultPromptText() const { return defaultPromptText_; }
  /// The text of prompt `name`: null picks the default prompt, "" none;
  /// throws Failure (ENCRT_INVALID_ARGUMENT) for a name the model lacks.
  std::string_view promptText(const char *name) const;
  /// Throws Failure unless a tokenizer exists and `text` (called `name` in
  /// errors) is within max_text_bytes.
  void checkText(std::string_view text, const std::string &name) const;
  /// The number of ids `text` gives untruncated (special tokens included).
  int64_t countTokens(std::string_view text) const;
  /// The text of token ids (the tokenizer.json decoder); Failure
  /// ENCRT_INVALID_ARGUMENT for an id without a string, ENCRT_UNSUPPORTED
  /// without a tokenizer or a decoder.
  std::string decode(const int32_t *ids, size_t count, bool skipSpecialTokens) const;
  /// Tokenizer::encodeTokens after checkText (maxTokens 0: every token);
  /// Failure ENCRT_UNSUPPORTED where the artifact did not record the
  /// offsets' trimming.
  std::vector<EncodedToken> encodeTokens(std::string_view text, uint64_t maxTokens, bool addSpecialTokens) const;
  /// A text pair in the tokenizer's pair template, truncated to max_seq by
  /// `strategy` (ENCRT_INVALID_ARGUMENT when it cannot be).
  PairEncoding encodePair(std::string_view a, std::string_view b, PairTruncation strategy) const;

private:
  LoadedModel() = default;
  /// encode() truncated to maxLen tokens (at least 2).
  std::vector<int32_t> encodeTo(std::string_view text, int64_t index, std::string_view prompt, int32_t maxLen) const;
  /// The steps of the plan that runs (CUDA's or the CPU's); may be null.
  const flatbuffers::Vector<flatbuffers::Offset<encm::Step>> *runningSteps() const;
  /// Picks and loads the backend for `choice` (options.device, parsed by
  /// load() before any I/O); throws Failure.
  void loadBackend(const LoadOptions &options, const cuda::DeviceChoice &choice);

  std::unique_ptr<Artifact> artifact_;
  std::unique_ptr<CodeModule> code_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<TokenDecoder> decoder_; ///< null: noDecoder_ says why
  std::string noDecoder_;
  std::unique_ptr<cuda::CudaModel> cuda_;
  std::string architecture_, pooling_, device_, scoreActivation_, precision_ = "fp32";
  std::vector<std::pair<std::string, std::string>> prompts_;
  std::vector<std::string> labels_;
  std::vector<TokenHeadInfo> tokenHeads_;
  std::string defaultPromptText_;
  int64_t maxTextBytes_ = kDefaultMaxTextBytes;
  int32_t truncateTo_ = 0; ///< tokens a text is cut to (set at load: the option or the compiled maximum)
};

} // namespace encrt::rt

#endif // ENCRT_LOADEDMODEL_H
