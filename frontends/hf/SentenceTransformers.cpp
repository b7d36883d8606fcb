//===- SentenceTransformers.cpp - Pooling, normalize, max length ----------===//
//
// sentence-transformers folders list their modules in modules.json; the
// Pooling module's config.json picks the pooling mode, a Normalize module
// L2-normalises the result, sentence_bert_config.json caps the length, and
// config_sentence_transformers.json names the prompts (query / document
// instructions) and the one encode() uses by default. A PyLate ColBERT
// checkpoint lists pylate's Dense modules after the Transformer (Colbert.cpp
// reads its settings).
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"

#include "encrt/schema_version.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include <nlohmann/json.hpp>

#include <algorithm>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

static llvm::Expected<json> readJson(const std::string &path) {
  auto text = readTextFile(path);
  if (!text)
    return text.takeError();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return hfError(path + ": not valid JSON");
  return std::move(j);
}

/// `path` as a JSON object (a module's config.json).
static llvm::Expected<json> readJsonObject(const std::string &path) {
  auto j = readJson(path);
  if (j && !j->is_object())
    return hfError(path + ": expected a JSON object");
  return j;
}

static llvm::Error readPoolingConfig(const std::string &path, ModelConfig &config) {
  auto j = readJsonObject(path);
  if (!j)
    return j.takeError();
  static const std::pair<const char *, Pooling> supported[] = {
      {"pooling_mode_cls_token", Pooling::Cls},
      {"pooling_mode_mean_tokens", Pooling::Mean},
      {"pooling_mode_lasttoken", Pooling::Last}};
  std::vector<std::string> enabled;
  std::optional<Pooling> mode;
  for (auto it = j->begin(); it != j->end(); ++it) {
    if (!llvm::StringRef(it.key()).starts_with("pooling_mode"))
      continue;
    if (it.key() == "pooling_mode") { // newer sentence-transformers: a string
      if (!it->is_string())
        return hfError(path + ": field 'pooling_mode' must be a string");
      continue;
    }
    if (!it->is_boolean())
      return hfError(path + ": field '" + it.key() + "' must be a boolean");
    if (!it->get<bool>())
      continue;
    enabled.push_back(it.key());
    for (const auto &[key, pooling] : supported)
      if (it.key() == key)
        mode = pooling;
  }
  if (enabled.size() != 1 || !mode) {
    std::string list;
    for (auto &e : enabled)
      list += (list.empty() ? "" : ", ") + e;
    return hfError(path + ": pooling modes {" + list +
                   "} are not supported (supported: exactly one of "
                   "pooling_mode_cls_token, pooling_mode_mean_tokens, pooling_mode_lasttoken)");
  }
  config.pooling = *mode;
  // include_prompt false (INSTRUCTOR-style): the pooling skips the prompt's
  // tokens, which encrt does not do; refused below if the model has prompts.
  if (auto it = j->find("include_prompt"); it != j->end() && !it->is_null()) {
    if (!it->is_boolean())
      return hfError(path + ": field 'include_prompt' must be a boolean");
    if (!it->get<bool>())
      config.poolingSkipsPrompt = path;
  }
  return llvm::Error::success();
}

/// A SparseEncoder's SpladePooling config.json: the max strategy of
/// log(1 + relu(logits)) over the vocabulary (what encrt computes).
static llvm::Error readSpladePoolingConfig(const std::string &path, ModelConfig &config) {
  auto j = readJsonObject(path);
  if (!j)
    return j.takeError();
  for (const auto &[key, want] : {std::pair<const char *, const char *>{"pooling_strategy", "max"},
                                  {"activation_function", "relu"}}) {
    auto it = j->find(key);
    if (it == j->end() || it->is_null())
      continue; // sentence-transformers' defaults: max, relu
    if (!it->is_string() || it->get<std::string>() != want)
      return hfError(path + ": " + key + " " + it->dump() + " is not supported (supported: \"" + want + "\")");
  }
  for (const char *key : {"embedding_dimension", "word_embedding_dimension"})
    if (auto it = j->find(key); it != j->end() && !it->is_null() &&
                                !(it->is_number_integer() && it->get<int64_t>() == config.vocab))
      return hfError(path + ": " + key + " " + it->dump() + " is not the vocabulary size " + Twine(config.vocab));
  config.pooling = Pooling::Splade;
  return llvm::Error::success();
}

constexpr size_t kMaxPrompts = ENCM_MAX_PROMPTS, kMaxPromptNameBytes = ENCM_MAX_PROMPT_NAME_BYTES,
                 kMaxPromptBytes = ENCM_MAX_PROMPT_BYTES;

/// A Dense module's config.json: the widths (chained from `chain`'s last, or
/// the hidden size), the bias, Identity or Tanh, appended to `chain`.
static llvm::Error readDenseConfig(const std::string &dir, const std::string &sub, int64_t hidden,
                                   std::vector<ModelConfig::DenseModule> &chain) {
  const std::string path = dir + "/" + sub + "/config.json";
  auto j = readJsonObject(path);
  if (!j)
    return j.takeError();
  ModelConfig::DenseModule d;
  d.dir = sub;
  for (auto [key, out] : {std::pair{"in_features", &d.in}, std::pair{"out_features", &d.out}}) {
    auto it = j->find(key);
    if (it == j->end() || !it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 65536)
      return hfError(path + ": field '" + key + "' must be an integer in [1, 65536]");
    *out = it->get<int64_t>();
  }
  if (auto it = j->find("bias"); it != j->end() && !it->is_null()) {
    if (!it->is_boolean())
      return hfError(path + ": field 'bias' must be a boolean");
    d.bias = it->get<bool>();
  }
  std::string act = "torch.nn.modules.linear.Identity";
  if (auto it = j->find("activation_function"); it != j->end() && !it->is_null()) {
    if (!it->is_string())
      return hfError(path + ": field 'activation_function' must be a string");
    act = it->get<std::string>();
  }
  if (act == "torch.nn.modules.activation.Tanh" || act == "torch.nn.Tanh")
    d.tanh = true;
  else if (act != "torch.nn.modules.linear.Identity" && act != "torch.nn.Identity")
    return hfError(path + ": activation_function '" + act +
                   "' is not supported (supported: torch.nn.modules.linear.Identity, "
                   "torch.nn.modules.activation.Tanh)");
  for (const char *key : {"module_input_name", "module_output_name"})
    if (auto it = j->find(key); it != j->end() && !it->is_null() &&
                                !(it->is_string() && it->get<std::string>() == "sentence_embedding"))
      return hfError(path + ": " + key + " other than sentence_embedding is not supported");
  if (auto it = j->find("use_residual"); it != j->end() && !(it->is_boolean() && !it->get<bool>()))
    return hfError(path + ": use_residual other than false is not supported");
  const int64_t width = chain.empty() ? hidden : chain.back().out;
  if (d.in != width)
    return hfError(path + ": in_features " + Twine(d.in) + " does not match the embedding's width " + Twine(width));
  chain.push_back(std::move(d));
  return llvm::Error::success();
}

llvm::Error encc::readColbertDense(const std::string &dir, const std::string &sub, ModelConfig &config) {
  if (!config.colbert)
    config.colbert.emplace();
  return readDenseConfig(dir, sub, config.hidden, config.colbert->dense);
}

/// config_sentence_transformers.json's prompts and default_prompt_name.
static llvm::Error readPrompts(const std::string &path, ModelConfig &config) {
  auto text = readTextFile(path);
  if (!text)
    return text.takeError();
  // Ordered: the prompts keep the file's order (sentence-transformers' dict).
  const auto j = std::make_optional(nlohmann::ordered_json::parse(*text, nullptr, /*allow_exceptions=*/false));
  if (j->is_discarded())
    return hfError(path + ": not valid JSON");
  if (!j->is_object())
    return hfError(path + ": expected a JSON object");
  if (auto it = j->find("prompts"); it != j->end() && !it->is_null()) {
    if (!it->is_object())
      return hfError(path + ": field 'prompts' must be an object of prompt names to texts");
    if (it->size() > kMaxPrompts)
      return hfError(path + ": " + Twine(it->size()) + " prompts, over the limit of " + Twine(kMaxPrompts));
    for (auto p = it->begin(); p != it->end(); ++p) {
      if (!p->is_string())
        return hfError(path + ": prompts['" + p.key() + "'] must be a string");
      const std::string text = p->get<std::string>();
      if (p.key().empty() || p.key().size() > kMaxPromptNameBytes)
        return hfError(path + ": a prompt name must have 1 to " + Twine(kMaxPromptNameBytes) + " bytes");
      if (text.size() > kMaxPromptBytes)
        return hfError(path + ": prompts['" + p.key() + "'] has " + Twine(text.size()) + " bytes (at most " +
                       Twine(kMaxPromptBytes) + ")");
      config.prompts.emplace_back(p.key(), text);
    }
  }
  if (config.colbert) {
    if (auto e = readColbertConfig(path, *j, config))
      return e;
  }
  if (auto it = j->find("similarity_fn_name"); it != j->end() && !it->is_null() && !config.colbert) {
    using S = ModelDescription::Similarity;
    static const std::pair<const char *, S> kNames[] = {
        {"cosine", S::Cosine}, {"dot", S::Dot}, {"euclidean", S::Euclidean}, {"manhattan", S::Manhattan}};
    const auto *match = it->is_string() ? std::find_if(std::begin(kNames), std::end(kNames),
                                                       [&](const auto &n) { return *it == n.first; })
                                        : std::end(kNames);
    if (match == std::end(kNames))
      return hfError(path + ": similarity_fn_name " + it->dump() +
                     " is not one of cosine, dot, euclidean, manhattan");
    config.similarity = match->second;
  }
  if (auto it = j->find("default_prompt_name"); it != j->end() && !it->is_null()) {
    if (!it->is_string())
      return hfError(path + ": field 'default_prompt_name' must be a string or null");
    config.defaultPrompt = it->get<std::string>();
    if (std::none_of(config.prompts.begin(), config.prompts.end(),
                     [&](const auto &p) { return p.first == config.defaultPrompt; }))
      return hfError(path + ": default_prompt_name '" + config.defaultPrompt + "' is not one of the prompts");
  }
  return llvm::Error::success();
}

llvm::Error encc::readSentenceTransformersConfig(const std::string &dir, ModelConfig &config) {
  std::string modulesPath = dir + "/modules.json";
  if (!fileExists(modulesPath)) {
    auto stanford = isStanfordColbert(dir);
    if (!stanford)
      return stanford.takeError();
    if (*stanford)
      return readStanfordColbert(dir, config); // its own settings; no sentence-transformers files
    config.pooling = Pooling::Mean;
    config.normalize = true;
  } else {
    auto j = readJson(modulesPath);
    if (!j)
      return j.takeError();
    if (!j->is_array())
      return hfError(modulesPath + ": expected a JSON array of modules");
    config.pooling = Pooling::None;
    config.normalize = false;
    bool mlm = false; // an MLMTransformer came first
    for (const json &m : *j) {
      if (!m.is_object() || !m.contains("type") || !m["type"].is_string())
        return hfError(modulesPath + ": every module needs a string field 'type'");
      std::string type = m["type"].get<std::string>();
      llvm::StringRef kind = llvm::StringRef(type).rsplit('.').second;
      if (kind.empty())
        kind = type;
      std::string sub;
      if (m.contains("path")) {
        if (!m["path"].is_string())
          return hfError(modulesPath + ": field 'path' of module '" + type + "' must be a string");
        sub = m["path"].get<std::string>();
        // A folder of the model's, by a relative path: nothing outside it.
        if (!sub.empty() && (sub.front() == '/' || llvm::is_contained(llvm::split(sub, '/'), "..")))
          return hfError(modulesPath + ": module '" + type + "' has path '" + sub +
                         "', expected a folder inside the model's folder");
      }
      // A PyLate ColBERT checkpoint: the Transformer, then per-token Dense modules.
      if (llvm::StringRef(type).starts_with("pylate.") && kind == "Dense") {
        if (config.pooling != Pooling::None || config.normalize || !config.dense.empty())
          return hfError(modulesPath + ": PyLate's Dense modules project every token; they cannot follow a Pooling, "
                                       "Dense or Normalize module");
        if (sub.empty())
          return hfError(modulesPath + ": a Dense module needs a 'path' (its folder)");
        if (auto e = readColbertDense(dir, sub, config))
          return e;
        continue;
      }
      if (config.colbert)
        return hfError(modulesPath + ": module '" + type + "' after PyLate's Dense modules is not supported");
      // A SparseEncoder (SPLADE): the masked-LM model, then SpladePooling.
      const bool sparse = llvm::StringRef(type).starts_with("sentence_transformers.sparse_encoder.");
      if (kind == "Transformer" || (sparse && kind == "MLMTransformer")) {
        mlm |= kind == "MLMTransformer";
        continue;
      }
      if (sparse && kind == "SpladePooling") {
        if (!mlm || config.pooling != Pooling::None)
          return hfError(modulesPath + ": SpladePooling must follow an MLMTransformer module");
        if (auto e = readSpladePoolingConfig((sub.empty() ? dir : dir + "/" + sub) + "/config.json", config))
          return e;
        continue;
      }
      if (kind == "Normalize") {
        config.normalize = true;
        continue;
      }
      if (kind == "Dense") {
        if (config.pooling == Pooling::None || config.normalize)
          return hfError(modulesPath + ": a Dense module before the Pooling or after the Normalize module is not "
                                       "supported (supported: Pooling, then Dense modules, then Normalize)");
        if (sub.empty())
          return hfError(modulesPath + ": a Dense module needs a 'path' (its folder)");
        if (auto e = readDenseConfig(dir, sub, config.hidden, config.dense))
          return e;
        continue;
      }
      if (kind == "Pooling") {
        std::string poolDir = sub.empty() ? dir : dir + "/" + sub;
        if (auto e = readPoolingConfig(poolDir + "/config.json", config))
          return e;
        continue;
      }
      return hfError(modulesPath + ": module type '" + type +
                     "' is not supported (supported: Transformer, Pooling, Dense, Normalize; sparse_encoder's "
                     "MLMTransformer, SpladePooling; pylate's Dense)");
    }
  }

  std::string sbPath = dir + "/sentence_bert_config.json";
  if (fileExists(sbPath)) {
    auto j = readJson(sbPath);
    if (!j)
      return j.takeError();
    if (j->is_object() && j->contains("max_seq_length") && !(*j)["max_seq_length"].is_null()) {
      const json &v = (*j)["max_seq_length"];
      if (!v.is_number_integer() || v.get<int64_t>() < 1)
        return hfError(sbPath + ": field 'max_seq_length' must be a positive integer");
      // Longer than the position table: capped to what the model can embed.
      config.maxSeq = std::min(v.get<int64_t>(), config.maxPositions - config.positionOffset);
    }
  }

  const std::string promptsPath = dir + "/config_sentence_transformers.json";
  if (fileExists(promptsPath)) {
    if (auto e = readPrompts(promptsPath, config))
      return e;
  } else if (config.colbert) {
    if (auto e = readColbertConfig(promptsPath, nlohmann::ordered_json::object(), config))
      return e;
  }
  if (!config.prompts.empty() && !config.poolingSkipsPrompt.empty())
    return hfError(config.poolingSkipsPrompt + ": include_prompt is false (the pooling leaves out the prompt's "
                                               "tokens), which encc does not implement for a model with prompts");
  return llvm::Error::success();
}
