//===- ArtifactBuilder.cpp - Writes .encm files for the runtime tests -----===//
#include "ArtifactBuilder.h"

#include "encrt/checksum.h"
#include "encrt/schema_version.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sodium.h>
#include <stdexcept>

namespace encrt::test {

namespace {

constexpr uint64_t kAlign = 64;

uint64_t alignUp(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  uint64_t weightsOffset = 0;
  std::vector<uint64_t> codeOffsets;
};

std::vector<flatbuffers::Offset<encm::Value>>
buildValues(flatbuffers::FlatBufferBuilder &b, const std::vector<SpecValue> &in) {
  std::vector<flatbuffers::Offset<encm::Value>> values;
  for (size_t i = 0; i < in.size(); ++i) {
    const SpecValue &v = in[i];
    values.push_back(encm::CreateValueDirect(
        b, v.id.value_or(static_cast<uint32_t>(i)), v.name.c_str(), v.kind,
        v.dtype, &v.shape, v.weightOffset, v.weightBytes, v.firstStep,
        v.lastStep));
  }
  return values;
}

std::vector<flatbuffers::Offset<encm::Step>>
buildSteps(flatbuffers::FlatBufferBuilder &b, const std::vector<SpecStep> &in) {
  std::vector<flatbuffers::Offset<encm::Step>> steps;
  for (const SpecStep &st : in)
    steps.push_back(encm::CreateStepDirect(b, st.kernel.c_str(), st.op.c_str(),
                                           &st.operands, st.numResults,
                                           &st.iattrs, &st.fattrs));
  return steps;
}

/// A union member's table for raw type `type` (an unknown type: an empty
/// table, as a newer writer's member would look to this runtime).
flatbuffers::Offset<void> normalizerTable(flatbuffers::FlatBufferBuilder &b, uint8_t type, const SpecTokenizer &t) {
  switch (static_cast<encm::Normalizer>(type)) {
  case encm::Normalizer::BertNormalizer: return encm::CreateBertNormalizer(b).Union();
  case encm::Normalizer::PrecompiledNormalizer: {
    std::vector<uint8_t> map(t.charsmap.begin(), t.charsmap.end());
    return encm::CreatePrecompiledNormalizerDirect(b, &map).Union();
  }
  case encm::Normalizer::ReplaceNormalizer: return encm::CreateReplaceNormalizerDirect(b, " ", 0, "\u2581").Union();
  case encm::Normalizer::StripNormalizer: return encm::CreateStripNormalizer(b, true, true).Union();
  case encm::Normalizer::PrependNormalizer: return encm::CreatePrependNormalizerDirect(b, "\u2581").Union();
  default: return encm::CreateNfcNormalizer(b).Union();
  }
}

flatbuffers::Offset<void> preTokenizerTable(flatbuffers::FlatBufferBuilder &b, uint8_t type) {
  switch (static_cast<encm::PreTokenizer>(type)) {
  case encm::PreTokenizer::ByteLevelPreTokenizer: return encm::CreateByteLevelPreTokenizer(b).Union();
  case encm::PreTokenizer::SplitPreTokenizer: return encm::CreateSplitPreTokenizer(b).Union();
  case encm::PreTokenizer::MetaspacePreTokenizer:
    return encm::CreateMetaspacePreTokenizerDirect(b, "\u2581").Union();
  case encm::PreTokenizer::WhitespaceSplitPreTokenizer: return encm::CreateWhitespaceSplitPreTokenizer(b).Union();
  default: return encm::CreateBertPreTokenizer(b).Union();
  }
}

/// SpecTokenizer as schema 9.9's components: the same tokenizer the flat
/// table describes (WordPiece: [CLS] text [SEP] and BERT's pair template).
flatbuffers::Offset<encm::Tokenizer> buildPipelineTokenizer(flatbuffers::FlatBufferBuilder &b,
                                                            const SpecTokenizer &t) {
  const SpecTokenizer::Pipeline &p = *t.pipeline;
  using N = encm::Normalizer;
  using P = encm::PreTokenizer;
  const std::vector<uint8_t> normalizerTypes = p.normalizers.value_or(
      t.unigram ? (t.charsmap.empty() ? std::vector<uint8_t>{} : std::vector<uint8_t>{uint8_t(N::PrecompiledNormalizer)})
      : t.bpe   ? std::vector<uint8_t>{}
                : std::vector<uint8_t>{uint8_t(N::BertNormalizer)});
  const std::vector<uint8_t> preTypes = p.preTokenizers.value_or(std::vector<uint8_t>{
      uint8_t(t.unigram ? P::MetaspacePreTokenizer : t.bpe ? P::ByteLevelPreTokenizer : P::BertPreTokenizer)});
  std::vector<flatbuffers::Offset<void>> normalizers, pre;
  std::vector<N> nTypes;
  std::vector<P> pTypes;
  for (uint8_t type : normalizerTypes)
    normalizers.push_back(normalizerTable(b, type, t)), nTypes.push_back(static_cast<N>(type));
  for (uint8_t type : preTypes)
    pre.push_back(preTokenizerTable(b, type)), pTypes.push_back(static_cast<P>(type));
  std::vector<flatbuffers::Offset<flatbuffers::String>> vocab;
  for (const std::string &v : t.vocab)
    vocab.push_back(b.CreateString(v));
  const auto vocabOffset = b.CreateVector(vocab);
  std::vector<encm::MergePair> merges;
  for (auto [l, r] : t.merges)
    merges.emplace_back(l, r);
  const encm::TokenizerModel kind = t.unigram ? encm::TokenizerModel::UnigramModel
                                    : t.bpe   ? encm::TokenizerModel::BpeModel
                                              : encm::TokenizerModel::WordPieceModel;
  flatbuffers::Offset<void> model;
  switch (kind) {
  case encm::TokenizerModel::UnigramModel:
    model = encm::CreateUnigramModel(b, vocabOffset, b.CreateVector(t.scores), t.unkId).Union();
    break;
  case encm::TokenizerModel::BpeModel:
    model = encm::CreateBpeModel(b, vocabOffset, b.CreateVectorOfStructs(merges), t.unkId).Union();
    break;
  default: model = encm::CreateWordPieceModel(b, vocabOffset, t.unkId).Union(); break;
  }
  const bool wordPiece = !t.unigram && !t.bpe;
  const std::vector<int32_t> single = wordPiece ? std::vector<int32_t>{t.clsId, -1, t.sepId} : t.templateIds;
  const std::vector<int32_t> pair = wordPiece ? std::vector<int32_t>{t.clsId, -1, t.sepId, -2, t.sepId}
                                              : t.pairTemplateIds;
  const std::vector<int32_t> pairTypes = wordPiece ? std::vector<int32_t>{0, 0, 0, 1, 1} : t.pairTypeIds;
  auto post = encm::CreateTemplatePostProcessorDirect(b, &single, &pair, &pairTypes, p.offsetTrim);
  std::vector<flatbuffers::Offset<encm::AddedToken>> added;
  for (const auto &[content, id] : t.added)
    added.push_back(encm::CreateAddedTokenDirect(b, content.c_str(), id));
  if (wordPiece && t.added.empty())
    for (int32_t id : {t.padId, t.unkId, t.clsId, t.sepId})
      added.push_back(encm::CreateAddedTokenDirect(b, t.vocab.at(size_t(id)).c_str(), id));
  auto pipeline = encm::CreateTokenizerPipelineDirect(
      b, &nTypes, &normalizers, &pTypes, &pre,
      p.model ? static_cast<encm::TokenizerModel>(*p.model) : kind, model,
      static_cast<encm::PostProcessor>(p.postProcessor.value_or(uint8_t(encm::PostProcessor::TemplatePostProcessor))),
      post.Union(), &added);
  std::vector<flatbuffers::Offset<encm::DecoderStep>> decoders;
  const auto decoderOffset = b.CreateVector(decoders);
  encm::TokenizerBuilder tb(b);
  if (p.flatVocabToo)
    tb.add_vocab(vocabOffset);
  tb.add_decoders(decoderOffset);
  tb.add_pipeline(pipeline);
  return tb.Finish();
}

std::vector<uint8_t> buildTable(const ArtifactSpec &s, const Layout &layout) {
  flatbuffers::FlatBufferBuilder b;
  b.ForceDefaults(true); // fixed size whatever the offsets are
  auto values = buildValues(b, s.values);
  auto steps = buildSteps(b, s.steps);
  flatbuffers::Offset<encm::WeightsFill> fill = 0;
  if (s.weightsFillSeed)
    fill = encm::CreateWeightsFill(b, *s.weightsFillSeed);
  flatbuffers::Offset<encm::CudaPlan> cuda = 0;
  if (s.cuda) {
    auto cv = buildValues(b, s.cuda->values);
    auto cs = buildSteps(b, s.cuda->steps);
    cuda = encm::CreateCudaPlanDirect(b, encm::DType::F16, &cv, &cs,
                                      &s.cuda->inputs, &s.cuda->outputs,
                                      s.cuda->codeObject);
  }
  std::vector<flatbuffers::Offset<encm::CodeObject>> codes;
  for (size_t i = 0; i < s.codes.size(); ++i) {
    const SpecCode &c = s.codes[i];
    std::vector<flatbuffers::Offset<flatbuffers::String>> features;
    for (const auto &f : c.features)
      features.push_back(b.CreateString(f));
    std::vector<uint8_t> digest(crypto_hash_sha256_BYTES);
    crypto_hash_sha256(digest.data(), c.bytes.data(), c.bytes.size());
    const std::vector<uint8_t> &sha = c.sha256 ? *c.sha256 : digest;
    codes.push_back(encm::CreateCodeObjectDirect(
        b, c.target.c_str(), &features, c.offset.value_or(layout.codeOffsets[i]),
        c.size.value_or(c.bytes.size()), &sha));
  }
  flatbuffers::Offset<encm::Tokenizer> tokenizer = 0;
  if (s.tokenizer && s.tokenizer->pipeline) {
    tokenizer = buildPipelineTokenizer(b, *s.tokenizer);
  } else if (s.tokenizer) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> vocab;
    for (const auto &t : s.tokenizer->vocab)
      vocab.push_back(b.CreateString(t));
    const SpecTokenizer &t = *s.tokenizer;
    std::vector<encm::MergePair> merges;
    for (auto [l, r] : t.merges)
      merges.emplace_back(l, r);
    std::vector<flatbuffers::Offset<encm::AddedToken>> added;
    for (const auto &[content, id] : t.added)
      added.push_back(encm::CreateAddedTokenDirect(b, content.c_str(), id));
    std::vector<flatbuffers::Offset<encm::NormalizerStep>> normalizers;
    if (!t.charsmap.empty()) {
      std::vector<uint8_t> map(t.charsmap.begin(), t.charsmap.end());
      normalizers.push_back(encm::CreateNormalizerStepDirect(b, encm::NormalizerKind::Precompiled, &map));
    }
    const bool table = t.bpe || t.unigram;
    std::vector<flatbuffers::Offset<encm::DecoderStep>> decoders;
    if (t.bpe)
      decoders.push_back(encm::CreateDecoderStepDirect(b, encm::DecoderKind::ByteLevel));
    else if (t.unigram)
      decoders.push_back(encm::CreateDecoderStepDirect(b, encm::DecoderKind::Metaspace, "\u2581", nullptr, false, true));
    else
      decoders.push_back(encm::CreateDecoderStepDirect(b, encm::DecoderKind::WordPiece, "##", nullptr, true));
    tokenizer = encm::CreateTokenizerDirect(
        b, &vocab, true, true, true, t.unkId, t.clsId, t.sepId, t.padId, 100,
        t.bpe       ? encm::TokenizerKind::ByteLevelBPE
        : t.unigram ? encm::TokenizerKind::Unigram
                    : encm::TokenizerKind::WordPiece,
        t.bpe ? &merges : nullptr, table ? &added : nullptr, false, false, false,
        table ? &t.templateIds : nullptr, t.unigram ? &t.scores : nullptr, false,
        t.unigram ? &normalizers : nullptr, false, nullptr, encm::PrependScheme::Always, true,
        table ? &t.pairTemplateIds : nullptr, table ? &t.pairTypeIds : nullptr, t.bpeSplit, t.bpeAlphabet,
        t.offsetTrim, t.recordDecoder ? &decoders : nullptr);
  }
  std::vector<std::string> passesStr = {"canonicalize"};
  std::vector<flatbuffers::Offset<flatbuffers::String>> passes;
  for (const auto &p : passesStr)
    passes.push_back(b.CreateString(p));
  std::vector<flatbuffers::Offset<flatbuffers::String>> labels;
  for (const std::string &l : s.labels.value_or(std::vector<std::string>()))
    labels.push_back(b.CreateString(l));
  std::vector<flatbuffers::Offset<encm::Prompt>> prompts;
  for (const auto &[name, text] : s.prompts)
    prompts.push_back(encm::CreatePromptDirect(b, name.c_str(), text.c_str()));
  auto metadata = encm::CreateMetadataDirect(
      b, s.architecture.c_str(), s.hiddenSize, s.numLayers, s.numHeads,
      4 * s.hiddenSize, s.vocabSize, s.maxSeq, "gelu", 1e-12f,
      s.pooling, s.normalize, &passes, "test", "ArtifactBuilder", s.typeVocabSize,
      s.numLabels, s.scoreActivation.empty() ? nullptr : s.scoreActivation.c_str(),
      s.prompts.empty() ? nullptr : &prompts, s.defaultPrompt ? s.defaultPrompt->c_str() : nullptr, s.similarity,
      s.labels ? &labels : nullptr, s.embeddingDim);
  std::vector<flatbuffers::Offset<flatbuffers::String>> features;
  for (const std::string &f : s.requiredFeatures)
    features.push_back(b.CreateString(f));
  if (s.tokenizer && s.tokenizer->pipeline && !s.tokenizer->pipeline->omitFeature)
    features.push_back(b.CreateString(ENCM_FEATURE_TOKENIZER_COMPONENTS));
  std::vector<flatbuffers::Offset<encm::TokenHead>> heads;
  for (const SpecTokenHead &h : s.tokenHeads) {
    std::vector<flatbuffers::Offset<encm::TokenRole>> roles;
    for (const SpecTokenRole &r : h.roles)
      roles.push_back(encm::CreateTokenRoleDirect(b, r.name.c_str(), r.markerId, r.maxLength, r.expansionId,
                                                  r.expansionAttended, r.skipIds.empty() ? nullptr : &r.skipIds));
    heads.push_back(encm::CreateTokenHeadDirect(b, h.kind, h.skipLeading, h.skipIds.empty() ? nullptr : &h.skipIds,
                                                h.roles.empty() ? nullptr : &roles));
  }
  auto model = encm::CreateModelDirect(
      b, s.schemaVersion, metadata, &values, &steps, &s.inputs, &s.outputs,
      s.weightsOffset.value_or(layout.weightsOffset),
      s.weightsSize.value_or(s.weights.size()), &codes, tokenizer, fill, cuda, s.schemaMinor,
      features.empty() ? nullptr : &features, s.tokenHeads.empty() ? nullptr : &heads);
  encm::FinishModelBuffer(b, model);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

} // namespace

std::vector<uint8_t> writeArtifact(const ArtifactSpec &spec) {
  Layout layout;
  layout.codeOffsets.assign(spec.codes.size(), 0);
  size_t tableSize = buildTable(spec, layout).size();
  layout.weightsOffset = alignUp(tableSize);
  const uint64_t stored = spec.weightsFillSeed ? 0 : spec.weights.size();
  uint64_t end = alignUp(layout.weightsOffset + stored);
  for (size_t i = 0; i < spec.codes.size(); ++i) {
    layout.codeOffsets[i] = end;
    end = alignUp(end + spec.codes[i].bytes.size());
  }
  std::vector<uint8_t> table = buildTable(spec, layout);
  if (table.size() != tableSize)
    throw std::logic_error("ArtifactBuilder: table size changed");
  std::vector<uint8_t> file(end + ENCM_TRAILER_SIZE, 0);
  std::memcpy(file.data(), table.data(), table.size());
  if (stored != 0)
    std::memcpy(file.data() + layout.weightsOffset, spec.weights.data(),
                spec.weights.size());
  for (size_t i = 0; i < spec.codes.size(); ++i)
    std::memcpy(file.data() + layout.codeOffsets[i], spec.codes[i].bytes.data(),
                spec.codes[i].bytes.size());
  std::memcpy(file.data() + end, ENCM_TRAILER_MAGIC, 8);
  resealChecksum(file);
  return file;
}

void resealChecksum(std::vector<uint8_t> &file) {
  uint64_t body = file.size() - ENCM_TRAILER_SIZE;
  uint64_t sum = encm_checksum64(file.data(), body);
  std::memcpy(file.data() + body + 8, &sum, 8);
}

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

float TestModel::table(int32_t id, int32_t h) {
  return std::sin(0.37f * static_cast<float>(id * kHidden + h));
}

float TestModel::bias(int32_t h) { return 0.01f * static_cast<float>(h); }

ArtifactSpec TestModel::spec(const std::vector<uint8_t> &kernels, bool pooled) {
  using K = encm::ValueKind;
  using D = encm::DType;
  ArtifactSpec s;
  s.schemaVersion = ENCM_SCHEMA_VERSION;
  s.schemaMinor = ENCM_SCHEMA_MINOR;
  s.hiddenSize = kHidden;
  s.vocabSize = kVocab;
  s.maxSeq = kMaxSeq;
  s.pooling = pooled ? encm::Pooling::Mean : encm::Pooling::None;

  // Weights: table [V,H] at 0, bias [H] at the next 64-byte boundary.
  const uint64_t tableBytes = uint64_t(kVocab) * kHidden * 4;
  const uint64_t biasOffset = alignUp(tableBytes);
  s.weights.assign(biasOffset + kHidden * 4, 0);
  for (int32_t v = 0; v < kVocab; ++v)
    for (int32_t h = 0; h < kHidden; ++h) {
      float x = table(v, h);
      std::memcpy(s.weights.data() + (uint64_t(v) * kHidden + h) * 4, &x, 4);
    }
  for (int32_t h = 0; h < kHidden; ++h) {
    float x = bias(h);
    std::memcpy(s.weights.data() + biasOffset + uint64_t(h) * 4, &x, 4);
  }

  const int64_t H = kHidden;
  s.values = {
      {"ids", K::Input, D::I32, {-1, -2}},
      {"lengths", K::Input, D::I32, {-1}},
      {"table", K::Weight, D::F32, {kVocab, H}, 0, tableBytes},
      {"bias", K::Weight, D::F32, {H}, biasOffset, uint64_t(H) * 4},
      {"emb", K::Activation, D::F32, {-1, -2, H}, 0, 0, 0, 2},
      {"scaled", K::Activation, D::F32, {-1, -2, H}, 0, 0, 1, 2},
      {"hidden", K::Output, D::F32, {-1, -2, H}, 0, 0, 2, pooled ? 3 : 2},
  };
  s.steps = {
      {"test_embed", "enc.embedding", {0, 2, 3, 4}, 1, {H}, {}},
      {"test_scale", "enc.scale", {4, 5}, 1, {H}, {0.5f}},
      {"test_add", "enc.add", {5, 4, 6}, 1, {H}, {}},
  };
  s.inputs = {0, 1};
  s.outputs = {6};
  if (pooled) {
    s.values.push_back({"pooled", K::Output, D::F32, {-1, H}, 0, 0, 3, 3});
    s.steps.push_back({"test_mean_pool", "enc.pool", {6, 1, 7}, 1, {H}, {}});
    s.outputs.push_back(7);
  }
  s.codes = {{"cpu-x86-64-v2", {"sse4.2"}, kernels}};
  SpecTokenizer tok;
  tok.vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "##s",
               ",", "the", "a"};
  s.tokenizer = tok;
  return s;
}

} // namespace encrt::test
