//===- Mpnet.cpp - MPNet (all-mpnet-base-v2) ------------------------------===//
//
// BERT's config fields and post-LayerNorm layers, with tensors under encoder.layer.N.attention.
// attn.{q,k,v,o}, no token types, positions offset by 2 (transformers fixes
// MPNet's padding_idx at 1), and one relative position bias table
// (encoder.relative_attention_bias, [32 buckets, heads]) that every layer
// adds to its attention scores. WordPiece tokens with <s> </s> around a text.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/families/Bert.h"

using namespace encc;

namespace {

/// transformers' MPNetEncoder buckets relative positions with its defaults,
/// whatever config.json says: 32 buckets, distances up to 128.
constexpr int64_t kBuckets = 32, kMaxDistance = 128;
const char *const kBiasTable = "encoder.relative_attention_bias.weight";

class MpnetFamily : public BertFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef types[] = {"mpnet"};
    return types;
  }
  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = BertFamily::readConfig(f, c))
      return e;
    int64_t buckets = kBuckets;
    if (auto e = f.getInt("relative_attention_num_buckets", buckets, kBuckets))
      return e;
    // The table has this many rows, but transformers indexes it with 32
    // buckets regardless: another count would compute something else.
    if (buckets != kBuckets)
      return hfError(f.path() + ": relative_attention_num_buckets " + std::to_string(buckets) +
                     " is not supported (transformers' MPNet buckets with 32)");
    c.typeVocab = 0;
    c.positionOffset = 2;
    c.positionPadId = 1; // MPNetEmbeddings' padding_idx
    return llvm::Error::success();
  }
  ModelWeightNames weightNames(const ModelConfig &c) const override {
    ModelWeightNames n;
    n.word = "embeddings.word_embeddings";
    n.position = "embeddings.position_embeddings";
    n.tokenType = "embeddings.token_type_embeddings";
    n.tokenTypeSynthetic = true;
    n.embNorm = "embeddings.LayerNorm";
    for (int64_t i = 0; i < c.layers; ++i) {
      std::string p = "encoder.layer." + std::to_string(i) + ".";
      n.layers.push_back({p + "attention.attn.q", p + "attention.attn.k", p + "attention.attn.v",
                          p + "attention.attn.o", p + "attention.LayerNorm", p + "intermediate.dense",
                          p + "output.dense", p + "output.LayerNorm"});
    }
    return n;
  }
  std::vector<WeightSpec> expectedWeights(const ModelConfig &c) const override {
    std::vector<WeightSpec> w = ModelFamily::expectedWeights(c);
    w.push_back({kBiasTable, {kBuckets, c.heads}});
    return w;
  }
  std::vector<std::string> checkpointPrefixes(const ModelConfig &) const override { return {"mpnet.", ""}; }
  SpecialTokenTexts specialTokens() const override { return {"[UNK]", "<s>", "</s>", "<pad>"}; }
  llvm::Expected<ClassifierWeightNames> classifierNames(const ModelConfig &c) const override {
    return ModelFamily::classifierNames(c); // no MPNet head yet
  }
  // Per-row int8 word embeddings cost MPNet more than BERT: on the project's
  // 64 sentences the int8 build's min token cosine vs fp32 is 0.984 with
  // them, 0.988 without (BERT's gate: 0.985); the table is a lookup, so
  // float costs size, not time.
  std::vector<std::string> int8KeepFloat() const override { return {"embeddings.word_embeddings.weight"}; }
  mlir::Value emitEncoder(EncoderEmitter &e) const override {
    ModelWeightNames n = weightNames(e.config());
    mlir::Value x = e.embeddings(n);
    e.setRelativePositionBias(e.weight(kBiasTable), kMaxDistance);
    for (const LayerWeightNames &l : n.layers)
      x = e.postLayerNormLayer(x, l);
    return x;
  }
};

} // namespace

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &mpnetFamily() {
  static const MpnetFamily family;
  return family;
}
} // namespace encc
