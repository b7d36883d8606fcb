//===- ReferenceEncoder.cpp - Float64 reference BERT encoder --------------===//
//
// Written for clarity: one function per sub-layer, plain loops, doubles.
//
//===----------------------------------------------------------------------===//

#include "tests/support/ReferenceEncoder.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace encc::testing {

namespace {

using Matrix = std::vector<std::vector<double>>; // [rows][cols]

/// Looks weights up by unprefixed name and checks their element count.
class Weights {
public:
  Weights(const WeightMap &w, std::string prefix)
      : map(w), prefix(std::move(prefix)) {}

  /// `name` under the checkpoint prefix, or exactly `name` when !prefixed.
  const std::vector<double> &get(const std::string &name, size_t n, bool prefixed = true) const {
    const std::string key = (prefixed ? prefix : std::string()) + name;
    auto it = map.find(key);
    if (it == map.end())
      throw std::runtime_error("reference encoder: missing weight '" + key + "'");
    if (it->second.size() != n)
      throw std::runtime_error("reference encoder: weight '" + key +
                               "' has " + std::to_string(it->second.size()) +
                               " values, expected " + std::to_string(n));
    return it->second;
  }

private:
  const WeightMap &map;
  std::string prefix;
};

/// y[r] = x[r] W^T + b, with the HF nn.Linear layout W [out][in].
Matrix linear(const Matrix &x, const std::vector<double> &w,
              const std::vector<double> &b, size_t in, size_t out) {
  Matrix y(x.size(), std::vector<double>(out));
  for (size_t r = 0; r < x.size(); ++r)
    for (size_t o = 0; o < out; ++o) {
      double acc = b[o];
      for (size_t i = 0; i < in; ++i)
        acc += x[r][i] * w[o * in + i];
      y[r][o] = acc;
    }
  return y;
}

/// Biased variance, eps inside the square root (as torch.nn.LayerNorm).
void layerNormInPlace(Matrix &x, const std::vector<double> &gamma,
                      const std::vector<double> &beta, double eps) {
  for (auto &row : x) {
    double mean = 0;
    for (double v : row)
      mean += v;
    mean /= double(row.size());
    double var = 0;
    for (double v : row)
      var += (v - mean) * (v - mean);
    var /= double(row.size());
    double inv = 1.0 / std::sqrt(var + eps);
    for (size_t i = 0; i < row.size(); ++i)
      row[i] = (row[i] - mean) * inv * gamma[i] + beta[i];
  }
}

double activation(const std::string &act, double x) {
  if (act == "gelu")
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") {
    const double c = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
  }
  if (act == "relu")
    return x > 0 ? x : 0.0;
  throw std::invalid_argument("reference encoder: unsupported hidden_act '" +
                              act + "'");
}

/// MPNet's bucket of the relative position rel = key - query (32 buckets,
/// max_distance 128), from the boundaries transformers 4.40.2's
/// MPNetEncoder.relative_position_bucket gives on torch 1.13 for |rel| <
/// 1024: distances 0..7 exact, then buckets 8..15 from 8, 12, 16, 23, 32, 46,
/// 64, 91 on; keys after the query in the upper 16.
size_t mpnetBucket(int64_t rel) {
  static const int64_t starts[] = {8, 12, 16, 23, 32, 46, 64, 91};
  const int64_t n = rel < 0 ? -rel : rel;
  size_t b = size_t(n);
  if (n >= 8) {
    b = 7;
    for (int64_t s : starts)
      b += n >= s;
  }
  return (rel > 0 ? 16 : 0) + b;
}

/// Multi-head self-attention for one sequence; keys j >= length excluded.
/// MPNet adds its relative position bias to the scaled scores.
Matrix selfAttention(const Matrix &x, const Weights &w, const std::string &L,
                     const TinyModelSpec &spec, size_t length) {
  const size_t H = size_t(spec.hidden), S = x.size();
  const size_t heads = size_t(spec.heads), d = H / heads;
  auto lin = [&](const std::string &bertName) {
    const std::string name = layerTensorName(spec, bertName);
    return linear(x, w.get(L + name + ".weight", H * H),
                  w.get(L + name + ".bias", H), H, H);
  };
  const std::vector<double> *bias =
      spec.mpnet() ? &w.get(kMpnetBiasTable, size_t(kMpnetBuckets) * heads) : nullptr;
  Matrix q = lin("attention.self.query"), k = lin("attention.self.key"),
         v = lin("attention.self.value");
  Matrix ctx(S, std::vector<double>(H, 0.0));
  const double scale = 1.0 / std::sqrt(double(d));
  for (size_t h = 0; h < heads; ++h) {
    for (size_t i = 0; i < S; ++i) {
      std::vector<double> p(length);
      double maxScore = -INFINITY;
      for (size_t j = 0; j < length; ++j) {
        double s = 0;
        for (size_t c = 0; c < d; ++c)
          s += q[i][h * d + c] * k[j][h * d + c];
        p[j] = s * scale;
        if (bias)
          p[j] += (*bias)[mpnetBucket(int64_t(j) - int64_t(i)) * heads + h];
        maxScore = std::max(maxScore, p[j]);
      }
      double sum = 0;
      for (double &e : p) {
        e = std::exp(e - maxScore);
        sum += e;
      }
      for (size_t j = 0; j < length; ++j)
        for (size_t c = 0; c < d; ++c)
          ctx[i][h * d + c] += p[j] / sum * v[j][h * d + c];
    }
  }
  const std::string out = layerTensorName(spec, "attention.output.dense");
  return linear(ctx, w.get(L + out + ".weight", H * H), w.get(L + out + ".bias", H), H, H);
}

Matrix encodeOne(const std::vector<int64_t> &ids, const std::vector<int64_t> *types,
                 size_t length, const Weights &w, const TinyModelSpec &spec) {
  const size_t H = size_t(spec.hidden), I = size_t(spec.intermediate);
  const size_t S = ids.size(), off = size_t(spec.positionOffset());
  const auto &word = w.get("embeddings.word_embeddings.weight",
                           size_t(spec.vocab) * H);
  const auto &pos = w.get("embeddings.position_embeddings.weight",
                          size_t(spec.maxPositions) * H);
  const std::vector<double> noTypes(H, 0.0); // mpnet: no token type table
  const auto &type = spec.mpnet() ? noTypes
                                  : w.get("embeddings.token_type_embeddings.weight",
                                          size_t(spec.typeVocab) * H);
  Matrix x(S, std::vector<double>(H));
  for (size_t s = 0; s < S; ++s)
    for (size_t c = 0; c < H; ++c)
      x[s][c] = word[size_t(ids[s]) * H + c] + pos[(s + off) * H + c] +
                type[size_t(types ? (*types)[s] : 0) * H + c];
  layerNormInPlace(x, w.get("embeddings.LayerNorm.weight", H),
                   w.get("embeddings.LayerNorm.bias", H), spec.eps);

  for (int l = 0; l < spec.layers; ++l) {
    const std::string L = "encoder.layer." + std::to_string(l) + ".";
    Matrix a = selfAttention(x, w, L, spec, length);
    for (size_t s = 0; s < S; ++s)
      for (size_t c = 0; c < H; ++c)
        a[s][c] += x[s][c];
    const std::string attnNorm = layerTensorName(spec, "attention.output.LayerNorm");
    layerNormInPlace(a, w.get(L + attnNorm + ".weight", H), w.get(L + attnNorm + ".bias", H), spec.eps);
    Matrix inter = linear(a, w.get(L + "intermediate.dense.weight", I * H),
                          w.get(L + "intermediate.dense.bias", I), H, I);
    for (auto &row : inter)
      for (double &e : row)
        e = activation(spec.act, e);
    Matrix out = linear(inter, w.get(L + "output.dense.weight", H * I),
                        w.get(L + "output.dense.bias", H), I, H);
    for (size_t s = 0; s < S; ++s)
      for (size_t c = 0; c < H; ++c)
        out[s][c] += a[s][c];
    layerNormInPlace(out, w.get(L + "output.LayerNorm.weight", H),
                     w.get(L + "output.LayerNorm.bias", H), spec.eps);
    x = std::move(out);
  }
  return x;
}

std::vector<double> pool(const Matrix &x, size_t length,
                         const TinyModelSpec &spec) {
  const size_t H = size_t(spec.hidden);
  std::vector<double> p(H, 0.0);
  if (spec.pooling == "cls") {
    p = x[0];
  } else if (spec.pooling == "mean") {
    for (size_t s = 0; s < length; ++s)
      for (size_t c = 0; c < H; ++c)
        p[c] += x[s][c];
    for (double &e : p)
      e /= double(length);
  } else if (spec.pooling == "last") {
    if (length > 0)
      p = x[length - 1];
  } else {
    throw std::invalid_argument("reference encoder: unsupported pooling '" +
                                spec.pooling + "'");
  }
  if (spec.normalize) {
    double norm = 0;
    for (double e : p)
      norm += e * e;
    norm = std::sqrt(norm);
    for (double &e : p)
      e /= std::max(norm, 1e-12); // torch.nn.functional.normalize's eps
  }
  return p;
}

nlohmann::json readJson(const std::filesystem::path &p) {
  std::ifstream in(p);
  if (!in)
    throw std::runtime_error(p.string() + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception &e) {
    throw std::runtime_error(p.string() + ": invalid JSON: " + e.what());
  }
}

template <typename T>
T field(const nlohmann::json &j, const std::string &file, const char *key) {
  if (!j.contains(key))
    throw std::runtime_error(file + ": missing field '" + key + "'");
  try {
    return j[key].get<T>();
  } catch (const std::exception &) {
    throw std::runtime_error(file + ": field '" + key +
                             "' has the wrong type");
  }
}

} // namespace

std::string detectWeightPrefix(const WeightMap &weights,
                               const std::string &preferred) {
  for (const std::string &p : {preferred, std::string(), std::string("bert."),
                               std::string("roberta."), std::string("mpnet."), std::string("model.")})
    if (weights.count(p + "embeddings.word_embeddings.weight"))
      return p;
  throw std::runtime_error("reference encoder: no "
                           "'embeddings.word_embeddings.weight' under any known "
                           "prefix ('', 'bert.', 'roberta.', 'model.')");
}

ReferenceOutput runReferenceEncoder(const WeightMap &weights,
                                    const TinyModelSpec &spec,
                                    const std::vector<std::vector<int64_t>> &ids,
                                    const std::vector<int64_t> &lengths,
                                    const std::vector<std::vector<int64_t>> &typeIds) {
  if (spec.hidden <= 0 || spec.heads <= 0 || spec.hidden % spec.heads)
    throw std::invalid_argument("reference encoder: hidden must be a positive "
                                "multiple of heads");
  if (ids.size() != lengths.size())
    throw std::invalid_argument("reference encoder: ids has " +
                                std::to_string(ids.size()) + " rows, lengths " +
                                std::to_string(lengths.size()));
  const size_t S = ids.empty() ? 0 : ids[0].size();
  if (S + size_t(spec.positionOffset()) > size_t(spec.maxPositions))
    throw std::invalid_argument(
        "reference encoder: sequence length " + std::to_string(S) +
        " + position offset exceeds max_position_embeddings " +
        std::to_string(spec.maxPositions));
  for (size_t b = 0; b < ids.size(); ++b) {
    if (ids[b].size() != S)
      throw std::invalid_argument("reference encoder: ids rows must all have "
                                  "length " + std::to_string(S));
    if (lengths[b] < 1 || size_t(lengths[b]) > S)
      throw std::invalid_argument("reference encoder: lengths[" +
                                  std::to_string(b) + "] = " +
                                  std::to_string(lengths[b]) +
                                  " outside [1, " + std::to_string(S) + "]");
    for (int64_t id : ids[b])
      if (id < 0 || id >= spec.vocab)
        throw std::invalid_argument("reference encoder: token id " +
                                    std::to_string(id) + " outside [0, " +
                                    std::to_string(spec.vocab) + ")");
    if (typeIds.empty())
      continue;
    if (typeIds.size() != ids.size() || typeIds[b].size() != S)
      throw std::invalid_argument("reference encoder: typeIds must have the shape of ids");
    const int64_t types = spec.mpnet() ? 1 : spec.typeVocab;
    for (int64_t t : typeIds[b])
      if (t < 0 || t >= types)
        throw std::invalid_argument("reference encoder: token type " + std::to_string(t) +
                                    " outside [0, " + std::to_string(types) + ")");
  }
  Weights w(weights, detectWeightPrefix(weights, spec.weightPrefix));
  ReferenceOutput out;
  for (size_t b = 0; b < ids.size(); ++b) {
    Matrix x = encodeOne(ids[b], typeIds.empty() ? nullptr : &typeIds[b], size_t(lengths[b]), w, spec);
    if (spec.pooling != "none")
      out.pooled.push_back(pool(x, size_t(lengths[b]), spec));
    if (spec.numLabels > 0) {
      const ClassifierNames head = classifierNames(spec);
      const size_t H = size_t(spec.hidden), L = size_t(spec.numLabels);
      Matrix d = linear({x[0]}, w.get(head.dense + ".weight", H * H, head.densePrefixed),
                        w.get(head.dense + ".bias", H, head.densePrefixed), H, H);
      for (double &v : d[0])
        v = std::tanh(v);
      out.scores.push_back(linear(d, w.get(head.out + ".weight", L * H, false),
                                  w.get(head.out + ".bias", L, false), H, L)[0]);
    }
    out.hidden.push_back(std::move(x));
  }
  return out;
}

ReferenceOutput runReferenceEncoder(const TinyModel &model,
                                    const std::vector<std::vector<int64_t>> &ids,
                                    const std::vector<int64_t> &lengths,
                                    const std::vector<std::vector<int64_t>> &typeIds) {
  return runReferenceEncoder(model.weights, model.spec, ids, lengths, typeIds);
}

TinyModelSpec readModelSpec(const std::string &dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  const std::string cfgPath = (root / "config.json").string();
  nlohmann::json cfg = readJson(cfgPath);
  TinyModelSpec spec;
  spec.modelType = field<std::string>(cfg, cfgPath, "model_type");
  spec.hidden = field<int>(cfg, cfgPath, "hidden_size");
  spec.layers = field<int>(cfg, cfgPath, "num_hidden_layers");
  spec.heads = field<int>(cfg, cfgPath, "num_attention_heads");
  spec.intermediate = field<int>(cfg, cfgPath, "intermediate_size");
  spec.vocab = field<int>(cfg, cfgPath, "vocab_size");
  spec.maxPositions = field<int>(cfg, cfgPath, "max_position_embeddings");
  spec.typeVocab = cfg.value("type_vocab_size", 2);
  spec.act = cfg.value("hidden_act", std::string("gelu"));
  spec.eps = cfg.value("layer_norm_eps", 1e-12);
  if (spec.modelType != "bert" && !spec.robertaLayout())
    throw std::runtime_error(cfgPath + ": model_type '" + spec.modelType +
                             "' not supported (expected bert, roberta or mpnet)");

  spec.pooling = "none";
  spec.normalize = false;
  if (fs::exists(root / "modules.json")) {
    const std::string modPath = (root / "modules.json").string();
    for (const auto &m : readJson(modPath)) {
      std::string type = field<std::string>(m, modPath, "type");
      if (type == "sentence_transformers.models.Normalize") {
        spec.normalize = true;
      } else if (type == "sentence_transformers.models.Pooling") {
        fs::path poolPath = root / field<std::string>(m, modPath, "path") /
                            "config.json";
        nlohmann::json p = readJson(poolPath);
        if (p.value("pooling_mode_max_tokens", false) ||
            p.value("pooling_mode_mean_sqrt_len_tokens", false))
          throw std::runtime_error(poolPath.string() +
                                   ": only cls, mean or last-token pooling is supported");
        bool cls = p.value("pooling_mode_cls_token", false);
        bool mean = p.value("pooling_mode_mean_tokens", false);
        bool last = p.value("pooling_mode_lasttoken", false);
        if (int(cls) + int(mean) + int(last) != 1)
          throw std::runtime_error(poolPath.string() + ": expected exactly "
                                   "one of pooling_mode_cls_token / "
                                   "pooling_mode_mean_tokens / pooling_mode_lasttoken");
        spec.pooling = cls ? "cls" : mean ? "mean" : "last";
      }
    }
  }
  return spec;
}

LoadedModel loadModelF64(const std::string &dir) {
  LoadedModel m;
  m.spec = readModelSpec(dir);
  SafetensorsF64 st = loadSafetensorsF64(dir + "/model.safetensors");
  m.weights = std::move(st.weights);
  m.shapes = std::move(st.shapes);
  m.spec.weightPrefix = detectWeightPrefix(m.weights);
  return m;
}

} // namespace encc::testing
