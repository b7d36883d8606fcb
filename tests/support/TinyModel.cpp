//===- TinyModel.cpp - Tiny random Hugging Face encoder models ------------===//

#include "tests/support/TinyModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace encc::testing {

void applyTinyModelFlag(TinyModelSpec &spec, const std::string &flag, const std::string &value) {
  auto integer = [&]() -> long long {
    size_t used = 0;
    long long x = 0;
    try {
      x = std::stoll(value, &used, 10);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != value.size())
      throw std::invalid_argument(flag + ": expected an integer, got '" + value + "'");
    return x;
  };
  auto positive = [&] {
    long long x = integer();
    if (x <= 0 || x > (1 << 30))
      throw std::invalid_argument(flag + ": expected a positive integer, got '" + value + "'");
    return int(x);
  };
  if (flag == "--model-type") spec.modelType = value;
  else if (flag == "--hidden") spec.hidden = positive();
  else if (flag == "--layers") spec.layers = positive();
  else if (flag == "--heads") spec.heads = positive();
  else if (flag == "--intermediate") spec.intermediate = positive();
  else if (flag == "--vocab") spec.vocab = positive();
  else if (flag == "--max-positions") spec.maxPositions = positive();
  else if (flag == "--type-vocab") spec.typeVocab = positive();
  else if (flag == "--act") spec.act = value;
  else if (flag == "--eps") {
    try {
      spec.eps = std::stod(value);
    } catch (const std::exception &) {
      throw std::invalid_argument("--eps: expected a number, got '" + value + "'");
    }
  } else if (flag == "--seed") {
    long long x = integer();
    if (x < 0)
      throw std::invalid_argument("--seed: expected a non-negative integer");
    spec.seed = uint64_t(x);
  } else if (flag == "--pooling") spec.pooling = value;
  else if (flag == "--dtype") spec.dtype = value;
  else if (flag == "--weight-prefix") spec.weightPrefix = value;
  else if (flag == "--num-labels") spec.numLabels = positive();
  else throw std::invalid_argument("unknown option '" + flag + "'");
}

TinyModelSpec tinyModelSpecFromFlags(const std::vector<std::string> &flagValuePairs) {
  if (flagValuePairs.size() % 2)
    throw std::invalid_argument("tiny model flags: an option without a value");
  TinyModelSpec spec;
  for (size_t i = 0; i < flagValuePairs.size(); i += 2)
    applyTinyModelFlag(spec, flagValuePairs[i], flagValuePairs[i + 1]);
  return spec;
}

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// Deterministic stream per (seed, tensor name): U(center - half, center + half).
std::vector<double> uniform(uint64_t seed, const std::string &name, size_t n,
                            double center, double half) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull ^ fnv1a(name);
  std::vector<double> v(n);
  for (auto &x : v) {
    double u = double(splitmix64(state) >> 11) * 0x1.0p-53; // [0, 1)
    x = center + half * (2.0 * u - 1.0);
  }
  return v;
}

void writeText(const fs::path &p, const std::string &text) {
  std::ofstream out(p);
  if (!out)
    throw std::runtime_error(p.string() + ": cannot create file");
  out << text;
  if (!out)
    throw std::runtime_error(p.string() + ": write failed");
}

void writeJson(const fs::path &p, const nlohmann::ordered_json &j) {
  writeText(p, j.dump(2) + "\n");
}

} // namespace

namespace {

/// DistilBERT's config.json and tensor names for the same weights (its
/// token-type table, all zeros, is not written: the model has none).
void writeDistilBert(const fs::path &root, const TinyModel &m) {
  const TinyModelSpec &spec = m.spec;
  nlohmann::ordered_json cfg;
  cfg["architectures"] = {"DistilBertModel"};
  cfg["model_type"] = "distilbert";
  cfg["dim"] = spec.hidden;
  cfg["n_layers"] = spec.layers;
  cfg["n_heads"] = spec.heads;
  cfg["hidden_dim"] = spec.intermediate;
  cfg["vocab_size"] = spec.vocab;
  cfg["max_position_embeddings"] = spec.maxPositions;
  cfg["activation"] = spec.act;
  cfg["sinusoidal_pos_embds"] = false;
  cfg["pad_token_id"] = 0;
  cfg["dropout"] = 0.0;
  cfg["attention_dropout"] = 0.0;
  cfg["encc_tiny_seed"] = spec.seed;
  writeJson(root / "config.json", cfg);
  const std::pair<const char *, const char *> renames[] = {
      {"attention.self.query", "attention.q_lin"},     {"attention.self.key", "attention.k_lin"},
      {"attention.self.value", "attention.v_lin"},     {"attention.output.dense", "attention.out_lin"},
      {"attention.output.LayerNorm", "sa_layer_norm"}, {"intermediate.dense", "ffn.lin1"},
      {"output.dense", "ffn.lin2"},                    {"output.LayerNorm", "output_layer_norm"}};
  std::map<std::string, std::vector<double>> weights;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto &[name, values] : m.weights) {
    std::string n = name.substr(spec.weightPrefix.size());
    if (n == "embeddings.token_type_embeddings.weight")
      continue;
    if (n.rfind("encoder.layer.", 0) == 0) {
      n = "transformer.layer." + n.substr(14);
      for (auto [from, to] : renames)
        if (size_t at = n.find(from); at != std::string::npos) {
          n.replace(at, std::string(from).size(), to);
          break;
        }
    }
    weights[spec.weightPrefix + n] = values;
    shapes[spec.weightPrefix + n] = m.shapes.at(name);
  }
  writeSafetensors((root / "model.safetensors").string(), weights, shapes, spec.dtype);
}

} // namespace

std::string layerTensorName(const TinyModelSpec &spec, const std::string &bertName) {
  if (!spec.mpnet())
    return bertName;
  static const std::pair<const char *, const char *> renames[] = {
      {"attention.self.query", "attention.attn.q"},   {"attention.self.key", "attention.attn.k"},
      {"attention.self.value", "attention.attn.v"},   {"attention.output.dense", "attention.attn.o"},
      {"attention.output.LayerNorm", "attention.LayerNorm"}};
  std::string n = bertName;
  for (auto [from, to] : renames)
    if (size_t at = n.find(from); at != std::string::npos)
      return n.replace(at, std::string(from).size(), to);
  return n;
}

void TinyModelSpec::validate() const {
  auto bad = [](const std::string &field, const std::string &why) {
    throw std::invalid_argument("TinyModelSpec." + field + ": " + why);
  };
  if (modelType != "bert" && modelType != "distilbert" && !robertaLayout())
    bad("modelType", "expected 'bert', 'distilbert', 'roberta', 'xlm-roberta' or 'mpnet', got '" + modelType + "'");
  if (modelType == "distilbert" && (eps != 1e-12 || (act != "gelu" && act != "relu")))
    bad("modelType", "distilbert has layer_norm_eps 1e-12 and activation gelu or relu only");
  if (hidden <= 0 || layers <= 0 || heads <= 0 || intermediate <= 0)
    bad("hidden/layers/heads/intermediate", "must be positive");
  if (hidden % heads)
    bad("heads", "hidden " + std::to_string(hidden) + " not divisible by " +
                     std::to_string(heads) + " heads");
  if (vocab < 5)
    bad("vocab", "must be >= 5 (the special tokens)");
  if (maxPositions <= positionOffset())
    bad("maxPositions", "must exceed the position offset " +
                            std::to_string(positionOffset()));
  if (typeVocab <= 0)
    bad("typeVocab", "must be positive");
  if (act != "gelu" && act != "gelu_new" && act != "gelu_pytorch_tanh" &&
      act != "gelu_fast" && act != "relu")
    bad("act", "expected gelu, gelu_new, gelu_pytorch_tanh, gelu_fast or "
               "relu, got '" + act + "'");
  if (!(eps > 0))
    bad("eps", "must be positive");
  if (pooling != "none" && pooling != "cls" && pooling != "mean" && pooling != "last")
    bad("pooling", "expected none, cls, mean or last, got '" + pooling + "'");
  if (numLabels < 0 || (numLabels > 0 && (pooling != "none" || modelType == "distilbert" || mpnet())))
    bad("numLabels", "a classification head needs pooling none and a bert or roberta layout");
  if (dtype != "F32" && dtype != "F16" && dtype != "BF16")
    bad("dtype", "expected F32, F16 or BF16, got '" + dtype + "'");
}

std::vector<std::string> tinyVocab(const TinyModelSpec &spec) {
  std::vector<std::string> v;
  if (spec.robertaLayout())
    v = {"[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]"};
  else
    v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const char *p : {".", ",", "?", "!", "'", "-", ":", ";", "(", ")"})
    v.push_back(p);
  for (char c = 'a'; c <= 'z'; ++c)
    v.push_back(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c)
    v.push_back("##" + std::string(1, c));
  for (const char *w :
       {"the", "a", "is", "man", "cat", "dog", "on", "in", "of", "and", "to",
        "eating", "food", "sits", "mat", "park", "play", "##ing", "##s", "##ed",
        "hello", "world", "how", "do", "i", "my", "it", "was", "are", "with",
        "for", "at", "by", "you", "he", "she", "we", "they", "new", "old",
        "good", "day", "time", "##er", "##ly", "##es", "this", "that", "what",
        "be", "not", "have", "has", "one", "two", "three"}) {
    if (std::find(v.begin(), v.end(), w) == v.end())
      v.push_back(w);
  }
  for (int i = 0; int(v.size()) < spec.vocab; ++i)
    v.push_back("tok" + std::to_string(i));
  v.resize(size_t(spec.vocab));
  return v;
}

TinyModel makeTinyWeights(const TinyModelSpec &spec) {
  spec.validate();
  TinyModel m;
  m.spec = spec;
  const int64_t H = spec.hidden, I = spec.intermediate;
  const std::string &P = spec.weightPrefix;
  // `prefixed`: stored under spec.weightPrefix (everything but a
  // classification head's own layers).
  auto add = [&](const std::string &name, std::vector<int64_t> shape,
                 double center, double half, bool prefixed = true) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    std::vector<double> v = uniform(spec.seed, name, n, center, half);
    for (double &x : v)
      x = roundToDtype(x, spec.dtype);
    const std::string key = (prefixed ? P : std::string()) + name;
    m.weights[key] = std::move(v);
    m.shapes[key] = std::move(shape);
  };
  // Linear layer [out, in]: U(-g,g)/sqrt(in) keeps activations O(g).
  auto linear = [&](const std::string &base, int64_t out, int64_t in, bool prefixed = true) {
    add(base + ".weight", {out, in}, 0.0, spec.linearGain / std::sqrt(double(in)), prefixed);
    add(base + ".bias", {out}, 0.0, 0.1, prefixed);
  };
  auto layerNorm = [&](const std::string &base) {
    add(base + ".weight", {H}, 1.0, 0.1);
    add(base + ".bias", {H}, 0.0, 0.1);
  };
  add("embeddings.word_embeddings.weight", {spec.vocab, H}, 0.0, 0.5);
  add("embeddings.position_embeddings.weight", {spec.maxPositions, H}, 0.0, 0.5);
  if (!spec.mpnet()) // mpnet has no token types
    add("embeddings.token_type_embeddings.weight", {spec.typeVocab, H}, 0.0, 0.5);
  if (spec.modelType == "distilbert") // no token types: the frontend's zero table
    std::fill(m.weights[P + "embeddings.token_type_embeddings.weight"].begin(),
              m.weights[P + "embeddings.token_type_embeddings.weight"].end(), 0.0);
  layerNorm("embeddings.LayerNorm");
  for (int l = 0; l < spec.layers; ++l) {
    std::string L = "encoder.layer." + std::to_string(l) + ".";
    auto named = [&](const char *bertName) { return L + layerTensorName(spec, bertName); };
    linear(named("attention.self.query"), H, H);
    linear(named("attention.self.key"), H, H);
    linear(named("attention.self.value"), H, H);
    linear(named("attention.output.dense"), H, H);
    layerNorm(named("attention.output.LayerNorm"));
    linear(L + "intermediate.dense", I, H);
    linear(L + "output.dense", H, I);
    layerNorm(L + "output.LayerNorm");
  }
  if (spec.mpnet()) // biases of a few units: comparable to the scores
    add(kMpnetBiasTable, {kMpnetBuckets, spec.heads}, 0.0, 2.0);
  if (spec.numLabels > 0) {
    const ClassifierNames head = classifierNames(spec);
    linear(head.dense, H, H, head.densePrefixed);
    linear(head.out, spec.numLabels, H, false);
  }
  return m;
}

ClassifierNames classifierNames(const TinyModelSpec &spec) {
  if (spec.robertaLayout())
    return {"classifier.dense", "classifier.out_proj", false};
  return {"pooler.dense", "classifier", true};
}

TinyModel writeTinyModel(const std::string &dir, const TinyModelSpec &spec) {
  TinyModel m = makeTinyWeights(spec);
  m.dir = dir;
  fs::path root(dir);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec)
    throw std::runtime_error(dir + ": cannot create directory: " + ec.message());

  const bool roberta = spec.robertaLayout();
  if (spec.modelType == "distilbert") {
    writeDistilBert(root, m);
  } else {
  nlohmann::ordered_json cfg;
  const std::string arch = spec.modelType == "xlm-roberta" ? "XLMRoberta"
                           : spec.mpnet()                  ? "MPNet"
                           : roberta                       ? "Roberta"
                                                           : "Bert";
  cfg["architectures"] = {arch + (spec.numLabels > 0 ? "ForSequenceClassification" : "Model")};
  if (spec.numLabels > 0) {
    nlohmann::ordered_json id2label, label2id;
    for (int i = 0; i < spec.numLabels; ++i) {
      id2label[std::to_string(i)] = "LABEL_" + std::to_string(i);
      label2id["LABEL_" + std::to_string(i)] = i;
    }
    cfg["id2label"] = id2label;
    cfg["label2id"] = label2id;
  }
  cfg["model_type"] = spec.modelType;
  cfg["hidden_size"] = spec.hidden;
  cfg["num_hidden_layers"] = spec.layers;
  cfg["num_attention_heads"] = spec.heads;
  cfg["intermediate_size"] = spec.intermediate;
  cfg["vocab_size"] = spec.vocab;
  cfg["max_position_embeddings"] = spec.maxPositions;
  if (spec.mpnet())
    cfg["relative_attention_num_buckets"] = kMpnetBuckets;
  else
    cfg["type_vocab_size"] = spec.typeVocab;
  cfg["hidden_act"] = spec.act;
  cfg["layer_norm_eps"] = spec.eps;
  cfg["pad_token_id"] = spec.padTokenId();
  if (roberta) {
    cfg["bos_token_id"] = 0;
    cfg["eos_token_id"] = 2;
  }
  cfg["position_embedding_type"] = "absolute";
  cfg["hidden_dropout_prob"] = 0.0;
  cfg["attention_probs_dropout_prob"] = 0.0;
  cfg["torch_dtype"] = spec.dtype == "F32"   ? "float32"
                       : spec.dtype == "F16" ? "float16"
                                             : "bfloat16";
  cfg["encc_tiny_seed"] = spec.seed;
  writeJson(root / "config.json", cfg);

  writeSafetensors((root / "model.safetensors").string(), m.weights, m.shapes,
                   spec.dtype);
  }

  std::string vocab;
  for (const auto &t : tinyVocab(spec))
    vocab += t + "\n";
  writeText(root / "vocab.txt", vocab);

  nlohmann::ordered_json tok;
  tok["tokenizer_class"] = "BertTokenizer";
  tok["do_lower_case"] = true;
  tok["unk_token"] = "[UNK]";
  tok["sep_token"] = "[SEP]";
  tok["pad_token"] = "[PAD]";
  tok["cls_token"] = "[CLS]";
  tok["mask_token"] = "[MASK]";
  tok["tokenize_chinese_chars"] = true;
  tok["strip_accents"] = nullptr;
  tok["model_max_length"] = spec.maxPositions - spec.positionOffset();
  writeJson(root / "tokenizer_config.json", tok);
  writeJson(root / "special_tokens_map.json",
            {{"unk_token", "[UNK]"},
             {"sep_token", "[SEP]"},
             {"pad_token", "[PAD]"},
             {"cls_token", "[CLS]"},
             {"mask_token", "[MASK]"}});

  if (spec.pooling != "none") {
    nlohmann::ordered_json modules = nlohmann::ordered_json::array();
    modules.push_back({{"idx", 0},
                       {"name", "0"},
                       {"path", ""},
                       {"type", "sentence_transformers.models.Transformer"}});
    modules.push_back({{"idx", 1},
                       {"name", "1"},
                       {"path", "1_Pooling"},
                       {"type", "sentence_transformers.models.Pooling"}});
    if (spec.normalize)
      modules.push_back({{"idx", 2},
                         {"name", "2"},
                         {"path", "2_Normalize"},
                         {"type", "sentence_transformers.models.Normalize"}});
    writeJson(root / "modules.json", modules);
    writeJson(root / "sentence_bert_config.json",
              {{"max_seq_length", spec.maxPositions - spec.positionOffset()},
               {"do_lower_case", false}});
    fs::create_directories(root / "1_Pooling", ec);
    if (ec)
      throw std::runtime_error(dir + "/1_Pooling: cannot create directory");
    nlohmann::ordered_json pool;
    pool["word_embedding_dimension"] = spec.hidden;
    pool["pooling_mode_cls_token"] = spec.pooling == "cls";
    pool["pooling_mode_mean_tokens"] = spec.pooling == "mean";
    pool["pooling_mode_max_tokens"] = false;
    pool["pooling_mode_mean_sqrt_len_tokens"] = false;
    pool["pooling_mode_lasttoken"] = spec.pooling == "last";
    writeJson(root / "1_Pooling" / "config.json", pool);
    if (spec.normalize)
      fs::create_directories(root / "2_Normalize", ec);
  }
  return m;
}

} // namespace encc::testing
