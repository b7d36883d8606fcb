//===- Inputs.h - Argument checks and embed batching shared by sessions ---===//
//
// Session (CPU) and cuda::CudaSession accept the same run() arguments, embed
// texts the same way (tokenise, pad each chunk of texts to its longest
// sequence, run the chunk for its pooled output) and scatter a packed hidden
// output into the caller's padded layout.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_INPUTS_H
#define ENCRT_INPUTS_H

#include "LoadedModel.h"

#include <cstdint>
#include <functional>
#include <string_view>

namespace encrt::rt {

/// A backend's bounds on one run.
struct RunLimits {
  /// batch * seq above this is ENCRT_OUT_OF_MEMORY ("is too large").
  int64_t maxElements;
  /// batch above this is rejected, naming `backend` ("CUDA backend's").
  int64_t maxBatch = INT64_MAX;
  const char *backend = "";
};

/// Throws Failure (the encrt_session_run rules) unless ids/lengths describe
/// `batch` rows of `seq` padded ids of `model`, typeIds (may be null: all 0)
/// holds token types in [0, max(1, type_vocab_size)) at the valid positions,
/// and a pooled output is only
/// requested from a model that has one.
void validateRunInputs(const LoadedModel &model, const int32_t *ids,
                       const int32_t *typeIds, const int32_t *lengths,
                       int64_t batch, int64_t seq, bool wantPooled,
                       const RunLimits &limits);

/// dst [batch, seq] = src's first lengths[b] entries of each row, the rest 0
/// (src null: all 0).
void copyPadded(const int32_t *src, const int32_t *lengths, int64_t batch,
                int64_t seq, int32_t *dst);

/// The pooled-output run of one padded chunk: ids [n, seq], lengths [n].
using PooledRunFn = std::function<void(const int32_t *ids, const int32_t *lengths,
                                       int64_t n, int64_t seq, float *outPooled)>;

/// encrt_session_embed: checks the arguments, then tokenises `texts` (each
/// after `prompt`) in chunks and calls `run` for each (writing count x hidden
/// floats to outEmbeddings).
void embedInChunks(const LoadedModel &model, const std::string_view *texts, int64_t count,
                   std::string_view prompt, float *outEmbeddings, const PooledRunFn &run);

/// What encodeInChunks writes (encrt_encode_outputs); null: not wanted.
struct EncodeOutputs {
  float *dense = nullptr; ///< count x embeddingDim
  bool sparse = false;    ///< the sparse output is asked for (its buffers are then checked)
  int32_t sparseTopK = 0;
  float sparseThreshold = 0;
  int32_t *sparseCounts = nullptr, *sparseIds = nullptr; ///< count; count x sparseTopK
  float *sparseWeights = nullptr;                        ///< count x sparseTopK
  float *vectors = nullptr;                              ///< vectorsCapacity x multivectorDim
  int64_t vectorsCapacity = 0;
  int64_t *vectorCounts = nullptr; ///< count
  const TokenRoleInfo *role = nullptr; ///< how the texts are encoded (LoadedModel::role); null: none
  const int32_t *attendedLengths = nullptr; ///< encodeIds: each text's attention keys (null: all its tokens)
};

/// The run of one padded chunk for its pooled output and token heads
/// (DeviceSession::runWithHeads): text b's first keys[b] tokens are
/// attention keys; rows (null: keys) its tokens, rows[b] >= keys[b], the
/// ones past keys[b] attending to the text but not attended to.
using HeadsRunFn = std::function<void(const int32_t *ids, const int32_t *keys, const int32_t *rows, int64_t n,
                                      int64_t seq, float *outPooled, float *const *outHeads)>;

/// encrt_session_encode: checks the arguments against what `model` gives,
/// tokenises `texts` (each after `prompt`), calls `run` for each chunk and
/// writes the outputs asked for: the pooled rows, each text's heaviest sparse
/// entries (a SPLADE model's pooled weights, or a lexical-weights head's
/// maximum per token id), its multi-vector rows after the head's skipped ones.
void encodeInChunks(const LoadedModel &model, const std::string_view *texts, int64_t count,
                    std::string_view prompt, const EncodeOutputs &out, const HeadsRunFn &run);

/// encrt_session_encode_ids: encodeInChunks' outputs of one padded batch of
/// token ids [batch, seq] (checked as encrt_session_run checks them), in one
/// pass.
void encodeIds(const LoadedModel &model, const int32_t *ids, const int32_t *lengths, int64_t batch, int64_t seq,
               const EncodeOutputs &out, const HeadsRunFn &run);

/// The logits run of one padded chunk of pairs: ids [n, seq], typeIds [n, seq]
/// or null (a one-type model: all 0),
/// lengths [n]; writes n x num_labels logits.
using LogitsRunFn = std::function<void(const int32_t *ids, const int32_t *typeIds, const int32_t *lengths,
                                       int64_t n, int64_t seq, float *outLogits)>;

/// encrt_session_score_pairs: checks the arguments, tokenises the pairs in
/// chunks, calls `run` for each and applies the model's score activation
/// (count x num_labels floats to outScores).
void scorePairsInChunks(const LoadedModel &model, const std::string_view *first,
                        const std::string_view *second, int64_t count, PairTruncation truncation,
                        float *outScores, const LogitsRunFn &run);

/// Value.shape's symbolic dims (artifact.fbs).
constexpr int64_t kDimBatch = -1, kDimSeq = -2, kDimTokens = -3;

/// A shape dim resolved for one run: kDimBatch -> batch, kDimSeq -> seq,
/// kDimTokens -> tokens, any other value is itself.
inline int64_t resolveDim(int64_t d, int64_t batch, int64_t seq,
                          int64_t tokens) {
  return d == kDimBatch ? batch : d == kDimSeq ? seq : d == kDimTokens ? tokens : d;
}

/// offsets[0] = 0, offsets[b + 1] = offsets[b] + lengths[b] (batch + 1
/// entries); returns the token count offsets[batch]. Throws Failure
/// (ENCRT_INVALID_ARGUMENT) past 2^31 - 1 tokens.
int64_t computeOffsets(const int32_t *lengths, int64_t batch, int32_t *offsets);

/// Scatters packed rows [tokens, hidden] (sequence b at rows
/// [offsets[b], offsets[b] + lengths[b])) to padded [batch, seq, hidden],
/// zero past lengths[b].
void unpackRows(const float *packed, const int32_t *lengths,
                const int32_t *offsets, int64_t batch, int64_t seq,
                int64_t hidden, float *padded);

} // namespace encrt::rt

#endif // ENCRT_INPUTS_H
