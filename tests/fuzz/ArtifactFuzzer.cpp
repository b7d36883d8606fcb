//===- ArtifactFuzzer.cpp - libFuzzer target: loading and running .encm ---===//
//
// Structure-aware: the custom mutator mutates the bytes before the trailer and
// then recomputes the trailer checksum (anyone can), so mutations reach the
// FlatBuffers verifier, the semantic checks, the code-object checks and the
// plan-kernel contract instead of dying at the checksum. An artifact that
// loads is run on a small ragged batch (and embedded when it has a
// tokenizer): whatever the loader accepts must run without a sanitizer
// report. Code objects must stay the trusted test kernels: an input whose
// code object bytes differ is skipped (libFuzzer's comparison tracing learns
// the recorded SHA-256 and rewrites both, which makes a *malicious* code
// object: refusing those is what signatures are for, not this fuzzer;
// ElfFuzzer covers the ELF checks).
//
// Seeds: `encrt_fuzz_seeds DIR` writes them (the runtime tests' model, with
// and without pooling and tokenizer, and a weights_fill variant).
//
//===----------------------------------------------------------------------===//
#include "encrt/artifact_generated.h"
#include "encrt/checksum.h"
#include "encrt/encrt.h"

#include <sodium.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

/// SHA-256 of the code object every seed carries (the runtime tests' kernels).
const std::vector<uint8_t> &trustedCodeHash() {
  static const std::vector<uint8_t> hash = [] {
    std::vector<uint8_t> bytes;
    if (FILE *f = std::fopen(ENCRT_FUZZ_TRUSTED_KERNELS, "rb")) {
      uint8_t buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        bytes.insert(bytes.end(), buf, buf + n);
      std::fclose(f);
    }
    if (bytes.empty()) {
      std::fprintf(stderr, "cannot read the trusted kernels %s\n", ENCRT_FUZZ_TRUSTED_KERNELS);
      std::abort();
    }
    std::vector<uint8_t> h(crypto_hash_sha256_BYTES);
    crypto_hash_sha256(h.data(), bytes.data(), bytes.size());
    return h;
  }();
  return hash;
}

/// False when a code object the table names (in bounds) is not the trusted one.
bool onlyTrustedCode(const uint8_t *data, size_t size) {
  if (size < ENCM_TRAILER_SIZE)
    return true;
  flatbuffers::Verifier verifier(data, size - ENCM_TRAILER_SIZE);
  if (!encm::VerifyModelBuffer(verifier) || !encm::GetModel(data)->code_objects())
    return true; // the runtime refuses it before any code
  for (const encm::CodeObject *co : *encm::GetModel(data)->code_objects()) {
    if (co->offset() > size || co->size() > size - co->offset())
      continue; // refused by the runtime
    uint8_t h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, data + co->offset(), co->size());
    if (std::memcmp(h, trustedCodeHash().data(), sizeof h) != 0)
      return false;
  }
  return true;
}

void reseal(uint8_t *data, size_t size) {
  if (size < ENCM_TRAILER_SIZE + 8)
    return;
  const size_t body = size - ENCM_TRAILER_SIZE;
  std::memcpy(data + body, ENCM_TRAILER_MAGIC, 8);
  uint64_t sum = encm_checksum64(data, body);
  std::memcpy(data + body + 8, &sum, 8);
}

const std::string &scratchPath() {
  static const std::string path = [] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/encrt-fuzz-" + std::to_string(getpid()) +
           ".encm";
  }();
  return path;
}

void runLoaded(encrt_model *model) {
  encrt_session *session = nullptr;
  if (encrt_status *st = encrt_session_create(model, nullptr, &session)) {
    encrt_status_free(st);
    return;
  }
  encrt_model_info info;
  encrt_model_get_info(model, &info, sizeof info);
  const int32_t seq = info.max_seq < 6 ? info.max_seq : 6;
  const int32_t lengths[2] = {seq, seq > 1 ? seq - 1 : seq};
  std::vector<int32_t> ids(2 * seq, 0);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int32_t>(i % (info.vocab_size > 0 ? info.vocab_size : 1));
  const size_t h = info.hidden_size > 0 ? size_t(info.hidden_size) : 1;
  // Pooled rows are embedding_dim wide (Dense modules may make it other than hidden).
  const size_t width = std::max<size_t>(h, info.embedding_dim > 0 ? size_t(info.embedding_dim) : 1);
  std::vector<float> hidden(size_t(2) * seq * h), pooled(2 * width);
  encrt_status_free(encrt_session_run(session, ids.data(), lengths, 2, seq, hidden.data(),
                                      info.has_pooled_output ? pooled.data() : nullptr));
  const char *texts[2] = {"hello world", "a"};
  encrt_status_free(encrt_session_embed(session, texts, 2, pooled.data()));
  // Every output encode gives (the token heads' rows copied out of the arena).
  if (info.has_pooled_output && (info.sparse || info.multivector_dim > 0)) {
    const int32_t top = 4;
    std::vector<int32_t> counts(2), sparseIds(2 * top);
    std::vector<float> weights(2 * top), vectors(size_t(2) * seq * size_t(info.multivector_dim > 0 ? info.multivector_dim : 1));
    std::vector<int64_t> rows(2);
    encrt_encode_outputs o;
    encrt_encode_outputs_initialize(&o);
    o.dense = pooled.data();
    if (info.sparse)
      o.sparse_top_k = top, o.sparse_counts = counts.data(), o.sparse_ids = sparseIds.data(),
      o.sparse_weights = weights.data();
    if (info.multivector_dim > 0)
      o.vectors = vectors.data(), o.vectors_capacity = 2 * seq, o.vector_counts = rows.data();
    encrt_status_free(encrt_session_encode_ids(session, ids.data(), lengths, 2, seq, &o));
  }
  // Token strings at the vocabulary's edges: read whole (ASan sees an overrun).
  for (int32_t id : {-1, 0, 1, info.vocab_size - 1, info.vocab_size, info.vocab_size + 1}) {
    const char *text = nullptr;
    int64_t size = 0;
    if (encrt_status *st = encrt_model_get_token(model, id, &text, &size)) {
      encrt_status_free(st);
      continue;
    }
    volatile unsigned sum = 0;
    for (int64_t i = 0; i <= size; ++i) // the terminating NUL included
      sum = sum + static_cast<unsigned char>(text[i]);
  }
  // Offsets and decoding through a damaged tokenizer table: in range or refused.
  static const char kText[] = "Hello, wor\xc3\xa9lds <mask> ##s";
  const encrt_text text{kText, int64_t(sizeof kText - 1)};
  encrt_token tokens[64];
  int64_t count = 0;
  if (encrt_status *st = encrt_model_tokenize_offsets(model, text, 1, 0, tokens, 64, &count)) {
    encrt_status_free(st);
  } else {
    for (int64_t i = 0; i < count; ++i)
      if (tokens[i].start < 0 || tokens[i].start > tokens[i].stop || tokens[i].stop > text.size)
        __builtin_trap();
    std::vector<int32_t> tokenIds;
    for (int64_t i = 0; i < count; ++i)
      tokenIds.push_back(tokens[i].id);
    char decoded[4096];
    int64_t size = 0;
    encrt_status_free(encrt_model_decode(model, tokenIds.data(), count, 0, decoded, sizeof decoded, &size));
  }
  encrt_session_release(session);
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  (void)seed;
  if (size <= ENCM_TRAILER_SIZE || maxSize <= ENCM_TRAILER_SIZE)
    return LLVMFuzzerMutate(data, size, maxSize);
  // Mutate the body only; the trailer is rewritten after it.
  size_t body = LLVMFuzzerMutate(data, size - ENCM_TRAILER_SIZE, maxSize - ENCM_TRAILER_SIZE);
  reseal(data, body + ENCM_TRAILER_SIZE);
  return body + ENCM_TRAILER_SIZE;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!onlyTrustedCode(data, size))
    return -1; // not added to the corpus
  const std::string &path = scratchPath();
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  o.num_threads = 1;
  encrt_model *model = nullptr;
  static const bool verbose = std::getenv("ENCRT_FUZZ_VERBOSE") != nullptr;
  if (encrt_status *st = encrt_model_load(path.c_str(), &o, &model)) {
    if (verbose)
      std::fprintf(stderr, "load: %s\n", encrt_status_message(st));
    encrt_status_free(st);
    return 0;
  }
  if (verbose)
    std::fprintf(stderr, "load: ok\n");
  runLoaded(model);
  encrt_model_release(model);
  return 0;
}
