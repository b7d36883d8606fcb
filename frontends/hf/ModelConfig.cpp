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

using namespace encc;
using llvm::Twine;
using nlohmann::json;

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

  const char *actKey = c.family->activationKey();
  std::string act;
  if (f.isNull(actKey)) // absent means gelu; an explicit null is a broken config
    return hfError(path + ": field '" + actKey +
                   "' is null, expected a string (gelu, gelu_new, gelu_pytorch_tanh, gelu_fast)");
  if (auto e = f.getString(actKey, act, "gelu"))
    return std::move(e);
  if (act == "gelu")
    c.hiddenAct = "gelu";
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
    c.hiddenAct = "gelu_new"; // the same tanh approximation, written three ways
  else
    return hfError(path + ": " + actKey + " '" + act +
                   "' is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, gelu_fast)");

  if (c.hidden % c.heads != 0)
    return hfError(path + ": hidden size " + Twine(c.hidden) +
                   " is not divisible by the number of attention heads " + Twine(c.heads));
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
  d.activation = c.hiddenAct;
  d.layerNormEps = c.layerNormEps;
  d.pooling = c.pooling;
  d.normalize = c.normalize;
  return d;
}
