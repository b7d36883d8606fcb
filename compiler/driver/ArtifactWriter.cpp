//===- ArtifactWriter.cpp - Serialise a compiled model to .encm -----------===//

#include "compiler/driver/ArtifactWriter.h"
#include "compiler/driver/StreamingChecksum.h"

#include "encrt/artifact_generated.h"
#include "encrt/checksum.h"
#include "encrt/schema_version.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace encc;

namespace {

constexpr uint64_t kAlign = 64;

uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

encm::DType weightDType(mlir::enc::WeightType t) {
  switch (t) {
  case mlir::enc::WeightType::F32: return encm::DType::F32;
  case mlir::enc::WeightType::I8: return encm::DType::I8;
  case mlir::enc::WeightType::I32: return encm::DType::I32;
  case mlir::enc::WeightType::F16: return encm::DType::F16;
  case mlir::enc::WeightType::BF16: return encm::DType::BF16;
  }
  return encm::DType::F32;
}

/// Where each weight goes inside the weights region, by value id, for the CPU
/// plan and the CUDA plan; a weight both use (or two values name) is stored once.
struct WeightLayout {
  struct PerPlan {
    std::vector<uint64_t> offset; // per value; relative to the region
    std::vector<const mlir::enc::WeightTensor *> tensor;
  };
  PerPlan cpu, cuda;
  uint64_t size = 0;
};

llvm::Error placeWeights(const Plan &plan, const mlir::enc::WeightStore &store, WeightLayout &layout,
                         std::map<std::string, uint64_t> &placed, WeightLayout::PerPlan &out) {
  out.offset.assign(plan.values.size(), 0);
  out.tensor.assign(plan.values.size(), nullptr);
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue &v = plan.values[i];
    if (v.kind != ValueKind::Weight)
      continue;
    const mlir::enc::WeightTensor *t = store.find(v.name);
    if (!t)
      return llvm::createStringError("plan value %zu refers to weight '%s', which is not in the weight store", i,
                                     v.name.c_str());
    out.tensor[i] = t;
    auto it = placed.find(v.name);
    if (it != placed.end()) {
      out.offset[i] = it->second;
      continue;
    }
    out.offset[i] = layout.size;
    placed[v.name] = layout.size;
    layout.size = alignUp(layout.size + t->byteSize());
  }
  return llvm::Error::success();
}

llvm::Expected<WeightLayout> layoutWeights(const ArtifactContents &c) {
  WeightLayout layout;
  std::map<std::string, uint64_t> placed;
  static const Plan kNoPlan;
  if (auto err = placeWeights(c.plan ? *c.plan : kNoPlan, *c.weights, layout, placed, layout.cpu))
    return std::move(err);
  if (c.cuda)
    if (auto err = placeWeights(c.cuda->plan, *c.weights, layout, placed, layout.cuda))
      return std::move(err);
  return layout;
}

template <typename Builder>
flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<encm::Value>>>
buildValues(Builder &fbb, const Plan &plan, const WeightLayout::PerPlan &wl) {
  std::vector<flatbuffers::Offset<encm::Value>> values;
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue &v = plan.values[i];
    encm::DType dtype = static_cast<encm::DType>(v.dtype);
    uint64_t wOff = 0, wBytes = 0;
    if (v.kind == ValueKind::Weight) {
      dtype = weightDType(wl.tensor[i]->type);
      wOff = wl.offset[i];
      wBytes = wl.tensor[i]->byteSize();
    }
    values.push_back(encm::CreateValueDirect(fbb, static_cast<uint32_t>(i), v.name.c_str(),
                                             static_cast<encm::ValueKind>(v.kind), dtype, &v.shape, wOff, wBytes,
                                             v.firstStep, v.lastStep));
  }
  return fbb.CreateVector(values);
}

template <typename Builder>
flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<encm::Step>>> buildSteps(Builder &fbb,
                                                                                     const Plan &plan) {
  std::vector<flatbuffers::Offset<encm::Step>> steps;
  for (const PlanStep &s : plan.steps)
    steps.push_back(encm::CreateStepDirect(fbb, s.kernel.c_str(), s.op.c_str(), &s.operands, s.numResults,
                                           &s.iattrs, &s.fattrs));
  return fbb.CreateVector(steps);
}

// The description's closed sets in the schema's terms: exhaustive switches
// (-Werror=switch), so a value added on one side fails the build here.
encm::PrependScheme schemaPrepend(TokenizerData::Prepend prepend) {
  switch (prepend) {
  case TokenizerData::Prepend::Always: return encm::PrependScheme::Always;
  case TokenizerData::Prepend::First: return encm::PrependScheme::First;
  case TokenizerData::Prepend::Never: return encm::PrependScheme::Never;
  }
  llvm_unreachable("TokenizerData::Prepend");
}

encm::DecoderKind schemaDecoderKind(DecoderStepData::Kind kind) {
  switch (kind) {
  case DecoderStepData::Kind::WordPiece: return encm::DecoderKind::WordPiece;
  case DecoderStepData::Kind::ByteLevel: return encm::DecoderKind::ByteLevel;
  case DecoderStepData::Kind::Metaspace: return encm::DecoderKind::Metaspace;
  case DecoderStepData::Kind::Replace: return encm::DecoderKind::Replace;
  case DecoderStepData::Kind::ByteFallback: return encm::DecoderKind::ByteFallback;
  case DecoderStepData::Kind::Fuse: return encm::DecoderKind::Fuse;
  case DecoderStepData::Kind::Strip: return encm::DecoderKind::Strip;
  case DecoderStepData::Kind::Bpe: return encm::DecoderKind::Bpe;
  case DecoderStepData::Kind::Unsupported: return encm::DecoderKind::Unsupported;
  }
  llvm_unreachable("DecoderStepData::Kind");
}

encm::OffsetTrim schemaOffsetTrim(TokenizerData::OffsetTrim trim) {
  switch (trim) {
  case TokenizerData::OffsetTrim::None: return encm::OffsetTrim::None;
  case TokenizerData::OffsetTrim::Trim: return encm::OffsetTrim::Trim;
  case TokenizerData::OffsetTrim::TrimKeepPrefixSpace: return encm::OffsetTrim::TrimKeepPrefixSpace;
  }
  llvm_unreachable("TokenizerData::OffsetTrim");
}

encm::TokenHeadKind schemaTokenHeadKind(TokenHeadDescription::Kind kind) {
  switch (kind) {
  case TokenHeadDescription::Kind::LexicalWeights: return encm::TokenHeadKind::LexicalWeights;
  case TokenHeadDescription::Kind::MultiVector: return encm::TokenHeadKind::MultiVector;
  }
  return encm::TokenHeadKind::LexicalWeights; // unreachable (-Werror=switch)
}

encm::Pooling schemaPooling(Pooling pooling) {
  switch (pooling) {
  case Pooling::None: return encm::Pooling::None;
  case Pooling::Cls: return encm::Pooling::Cls;
  case Pooling::Mean: return encm::Pooling::Mean;
  case Pooling::Last: return encm::Pooling::Last;
  case Pooling::Splade: return encm::Pooling::Splade;
  }
  llvm_unreachable("Pooling");
}

encm::Similarity schemaSimilarity(ModelDescription::Similarity similarity) {
  switch (similarity) {
  case ModelDescription::Similarity::Cosine: return encm::Similarity::Cosine;
  case ModelDescription::Similarity::Dot: return encm::Similarity::Dot;
  case ModelDescription::Similarity::Euclidean: return encm::Similarity::Euclidean;
  case ModelDescription::Similarity::Manhattan: return encm::Similarity::Manhattan;
  }
  llvm_unreachable("Similarity");
}

using Fbb = flatbuffers::FlatBufferBuilder;
template <typename T> using Offsets = std::vector<flatbuffers::Offset<T>>;

/// A normalizer of a BPE or Unigram tokenizer as its union member.
std::pair<encm::Normalizer, flatbuffers::Offset<void>> writeNormalizer(Fbb &fbb, const NormalizerStepData &n) {
  switch (n.kind) {
  case NormalizerStepData::Kind::Precompiled:
    return {encm::Normalizer::PrecompiledNormalizer,
            encm::CreatePrecompiledNormalizer(
                fbb, fbb.CreateVector(reinterpret_cast<const uint8_t *>(n.charsmap.data()), n.charsmap.size()))
                .Union()};
  case NormalizerStepData::Kind::Replace:
    return {encm::Normalizer::ReplaceNormalizer,
            encm::CreateReplaceNormalizer(fbb, fbb.CreateString(n.pattern), n.minRepeat, fbb.CreateString(n.content))
                .Union()};
  case NormalizerStepData::Kind::Strip:
    return {encm::Normalizer::StripNormalizer,
            encm::CreateStripNormalizer(fbb, n.stripLeft, n.stripRight, n.stripSpacesOnly).Union()};
  case NormalizerStepData::Kind::Nfc: return {encm::Normalizer::NfcNormalizer, encm::CreateNfcNormalizer(fbb).Union()};
  case NormalizerStepData::Kind::Prepend:
    return {encm::Normalizer::PrependNormalizer,
            encm::CreatePrependNormalizer(fbb, fbb.CreateString(n.content)).Union()};
  }
  llvm_unreachable("NormalizerStepData::Kind");
}

/// The pre-tokenizers the description's options stand for (the inverse of
/// the tokenizer.json readers' mapping; the runtime composes them back).
std::vector<std::pair<encm::PreTokenizer, flatbuffers::Offset<void>>> writePreTokenizers(Fbb &fbb,
                                                                                          const TokenizerData &tk) {
  std::vector<std::pair<encm::PreTokenizer, flatbuffers::Offset<void>>> pre;
  auto split = [&](encm::SplitPattern pattern) {
    pre.emplace_back(encm::PreTokenizer::SplitPreTokenizer, encm::CreateSplitPreTokenizer(fbb, pattern).Union());
  };
  auto metaspace = [&] {
    pre.emplace_back(encm::PreTokenizer::MetaspacePreTokenizer,
                     encm::CreateMetaspacePreTokenizer(fbb, fbb.CreateString(tk.metaspaceReplacement),
                                                       schemaPrepend(tk.metaspacePrepend), tk.metaspaceSplit)
                         .Union());
  };
  auto byteLevel = [&](bool useRegex) {
    pre.emplace_back(encm::PreTokenizer::ByteLevelPreTokenizer,
                     encm::CreateByteLevelPreTokenizer(fbb, tk.addPrefixSpace, useRegex).Union());
  };
  switch (tk.kind) {
  case TokenizerKind::WordPiece:
    pre.emplace_back(encm::PreTokenizer::BertPreTokenizer, encm::CreateBertPreTokenizer(fbb).Union());
    return pre;
  case TokenizerKind::Unigram:
    if (tk.whitespaceSplit)
      pre.emplace_back(encm::PreTokenizer::WhitespaceSplitPreTokenizer,
                       encm::CreateWhitespaceSplitPreTokenizer(fbb).Union());
    metaspace();
    return pre;
  case TokenizerKind::ByteLevelBPE:
    break;
  }
  switch (tk.bpeSplit) {
  case TokenizerData::BpeSplit::Gpt2: byteLevel(true); break;
  case TokenizerData::BpeSplit::Qwen2: split(encm::SplitPattern::Qwen2), byteLevel(false); break;
  case TokenizerData::BpeSplit::Cl100k: split(encm::SplitPattern::Cl100k), byteLevel(false); break;
  case TokenizerData::BpeSplit::Whole: break;
  case TokenizerData::BpeSplit::SpaceMergedWithPrevious: split(encm::SplitPattern::SpaceMergedWithPrevious); break;
  case TokenizerData::BpeSplit::Metaspace: metaspace(); break;
  }
  // The alphabet follows from the ByteLevel pre-tokenizer: the readers pair
  // Bytes with the first three splits and Chars with the others.
  const bool bytes = tk.bpeSplit == TokenizerData::BpeSplit::Gpt2 || tk.bpeSplit == TokenizerData::BpeSplit::Qwen2 ||
                     tk.bpeSplit == TokenizerData::BpeSplit::Cl100k;
  if (bytes != (tk.bpeAlphabet == TokenizerData::BpeAlphabet::Bytes))
    llvm::report_fatal_error("a BPE tokenizer's alphabet does not match its pre-tokenizer");
  return pre;
}

/// WordPiece from a vocab.txt: the added tokens the `tokenizers` library's
/// BertTokenizer gives it ([PAD] [UNK] [CLS] [SEP] and [MASK]).
std::vector<AddedTokenData> builtInWordPieceTokens(const TokenizerData &tk) {
  std::vector<AddedTokenData> added;
  for (int32_t id : {tk.padId, tk.unkId, tk.clsId, tk.sepId})
    if (id >= 0 && static_cast<size_t>(id) < tk.vocab.size() && !tk.vocab[id].empty())
      added.push_back({tk.vocab[id], id});
  for (size_t i = 0; i < tk.vocab.size(); ++i)
    if (tk.vocab[i] == "[MASK]")
      added.push_back({tk.vocab[i], static_cast<int32_t>(i)});
  return added;
}

flatbuffers::Offset<encm::TokenizerPipeline> writePipeline(Fbb &fbb, const TokenizerData &tk) {
  const bool wordPiece = tk.kind == TokenizerKind::WordPiece;
  std::vector<encm::Normalizer> normalizerTypes;
  Offsets<void> normalizers;
  if (wordPiece) {
    normalizerTypes.push_back(encm::Normalizer::BertNormalizer);
    normalizers.push_back(
        encm::CreateBertNormalizer(fbb, true, tk.splitChinese, tk.stripAccents, tk.lowercase).Union());
  }
  for (const NormalizerStepData &n : tk.normalizers) {
    auto [type, table] = writeNormalizer(fbb, n);
    normalizerTypes.push_back(type);
    normalizers.push_back(table);
  }
  std::vector<encm::PreTokenizer> preTypes;
  Offsets<void> pre;
  for (auto [type, table] : writePreTokenizers(fbb, tk)) {
    preTypes.push_back(type);
    pre.push_back(table);
  }
  auto vocab = fbb.CreateVectorOfStrings(tk.vocab);
  encm::TokenizerModel modelType = encm::TokenizerModel::NONE;
  flatbuffers::Offset<void> model;
  switch (tk.kind) {
  case TokenizerKind::WordPiece:
    modelType = encm::TokenizerModel::WordPieceModel;
    model = encm::CreateWordPieceModel(fbb, vocab, tk.unkId, 100).Union();
    break;
  case TokenizerKind::ByteLevelBPE: {
    std::vector<encm::MergePair> pairs;
    for (auto [left, right] : tk.merges)
      pairs.emplace_back(left, right);
    modelType = encm::TokenizerModel::BpeModel;
    model = encm::CreateBpeModel(fbb, vocab, fbb.CreateVectorOfStructs(pairs), tk.unkId, tk.byteFallback,
                                 tk.ignoreMerges, tk.fuseUnk)
                .Union();
    break;
  }
  case TokenizerKind::Unigram:
    modelType = encm::TokenizerModel::UnigramModel;
    model = encm::CreateUnigramModel(fbb, vocab, fbb.CreateVector(tk.scores), tk.unkId, tk.byteFallback).Union();
    break;
  }
  // WordPiece's templates where its files name none: BertProcessing's.
  std::vector<int32_t> single = tk.templateIds, pair = tk.pairTemplateIds, pairTypes = tk.pairTypeIds;
  if (wordPiece) {
    single = {tk.clsId, -1, tk.sepId};
    if (pair.empty())
      pair = {tk.clsId, -1, tk.sepId, -2, tk.sepId}, pairTypes = {0, 0, 0, 1, 1};
  }
  auto post = encm::CreateTemplatePostProcessor(fbb, fbb.CreateVector(single), fbb.CreateVector(pair),
                                                fbb.CreateVector(pairTypes), schemaOffsetTrim(tk.offsetTrim));
  const std::vector<AddedTokenData> &addedTokens =
      wordPiece && tk.addedTokens.empty() ? builtInWordPieceTokens(tk) : tk.addedTokens;
  Offsets<encm::AddedToken> added;
  for (const AddedTokenData &t : addedTokens)
    added.push_back(encm::CreateAddedToken(fbb, fbb.CreateString(t.content), t.id, t.special, t.lstrip, t.rstrip,
                                           t.normalized));
  return encm::CreateTokenizerPipeline(fbb, fbb.CreateVector(normalizerTypes), fbb.CreateVector(normalizers),
                                       fbb.CreateVector(preTypes), fbb.CreateVector(pre), modelType, model,
                                       encm::PostProcessor::TemplatePostProcessor, post.Union(),
                                       fbb.CreateVector(added));
}

/// The tokenizer as components (schema 9.9) and its decoder; an empty
/// vocabulary (the model runs on ids) has neither.
flatbuffers::Offset<encm::Tokenizer> writeTokenizer(Fbb &fbb, const TokenizerData &tk) {
  if (tk.vocab.empty())
    return encm::CreateTokenizer(fbb);
  auto pipeline = writePipeline(fbb, tk);
  Offsets<encm::DecoderStep> decoderSteps;
  for (const DecoderStepData &d : tk.decoders)
    decoderSteps.push_back(encm::CreateDecoderStep(fbb, schemaDecoderKind(d.kind), fbb.CreateString(d.text),
                                                   fbb.CreateString(d.content), d.cleanup, d.prepend, d.start,
                                                   d.stop));
  const auto decoders = fbb.CreateVector(decoderSteps); // present even when empty: "no decoder" recorded
  encm::TokenizerBuilder t(fbb);
  t.add_decoders(decoders);
  t.add_pipeline(pipeline);
  return t.Finish();
}

std::vector<const CodeObject *> allCodeObjects(const ArtifactContents &c) {
  std::vector<const CodeObject *> all;
  for (const CodeObject &co : c.codeObjects)
    all.push_back(&co);
  if (c.cuda)
    all.push_back(&c.cuda->fatbin);
  return all;
}

/// Builds the FlatBuffer for a file whose weights region starts at `weightsOffset`.
std::vector<uint8_t> buildTable(const ArtifactContents &c, const WeightLayout &wl, uint64_t weightsOffset,
                                const std::vector<uint64_t> &codeOffsets) {
  flatbuffers::FlatBufferBuilder fbb(1 << 20);
  fbb.ForceDefaults(true); // table size must not depend on offset values

  static const Plan kNoPlan;
  const Plan &plan = c.plan ? *c.plan : kNoPlan;
  auto values = buildValues(fbb, plan, wl.cpu);
  auto steps = buildSteps(fbb, plan);
  std::vector<const CodeObject *> all = allCodeObjects(c);
  std::vector<flatbuffers::Offset<encm::CodeObject>> codes;
  for (size_t i = 0; i < all.size(); ++i) {
    const CodeObject &co = *all[i];
    auto features = fbb.CreateVectorOfStrings(co.features);
    const std::array<uint8_t, 32> digest = llvm::SHA256::hash(co.bytes);
    codes.push_back(encm::CreateCodeObject(fbb, fbb.CreateString(co.target), features, codeOffsets[i],
                                           co.bytes.size(),
                                           fbb.CreateVector(digest.data(), digest.size())));
  }
  flatbuffers::Offset<encm::CudaPlan> cuda;
  if (c.cuda) {
    const Plan &cp = c.cuda->plan;
    auto cvalues = buildValues(fbb, cp, wl.cuda);
    auto csteps = buildSteps(fbb, cp);
    cuda = encm::CreateCudaPlan(fbb, static_cast<encm::DType>(c.cuda->dtype), cvalues, csteps,
                                fbb.CreateVector(cp.inputs), fbb.CreateVector(cp.outputs),
                                static_cast<uint32_t>(all.size() - 1));
  }
  flatbuffers::Offset<encm::WeightsFill> fill;
  if (c.randomWeightsSeed)
    fill = encm::CreateWeightsFill(fbb, *c.randomWeightsSeed);

  const TokenizerData &tk = *c.tokenizer;
  auto tokenizerTable = writeTokenizer(fbb, tk);

  const ModelDescription &cfg = *c.model;
  auto passes = fbb.CreateVectorOfStrings(c.passes);
  std::vector<flatbuffers::Offset<encm::Prompt>> prompts;
  for (const auto &[name, text] : cfg.prompts)
    prompts.push_back(encm::CreatePrompt(fbb, fbb.CreateString(name), fbb.CreateString(text)));
  auto metadata = encm::CreateMetadata(
      fbb, fbb.CreateString(cfg.architecture), cfg.hidden, cfg.layers, cfg.heads, cfg.intermediate, cfg.vocab,
      cfg.maxSeq, fbb.CreateString(activationName(cfg.activation)), static_cast<float>(cfg.layerNormEps),
      schemaPooling(cfg.pooling), cfg.normalize, passes, fbb.CreateString(ENCC_VERSION), fbb.CreateString(c.source),
      static_cast<int32_t>(cfg.typeVocab), static_cast<int32_t>(cfg.numLabels),
      cfg.numLabels > 0 ? fbb.CreateString(cfg.scoreActivation) : 0,
      prompts.empty() ? 0 : fbb.CreateVector(prompts),
      cfg.defaultPrompt.empty() ? 0 : fbb.CreateString(cfg.defaultPrompt), schemaSimilarity(cfg.similarity),
      cfg.labels.empty() ? 0 : fbb.CreateVectorOfStrings(cfg.labels), static_cast<int32_t>(cfg.embeddingDim));

  // The features a reader needs (encrt/schema_version.h): listed only where
  // the artifact uses them, so that it loads in every runtime that can run it.
  std::vector<std::string> features;
  if (!tk.vocab.empty())
    features.push_back(ENCM_FEATURE_TOKENIZER_COMPONENTS);
  if (!cfg.defaultPrompt.empty())
    features.push_back(ENCM_FEATURE_DEFAULT_PROMPT);
  if (cfg.embeddingDim != 0)
    features.push_back(ENCM_FEATURE_EMBEDDING_DIM);
  if (cfg.pooling == Pooling::Splade)
    features.push_back(ENCM_FEATURE_SPLADE);
  std::vector<flatbuffers::Offset<encm::TokenHead>> heads;
  bool roles = false;
  for (const TokenHeadDescription &h : cfg.tokenHeads) {
    std::vector<flatbuffers::Offset<encm::TokenRole>> hr;
    for (const TokenRoleDescription &r : h.roles)
      hr.push_back(encm::CreateTokenRole(fbb, fbb.CreateString(r.name), r.markerId, r.maxLength, r.expansionId,
                                         r.expansionAttended, r.skipIds.empty() ? 0 : fbb.CreateVector(r.skipIds)));
    roles |= !hr.empty();
    heads.push_back(encm::CreateTokenHead(fbb, schemaTokenHeadKind(h.kind), h.skipLeading,
                                          h.skipIds.empty() ? 0 : fbb.CreateVector(h.skipIds),
                                          hr.empty() ? 0 : fbb.CreateVector(hr)));
  }
  if (!heads.empty())
    features.push_back(ENCM_FEATURE_TOKEN_HEADS);
  if (roles)
    features.push_back(ENCM_FEATURE_TOKEN_ROLES);
  auto model = encm::CreateModel(fbb, ENCM_SCHEMA_VERSION, metadata, values, steps, fbb.CreateVector(plan.inputs),
                                 fbb.CreateVector(plan.outputs), weightsOffset, wl.size, fbb.CreateVector(codes),
                                 tokenizerTable, fill, cuda, ENCM_SCHEMA_MINOR,
                                 features.empty() ? 0 : fbb.CreateVectorOfStrings(features),
                                 heads.empty() ? 0 : fbb.CreateVector(heads));
  encm::FinishModelBuffer(fbb, model);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

} // namespace

namespace {

/// Writes the artifact to `os` piece by piece: the table, each weight as it
/// is read (deferred ones produced one at a time, so the model is never held
/// whole), the code objects, the checksum trailer.
llvm::Error emitArtifact(const ArtifactContents &c, llvm::raw_ostream &os) {
  if (!c.model || !c.tokenizer || !(c.plan || c.cuda) || !c.weights)
    return llvm::createStringError("writeArtifact: incomplete contents");
  auto wl = layoutWeights(c);
  if (!wl)
    return wl.takeError();
  // Random weights: the region has a size but no bytes in the file.
  const uint64_t storedWeights = c.randomWeightsSeed ? 0 : wl->size;
  std::vector<const CodeObject *> all = allCodeObjects(c);

  // The table's size does not depend on the offsets it stores (ForceDefaults),
  // so one sizing build fixes the layout.
  auto codeOffsetsFor = [&](uint64_t weightsOffset) {
    std::vector<uint64_t> offs;
    uint64_t at = alignUp(weightsOffset + storedWeights);
    for (const CodeObject *co : all) {
      offs.push_back(at);
      at = alignUp(at + co->bytes.size());
    }
    return offs;
  };
  std::vector<uint8_t> probe = buildTable(c, *wl, 0, codeOffsetsFor(0));
  uint64_t weightsOffset = alignUp(probe.size());
  std::vector<uint64_t> codeOffsets = codeOffsetsFor(weightsOffset);
  std::vector<uint8_t> table = buildTable(c, *wl, weightsOffset, codeOffsets);
  if (alignUp(table.size()) != weightsOffset)
    return llvm::createStringError("artifact layout is unstable (table size changed with offsets)");

  StreamingChecksum sum;
  uint64_t at = 0;
  auto put = [&](const uint8_t *p, size_t n) {
    os.write(reinterpret_cast<const char *>(p), n);
    sum.add(p, n);
    at += n;
  };
  auto padTo = [&](uint64_t offset) {
    static const uint8_t zeros[kAlign] = {};
    while (at < offset)
      put(zeros, size_t(std::min<uint64_t>(kAlign, offset - at)));
  };
  put(table.data(), table.size());
  if (!c.randomWeightsSeed) {
    // Each stored tensor once, in the order of its offset.
    std::map<uint64_t, const mlir::enc::WeightTensor *> byOffset;
    for (const WeightLayout::PerPlan *pp : {&wl->cpu, &wl->cuda})
      for (size_t i = 0; i < pp->tensor.size(); ++i)
        if (pp->tensor[i])
          byOffset.emplace(pp->offset[i], pp->tensor[i]);
    for (const auto &[offset, tensor] : byOffset) {
      if (at > weightsOffset + offset)
        return llvm::createStringError("writeArtifact: a weight ends past the next one's offset (internal error)");
      padTo(weightsOffset + offset);
      const mlir::enc::WeightTensor bytes = tensor->read();
      if (bytes.byteSize() != 0)
        put(bytes.data(), bytes.byteSize());
    }
  }
  for (size_t i = 0; i < all.size(); ++i) {
    padTo(codeOffsets[i]);
    put(all[i]->bytes.data(), all[i]->bytes.size());
  }
  padTo(codeOffsets.empty() ? alignUp(weightsOffset + storedWeights) : at);
  uint8_t trailer[ENCM_TRAILER_SIZE];
  std::memcpy(trailer, ENCM_TRAILER_MAGIC, 8);
  const uint64_t checksum = sum.finish();
  for (int i = 0; i < 8; ++i)
    trailer[8 + i] = static_cast<uint8_t>(checksum >> (8 * i));
  os.write(reinterpret_cast<const char *>(trailer), sizeof(trailer));
  return llvm::Error::success();
}

} // namespace

llvm::Error encc::writeArtifact(const std::string &path, const ArtifactContents &c) {
  return writeFileAtomically(path, [&](llvm::raw_ostream &os) { return emitArtifact(c, os); });
}

llvm::Error encc::checkOutputTarget(const std::string &path) {
  // Renaming over a device node, FIFO, socket or directory would replace it
  // (run as root, `-o /dev/null` replaced /dev/null).
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return llvm::Error::success(); // nothing there yet
  struct stat target;
  const bool regular = S_ISREG(st.st_mode) ||
                       (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &target) == 0 && S_ISREG(target.st_mode));
  if (regular)
    return llvm::Error::success();
  return llvm::createStringError(std::errc::invalid_argument,
                                 "%s exists and is not a regular file (a device, FIFO, socket, directory or "
                                 "dangling link): not replacing it; choose another output path",
                                 path.c_str());
}

llvm::Error encc::writeFileAtomically(const std::string &path, llvm::ArrayRef<uint8_t> bytes,
                                      unsigned mode) {
  return writeFileAtomically(
      path,
      [&](llvm::raw_ostream &os) {
        os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
        return llvm::Error::success();
      },
      mode);
}

llvm::Error encc::writeFileAtomically(const std::string &path,
                                      llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write,
                                      unsigned mode) {
  if (llvm::Error e = checkOutputTarget(path))
    return e;
  // A fresh temporary beside the target (O_EXCL: never an existing file or a
  // planted symlink), fsync'ed, then renamed over the target; removed on
  // every failure, so a failed write leaves nothing behind.
  int fd = -1;
  llvm::SmallString<256> tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".partial-%%%%%%%%", fd, tmp, 
                                                           llvm::sys::fs::OF_None, mode))
    return llvm::createStringError(ec, "%s: cannot create a temporary file beside it: %s", path.c_str(),
                                   ec.message().c_str());
  auto failWith = [&](const char *what, std::error_code ec) -> llvm::Error {
    llvm::sys::fs::remove(tmp);
    return llvm::createStringError(ec, "%s: %s: %s", path.c_str(), what, ec.message().c_str());
  };
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/false);
    llvm::Error written = write(os);
    os.flush();
    if (written) {
      os.clear_error();
      ::close(fd);
      llvm::sys::fs::remove(tmp);
      return written;
    }
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error(); // handled here, not by raw_fd_ostream's fatal error
      ::close(fd);
      return failWith("write failed", ec);
    }
  }
  if (::fsync(fd) != 0) {
    std::error_code ec(errno, std::generic_category());
    ::close(fd);
    return failWith("fsync failed", ec);
  }
  if (::close(fd) != 0)
    return failWith("close failed", std::error_code(errno, std::generic_category()));
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return failWith("cannot rename the temporary file over it", ec);
  return llvm::Error::success();
}
