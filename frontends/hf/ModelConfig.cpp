//===- ModelConfig.cpp - config.json -> ModelConfig -----------------------===//
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"

#include <nlohmann/json.hpp>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

namespace {

const char *jsonTypeName(const json &j) {
  switch (j.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  case json::value_t::number_float:
    return "a float";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  default:
    return "an unknown type";
  }
}

/// Typed field access with errors that name the field and the expected type.
struct Fields {
  const json &obj;
  const std::string &path;

  llvm::Error missing(const char *key, const char *expected) const {
    return hfError(path + ": field '" + key + "' is missing (expected " + expected + ")");
  }
  llvm::Error wrongType(const char *key, const json &v, const char *expected) const {
    return hfError(path + ": field '" + key + "' is " + jsonTypeName(v) + ", expected " + expected);
  }

  /// A positive integer; `fallback` >= 0 makes the field optional.
  llvm::Error getInt(const char *key, int64_t &out, int64_t fallback = -1, int64_t min = 1) const {
    auto it = obj.find(key);
    if (it == obj.end() || (it->is_null() && fallback >= 0)) {
      if (fallback < 0)
        return missing(key, "an integer");
      out = fallback;
      return llvm::Error::success();
    }
    if (!it->is_number_integer())
      return wrongType(key, *it, "an integer");
    int64_t v = it->get<int64_t>();
    if (v < min || v > (int64_t(1) << 31))
      return hfError(path + ": field '" + key + "' is " + Twine(v) + ", expected an integer in [" +
                     Twine(min) + ", 2^31]");
    out = v;
    return llvm::Error::success();
  }

  llvm::Error getDouble(const char *key, double &out, double fallback) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      out = fallback;
      return llvm::Error::success();
    }
    if (!it->is_number())
      return wrongType(key, *it, "a number");
    out = it->get<double>();
    if (!(out > 0 && out < 1))
      return hfError(path + ": field '" + key + "' is " + std::to_string(out) +
                     ", expected a number in (0, 1)");
    return llvm::Error::success();
  }

  llvm::Error getString(const char *key, std::string &out, const char *fallback) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      if (!fallback)
        return missing(key, "a string");
      out = fallback;
      return llvm::Error::success();
    }
    if (!it->is_string())
      return wrongType(key, *it, "a string");
    out = it->get<std::string>();
    return llvm::Error::success();
  }
};

} // namespace

llvm::Expected<ModelConfig> encc::parseModelConfig(const std::string &text,
                                                   const std::string &path) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return hfError(path + ": not valid JSON");
  if (!j.is_object())
    return hfError(path + ": expected a JSON object");
  Fields f{j, path};
  ModelConfig c;
  if (auto e = f.getString("model_type", c.modelType, nullptr))
    return std::move(e);
  const std::string &mt = c.modelType;
  bool isBert = mt == "bert";
  bool isRoberta = mt == "roberta" || mt == "xlm-roberta" || mt == "camembert";
  bool isDistil = mt == "distilbert";
  if (!isBert && !isRoberta && !isDistil)
    return hfError(
        path + ": model_type '" + mt +
        "' is not supported (supported: bert, roberta, xlm-roberta, camembert, distilbert)");

  const char *actKey = "hidden_act";
  if (isDistil) {
    actKey = "activation";
    if (auto e = f.getInt("dim", c.hidden))
      return std::move(e);
    if (auto e = f.getInt("n_layers", c.layers))
      return std::move(e);
    if (auto e = f.getInt("n_heads", c.heads))
      return std::move(e);
    if (auto e = f.getInt("hidden_dim", c.intermediate))
      return std::move(e);
    c.typeVocab = 0;
    c.layerNormEps = 1e-12;
  } else {
    if (auto e = f.getInt("hidden_size", c.hidden))
      return std::move(e);
    if (auto e = f.getInt("num_hidden_layers", c.layers))
      return std::move(e);
    if (auto e = f.getInt("num_attention_heads", c.heads))
      return std::move(e);
    if (auto e = f.getInt("intermediate_size", c.intermediate))
      return std::move(e);
    if (auto e = f.getInt("type_vocab_size", c.typeVocab, 2))
      return std::move(e);
    if (auto e = f.getDouble("layer_norm_eps", c.layerNormEps, 1e-12))
      return std::move(e);
    std::string posType;
    if (auto e = f.getString("position_embedding_type", posType, "absolute"))
      return std::move(e);
    if (posType != "absolute")
      return hfError(path + ": position_embedding_type '" + posType +
                     "' is not supported (supported: absolute)");
  }
  if (auto e = f.getInt("vocab_size", c.vocab))
    return std::move(e);
  if (auto e = f.getInt("max_position_embeddings", c.maxPositions))
    return std::move(e);
  if (isRoberta) {
    int64_t pad = 1;
    if (auto e = f.getInt("pad_token_id", pad, 1, 0))
      return std::move(e);
    c.positionOffset = pad + 1;
  }

  std::string act;
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
