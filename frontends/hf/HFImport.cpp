//===- HFImport.cpp - Hugging Face model folder -> ImportedModel ----------===//
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"
#include "frontends/hf/SafeTensors.h"
#include "encrt/schema_version.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <unistd.h>

using namespace encc;
using llvm::Twine;

ModelWeightNames encc::modelWeightNames(const ModelConfig &c) { return c.family->weightNames(c); }

std::vector<WeightSpec> encc::expectedWeights(const ModelConfig &c) {
  std::vector<WeightSpec> w = c.family->expectedWeights(c);
  // sentence-transformers' Dense modules (on the pooled output) and PyLate's
  // (on every token): each folder's model.safetensors, an nn.Linear.
  auto denseWeights = [&](const std::vector<ModelConfig::DenseModule> &chain, std::string (*name)(size_t)) {
    for (size_t i = 0; i < chain.size(); ++i) {
      const ModelConfig::DenseModule &d = chain[i];
      // A module folder's file, or the checkpoint itself (colbert-ai's linear.*, outside the prefix).
      const std::string mod = name(i), file = d.dir.empty() ? "" : d.dir + "/model.safetensors";
      WeightSpec weight{mod + ".weight", {d.out, d.in}, true};
      weight.file = file, weight.stored = "linear.weight", weight.unprefixed = d.dir.empty();
      w.push_back(std::move(weight));
      if (d.bias) {
        WeightSpec bias{mod + ".bias", {d.out}, true};
        bias.file = file, bias.stored = "linear.bias", bias.unprefixed = d.dir.empty();
        w.push_back(std::move(bias));
      }
    }
  };
  denseWeights(c.dense, denseModuleName);
  if (c.colbert)
    denseWeights(c.colbert->dense, colbertDenseName);
  for (const auto &[mod, out] : {std::pair<std::string, int64_t>{"sparse_linear", c.sparseHead ? 1 : 0},
                                 {"colbert_linear", c.colbertDim}}) {
    if (out == 0)
      continue;
    // readTokenHeads checked the files' shapes.
    for (const char *part : {"weight", "bias"}) {
      WeightSpec s{mod + "." + part, part == std::string("weight") ? std::vector<int64_t>{out, c.hidden}
                                                                   : std::vector<int64_t>{out},
                   true};
      s.file = mod + ".safetensors", s.stored = part;
      w.push_back(std::move(s));
    }
  }
  if (c.pooling == Pooling::Splade) {
    // importHFModel checked that the family names the head.
    if (llvm::Expected<MlmHeadNames> h = c.family->mlmHeadNames(c)) {
      for (const std::string &mod : {h->dense, h->norm})
        for (const char *part : {".weight", ".bias"})
          w.push_back({mod + part, mod == h->dense && part == std::string(".weight")
                                       ? std::vector<int64_t>{c.hidden, c.hidden}
                                       : std::vector<int64_t>{c.hidden},
                       true});
      w.push_back({h->bias, {c.vocab}, true});
    } else {
      llvm::consumeError(h.takeError());
    }
  }
  if (!c.classifies())
    return w;
  // parseModelConfig accepted the head only when the family names it.
  llvm::Expected<ClassifierWeightNames> head = c.family->classifierNames(c);
  if (!head) {
    llvm::consumeError(head.takeError());
    return w;
  }
  for (WeightSpec &s : c.family->classifierWeights(c, *head))
    w.push_back(std::move(s));
  return w;
}

/// The index of the first value of `t` (f32, f16 or bf16, resident) that is
/// NaN or infinite, or -1; `isNan` says which it is.
static int64_t firstNonFinite(const mlir::enc::WeightTensor &t, bool &isNan) {
  using mlir::enc::WeightType;
  const int64_t n = t.numElements();
  if (t.type == WeightType::F32) {
    const float *f = t.f32();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(f[i]))
        return isNan = std::isnan(f[i]), i;
    return -1;
  }
  // 16-bit floats: an all-ones exponent is infinity (mantissa 0) or NaN.
  const uint16_t exponent = t.type == WeightType::F16 ? 0x7c00 : 0x7f80;
  const uint8_t *b = t.data();
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t v = uint16_t(b[2 * i] | b[2 * i + 1] << 8);
    if ((v & exponent) == exponent)
      return isNan = (v & ~exponent & 0x7fff) != 0, i;
  }
  return -1;
}

namespace {

/// The checkpoint: model.safetensors, or the shards a
/// model.safetensors.index.json maps each tensor to.
class Checkpoint {
public:
  static llvm::Expected<Checkpoint> open(const std::string &dir);

  /// Where tensor `name` is: its file and header entry (null: nowhere).
  std::pair<const SafeTensorsFile *, const SafeTensorInfo *> find(const std::string &name) const {
    if (files_.size() == 1 && shardOf_.empty())
      return {&files_[0], files_[0].find(name)};
    auto it = shardOf_.find(name);
    if (it == shardOf_.end())
      return {nullptr, nullptr};
    return {&files_[it->second], files_[it->second].find(name)};
  }
  /// What errors name: model.safetensors, or the index.
  const std::string &path() const { return path_; }
  /// The safetensors file `relPath` of the model's folder `dir` (a
  /// sentence-transformers module's weights), opened once.
  llvm::Expected<const SafeTensorsFile *> moduleFile(const std::string &dir, const std::string &relPath) {
    auto it = modules_.find(relPath);
    if (it == modules_.end()) {
      auto file = SafeTensorsFile::open(dir + "/" + relPath);
      if (!file)
        return file.takeError();
      it = modules_.emplace(relPath, std::move(*file)).first;
    }
    return &it->second;
  }

private:
  std::string path_;
  std::vector<SafeTensorsFile> files_;
  std::map<std::string, SafeTensorsFile> modules_;
  std::map<std::string, size_t> shardOf_; ///< tensor -> index into files_ (sharded)
};

llvm::Expected<Checkpoint> Checkpoint::open(const std::string &dir) {
  Checkpoint c;
  c.path_ = dir + "/model.safetensors";
  if (fileExists(c.path_)) {
    auto file = SafeTensorsFile::open(c.path_);
    if (!file)
      return file.takeError();
    c.files_.push_back(std::move(*file));
    return std::move(c);
  }
  const std::string index = dir + "/model.safetensors.index.json";
  if (!fileExists(index)) {
    if (fileExists(dir + "/pytorch_model.bin"))
      return hfError(dir + ": only model.safetensors is supported for now, found pytorch_model.bin "
                           "(convert it with safetensors.torch.save_file)");
    return hfError(c.path_ + ": missing");
  }
  c.path_ = index;
  auto text = readTextFile(index);
  if (!text)
    return text.takeError();
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  const auto map = j.is_object() ? j.find("weight_map") : j.end();
  if (map == j.end() || !map->is_object() || map->empty())
    return hfError(index + ": expected a JSON object with a non-empty 'weight_map' (tensor name -> shard file)");
  std::map<std::string, size_t> shards; // file name -> index into files_
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (!it.value().is_string())
      return hfError(index + ": weight_map['" + it.key() + "'] is not a file name");
    const std::string shard = it.value().get<std::string>();
    // A file of this folder, by name: nothing outside it.
    if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == ".." ||
        shard.find('\0') != std::string::npos)
      return hfError(index + ": weight_map['" + it.key() + "'] is '" + shard +
                     "', expected the name of a file in the model's folder");
    auto [at, added] = shards.emplace(shard, c.files_.size());
    if (added) {
      if (c.files_.size() >= 4096)
        return hfError(index + ": over 4096 shard files");
      auto file = SafeTensorsFile::open(dir + "/" + shard);
      if (!file)
        return file.takeError();
      c.files_.push_back(std::move(*file));
    }
    c.shardOf_[it.key()] = at->second;
  }
  return std::move(c);
}

/// Tensor `fileName` of `file` (its header entry `info`, null when absent;
/// `where` names the file when there is none) as stored, which must have
/// `shape` and only finite values (unless `allowNonFinite`).
llvm::Expected<mlir::enc::WeightTensor> readChecked(const SafeTensorsFile *file, const SafeTensorInfo *info,
                                                    const std::string &where, const std::string &fileName,
                                                    const std::vector<int64_t> &shape, bool allowNonFinite) {
  if (!info)
    return hfError((file ? file->path() : where) + ": tensor '" + fileName + "' is missing");
  if (info->shape != shape)
    return hfError(file->path() + ": tensor '" + fileName + "' has shape " + shapeStr(info->shape) +
                   ", expected " + shapeStr(shape));
  auto t = file->read(fileName);
  if (!t)
    return t.takeError();
  bool isNan = false;
  if (int64_t bad = allowNonFinite ? -1 : firstNonFinite(*t, isNan); bad >= 0)
    return hfError(file->path() + ": tensor '" + fileName + "' has a non-finite value (" +
                   (isNan ? "NaN" : "infinity") + ") at index " + Twine(bad) +
                   "; every output would be NaN (--allow-nonfinite compiles it anyway)");
  return t;
}

/// The checkpoint tensor `fileName` as stored, which must have `shape`.
llvm::Expected<mlir::enc::WeightTensor> readTensor(const Checkpoint &ckpt, const std::string &fileName,
                                                   const std::vector<int64_t> &shape, bool allowNonFinite) {
  auto [file, info] = ckpt.find(fileName);
  return readChecked(file, info, ckpt.path(), fileName, shape, allowNonFinite);
}

/// spec.concatOf's tensors (under `base`), each spec.shape with dim 0 divided
/// by their count, concatenated along dim 0 (when the artifact is written).
llvm::Expected<mlir::enc::WeightTensor> readConcatenated(const Checkpoint &ckpt, const std::string &base,
                                                         const WeightSpec &spec, bool allowNonFinite) {
  std::vector<int64_t> partShape = spec.shape;
  partShape[0] /= static_cast<int64_t>(spec.concatOf.size());
  std::vector<mlir::enc::WeightTensor> parts;
  for (const std::string &part : spec.concatOf) {
    auto t = readTensor(ckpt, base + part, partShape, allowNonFinite);
    if (!t)
      return t.takeError();
    parts.push_back(std::move(*t));
  }
  return mlir::enc::WeightTensor::concatRows(std::move(parts));
}

} // namespace

/// Loads every expected tensor (accepting a "bert."-style prefix) into `store`.
static llvm::Error loadWeights(const std::string &dir, const ModelConfig &c, const ImportOptions &opts,
                               mlir::enc::WeightStore &store) {
  auto ckpt = Checkpoint::open(dir);
  if (!ckpt)
    return ckpt.takeError();

  const ModelWeightNames names = modelWeightNames(c);
  std::string prefix;
  for (const std::string &p : c.family->checkpointPrefixes(c))
    if (ckpt->find(p + names.word + ".weight").second) {
      prefix = p;
      break;
    }

  for (const WeightSpec &spec : expectedWeights(c)) {
    if (spec.zeros) {
      store.set(spec.name, mlir::enc::WeightTensor::allocate(mlir::enc::WeightType::F32, spec.shape));
      continue;
    }
    const std::string base = spec.unprefixed ? "" : prefix;
    llvm::Expected<mlir::enc::WeightTensor> t = mlir::enc::WeightTensor();
    if (!spec.file.empty()) {
      auto file = ckpt->moduleFile(dir, spec.file);
      if (!file)
        return file.takeError();
      const SafeTensorsFile *module = *file;
      t = readChecked(module, module->find(spec.stored), module->path(), spec.stored, spec.shape,
                      opts.allowNonFinite);
    } else if (spec.concatOf.empty()) {
      t = readTensor(*ckpt, base + (spec.stored.empty() ? spec.name : spec.stored), spec.shape, opts.allowNonFinite);
    } else {
      t = readConcatenated(*ckpt, base, spec, opts.allowNonFinite);
    }
    if (!t)
      return t.takeError();
    if (spec.addOne) {
      // In f32, as Gemma3RMSNorm computes 1.0 + weight.float().
      auto plusOne = mlir::enc::WeightTensor::allocate(mlir::enc::WeightType::F32, t->shape);
      float *f = plusOne.mutableF32();
      t->read().toF32(0, t->numElements(), f);
      for (int64_t i = 0, n = plusOne.numElements(); i < n; ++i)
        f[i] += 1.0f;
      *t = std::move(plusOne);
    }
    store.set(spec.name, std::move(*t));
  }
  // A checkpoint with more layers than config.json names would silently lose
  // them: refuse it.
  ModelConfig more = c;
  more.layers = c.layers + 1;
  const std::string extra = prefix + modelWeightNames(more).layers.back().query + ".weight";
  if (auto [file, info] = ckpt->find(extra); info)
    return hfError(file->path() + ": holds tensor '" + extra + "' of layer " + Twine(c.layers) +
                   ", but config.json says the model has " + Twine(c.layers) +
                   " layers (the checkpoint and the config disagree)");
  return llvm::Error::success();
}

namespace {

/// The largest weights a compile handles: the runtime's limit for weights
/// generated at load (Artifact.cpp) and the most any artifact would carry.
constexpr uint64_t kMaxWeightBytes = uint64_t(64) << 30;

/// Up-front size check of every weight the config implies (at fp32), so a
/// config with huge dims is a one-line error instead of an overflowed size or
/// an allocation failure deep in the compile.
llvm::Error checkWeightsFit(const ModelConfig &c, const std::string &configPath, bool randomWeights) {
  uint64_t total = 0;
  for (const WeightSpec &spec : expectedWeights(c)) {
    uint64_t bytes = 4;
    for (int64_t d : spec.shape)
      if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
        bytes = UINT64_MAX;
    if (__builtin_add_overflow(total, bytes, &total))
      total = UINT64_MAX;
  }
  auto gib = [](uint64_t b) { return llvm::formatv("{0:F1} GiB", double(b) / double(1ull << 30)).str(); };
  if (total > kMaxWeightBytes)
    return hfError(configPath + ": the model's dims imply " +
                   (total == UINT64_MAX ? std::string("more than 2^64 bytes") : gib(total)) +
                   " of fp32 weights, over the limit of " + gib(kMaxWeightBytes));
  const uint64_t memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
  // Checkpoint weights stay in the mapped files and are converted and packed
  // one tensor at a time as the artifact is written; what compiling holds in
  // memory is the int8 tier's quantised copy (a quarter of fp32). Generated
  // weights are made whole in fp32, and quantised beside that.
  const uint64_t held = randomWeights ? total + total / 4 : total / 4;
  if (memory > 0 && held > memory / 3 * 2)
    return hfError(configPath + ": the model's dims imply " + gib(total) + " of fp32 weights; compiling " +
                   (randomWeights ? "generated weights" : "them") + " holds up to " + gib(held) +
                   " in memory and this machine has " + gib(memory));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ImportedModel> encc::importHFModel(mlir::MLIRContext &ctx, const std::string &dirIn,
                                                  const ImportOptions &opts) {
  std::string dir = dirIn;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  std::string configPath = dir + "/config.json";
  if (!fileExists(configPath))
    return hfError(dir + ": not a Hugging Face model folder (no config.json)");
  auto text = readTextFile(configPath);
  if (!text)
    return text.takeError();
  auto config = parseModelConfig(*text, configPath);
  if (!config)
    return config.takeError();
  ModelConfig &c = *config;
  if (auto e = readSentenceTransformersConfig(dir, c))
    return std::move(e);

  int64_t positions = c.maxPositions - c.positionOffset;
  if (opts.maxSeq != 0) {
    if (opts.maxSeq < 1 || opts.maxSeq > positions)
      return hfError(dir + ": --max-seq " + Twine(opts.maxSeq) + " is out of range [1, " +
                     Twine(positions) + "] (the model's position table)");
    c.maxSeq = opts.maxSeq;
  }
  if (opts.pooling)
    c.pooling = *opts.pooling;
  if (opts.normalize >= 0)
    c.normalize = opts.normalize != 0;
  if (c.classifies()) {
    // The head pools [CLS] itself and its output is scores, not an embedding.
    if (opts.pooling && *opts.pooling != Pooling::None)
      return hfError(dir + ": a sequence-classification model (cross-encoder) scores text pairs; --pooling=" +
                     poolingName(*opts.pooling) + " does not apply to it");
    c.pooling = Pooling::None;
  }
  if (c.pooling == Pooling::None)
    c.normalize = false;
  if (c.pooling == Pooling::Splade) {
    if (auto head = c.family->mlmHeadNames(c); !head)
      return hfError(dir + ": splade pooling: " + llvm::toString(head.takeError()));
    if (!c.dense.empty())
      return hfError(dir + ": splade pooling with Dense modules is not supported");
    if (!c.tieWordEmbeddings)
      return hfError(configPath + ": tie_word_embeddings is false: a masked-LM decoder of its own is not supported "
                                  "(splade pooling reads the word embeddings as the decoder)");
    if (c.vocab > ENCM_MAX_EMBEDDING_DIM)
      return hfError(dir + ": splade pooling gives one weight per vocabulary entry; " + Twine(c.vocab) +
                     " entries are more than the artifact's " + Twine(ENCM_MAX_EMBEDDING_DIM));
  }

  if (c.colbert && (c.classifies() || c.pooling != Pooling::None))
    return hfError(dir + ": a ColBERT checkpoint's output is its token vectors; it has no " +
                   (c.classifies() ? std::string("classification head") :
                                     std::string("pooling (--pooling=") + poolingName(c.pooling) + ")"));
  if (opts.tokenHeads)
    if (auto e = readTokenHeads(dir, c))
      return std::move(e);
  if (auto e = checkWeightsFit(c, configPath, opts.randomWeightsSeed.has_value()))
    return std::move(e);
  ImportedModel m;
  if (opts.randomWeightsSeed) {
    m.weights = randomWeights(c, *opts.randomWeightsSeed);
  } else if (auto e = loadWeights(dir, c, opts, m.weights)) {
    return std::move(e);
  }
  llvm::Expected<TokenizerData> tok = TokenizerData();
  if (opts.randomWeightsSeed && !fileExists(dir + "/vocab.txt") && !fileExists(dir + "/tokenizer.json"))
    tok->note = dir + ": no vocab.txt or tokenizer.json; the model runs on token ids only";
  else
    tok = readTokenizer(dir, c);
  if (!tok)
    return tok.takeError();
  if (c.sparseHead) {
    // FlagEmbedding leaves out the tokenizer's cls, eos, pad and unk tokens
    // (XLM-R's eos is its sep, </s>).
    for (int32_t id : {tok->clsId, tok->sepId, tok->padId, tok->unkId})
      if (id >= 0 && id < c.vocab && !llvm::is_contained(c.sparseSkipIds, id))
        c.sparseSkipIds.push_back(id);
    llvm::sort(c.sparseSkipIds);
  }
  if (c.colbert)
    if (auto e = resolveColbertRoles(*tok, dir, c))
      return std::move(e);
  auto module = buildEncModule(ctx, c, dir);
  if (!module)
    return module.takeError();
  m.description = describe(c);
  m.tokenizer = std::move(*tok);
  m.module = std::move(*module);
  return std::move(m);
}
