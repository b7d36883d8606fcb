//===- Artifact.cpp - Mapping and verifying a .encm file ------------------===//
#include "Artifact.h"

#include "Failure.h"
#include "Integrity.h"
#include "VerifyUtil.h"
#include "cuda/CudaPlanVerify.h"
#include "unicode.h"
#include "encrt/checksum.h"
#include "encrt/float16.h"
#include "encrt/schema_version.h"
#include "encrt/signature.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <thread>
#include <vector>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace encrt::rt {

namespace {

constexpr uint64_t kAlign = 64;
/// Generated weights beyond this are a damaged or hostile artifact.
constexpr uint64_t kMaxGeneratedWeights = uint64_t(64) << 30;

} // namespace

size_t dtypeSize(encm::DType dtype) {
  switch (dtype) {
  case encm::DType::F32:
  case encm::DType::I32: return 4;
  case encm::DType::F16:
  case encm::DType::BF16: return 2;
  case encm::DType::I8:
  case encm::DType::U8: return 1;
  }
  return 0;
}

const char *poolingName(encm::Pooling pooling) {
  switch (pooling) {
  case encm::Pooling::None: return "none";
  case encm::Pooling::Cls: return "cls";
  case encm::Pooling::Mean: return "mean";
  case encm::Pooling::Last: return "last";
  case encm::Pooling::Splade: return "splade";
  }
  return nullptr;
}

const char *similarityName(encm::Similarity similarity) {
  switch (similarity) {
  case encm::Similarity::Cosine: return "cosine";
  case encm::Similarity::Dot: return "dot";
  case encm::Similarity::Euclidean: return "euclidean";
  case encm::Similarity::Manhattan: return "manhattan";
  }
  return nullptr;
}

namespace {

/// splitmix64's output function: a bijective 64-bit mix.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A float in [-0.05, 0.05] from the top 24 bits of `r`.
inline float smallFloat(uint32_t r) {
  return static_cast<float>(static_cast<int32_t>(r) >> 8) * (0.05f / 8388608.0f);
}

/// 4096 F16 (or BF16) bit patterns evenly spread over [-0.0499, 0.0499]
/// (rounded to 16 bits they stay within [-0.05, 0.05]): a 12-bit draw
/// indexes them (cheaper than converting per element).
struct HalfTables {
  uint16_t f16[4096], bf16[4096];
  HalfTables() {
    for (int i = 0; i < 4096; ++i) {
      float f = static_cast<float>(i - 2048) * (0.0499f / 2048.0f);
      f16[i] = encm_f32_to_f16(f);
      bf16[i] = encm_f32_to_bf16(f);
    }
  }
};

const HalfTables &halfTables() {
  static const HalfTables tables;
  return tables;
}

/// Eight bytes of `dtype` values from one 64-bit draw.
inline uint64_t randomChunk(uint64_t r, encm::DType dtype, const HalfTables &ht) {
  switch (dtype) {
  case encm::DType::F32:
    return uint64_t(encm_float_bits(smallFloat(uint32_t(r)))) |
           uint64_t(encm_float_bits(smallFloat(uint32_t(r >> 32)))) << 32;
  case encm::DType::F16:
  case encm::DType::BF16: {
    const uint16_t *t = dtype == encm::DType::F16 ? ht.f16 : ht.bf16;
    return uint64_t(t[r & 0xFFF]) | uint64_t(t[(r >> 12) & 0xFFF]) << 16 |
           uint64_t(t[(r >> 24) & 0xFFF]) << 32 | uint64_t(t[(r >> 36) & 0xFFF]) << 48;
  }
  case encm::DType::I8: {
    uint64_t out = r;
    for (int k = 0; k < 8; ++k)
      if (((r >> (8 * k)) & 0xFF) == 0x80) // -128 -> -127
        out += uint64_t(1) << (8 * k);
    return out;
  }
  case encm::DType::I32: // [-128, 127]
    return uint64_t(uint32_t(static_cast<int32_t>(uint32_t(r)) >> 24)) |
           uint64_t(uint32_t(static_cast<int32_t>(uint32_t(r >> 32)) >> 24)) << 32;
  case encm::DType::U8:
    return r;
  }
  return 0;
}

} // namespace

void fillRandomWeights(uint8_t *dst, uint64_t begin, uint64_t end, encm::DType dtype, uint64_t seed,
                       uint64_t weightOffset) {
  const uint64_t key = mix64(seed ^ mix64(weightOffset + 0x9E3779B97F4A7C15ull));
  const HalfTables &ht = halfTables();
  for (uint64_t at = begin; at < end; at += 8) {
    uint64_t chunk = randomChunk(mix64(key + (at / 8 + 1) * 0x9E3779B97F4A7C15ull), dtype, ht);
    std::memcpy(dst + at, &chunk, std::min<uint64_t>(8, end - at));
  }
}

namespace {

const uint8_t *mapFile(int fd, uint64_t size, const std::string &path) {
  void *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED)
    fail(ENCRT_IO_ERROR, path, ": cannot map (", std::strerror(errno), ")");
  return static_cast<const uint8_t *>(map);
}

/// The first `size` bytes of `fd` in anonymous read-only memory (released
/// with munmap, as a file mapping is).
const uint8_t *readPrivateCopy(int fd, uint64_t size, const std::string &path) {
  void *mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    fail(ENCRT_OUT_OF_MEMORY, path, ": cannot allocate ", size, " bytes to read it into (",
         std::strerror(errno), ")");
  auto *dst = static_cast<uint8_t *>(mem);
  for (uint64_t done = 0; done < size;) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size - done, uint64_t(1) << 30));
    const ssize_t n = ::pread(fd, dst + done, chunk, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      munmap(mem, size);
      if (err)
        fail(ENCRT_IO_ERROR, path, ": cannot read (", std::strerror(err), ")");
      fail(ENCRT_IO_ERROR, path, ": the file became shorter while it was read (", done, " of ",
           size, " bytes)");
    }
    done += static_cast<uint64_t>(n);
  }
  mprotect(mem, size, PROT_READ);
  return dst;
}

/// Whether a vector of 8-byte elements lies 8-byte aligned in memory: the
/// FlatBuffers verifier checks vectors for 4-byte alignment only, and the
/// runtime reads shapes, integer attributes and scores in place. (FlatBuffers
/// does not align empty vectors; nothing is read from them.)
template <typename T> bool aligned(const flatbuffers::Vector<T> *v) {
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % alignof(T) == 0;
}

void checkWideVectorsAligned(const encm::Model &m, const std::string &path) {
  auto plan = [&](const auto *values, const auto *steps, const char *which) {
    if (values)
      for (uint32_t i = 0; i < values->size(); ++i)
        if (!aligned(values->Get(i)->shape()))
          fail(ENCRT_INVALID_ARTIFACT, path, ": ", which, "value ", i,
               "'s shape is not 8-byte aligned (file damaged or not written by encc)");
    if (steps)
      for (uint32_t i = 0; i < steps->size(); ++i)
        if (!aligned(steps->Get(i)->iattrs()))
          fail(ENCRT_INVALID_ARTIFACT, path, ": ", which, "step ", i,
               "'s integer attributes are not 8-byte aligned (file damaged or not written by encc)");
  };
  plan(m.values(), m.steps(), "");
  if (m.cuda())
    plan(m.cuda()->values(), m.cuda()->steps(), "CUDA plan ");
  const encm::TokenizerPipeline *pipeline = m.tokenizer() ? m.tokenizer()->pipeline() : nullptr;
  const encm::UnigramModel *unigram = pipeline ? pipeline->model_as_UnigramModel() : nullptr;
  if (m.tokenizer() && (!aligned(m.tokenizer()->scores()) || (unigram && !aligned(unigram->scores()))))
    fail(ENCRT_INVALID_ARTIFACT, path, ": the tokenizer's scores are not 8-byte aligned "
         "(file damaged or not written by encc)");
}

/// The end of the last region the table describes (weights stored in the
/// file, code objects), or 0 when an extent overflows (the semantic checks
/// report that).
uint64_t describedEnd(const encm::Model &m) {
  uint64_t end = m.weights_offset(), e = 0;
  if (!m.weights_fill()) {
    if (__builtin_add_overflow(m.weights_offset(), m.weights_size(), &e))
      return 0;
    end = std::max(end, e);
  }
  if (m.code_objects())
    for (const encm::CodeObject *co : *m.code_objects()) {
      if (__builtin_add_overflow(co->offset(), co->size(), &e))
        return 0;
      end = std::max(end, e);
    }
  return end;
}

/// What can be checked of an artifact from its table alone, before its
/// bytes are read whole (checksummed, or copied for a trust check): the
/// identifier, the FlatBuffers verifier over the first `available` bytes,
/// 8-byte vectors aligned, and no more bytes in the file than its table
/// accounts for (a 32 GiB sparse file with a valid header was read whole,
/// filling the page cache, before it was refused).
const encm::Model &checkTable(const uint8_t *data, uint64_t available, uint64_t fileSize,
                              const std::string &path) {
  if (available < 8 || !encm::ModelBufferHasIdentifier(data))
    fail(ENCRT_INVALID_ARTIFACT, path, ": not an .encm artifact (no \"ENCM\" file identifier)");
  // The verifier accepts trailing bytes; it is capped at the largest buffer
  // FlatBuffers addresses (the table is small).
  const size_t fbSize = static_cast<size_t>(std::min<uint64_t>(available, FLATBUFFERS_MAX_BUFFER_SIZE - 1));
  flatbuffers::Verifier verifier(data, fbSize);
  if (!encm::VerifyModelBuffer(verifier))
    fail(ENCRT_INVALID_ARTIFACT, path,
         ": the Model table fails the FlatBuffers verifier (file damaged or "
         "written by a broken encc)");
  const encm::Model &m = *encm::GetModel(data);
  checkWideVectorsAligned(m, path);
  const uint64_t body = fileSize - ENCM_TRAILER_SIZE, end = describedEnd(m);
  if (end != 0 && body > (end + kAlign - 1) / kAlign * kAlign)
    fail(ENCRT_INVALID_ARTIFACT, path, ": the file holds ", body,
         " bytes before its trailer, its table accounts for ", end,
         " (file damaged, or bytes appended)");
  return m;
}

/// The table checks of a file about to be read whole into memory: on its
/// first MiB, or its first 64 MiB when the table is larger, read with
/// pread (a mapping of a file someone shortens meanwhile would fault).
void precheckTable(int fd, uint64_t size, const std::string &path) {
  const uint64_t body = size - ENCM_TRAILER_SIZE;
  for (uint64_t want : {uint64_t(1) << 20, uint64_t(64) << 20}) {
    const uint64_t n = std::min(want, body);
    std::vector<uint8_t> prefix(n);
    for (uint64_t done = 0; done < n;) {
      const ssize_t got = ::pread(fd, prefix.data() + done, n - done, static_cast<off_t>(done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        fail(ENCRT_IO_ERROR, path, ": cannot read its table (",
             got < 0 ? std::strerror(errno) : "the file became shorter", ")");
      done += static_cast<uint64_t>(got);
    }
    try {
      checkTable(prefix.data(), n, size, path);
      return;
    } catch (const Failure &) {
      if (n == body || want != (uint64_t(1) << 20))
        throw;
    }
  }
}

} // namespace

std::unique_ptr<Artifact> Artifact::open(const std::string &path, const TrustPolicy &trust) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected as
  // not a regular file below (regular files ignore the flag).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    fail(ENCRT_IO_ERROR, path, ": cannot open (", std::strerror(errno), ")");
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(ENCRT_IO_ERROR, path, ": cannot stat (", std::strerror(err), ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(ENCRT_IO_ERROR, path, ": not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  // A FlatBuffer root offset + identifier + the trailer at the very least.
  if (size < 8 + ENCM_TRAILER_SIZE) {
    ::close(fd);
    fail(ENCRT_INVALID_ARTIFACT, path, ": file too small (", size,
         " bytes) to be an .encm artifact");
  }
  // With a trust policy the bytes checked must be the bytes used: the file is
  // read once into private memory nothing else can change (a MAP_PRIVATE
  // mapping of the file still shows another writer's later changes). Without
  // one it is mapped in place (shared page cache, weights used where they
  // lie): whoever can write the file is trusted then anyway.
  const uint8_t *bytes = nullptr;
  try {
    if (trust.any())
      precheckTable(fd, size, path); // refused before gigabytes are copied
    bytes = trust.any() ? readPrivateCopy(fd, size, path) : mapFile(fd, size, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  std::unique_ptr<Artifact> artifact(new Artifact(path, bytes, size));
  // The caller's trust requirements first: nothing of an artifact that
  // fails them is interpreted.
  verifyTrust(artifact->data_, size, path, trust);
  artifact->verify();
  artifact->generateWeights();
  return artifact;
}

Artifact::~Artifact() {
  munmap(const_cast<uint8_t *>(data_), size_);
  if (generated_)
    munmap(generated_, generatedSize_);
}

std::vector<uint8_t> Artifact::codeObjectCopy(const encm::CodeObject &co,
                                              const std::string &what) const {
  // offset, size and a 32-byte sha256 were checked by verifyCodeAndTokenizer.
  std::vector<uint8_t> blob(data_ + co.offset(), data_ + co.offset() + co.size());
  const Sha256 digest = sha256(blob.data(), blob.size());
  if (std::memcmp(digest.data(), co.sha256()->data(), digest.size()) != 0)
    fail(ENCRT_INVALID_ARTIFACT, what, ": SHA-256 is ", toHex(digest.data(), digest.size()),
         ", the artifact records ", toHex(co.sha256()->data(), ENCM_SHA256_SIZE),
         " (code object replaced or damaged)");
  return blob;
}

int32_t Artifact::liveEnd(const encm::Value &value) const {
  return rt::liveEnd(value, static_cast<int32_t>(model_->steps()->size()));
}

void Artifact::verify() {
  const std::string &p = path_;
  if (!encm::ModelBufferHasIdentifier(data_))
    fail(ENCRT_INVALID_ARTIFACT, p,
         ": not an .encm artifact (no \"ENCM\" file identifier)");
  const uint8_t *trailer = data_ + size_ - ENCM_TRAILER_SIZE;
  if (std::memcmp(trailer, ENCM_TRAILER_MAGIC, 8) != 0)
    fail(ENCRT_INVALID_ARTIFACT, p, ": no " ENCM_TRAILER_MAGIC
         " trailer (file damaged or truncated)");
  // The table first: it bounds what the checksum then reads.
  const uint64_t body = size_ - ENCM_TRAILER_SIZE;
  model_ = &checkTable(data_, body, size_, p);
  uint64_t stored;
  std::memcpy(&stored, trailer + 8, 8);
  if (encm_checksum64(data_, body) != stored)
    fail(ENCRT_INVALID_ARTIFACT, p,
         ": checksum mismatch (file damaged or truncated)");
  checkSchemaVersion();
  verifySemantics();
  verifyCudaPlan(*model_, path_, size_);
}

void Artifact::checkSchemaVersion() {
  const std::string &p = path_;
  const encm::Model &m = *model_;
  const uint32_t major = m.schema_version(), minor = m.schema_minor();
  if (major < ENCM_OLDEST_SCHEMA_VERSION || major > ENCM_SCHEMA_VERSION)
    fail(ENCRT_INVALID_ARTIFACT, p, ": schema version ", major, ", this runtime reads versions ",
         ENCM_OLDEST_SCHEMA_VERSION, " to ", ENCM_SCHEMA_VERSION,
         major > ENCM_SCHEMA_VERSION ? " (written by a newer encc: update the runtime)"
                                     : " (recompile with a current encc)");
  if (major == 8 && (minor != 0 || m.required_features()))
    fail(ENCRT_INVALID_ARTIFACT, p, ": schema version 8 has no minor version or required features");
  static const char *const known[] = {ENCM_FEATURE_BPE_SPLIT, ENCM_FEATURE_DEFAULT_PROMPT, ENCM_FEATURE_BPE_CHARS,
                                      ENCM_FEATURE_EMBEDDING_DIM, ENCM_FEATURE_SPLADE,
                                      ENCM_FEATURE_TOKEN_HEADS, ENCM_FEATURE_TOKEN_ROLES,
                                      ENCM_FEATURE_TOKENIZER_COMPONENTS};
  auto listed = [&](const char *feature) {
    if (m.required_features())
      for (const flatbuffers::String *f : *m.required_features())
        if (f && f->str() == feature)
          return true;
    return false;
  };
  if (m.required_features())
    for (const flatbuffers::String *f : *m.required_features()) {
      const std::string name = f ? f->str() : std::string();
      if (std::find_if(std::begin(known), std::end(known), [&](const char *k) { return name == k; }) ==
          std::end(known))
        fail(ENCRT_INVALID_ARTIFACT, p, ": requires feature '", name, "' (schema ", major, ".", minor,
             "), which this runtime (schema ", ENCM_SCHEMA_VERSION, ".", ENCM_SCHEMA_MINOR,
             ") does not implement; update the runtime");
    }
  // A field that changes the result must come with its feature, or a runtime
  // that does not know it would ignore it and give other ids.
  if (const encm::Tokenizer *t = m.tokenizer(); t && t->bpe_split() != encm::BpeSplit::Gpt2 &&
                                                 !listed(ENCM_FEATURE_BPE_SPLIT))
    fail(ENCRT_INVALID_ARTIFACT, p, ": the tokenizer's bpe_split needs feature '" ENCM_FEATURE_BPE_SPLIT
                                    "', which the artifact does not require");
  if (const encm::Tokenizer *t = m.tokenizer(); t && t->bpe_alphabet() != encm::BpeAlphabet::Bytes &&
                                                 !listed(ENCM_FEATURE_BPE_CHARS))
    fail(ENCRT_INVALID_ARTIFACT, p, ": the tokenizer's bpe_alphabet needs feature '" ENCM_FEATURE_BPE_CHARS
                                    "', which the artifact does not require");
  if (m.tokenizer() && m.tokenizer()->pipeline() && !listed(ENCM_FEATURE_TOKENIZER_COMPONENTS))
    fail(ENCRT_INVALID_ARTIFACT, p, ": the tokenizer's pipeline needs feature '" ENCM_FEATURE_TOKENIZER_COMPONENTS
                                    "', which the artifact does not require");
  if (m.metadata() && m.metadata()->default_prompt() && !listed(ENCM_FEATURE_DEFAULT_PROMPT))
    fail(ENCRT_INVALID_ARTIFACT, p, ": the default prompt needs feature '" ENCM_FEATURE_DEFAULT_PROMPT
                                    "', which the artifact does not require");
  if (m.metadata() && m.metadata()->pooling() == encm::Pooling::Splade && !listed(ENCM_FEATURE_SPLADE))
    fail(ENCRT_INVALID_ARTIFACT, p, ": splade pooling needs feature '" ENCM_FEATURE_SPLADE
                                    "', which the artifact does not require");
  if (m.token_heads() && !listed(ENCM_FEATURE_TOKEN_HEADS))
    fail(ENCRT_INVALID_ARTIFACT, p, ": token_heads needs feature '" ENCM_FEATURE_TOKEN_HEADS
                                    "', which the artifact does not require");
  bool roles = false;
  if (m.token_heads())
    for (const encm::TokenHead *h : *m.token_heads())
      roles |= h && h->roles();
  if (roles && !listed(ENCM_FEATURE_TOKEN_ROLES))
    fail(ENCRT_INVALID_ARTIFACT, p, ": a token head's roles need feature '" ENCM_FEATURE_TOKEN_ROLES
                                    "', which the artifact does not require");
  if (m.metadata() && m.metadata()->embedding_dim() != 0 && !listed(ENCM_FEATURE_EMBEDDING_DIM))
    fail(ENCRT_INVALID_ARTIFACT, p, ": embedding_dim needs feature '" ENCM_FEATURE_EMBEDDING_DIM
                                    "', which the artifact does not require");
}

void Artifact::verifyPrompts() {
  const std::string &p = path_;
  const encm::Metadata &md = *model_->metadata();
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const auto *prompts = md.prompts();
  const size_t n = prompts ? prompts->size() : 0;
  if (n > ENCM_MAX_PROMPTS)
    fail(bad, p, ": ", n, " prompts, over the limit of ", ENCM_MAX_PROMPTS);
  std::vector<std::string_view> names;
  for (size_t i = 0; i < n; ++i) {
    const encm::Prompt *prompt = prompts->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (!prompt || !prompt->name() || !prompt->text())
      fail(bad, p, ": prompt ", i, " has no name or text");
    const std::string_view name = prompt->name()->string_view();
    if (name.empty() || name.size() > ENCM_MAX_PROMPT_NAME_BYTES || prompt->text()->size() > ENCM_MAX_PROMPT_BYTES)
      fail(bad, p, ": prompt ", i, " has a name of ", name.size(), " bytes (1 to ", ENCM_MAX_PROMPT_NAME_BYTES,
           ") or a text of ", prompt->text()->size(), " bytes (at most ", ENCM_MAX_PROMPT_BYTES, ")");
    if (std::find(names.begin(), names.end(), name) != names.end())
      fail(bad, p, ": prompt ", i, "'s name is also an earlier prompt's");
    names.push_back(name);
  }
  if (const flatbuffers::String *d = md.default_prompt();
      d && std::find(names.begin(), names.end(), d->string_view()) == names.end())
    fail(bad, p, ": the default prompt is not one of the prompts");
}

namespace {

/// Throws Failure unless token head `index` is a known kind with its bounds
/// and `v`, its output, an F32 Output of [-3, W] or [-1, -2, W] (W = 1 for
/// lexical weights, 1 .. ENCM_MAX_EMBEDDING_DIM for vectors).
/// Ids `ids` (at most ENCM_MAX_SKIP_IDS, each in [0, vocab)) of token head
/// `index`'s `what`.
void verifySkipIds(const std::string &p, const flatbuffers::Vector<int32_t> *ids, uint32_t index, const std::string &what,
                   int64_t vocab) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  if (ids && ids->size() > ENCM_MAX_SKIP_IDS)
    fail(bad, p, ": token head ", index, what, " has ", ids->size(), " skip_ids, more than ", ENCM_MAX_SKIP_IDS);
  if (ids)
    for (int32_t id : *ids)
      if (id < 0 || id >= vocab)
        fail(bad, p, ": token head ", index, what, " skips id ", id, ", outside the vocabulary [0, ", vocab, ")");
}

/// The roles of multi-vector head `index` (TokenRole): names unique, ids in
/// the vocabulary, lengths within max_seq.
void verifyTokenRoles(const std::string &p, const encm::TokenHead &head, uint32_t index, int64_t vocab,
                      int64_t maxSeq) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const auto *roles = head.roles();
  if (!roles)
    return;
  if (roles->size() < 1 || roles->size() > ENCM_MAX_TOKEN_ROLES)
    fail(bad, p, ": token head ", index, " has ", roles->size(), " roles, expected 1 to ", ENCM_MAX_TOKEN_ROLES);
  for (uint32_t r = 0; r < roles->size(); ++r) {
    const encm::TokenRole &role = *roles->Get(r);
    const std::string what = " role " + std::to_string(r);
    if (!role.name() || role.name()->size() < 1 || role.name()->size() > ENCM_MAX_PROMPT_NAME_BYTES)
      fail(bad, p, ": token head ", index, what, " needs a name of 1 to ", ENCM_MAX_PROMPT_NAME_BYTES, " bytes");
    for (uint32_t q = 0; q < r; ++q)
      if (roles->Get(q)->name()->string_view() == role.name()->string_view())
        fail(bad, p, ": token head ", index, " roles ", q, " and ", r, " are both named '", role.name()->str(), "'");
    for (auto [field, id] : {std::pair{"marker_id", role.marker_id()}, std::pair{"expansion_id", role.expansion_id()}})
      if (id < -1 || id >= vocab)
        fail(bad, p, ": token head ", index, what, " has ", field, " ", id, ", expected -1 or an id in [0, ", vocab,
             ")");
    const int32_t least = role.marker_id() >= 0 ? 3 : 2; // [CLS] marker? [SEP]
    if (role.max_length() < least || role.max_length() > maxSeq)
      fail(bad, p, ": token head ", index, what, " has max_length ", role.max_length(), ", expected ", least, " to ",
           maxSeq, " (max_seq)");
    verifySkipIds(p, role.skip_ids(), index, what, vocab);
  }
}

void verifyTokenHead(const std::string &p, const encm::TokenHead &head, uint32_t index, const encm::Value &v,
                     int64_t vocab, int64_t maxSeq) {
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  const auto *shape = v.shape();
  const int64_t width = shape && shape->size() >= 2 ? shape->Get(shape->size() - 1) : -1;
  const bool layoutOk = shape && ((shape->size() == 2 && shape->Get(0) == -3) ||
                                  (shape->size() == 3 && shape->Get(0) == -1 && shape->Get(1) == -2));
  if (v.kind() != encm::ValueKind::Output || v.dtype() != encm::DType::F32 || !layoutOk || width < 1 ||
      width > ENCM_MAX_EMBEDDING_DIM)
    fail(bad, p, ": token head ", index, " (value ", v.id(), ") must be an F32 Output of shape [-3,W] or [-1,-2,W] "
         "with 1 <= W <= ", ENCM_MAX_EMBEDDING_DIM, ", found ", encm::EnumNameDType(v.dtype()), " ",
         kindName(v.kind()), " ", shapeString(shape));
  switch (head.kind()) {
  case encm::TokenHeadKind::LexicalWeights: {
    verifySkipIds(p, head.skip_ids(), index, "", vocab);
    if (head.roles())
      fail(bad, p, ": token head ", index, " (lexical weights) has roles, which only a multi-vector head has");
    if (head.skip_leading() != 0)
      fail(bad, p, ": token head ", index, " (lexical weights) has skip_leading ", head.skip_leading(),
           ", expected 0");
    if (width != 1)
      fail(bad, p, ": token head ", index, " (lexical weights) has width ", width, ", expected 1");
    return;
  }
  case encm::TokenHeadKind::MultiVector:
    if (head.skip_leading() < 0 || head.skip_leading() > ENCM_MAX_SKIP_LEADING)
      fail(bad, p, ": token head ", index, " (multi-vector) has skip_leading ", head.skip_leading(),
           ", expected 0 to ", ENCM_MAX_SKIP_LEADING);
    if (head.skip_ids() && head.skip_ids()->size() != 0)
      fail(bad, p, ": token head ", index, " (multi-vector) has skip_ids, which only lexical weights use");
    verifyTokenRoles(p, head, index, vocab, maxSeq);
    return;
  }
  fail(bad, p, ": token head ", index, " has kind ", int(head.kind()), ", which this runtime does not know");
}

} // namespace

void Artifact::verifySemantics() {
  const std::string &p = path_;
  const encm::Model &m = *model_;
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  uint64_t body = size_ - ENCM_TRAILER_SIZE;

  const encm::Metadata *md = m.metadata();
  if (!md)
    fail(bad, p, ": missing metadata");
  if (md->hidden_size() <= 0 || md->max_seq() <= 0 || md->vocab_size() <= 0 ||
      md->num_layers() < 0 || md->num_heads() < 0 || md->type_vocab_size() < 0 ||
      md->num_labels() < 0)
    fail(bad, p, ": metadata has a non-positive size (hidden_size ",
         md->hidden_size(), ", max_seq ", md->max_seq(), ", vocab_size ",
         md->vocab_size(), ", num_layers ", md->num_layers(), ", num_heads ",
         md->num_heads(), ", type_vocab_size ", md->type_vocab_size(), ", num_labels ",
         md->num_labels(), ")");
  verifyPrompts();
  if (md->embedding_dim() < 0 || md->embedding_dim() > ENCM_MAX_EMBEDDING_DIM ||
      (md->embedding_dim() != 0 && (md->num_labels() > 0 || md->pooling() == encm::Pooling::None)))
    fail(bad, p, ": embedding_dim ", md->embedding_dim(), " (expected 0, or 1 to ", ENCM_MAX_EMBEDDING_DIM,
         " on a model with pooling)");
  if (md->num_labels() > 0) {
    const std::string act = md->score_activation() ? md->score_activation()->str() : "";
    if (md->num_labels() > 4096 || (act != "sigmoid" && act != "identity"))
      fail(bad, p, ": classification head with ", md->num_labels(), " labels and score activation \"", act,
           "\" (expected 1..4096 labels, \"sigmoid\" or \"identity\")");
  }
  if (const auto *labels = md->labels()) { // names a server puts in JSON: bounded, valid UTF-8
    if (labels->size() != static_cast<flatbuffers::uoffset_t>(std::max(md->num_labels(), 0)))
      fail(bad, p, ": ", labels->size(), " label names for ", md->num_labels(), " labels");
    std::string buffer;
    for (flatbuffers::uoffset_t i = 0; i < labels->size(); ++i) {
      const flatbuffers::String *name = labels->Get(i);
      if (!name || name->size() == 0 || name->size() > ENCM_MAX_LABEL_BYTES ||
          unicode::validUtf8(name->string_view(), buffer, "").size() != name->size())
        fail(bad, p, ": label ", i, "'s name is not UTF-8 of 1 to ", ENCM_MAX_LABEL_BYTES, " bytes");
    }
  }

  if (!poolingName(md->pooling()))
    fail(bad, p, ": metadata has unknown pooling ", static_cast<int>(md->pooling()));
  if (!similarityName(md->similarity()))
    fail(bad, p, ": metadata has unknown similarity ", static_cast<int>(md->similarity()));
  if (md->num_labels() > 0 && md->pooling() != encm::Pooling::None)
    fail(bad, p, ": a classification model has pooling ", poolingName(md->pooling()), " (expected none)");

  // Weights region: stored in the file, or (weights_fill) generated at open,
  // when the file holds no weight bytes and code objects follow the table.
  if (m.weights_offset() % kAlign != 0)
    fail(bad, p, ": weights_offset ", m.weights_offset(),
         " is not 64-byte aligned");
  if (m.weights_fill()) {
    if (m.weights_offset() > body)
      fail(bad, p, ": weights_offset ", m.weights_offset(),
           " lies past the end of the data (", body, " bytes)");
    if (m.weights_size() > kMaxGeneratedWeights)
      fail(bad, p, ": weights_size ", m.weights_size(), " of generated "
           "weights exceeds the limit of ", kMaxGeneratedWeights, " bytes");
  } else if (!fitsIn(m.weights_offset(), m.weights_size(), body)) {
    fail(bad, p, ": weights region [", m.weights_offset(), ", +",
         m.weights_size(), ") extends past the end of the data (", body,
         " bytes)");
  }

  // Token heads run on the CPU plan only (the CUDA plan has no place for them).
  if (m.token_heads() && m.cuda())
    fail(bad, p, ": token heads with a CUDA plan (they run on the CPU plan only)");
  // A CUDA-only artifact has an empty CPU plan.
  const bool noValues = !m.values() || m.values()->size() == 0;
  const bool noSteps = !m.steps() || m.steps()->size() == 0;
  if (noValues && noSteps && m.cuda()) {
    if ((m.inputs() && m.inputs()->size() != 0) ||
        (m.outputs() && m.outputs()->size() != 0))
      fail(bad, p, ": the CPU plan has no values but lists inputs or outputs");
    hasCpuPlan_ = false;
  } else {
    if (noValues)
      fail(bad, p, ": no values");
    if (noSteps)
      fail(bad, p, ": no steps");
  }
  verifyCodeAndTokenizer();
  if (!hasCpuPlan_)
    return;
  if (m.steps()->size() > static_cast<uint32_t>(INT32_MAX))
    fail(bad, p, ": too many steps");
  const auto &values = *m.values();
  const auto &steps = *m.steps();
  const uint32_t numValues = values.size();
  const int32_t numSteps = static_cast<int32_t>(steps.size());

  const PlanWording wording{p + ":", "artifact", /*tokensFirstDimOnly=*/true,
                            /*namesResultKind=*/true};
  verifyPlanValues(values, numSteps, m.weights_size(), wording);

  // Steps.
  for (int32_t s = 0; s < numSteps; ++s) {
    const encm::Step &step = *steps.Get(s);
    if (!step.kernel() || step.kernel()->size() == 0)
      fail(bad, p, ": step ", s, " has no kernel name");
    const auto *ops = step.operands();
    uint32_t numOps = ops ? ops->size() : 0;
    if (step.num_results() > numOps)
      fail(bad, p, ": step ", s, " has ", step.num_results(),
           " results but only ", numOps, " operands");
    if ((step.iattrs() && step.iattrs()->size() > INT32_MAX) ||
        (step.fattrs() && step.fattrs()->size() > INT32_MAX))
      fail(bad, p, ": step ", s, " has too many attributes");
    verifyStepOperands(step, s, values, numSteps, wording);
  }

  // Inputs: [ids: I32 [-1,-2], lengths: I32 [-1], type_ids: I32 [-1,-2]?].
  verifyPlanInputs(m.inputs(), values, hasTypeIds(), wording);

  // Outputs: [hidden: F32 [-1,-2,H], pooled: F32 [-1,H] or scores: F32
  // [-1,num_labels]?, one per token head: F32 [-3,W] or [-1,-2,W]...].
  const uint32_t numHeads = m.token_heads() ? m.token_heads()->size() : 0;
  if (numHeads > ENCM_MAX_TOKEN_HEADS)
    fail(bad, p, ": ", numHeads, " token heads, more than ", ENCM_MAX_TOKEN_HEADS);
  // Token heads go with a pooled output, except a multi-vector head alone
  // (a ColBERT checkpoint's only output).
  const bool multiVectorOnly = numHeads == 1 && m.token_heads()->Get(0)->kind() == encm::TokenHeadKind::MultiVector;
  if (numHeads > 0 && (md->num_labels() > 0 || (md->pooling() == encm::Pooling::None && !multiVectorOnly)))
    fail(bad, p, ": token heads need a pooled output (pooling ", poolingName(md->pooling()),
         "), but for one multi-vector head alone");
  const uint32_t numBase = md->num_labels() > 0 || md->pooling() != encm::Pooling::None ? 2u : 1u;
  const uint32_t numOutputs = m.outputs() ? m.outputs()->size() : 0;
  if (md->num_labels() > 0 && numOutputs != 2)
    fail(bad, p, ": a classification model (num_labels ", md->num_labels(),
         ") needs 2 outputs (hidden, scores), found ", numOutputs);
  if (numOutputs != numBase + numHeads)
    fail(bad, p, ": pooling ", poolingName(md->pooling()),
         numHeads ? " with " + std::to_string(numHeads) + " token heads" : std::string(), " needs ",
         numBase + numHeads, numBase + numHeads == 1 ? " output (hidden" : " outputs (hidden",
         numBase == 2 ? ", pooled" : "", numHeads ? ", the heads'" : "", "), found ", numOutputs);
  const int64_t hidden = md->hidden_size();
  for (uint32_t k = 0; k < m.outputs()->size(); ++k) {
    uint32_t id = m.outputs()->Get(k);
    const encm::TokenHead *head = k >= numBase ? m.token_heads()->Get(k - numBase) : nullptr;
    const char *what = k == 0 ? "hidden" : head ? "token head" : md->num_labels() > 0 ? "scores" : "pooled";
    if (id >= numValues)
      fail(bad, p, ": output ", k, " (", what, ") refers to value ", id,
           " (artifact has ", numValues, " values)");
    const encm::Value &v = *values.Get(id);
    if (head) {
      verifyTokenHead(p, *head, k - numBase, v, md->vocab_size(), md->max_seq());
      for (uint32_t j = numBase; j < k; ++j)
        if (m.token_heads()->Get(j - numBase)->kind() == head->kind())
          fail(bad, p, ": token heads ", j - numBase, " and ", k - numBase, " are of the same kind");
      continue;
    }
    const int64_t width = k == 0                 ? hidden
                          : md->num_labels() > 0 ? md->num_labels()
                          : md->embedding_dim()  ? md->embedding_dim()
                                                 : hidden;
    // hidden: padded [B, S, H], or packed [T, H] (DIM_TOKENS).
    bool shapeOk = k == 0 ? shapeIs(v, {-1, -2, hidden}) || shapeIs(v, {-3, hidden})
                          : shapeIs(v, {-1, width});
    if (v.kind() != encm::ValueKind::Output || v.dtype() != encm::DType::F32 ||
        !shapeOk)
      fail(bad, p, ": output ", k, " (", what, ", value ", id,
           ") must be an F32 Output of shape ",
           k == 0 ? "[-1,-2," : "[-1,", width,
           k == 0 ? "] (or [-3," + std::to_string(hidden) + "], packed)" : "]",
           ", found ",
           encm::EnumNameDType(v.dtype()), " ", kindName(v.kind()), " ",
           shapeString(v.shape()));
  }
  verifyWrittenBeforeRead(steps, values, *m.outputs(), wording);
}

void Artifact::verifyCodeAndTokenizer() {
  const std::string &p = path_;
  const encm::Model &m = *model_;
  constexpr auto bad = ENCRT_INVALID_ARTIFACT;
  uint64_t body = size_ - ENCM_TRAILER_SIZE;
  const encm::Metadata *md = m.metadata();

  // Code objects.
  if (!m.code_objects() || m.code_objects()->size() == 0)
    fail(bad, p, ": no code objects");
  for (uint32_t c = 0; c < m.code_objects()->size(); ++c) {
    const encm::CodeObject &co = *m.code_objects()->Get(c);
    if (!co.target())
      fail(bad, p, ": code object ", c, " has no target");
    if (co.offset() % kAlign != 0)
      fail(bad, p, ": code object ", c, " (", co.target()->str(),
           ") offset ", co.offset(), " is not 64-byte aligned");
    if (co.size() == 0 || !fitsIn(co.offset(), co.size(), body))
      fail(bad, p, ": code object ", c, " (", co.target()->str(), ") [",
           co.offset(), ", +", co.size(), ") lies outside the file (", body,
           " data bytes)");
    if (!co.sha256() || co.sha256()->size() != ENCM_SHA256_SIZE)
      fail(bad, p, ": code object ", c, " (", co.target()->str(),
           ") has no SHA-256 (", ENCM_SHA256_SIZE, " bytes)");
  }

  // Tokenizer (optional).
  if (const encm::Tokenizer *tok = m.tokenizer()) {
    // 9.9: components, checked and composed where the tokenizer is built
    // (TokenizerLoad.cpp), before any code is loaded; the flat table's
    // vocabulary must then be absent, so that no reader can take it for the
    // tokenizer.
    if (tok->pipeline()) {
      if (tok->vocab())
        fail(bad, p, ": the tokenizer has both components and a flat vocabulary");
      return;
    }
    // An empty vocab (no WordPiece vocabulary): the model runs on ids only.
    if (!tok->vocab() || tok->vocab()->size() == 0)
      return;
    int64_t n = tok->vocab()->size();
    if (n > md->vocab_size())
      fail(bad, p, ": tokenizer vocab has ", n,
           " entries, the model's vocab_size is ", md->vocab_size());
    // BPE and Unigram: their ids and tables are checked where they are built
    // (TokenizerLoad.cpp), before any code is loaded.
    if (tok->kind() != encm::TokenizerKind::WordPiece)
      return;
    const std::pair<const char *, int32_t> ids[] = {
        {"unk_id", tok->unk_id()}, {"cls_id", tok->cls_id()},
        {"sep_id", tok->sep_id()}, {"pad_id", tok->pad_id()}};
    for (const auto &[name, id] : ids)
      if (id < 0 || id >= n)
        fail(bad, p, ": tokenizer ", name, " ", id,
             " is out of range (vocab has ", n, " entries)");
    if (tok->max_input_chars_per_word() <= 0)
      fail(bad, p, ": tokenizer max_input_chars_per_word ",
           tok->max_input_chars_per_word(), " must be positive");
  }
}

void Artifact::generateWeights() {
  const encm::Model &m = *model_;
  if (!m.weights_fill()) {
    weights_ = data_ + m.weights_offset();
    return;
  }
  generatedSize_ = std::max<uint64_t>(m.weights_size(), 1);
  // MAP_POPULATE: the kernel faults the pages in bulk (no MADV_HUGEPAGE:
  // synchronous compaction made loads take seconds on a fragmented host).
  void *mem = mmap(nullptr, generatedSize_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    generatedSize_ = 0;
    fail(ENCRT_OUT_OF_MEMORY, path_, ": cannot allocate ", m.weights_size(),
         " bytes for the generated weights (", std::strerror(errno), ")");
  }
  generated_ = static_cast<uint8_t *>(mem);
  weights_ = generated_;

  // Pieces of at most 4 MB of every Weight value of both plans (verified to
  // lie in the region), filled by a few threads.
  struct Piece {
    uint64_t offset, begin, end;
    encm::DType dtype;
  };
  std::vector<Piece> pieces;
  constexpr uint64_t kPiece = uint64_t(4) << 20;
  auto addValues = [&](const flatbuffers::Vector<flatbuffers::Offset<encm::Value>> *values) {
    if (!values)
      return;
    for (const encm::Value *v : *values)
      if (v->kind() == encm::ValueKind::Weight)
        for (uint64_t b = 0; b < v->weight_bytes(); b += kPiece)
          pieces.push_back({v->weight_offset(), b,
                            std::min(v->weight_bytes(), b + kPiece), v->dtype()});
  };
  addValues(m.values());
  if (m.cuda())
    addValues(m.cuda()->values());
  const uint64_t seed = m.weights_fill()->seed();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < pieces.size();) {
      const Piece &pc = pieces[i];
      fillRandomWeights(generated_ + pc.offset, pc.begin, pc.end, pc.dtype, seed,
                        pc.offset);
    }
  };
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  size_t numThreads = std::min<size_t>({hw, 8, (m.weights_size() >> 24) + 1});
  std::vector<std::thread> threads;
  for (size_t t = 1; t < numThreads; ++t)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
}

} // namespace encrt::rt
