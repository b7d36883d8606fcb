//===- Inputs.cpp - Argument checks and embed batching shared by sessions -===//
#include "Inputs.h"

#include "Failure.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace encrt::rt {

namespace {
constexpr int64_t kEmbedChunk = 32;
} // namespace

void validateRunInputs(const LoadedModel &model, const int32_t *ids,
                       const int32_t *typeIds, const int32_t *lengths,
                       int64_t batch, int64_t seq, bool wantPooled,
                       const RunLimits &limits) {
  const encm::Metadata &md = model.metadata();
  if (!ids || !lengths)
    fail(ENCRT_INVALID_ARGUMENT, !ids ? "ids" : "lengths", " is NULL");
  if (batch < 1)
    fail(ENCRT_INVALID_ARGUMENT, "batch is ", batch, " (expected >= 1)");
  if (seq < 1)
    fail(ENCRT_INVALID_ARGUMENT, "sequence length is ", seq,
         " (expected >= 1)");
  if (seq > md.max_seq())
    fail(ENCRT_INVALID_ARGUMENT, "sequence length ", seq,
         " exceeds the compiled maximum ", md.max_seq());
  if (batch > limits.maxBatch)
    fail(ENCRT_INVALID_ARGUMENT, "batch ", batch, " exceeds the ",
         limits.backend, " limit of ", limits.maxBatch, " sequences per run");
  int64_t elements;
  if (__builtin_mul_overflow(batch, seq, &elements) ||
      elements > limits.maxElements)
    fail(ENCRT_OUT_OF_MEMORY, "batch ", batch, " x sequence ", seq,
         " is too large");
  if (wantPooled && !model.hasPooledOutput() && !model.classifies())
    fail(ENCRT_INVALID_ARGUMENT, "the model has no pooled output (pooling \"",
         model.pooling(), "\"); pass NULL for the pooled output");
  for (int64_t b = 0; b < batch; ++b) {
    if (lengths[b] < 1 || lengths[b] > seq)
      fail(ENCRT_INVALID_ARGUMENT, "lengths[", b, "] is ", lengths[b],
           " (expected 1..", seq, ", the padded sequence length)");
    const int32_t *row = ids + b * seq;
    for (int32_t s = 0; s < lengths[b]; ++s)
      if (row[s] < 0 || row[s] >= md.vocab_size())
        fail(ENCRT_INVALID_ARGUMENT, "ids[", b, "][", s, "] is ", row[s],
             ", outside the vocabulary [0, ", md.vocab_size(), ")");
  }
  if (!typeIds)
    return;
  // A model with one token type (RoBERTa, DistilBERT) takes type ids that
  // are all 0, as transformers does.
  const int32_t types = std::max(1, md.type_vocab_size());
  for (int64_t b = 0; b < batch; ++b)
    for (int32_t s = 0; s < lengths[b]; ++s) {
      const int32_t t = typeIds[b * seq + s];
      if (t < 0 || t >= types)
        fail(ENCRT_INVALID_ARGUMENT, "type_ids[", b, "][", s, "] is ", t,
             ", outside the model's token types [0, ", types, ")");
    }
}

void copyPadded(const int32_t *src, const int32_t *lengths, int64_t batch,
                int64_t seq, int32_t *dst) {
  if (!src) {
    std::fill(dst, dst + batch * seq, 0);
    return;
  }
  for (int64_t b = 0; b < batch; ++b) {
    std::memcpy(dst + b * seq, src + b * seq, sizeof(int32_t) * lengths[b]);
    std::fill(dst + b * seq + lengths[b], dst + (b + 1) * seq, 0);
  }
}

namespace {

/// Encodes items [0, count) in chunks of kEmbedChunk with `encode(i)` (a
/// PairEncoding; empty typeIds for a single text), pads each chunk to its
/// longest (0 past each length) and calls run(ids, typeIds, lengths, n, seq,
/// first): typeIds is null when `typed` is false.
template <class Encode, class Run>
void inPaddedChunks(int64_t count, bool typed, const Encode &encode, const Run &run) {
  std::vector<PairEncoding> encoded;
  std::vector<int32_t> ids, types, lengths;
  for (int64_t first = 0; first < count; first += kEmbedChunk) {
    const int64_t n = std::min(kEmbedChunk, count - first);
    encoded.clear();
    int64_t seq = 1;
    for (int64_t i = 0; i < n; ++i) {
      encoded.push_back(encode(first + i));
      seq = std::max<int64_t>(seq, encoded.back().ids.size());
    }
    ids.assign(static_cast<size_t>(n * seq), 0);
    types.assign(typed ? static_cast<size_t>(n * seq) : 0, 0);
    lengths.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      std::copy(encoded[i].ids.begin(), encoded[i].ids.end(), ids.begin() + i * seq);
      if (typed)
        std::copy(encoded[i].typeIds.begin(), encoded[i].typeIds.end(), types.begin() + i * seq);
      lengths[i] = static_cast<int32_t>(encoded[i].ids.size());
    }
    run(ids.data(), typed ? types.data() : nullptr, lengths.data(), n, seq, first);
  }
}

} // namespace

void embedInChunks(const LoadedModel &model, const std::string_view *texts, int64_t count,
                   std::string_view prompt, float *outEmbeddings, const PooledRunFn &run) {
  if (count < 0)
    fail(ENCRT_INVALID_ARGUMENT, "count is ", count, " (expected >= 0)");
  if (count == 0)
    return;
  if (model.classifies())
    fail(ENCRT_UNSUPPORTED, model.artifact().path(),
         ": a sequence-classification model (cross-encoder) scores text pairs; it has no embeddings "
         "(use encrt_session_score_pairs)");
  if (!model.hasPooledOutput())
    fail(ENCRT_UNSUPPORTED, model.artifact().path(),
         ": the model has no pooled output (pooling \"", model.pooling(),
         "\"); embed needs one (use encrt_session_run for hidden states)");
  if (!texts || !outEmbeddings)
    fail(ENCRT_INVALID_ARGUMENT, !texts ? "texts" : "out_embeddings",
         " is NULL");
  const int64_t width = model.embeddingDim();
  inPaddedChunks(
      count, /*typed=*/false, [&](int64_t i) { return PairEncoding{model.encode(texts[i], i, prompt), {}}; },
      [&](const int32_t *ids, const int32_t *, const int32_t *lengths, int64_t n, int64_t seq, int64_t first) {
        run(ids, lengths, n, seq, outEmbeddings + first * width);
      });
}

namespace {

/// The (id, weight) entries above `threshold`, heaviest first (equal weights:
/// the lower id first), at most `topK`, into ids / weights; returns how many.
int32_t writeHeaviest(std::vector<std::pair<int32_t, float>> &entries, int32_t topK, float threshold,
                      int32_t *ids, float *weights) {
  entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const auto &e) { return !(e.second > threshold); }),
                entries.end());
  const size_t n = std::min(entries.size(), static_cast<size_t>(topK));
  std::partial_sort(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(n), entries.end(),
                    [](const auto &a, const auto &b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
  for (size_t i = 0; i < n; ++i)
    ids[i] = entries[i].first, weights[i] = entries[i].second;
  return static_cast<int32_t>(n);
}

/// FlagEmbedding's lexical weights of one text: per token id outside
/// `skipIds` (sorted), the largest positive weight of its tokens.
void lexicalEntries(const int32_t *ids, const float *weights, int64_t length, const std::vector<int32_t> &skipIds,
                    std::vector<std::pair<int32_t, float>> &entries) {
  entries.clear();
  for (int64_t t = 0; t < length; ++t)
    if (weights[t] > 0.0f && !std::binary_search(skipIds.begin(), skipIds.end(), ids[t]))
      entries.emplace_back(ids[t], weights[t]);
  std::sort(entries.begin(), entries.end(),
            [](const auto &a, const auto &b) { return a.first < b.first || (a.first == b.first && a.second > b.second); });
  entries.erase(std::unique(entries.begin(), entries.end(), [](const auto &a, const auto &b) { return a.first == b.first; }),
                entries.end());
}

} // namespace

namespace {

/// Throws Failure unless `model` has every output `out` asks for and the
/// sparse settings are in range (`count` texts).
void checkEncodeOutputs(const LoadedModel &model, const EncodeOutputs &out, int64_t count) {
  if (count < 0)
    fail(ENCRT_INVALID_ARGUMENT, "count is ", count, " (expected >= 0)");
  if (model.classifies())
    fail(ENCRT_UNSUPPORTED, model.artifact().path(),
         ": a sequence-classification model (cross-encoder) scores text pairs; it has no embeddings "
         "(use encrt_session_score_pairs)");
  if (!model.hasPooledOutput() && !model.tokenHead(encm::TokenHeadKind::MultiVector))
    fail(ENCRT_UNSUPPORTED, model.artifact().path(), ": the model has no pooled output (pooling \"",
         model.pooling(), "\"); encode needs one (use encrt_session_run for hidden states)");
  if (out.dense && !model.hasPooledOutput())
    fail(ENCRT_INVALID_ARGUMENT, "the model has no dense output (a multi-vector model: ask for vectors)");
  if (out.dense && model.metadata().pooling() == encm::Pooling::Splade)
    fail(ENCRT_INVALID_ARGUMENT, "a SPLADE model's embedding is its sparse output: ask for sparse, not dense");
  if (out.sparse) {
    if (!model.hasSparseOutput())
      fail(ENCRT_INVALID_ARGUMENT, "the model has no sparse output (pooling '", model.pooling(),
           "' and no lexical-weights head)");
    const int64_t vocab = model.metadata().vocab_size();
    if (out.sparseTopK < 1 || out.sparseTopK > vocab)
      fail(ENCRT_INVALID_ARGUMENT, "top_k is ", out.sparseTopK, " (expected 1 to ", vocab, ", the vocabulary size)");
    if (!(out.sparseThreshold >= 0.0f) || !std::isfinite(out.sparseThreshold))
      fail(ENCRT_INVALID_ARGUMENT, "threshold is ", out.sparseThreshold, " (expected a finite value >= 0)");
    if (count > 0 && (!out.sparseCounts || !out.sparseIds || !out.sparseWeights))
      fail(ENCRT_INVALID_ARGUMENT, !out.sparseCounts ? "sparse_counts" : !out.sparseIds ? "sparse_ids" : "sparse_weights",
           " is NULL (a sparse output needs all three)");
  }
  if (out.vectors || out.vectorCounts) {
    if (!model.tokenHead(encm::TokenHeadKind::MultiVector))
      fail(ENCRT_INVALID_ARGUMENT, "the model has no multi-vector output (no multi-vector head)");
    if (!out.vectorCounts)
      fail(ENCRT_INVALID_ARGUMENT, "vector_counts is NULL (vectors need it)");
    if (out.vectorsCapacity < 0)
      fail(ENCRT_INVALID_ARGUMENT, "vectors_capacity is ", out.vectorsCapacity, " (expected >= 0)");
  }
}

/// Whether row `r` of a text (token id `id`) is one of its vectors: past the
/// head's skipped leading rows, its id not in the role's skip list.
bool keepsRow(const TokenHeadInfo &multi, const TokenRoleInfo *role, int64_t r, int32_t id) {
  return r >= multi.skipLeading &&
         !(role && std::binary_search(role->skipIds.begin(), role->skipIds.end(), id));
}

/// Sets out.vectorCounts[i] = text i's vectors among its rows[i] rows (token
/// ids ids(i)) and rowStart (count + 1 prefix sums); Failure when out.vectors
/// cannot hold them all.
template <class Ids>
void placeVectors(const LoadedModel &model, const EncodeOutputs &out, const Ids &ids, const int32_t *rows,
                  int64_t count, std::vector<int64_t> &rowStart) {
  const TokenHeadInfo &multi = *model.tokenHead(encm::TokenHeadKind::MultiVector);
  rowStart.assign(static_cast<size_t>(count) + 1, 0);
  for (int64_t i = 0; i < count; ++i) {
    const int32_t *row = ids(i);
    int64_t kept = 0;
    for (int64_t r = 0; r < rows[i]; ++r)
      kept += keepsRow(multi, out.role, r, row[r]);
    out.vectorCounts[i] = kept;
    rowStart[size_t(i) + 1] = rowStart[size_t(i)] + kept;
  }
  if (out.vectors && rowStart.back() > out.vectorsCapacity)
    fail(ENCRT_INVALID_ARGUMENT, "vectors_capacity is ", out.vectorsCapacity, " rows; these texts have ",
         rowStart.back(), " (vector_counts holds each text's)");
}

/// One pass over the padded chunk ids [n, seq] (texts first .. first + n of
/// the call) and the outputs `out` asks for, written at the texts' places
/// (rowStart: placeVectors'). Text j has keys[j] attended tokens of its
/// rows[j] (null: keys). The buffers are the caller's, reused.
struct ChunkBuffers {
  std::vector<float> pooled, lexicalRows, vectorRows;
  std::vector<float *> heads;
  std::vector<std::pair<int32_t, float>> entries;
};

void encodeChunk(const LoadedModel &model, const EncodeOutputs &out, const std::vector<int64_t> &rowStart,
                 const int32_t *ids, const int32_t *keys, const int32_t *rows, int64_t n, int64_t seq, int64_t first,
                 const HeadsRunFn &run, ChunkBuffers &buf) {
  const bool splade = model.metadata().pooling() == encm::Pooling::Splade;
  const int32_t *lengths = rows ? rows : keys;
  const TokenHeadInfo *lexical = model.tokenHead(encm::TokenHeadKind::LexicalWeights);
  const TokenHeadInfo *multi = model.tokenHead(encm::TokenHeadKind::MultiVector);
  const int64_t pooledWidth = model.embeddingDim();
  int64_t tokens = 0;
  for (int64_t j = 0; j < n; ++j)
    tokens += lengths[j];
  float *outPooled = out.dense ? out.dense + first * pooledWidth : nullptr;
  if (splade && out.sparse) {
    buf.pooled.resize(static_cast<size_t>(n * pooledWidth));
    outPooled = buf.pooled.data();
  }
  buf.heads.assign(model.tokenHeads().size(), nullptr);
  for (size_t k = 0; k < buf.heads.size(); ++k) {
    const TokenHeadInfo &h = model.tokenHeads()[k];
    std::vector<float> *rows = nullptr; // null: the caller does not want this head's output
    switch (h.kind) {
    case encm::TokenHeadKind::LexicalWeights:
      rows = out.sparse ? &buf.lexicalRows : nullptr;
      break;
    case encm::TokenHeadKind::MultiVector:
      rows = out.vectors ? &buf.vectorRows : nullptr;
      break;
    }
    if (rows)
      rows->resize(static_cast<size_t>(tokens * h.width));
    buf.heads[k] = rows ? rows->data() : nullptr;
  }
  run(ids, keys, rows, n, seq, outPooled, buf.heads.data());
  int64_t at = 0; // the text's first row
  for (int64_t j = 0; j < n; at += lengths[j], ++j) {
    const int64_t i = first + j;
    if (out.sparse) {
      if (splade) {
        buf.entries.clear();
        const float *row = buf.pooled.data() + j * pooledWidth;
        for (int64_t v = 0; v < pooledWidth; ++v)
          if (row[v] > 0.0f)
            buf.entries.emplace_back(static_cast<int32_t>(v), row[v]);
      } else {
        lexicalEntries(ids + j * seq, buf.lexicalRows.data() + at, lengths[j], lexical->skipIds, buf.entries);
      }
      out.sparseCounts[i] = writeHeaviest(buf.entries, out.sparseTopK, out.sparseThreshold,
                                          out.sparseIds + i * out.sparseTopK, out.sparseWeights + i * out.sparseTopK);
    }
    if (!out.vectors)
      continue;
    const size_t width = static_cast<size_t>(multi->width);
    float *dst = out.vectors + rowStart[size_t(i)] * multi->width;
    for (int64_t r = 0; r < lengths[j]; ++r)
      if (keepsRow(*multi, out.role, r, ids[j * seq + r])) {
        std::memcpy(dst, buf.vectorRows.data() + (at + r) * multi->width, sizeof(float) * width);
        dst += width;
      }
  }
}

} // namespace

void encodeInChunks(const LoadedModel &model, const std::string_view *texts, int64_t count,
                    std::string_view prompt, const EncodeOutputs &out, const HeadsRunFn &run) {
  checkEncodeOutputs(model, out, count);
  if (out.attendedLengths)
    fail(ENCRT_INVALID_ARGUMENT, "attended_lengths applies to token ids (encrt_session_encode_ids), not to texts");
  if (count == 0)
    return;
  if (!texts)
    fail(ENCRT_INVALID_ARGUMENT, "texts is NULL");
  auto encodeText = [&](int64_t i) {
    if (out.role)
      return model.encode(texts[i], i, prompt, *out.role);
    RoleEncoding e{model.encode(texts[i], i, prompt), 0};
    e.attended = static_cast<int32_t>(e.ids.size());
    return e;
  };
  // The multi-vector rows' places need every text's ids first.
  std::vector<RoleEncoding> encoded;
  std::vector<int32_t> attended;
  std::vector<int64_t> rowStart;
  if (out.vectorCounts || out.role) {
    encoded.reserve(static_cast<size_t>(count));
    std::vector<int32_t> rows;
    for (int64_t i = 0; i < count; ++i) {
      encoded.push_back(encodeText(i));
      attended.push_back(encoded.back().attended);
      rows.push_back(static_cast<int32_t>(encoded.back().ids.size()));
    }
    if (out.vectorCounts)
      placeVectors(model, out, [&](int64_t i) { return encoded[size_t(i)].ids.data(); }, rows.data(), count, rowStart);
  }
  if (!out.dense && !out.sparse && !out.vectors)
    return;
  ChunkBuffers buf;
  std::vector<int32_t> keys; // a chunk's attended lengths
  inPaddedChunks(
      count, /*typed=*/false,
      [&](int64_t i) {
        return PairEncoding{encoded.empty() ? encodeText(i).ids : std::move(encoded[size_t(i)].ids), {}};
      },
      [&](const int32_t *ids, const int32_t *, const int32_t *lengths, int64_t n, int64_t seq, int64_t first) {
        if (attended.empty()) {
          encodeChunk(model, out, rowStart, ids, lengths, nullptr, n, seq, first, run, buf);
          return;
        }
        // A role's attended tokens may end before its ids do.
        keys.assign(attended.begin() + first, attended.begin() + first + n);
        encodeChunk(model, out, rowStart, ids, keys.data(), lengths, n, seq, first, run, buf);
      });
}

void encodeIds(const LoadedModel &model, const int32_t *ids, const int32_t *lengths, int64_t batch, int64_t seq,
               const EncodeOutputs &out, const HeadsRunFn &run) {
  checkEncodeOutputs(model, out, batch);
  if (out.role && out.role->unattendedTail() && !out.attendedLengths)
    fail(ENCRT_INVALID_ARGUMENT, "role '", out.role->name, "' leaves its expansion tokens unattended: pass "
         "attended_lengths (encrt_model_tokenize_role gives each text's)");
  validateRunInputs(model, ids, nullptr, lengths, batch, seq, /*wantPooled=*/false, {int64_t(1) << 40});
  if (const int32_t *keys = out.attendedLengths)
    for (int64_t b = 0; b < batch; ++b)
      if (keys[b] < 1 || keys[b] > lengths[b])
        fail(ENCRT_INVALID_ARGUMENT, "attended_lengths[", b, "] is ", keys[b], " (expected 1..", lengths[b],
             ", lengths[", b, "])");
  std::vector<int64_t> rowStart;
  if (out.vectorCounts)
    placeVectors(model, out, [&](int64_t i) { return ids + i * seq; }, lengths, batch, rowStart);
  if (!out.dense && !out.sparse && !out.vectors)
    return;
  ChunkBuffers buf;
  if (out.attendedLengths)
    encodeChunk(model, out, rowStart, ids, out.attendedLengths, lengths, batch, seq, 0, run, buf);
  else
    encodeChunk(model, out, rowStart, ids, lengths, nullptr, batch, seq, 0, run, buf);
}

void scorePairsInChunks(const LoadedModel &model, const std::string_view *first,
                        const std::string_view *second, int64_t count, PairTruncation truncation,
                        float *outScores, const LogitsRunFn &run) {
  if (count < 0)
    fail(ENCRT_INVALID_ARGUMENT, "count is ", count, " (expected >= 0)");
  if (!model.classifies())
    fail(ENCRT_UNSUPPORTED, model.artifact().path(),
         ": not a sequence-classification model (cross-encoder); it has no scores (num_labels 0)");
  if (count == 0)
    return;
  if (!first || !second || !outScores)
    fail(ENCRT_INVALID_ARGUMENT, !first ? "first" : !second ? "second" : "out_scores", " is NULL");
  const int64_t labels = model.numLabels();
  const bool sigmoid = model.scoreActivation() == "sigmoid";
  // A model with one token type (RoBERTa-likes) sees every token as type 0,
  // whatever the tokenizer's pair template says (RobertaProcessing does so).
  const bool typed = model.metadata().type_vocab_size() >= 2;
  inPaddedChunks(
      count, typed, [&](int64_t i) { return model.encodePair(first[i], second[i], truncation); },
      [&](const int32_t *ids, const int32_t *types, const int32_t *lengths, int64_t n, int64_t seq,
          int64_t start) {
        float *out = outScores + start * labels;
        run(ids, types, lengths, n, seq, out);
        if (sigmoid)
          for (int64_t k = 0; k < n * labels; ++k)
            out[k] = 1.0f / (1.0f + std::exp(-out[k]));
      });
}

int64_t computeOffsets(const int32_t *lengths, int64_t batch, int32_t *offsets) {
  int64_t total = 0;
  offsets[0] = 0;
  for (int64_t b = 0; b < batch; ++b) {
    total += lengths[b];
    if (total > INT32_MAX)
      fail(ENCRT_INVALID_ARGUMENT, "the batch holds more than ", INT32_MAX,
           " tokens");
    offsets[b + 1] = static_cast<int32_t>(total);
  }
  return total;
}

void unpackRows(const float *packed, const int32_t *lengths,
                const int32_t *offsets, int64_t batch, int64_t seq,
                int64_t hidden, float *padded) {
  for (int64_t b = 0; b < batch; ++b) {
    float *dst = padded + b * seq * hidden;
    const int64_t n = lengths[b];
    std::memcpy(dst, packed + int64_t(offsets[b]) * hidden,
                sizeof(float) * static_cast<size_t>(n * hidden));
    std::fill(dst + n * hidden, dst + seq * hidden, 0.0f);
  }
}

} // namespace encrt::rt
