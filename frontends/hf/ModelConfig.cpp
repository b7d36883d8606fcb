//===- ModelConfig.cpp - config.json -> ModelConfig -----------------------===//
//
// The fields every family shares (model_type, vocab_size,
// max_position_embeddings, the activation) are read here; the rest by the
// family that model_type names.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"

#include "encrt/schema_version.h"

#include <charconv>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

/// architectures: [...ForSequenceClassification] -> c.numLabels (id2label's
/// size, else num_labels, else 2, as transformers counts them) and the
/// activation sentence-transformers' CrossEncoder applies.
static llvm::Error readClassifierHead(const json &j, const ConfigFields &f, ModelConfig &c) {
  auto arch = j.find("architectures");
  if (arch == j.end() || arch->is_null())
    return llvm::Error::success();
  if (!arch->is_array())
    return hfError(f.path() + ": field 'architectures' must be an array of strings");
  bool classifier = false;
  for (const json &a : *arch) {
    if (!a.is_string())
      return hfError(f.path() + ": field 'architectures' must be an array of strings");
    classifier |= llvm::StringRef(a.get<std::string>()).ends_with("ForSequenceClassification");
  }
  if (!classifier)
    return llvm::Error::success();
  if (auto head = c.family->classifierNames(c); !head)
    return hfError(f.path() + ": " + llvm::toString(head.takeError()));
  auto labels = j.find("id2label");
  if (labels != j.end() && !labels->is_null()) {
    if (!labels->is_object() || labels->empty())
      return hfError(f.path() + ": field 'id2label' must be a non-empty object");
    c.numLabels = static_cast<int64_t>(labels->size());
    if (c.numLabels <= 4096) { // over: refused below
      // Keys "0".."n-1" (transformers writes label ids as strings), each naming a label.
      c.labels.assign(static_cast<size_t>(c.numLabels), "");
      for (const auto &[key, name] : labels->items()) {
        size_t id = 0;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
        if (ec != std::errc() || end != key.data() + key.size() || id >= c.labels.size() ||
            std::to_string(id) != key || !c.labels[id].empty())
          return hfError(f.path() + ": id2label's keys must be the label ids 0 to " + Twine(c.numLabels - 1) +
                         ", got '" + key + "'");
        if (!name.is_string() || name.get<std::string>().empty() ||
            name.get<std::string>().size() > ENCM_MAX_LABEL_BYTES) // UTF-8: the JSON parser checked it
          return hfError(f.path() + ": id2label['" + key + "'] must be a UTF-8 string of 1 to " +
                         Twine(ENCM_MAX_LABEL_BYTES) + " bytes");
        c.labels[id] = name.get<std::string>();
      }
    }
  } else if (auto e = f.getInt("num_labels", c.numLabels, 2)) {
    return e;
  }
  if (c.numLabels > 4096)
    return hfError(f.path() + ": " + Twine(c.numLabels) + " labels; at most 4096 are supported");
  std::string act;
  if (auto e = f.getString("sbert_ce_default_activation_function", act, ""))
    return e;
  llvm::StringRef a(act);
  if (a.empty())
    c.scoreActivation = c.numLabels == 1 ? "sigmoid" : "identity";
  else if (a == "torch.nn.modules.activation.Sigmoid" || a == "torch.nn.Sigmoid")
    c.scoreActivation = "sigmoid";
  else if (a == "torch.nn.modules.linear.Identity" || a == "torch.nn.Identity")
    c.scoreActivation = "identity";
  else
    return hfError(f.path() + ": sbert_ce_default_activation_function '" + act +
                   "' is not supported (supported: torch.nn.Sigmoid, torch.nn.Identity)");
  return llvm::Error::success();
}

llvm::Error encc::readEncoderDims(const ConfigFields &f, ModelConfig &c) {
  if (auto e = f.getInt("hidden_size", c.hidden))
    return e;
  if (auto e = f.getInt("num_hidden_layers", c.layers))
    return e;
  if (auto e = f.getInt("num_attention_heads", c.heads))
    return e;
  return f.getInt("intermediate_size", c.intermediate);
}

llvm::Error encc::readActivation(const ConfigFields &f, const char *key, Activation &out, bool gated) {
  const std::string supported =
      std::string("gelu, gelu_new, gelu_pytorch_tanh, gelu_fast") + (gated ? ", silu" : "");
  std::string act;
  if (f.isNull(key)) // absent means gelu; an explicit null is a broken config
    return hfError(f.path() + ": field '" + key + "' is null, expected a string (" + supported + ")");
  if (auto e = f.getString(key, act, "gelu"))
    return e;
  if (act == "gelu")
    out = Activation::Gelu;
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
    out = Activation::GeluTanh; // the same tanh approximation, written three ways
  else if (gated && (act == "silu" || act == "swish"))
    out = Activation::Silu;
  else
    return hfError(f.path() + ": " + key + " '" + act + "' is not supported (supported: " + supported + ")");
  return llvm::Error::success();
}

llvm::Error encc::readLayerRopeTheta(const ConfigFields &f, const char *layerType, const char *legacyKey,
                                     double fallback, double &theta) {
  if (auto e = f.getDouble(legacyKey, theta, fallback, 1, 1e12))
    return e;
  llvm::Expected<const nlohmann::json *> params = f.getObject("rope_parameters");
  if (!params)
    return params.takeError();
  if (!*params)
    return llvm::Error::success();
  const std::string path = f.path() + ": rope_parameters";
  llvm::Expected<const nlohmann::json *> kind = layerType ? ConfigFields(**params, path).getObject(layerType)
                                                          : llvm::Expected<const nlohmann::json *>(*params);
  if (!kind)
    return kind.takeError();
  if (!*kind)
    return llvm::Error::success();
  const std::string kindPath = layerType ? path + "." + layerType : path;
  ConfigFields k(**kind, kindPath);
  std::string type;
  if (auto e = k.getString("rope_type", type, "default"))
    return e;
  if (type != "default")
    return hfError(kindPath + ": rope_type '" + type + "' is not supported (supported: default)");
  return k.getDouble("rope_theta", theta, theta, 1, 1e12);
}

llvm::Expected<std::vector<bool>> encc::readSlidingLayers(const ConfigFields &f, int64_t layers,
                                                          llvm::function_ref<bool(int64_t)> fallback) {
  static const char *const kFull = "full_attention", *const kSliding = "sliding_attention";
  std::vector<std::string> types;
  bool listed = false;
  if (auto e = f.getStringList("layer_types", types, listed))
    return std::move(e);
  if (listed && static_cast<int64_t>(types.size()) != layers)
    return hfError(f.path() + ": layer_types lists " + Twine(types.size()) + " layers, num_hidden_layers is " +
                   Twine(layers));
  std::vector<bool> sliding;
  if (layers > 1024)
    return sliding;
  for (int64_t i = 0; i < layers; ++i) {
    if (!listed)
      sliding.push_back(fallback(i));
    else if (types[i] == kFull || types[i] == kSliding)
      sliding.push_back(types[i] == kSliding);
    else
      return hfError(f.path() + ": layer_types[" + Twine(i) + "] '" + types[i] + "' is not supported (supported: " +
                     kFull + ", " + kSliding + ")");
  }
  return sliding;
}

llvm::Expected<ModelConfig> encc::parseModelConfig(const std::string &text, const std::string &path) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return hfError(path + ": not valid JSON");
  if (!j.is_object())
    return hfError(path + ": expected a JSON object");
  ConfigFields f{j, path};
  ModelConfig c;
  if (auto e = f.getString("model_type", c.modelType, nullptr))
    return std::move(e);
  c.family = findModelFamily(c.modelType);
  if (!c.family)
    return hfError(path + ": model_type '" + c.modelType + "' is not supported (supported: " +
                   supportedModelTypes() + ")");
  c.family = &c.family->variant(f);
  // Every family here is an encoder: a decoder config (causal mask, cross
  // attention) would compile and run without them, silently wrong.
  for (const char *key : {"is_decoder", "add_cross_attention"}) {
    bool set = false;
    if (auto e = f.getBool(key, set, false))
      return std::move(e);
    if (set)
      return hfError(path + ": field '" + key +
                     "' is true: decoder models (causal attention, cross attention) are not supported; "
                     "encc compiles encoders");
  }
  if (auto e = c.family->readConfig(f, c))
    return std::move(e);
  if (auto e = f.getInt("vocab_size", c.vocab))
    return std::move(e);
  if (auto e = f.getInt("max_position_embeddings", c.maxPositions))
    return std::move(e);

  if (auto e = readActivation(f, c.family->activationKey(), c.hiddenAct, c.family->gatedFeedForward()))
    return std::move(e);

  if (auto e = f.getBool("tie_word_embeddings", c.tieWordEmbeddings, true))
    return std::move(e);
  if (auto e = readClassifierHead(j, f, c))
    return std::move(e);

  // Checked before anything is built per layer (the weight-size check lists
  // every layer's tensors: 10^7 layers took 21 GB to be refused).
  constexpr int64_t kMaxLayers = 1024; // the largest encoders have 48
  if (c.layers > kMaxLayers)
    return hfError(path + ": " + Twine(c.layers) + " layers, over the limit of " +
                   Twine(kMaxLayers));
  if (c.headDim == 0 && c.hidden % c.heads != 0)
    return hfError(path + ": hidden size " + Twine(c.hidden) +
                   " is not divisible by the number of attention heads " + Twine(c.heads));
  if (c.kvHeads != 0 && (c.kvHeads < 1 || c.heads % c.kvHeads != 0))
    return hfError(path + ": num_key_value_heads " + Twine(c.kvHeads) +
                   " does not divide the number of attention heads " + Twine(c.heads));
  if (c.maxPositions <= c.positionOffset)
    return hfError(path + ": max_position_embeddings " + Twine(c.maxPositions) +
                   " leaves no positions after the position offset " + Twine(c.positionOffset));
  c.maxSeq = c.maxPositions - c.positionOffset;
  return c;
}

ModelDescription encc::describe(const ModelConfig &c) {
  ModelDescription d;
  d.architecture = c.modelType;
  d.hidden = c.hidden;
  d.layers = c.layers;
  d.heads = c.heads;
  d.intermediate = c.intermediate;
  d.vocab = c.vocab;
  d.maxSeq = c.maxSeq;
  d.typeVocab = c.hasTypeIds() ? c.typeVocab : 1;
  d.numLabels = c.numLabels;
  d.scoreActivation = c.scoreActivation;
  d.labels = c.labels;
  d.embeddingDim = c.embeddingDim() == c.hidden ? 0 : c.embeddingDim();
  d.activation = c.hiddenAct;
  d.layerNormEps = c.layerNormEps;
  d.pooling = c.pooling;
  d.normalize = c.normalize;
  d.prompts = c.prompts;
  d.defaultPrompt = c.defaultPrompt;
  d.similarity = c.similarity;
  d.int8KeepFloat = c.family->int8KeepFloat();
  if (c.sparseHead) {
    d.tokenHeads.push_back({TokenHeadDescription::Kind::LexicalWeights, 0, c.sparseSkipIds});
    d.keepFloat.push_back("sparse_linear.weight");
  }
  if (c.colbertDim)
    d.tokenHeads.push_back({TokenHeadDescription::Kind::MultiVector, /*skipLeading=*/1, {}, {}});
  if (c.colbert)
    d.tokenHeads.push_back({TokenHeadDescription::Kind::MultiVector, /*skipLeading=*/0, {}, c.colbert->roles});
  return d;
}
