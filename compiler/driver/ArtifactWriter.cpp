//===- ArtifactWriter.cpp - Serialise a compiled model to .encm -----------===//

#include "compiler/driver/ArtifactWriter.h"

#include "encrt/artifact_generated.h"
#include "encrt/checksum.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>

using namespace encc;

namespace {

constexpr uint64_t kAlign = 64;
constexpr uint32_t kSchemaVersion = 1;

uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

encm::DType weightDType(mlir::enc::WeightType t) {
  switch (t) {
  case mlir::enc::WeightType::F32: return encm::DType::F32;
  case mlir::enc::WeightType::I8: return encm::DType::I8;
  case mlir::enc::WeightType::I32: return encm::DType::I32;
  }
  return encm::DType::F32;
}

/// Where each weight goes inside the weights region, by value id.
struct WeightLayout {
  std::vector<uint64_t> offset; // per value; relative to the region
  std::vector<const mlir::enc::WeightTensor *> tensor;
  uint64_t size = 0;
};

llvm::Expected<WeightLayout> layoutWeights(const Plan &plan, const mlir::enc::WeightStore &store) {
  WeightLayout layout;
  layout.offset.assign(plan.values.size(), 0);
  layout.tensor.assign(plan.values.size(), nullptr);
  std::map<std::string, uint64_t> placed; // a weight used by two values is stored once
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue &v = plan.values[i];
    if (v.kind != ValueKind::Weight)
      continue;
    const mlir::enc::WeightTensor *t = store.find(v.name);
    if (!t)
      return llvm::createStringError("plan value %zu refers to weight '%s', which is not in the weight store", i,
                                     v.name.c_str());
    layout.tensor[i] = t;
    auto it = placed.find(v.name);
    if (it != placed.end()) {
      layout.offset[i] = it->second;
      continue;
    }
    layout.offset[i] = layout.size;
    placed[v.name] = layout.size;
    layout.size = alignUp(layout.size + t->bytes.size());
  }
  return layout;
}

/// Builds the FlatBuffer for a file whose weights region starts at `weightsOffset`.
std::vector<uint8_t> buildTable(const ArtifactContents &c, const WeightLayout &wl, uint64_t weightsOffset,
                                const std::vector<uint64_t> &codeOffsets) {
  flatbuffers::FlatBufferBuilder fbb(1 << 20);
  fbb.ForceDefaults(true); // table size must not depend on offset values

  const Plan &plan = *c.plan;
  std::vector<flatbuffers::Offset<encm::Value>> values;
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue &v = plan.values[i];
    encm::DType dtype = static_cast<encm::DType>(v.dtype);
    uint64_t wOff = 0, wBytes = 0;
    if (v.kind == ValueKind::Weight) {
      dtype = weightDType(wl.tensor[i]->type);
      wOff = wl.offset[i];
      wBytes = wl.tensor[i]->bytes.size();
    }
    values.push_back(encm::CreateValueDirect(fbb, static_cast<uint32_t>(i), v.name.c_str(),
                                             static_cast<encm::ValueKind>(v.kind), dtype, &v.shape, wOff, wBytes,
                                             v.firstStep, v.lastStep));
  }
  std::vector<flatbuffers::Offset<encm::Step>> steps;
  for (const PlanStep &s : plan.steps)
    steps.push_back(encm::CreateStepDirect(fbb, s.kernel.c_str(), s.op.c_str(), &s.operands, s.numResults,
                                           &s.iattrs, &s.fattrs));
  std::vector<flatbuffers::Offset<encm::CodeObject>> codes;
  for (size_t i = 0; i < c.codeObjects.size(); ++i) {
    const CodeObject &co = c.codeObjects[i];
    auto features = fbb.CreateVectorOfStrings(co.features);
    codes.push_back(encm::CreateCodeObject(fbb, fbb.CreateString(co.target), features, codeOffsets[i],
                                           co.bytes.size()));
  }

  const TokenizerData &tk = *c.tokenizer;
  auto vocab = fbb.CreateVectorOfStrings(tk.vocab);
  auto tokenizer = encm::CreateTokenizer(fbb, vocab, tk.lowercase, tk.stripAccents, tk.splitChinese, tk.unkId,
                                         tk.clsId, tk.sepId, tk.padId, 100);

  const ModelConfig &cfg = *c.config;
  auto passes = fbb.CreateVectorOfStrings(c.passes);
  auto metadata = encm::CreateMetadata(
      fbb, fbb.CreateString(cfg.modelType), cfg.hidden, cfg.layers, cfg.heads, cfg.intermediate, cfg.vocab,
      cfg.maxSeq, fbb.CreateString(cfg.hiddenAct), static_cast<float>(cfg.layerNormEps),
      fbb.CreateString(cfg.pooling), cfg.normalize, passes, fbb.CreateString(ENCC_VERSION), fbb.CreateString(c.source));

  auto model = encm::CreateModel(fbb, kSchemaVersion, metadata, fbb.CreateVector(values), fbb.CreateVector(steps),
                                 fbb.CreateVector(plan.inputs), fbb.CreateVector(plan.outputs), weightsOffset,
                                 wl.size, fbb.CreateVector(codes), tokenizer);
  encm::FinishModelBuffer(fbb, model);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

} // namespace

llvm::Expected<std::vector<uint8_t>> encc::serializeArtifact(const ArtifactContents &c) {
  if (!c.config || !c.tokenizer || !c.plan || !c.weights)
    return llvm::createStringError("serializeArtifact: incomplete contents");
  auto wl = layoutWeights(*c.plan, *c.weights);
  if (!wl)
    return wl.takeError();

  // The table's size does not depend on the offsets it stores (ForceDefaults),
  // so one sizing build fixes the layout.
  auto codeOffsetsFor = [&](uint64_t weightsOffset) {
    std::vector<uint64_t> offs;
    uint64_t at = alignUp(weightsOffset + wl->size);
    for (const CodeObject &co : c.codeObjects) {
      offs.push_back(at);
      at = alignUp(at + co.bytes.size());
    }
    return offs;
  };
  std::vector<uint8_t> probe = buildTable(c, *wl, 0, codeOffsetsFor(0));
  uint64_t weightsOffset = alignUp(probe.size());
  std::vector<uint64_t> codeOffsets = codeOffsetsFor(weightsOffset);
  std::vector<uint8_t> table = buildTable(c, *wl, weightsOffset, codeOffsets);
  if (alignUp(table.size()) != weightsOffset)
    return llvm::createStringError("artifact layout is unstable (table size changed with offsets)");

  uint64_t end = codeOffsets.empty() ? alignUp(weightsOffset + wl->size)
                                     : codeOffsets.back() + c.codeObjects.back().bytes.size();
  std::vector<uint8_t> file(end + ENCM_TRAILER_SIZE, 0);
  std::memcpy(file.data(), table.data(), table.size());
  for (size_t i = 0; i < c.plan->values.size(); ++i)
    if (const mlir::enc::WeightTensor *t = wl->tensor[i])
      std::memcpy(file.data() + weightsOffset + wl->offset[i], t->bytes.data(), t->bytes.size());
  for (size_t i = 0; i < c.codeObjects.size(); ++i)
    std::memcpy(file.data() + codeOffsets[i], c.codeObjects[i].bytes.data(), c.codeObjects[i].bytes.size());
  uint64_t sum = encm_checksum64(file.data(), end);
  std::memcpy(file.data() + end, ENCM_TRAILER_MAGIC, 8);
  for (int i = 0; i < 8; ++i)
    file[end + 8 + i] = static_cast<uint8_t>(sum >> (8 * i));
  return file;
}

llvm::Error encc::writeArtifact(const std::string &path, const ArtifactContents &c) {
  auto bytes = serializeArtifact(c);
  if (!bytes)
    return bytes.takeError();
  std::string tmp = path + ".partial";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError(ec, "%s: cannot write: %s", tmp.c_str(), ec.message().c_str());
    os.write(reinterpret_cast<const char *>(bytes->data()), bytes->size());
    os.close();
    if (os.has_error())
      return llvm::createStringError(os.error(), "%s: write failed: %s", tmp.c_str(), os.error().message().c_str());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return llvm::createStringError(ec, "%s: cannot rename to %s: %s", tmp.c_str(), path.c_str(),
                                   ec.message().c_str());
  return llvm::Error::success();
}
