//===- TinyModelsTest.cpp - Compiled tiny models vs the float64 reference -===//
//
// Each case writes a deterministic random Hugging Face folder, compiles it with
// the real driver, runs the artifact through libencrt on a batch of mixed
// lengths (including 1 and the compiled maximum; for BERT also with a text
// pair's token types), and compares the valid rows of the hidden state and
// the pooled output with the float64 reference.
// Tolerance: max |encc - ref| / max |ref| <= 1e-5: fp32 kernels vs float64
// measure 3e-7 to 1.2e-6 on these cases (printed as "[ measured ]"), and the
// Linear weights are scaled up (kLinearGain) so a GELU in the wrong form
// (erf vs tanh, 1.5e-4 to 3.6e-4) or a dropped attention scale fails by far.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/ReferenceEncoder.h"
#include "tests/support/TinyModel.h"

#include <cstdio>
#include <memory>
#include <random>

using namespace encc::testing;

namespace {

constexpr double kTolerance = 1e-5;
/// Large enough that GELU inputs span the range where its erf and tanh forms
/// differ, and that attention logits make the scale matter (TinyModel.h).
constexpr double kLinearGain = 3.0;
constexpr int kMaxSeq = 24;

struct Case {
  const char *name;
  TinyModelSpec spec;
};

TinyModelSpec spec(const char *type, int hidden, int heads, int layers, const char *act, const char *pooling,
                   const char *dtype = "F32", const char *prefix = "") {
  TinyModelSpec s;
  s.modelType = type;
  s.hidden = hidden;
  s.heads = heads;
  s.layers = layers;
  s.intermediate = hidden * 2 + 8; // not a multiple of the usual tiles
  s.act = act;
  s.pooling = pooling;
  s.dtype = dtype;
  s.weightPrefix = prefix;
  s.seed = static_cast<uint64_t>(hidden * 131 + layers * 7 + heads);
  s.linearGain = kLinearGain;
  return s;
}

/// `s` with `types` token types (config.json type_vocab_size).
TinyModelSpec withTypes(TinyModelSpec s, int types) {
  s.typeVocab = types;
  return s;
}

class TinyModels : public ::testing::TestWithParam<Case> {};

/// Ids in [5, vocab) for valid tokens (roberta: never its pad id), padding 0.
std::vector<std::vector<int64_t>> randomIds(const TinyModelSpec &s, const std::vector<int64_t> &lengths,
                                            int64_t seq, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(5, s.vocab - 1);
  std::vector<std::vector<int64_t>> ids(lengths.size(), std::vector<int64_t>(seq, 0));
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t i = 0; i < lengths[b]; ++i)
      ids[b][i] = dist(rng);
  return ids;
}

/// A text pair's token types: the first ceil(length / 2) tokens of each
/// sequence are segment 0, the rest segment 1; padding 0.
std::vector<std::vector<int64_t>> pairTypes(const std::vector<int64_t> &lengths, int64_t seq) {
  std::vector<std::vector<int64_t>> types(lengths.size(), std::vector<int64_t>(seq, 0));
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t i = (lengths[b] + 1) / 2; i < lengths[b]; ++i)
      types[b][i] = 1;
  return types;
}

std::vector<int32_t> flatten(const std::vector<std::vector<int64_t>> &rows) {
  std::vector<int32_t> flat;
  for (auto &row : rows)
    flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

/// `typed`: the batch carries pair token types (pairTypes), passed to both
/// the runtime and the reference.
void checkBatch(encrt::Session &session, const TinyModel &model, const std::vector<int64_t> &lengths, int64_t seq,
                uint32_t seed, bool typed = false) {
  const TinyModelSpec &s = model.spec;
  auto ids = randomIds(s, lengths, seq, seed);
  auto types = typed ? pairTypes(lengths, seq) : std::vector<std::vector<int64_t>>{};
  ReferenceOutput ref = runReferenceEncoder(model, ids, lengths, types);

  std::vector<int32_t> lens(lengths.begin(), lengths.end());
  encrt::RunResult out = session.runTyped(flatten(ids), flatten(types), lens, seq);

  std::vector<double> actual, expected;
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t t = 0; t < lengths[b]; ++t)
      for (int k = 0; k < s.hidden; ++k) {
        actual.push_back(out.hidden[(b * seq + t) * s.hidden + k]);
        expected.push_back(ref.hidden[b][t][k]);
      }
  double err = maxRelativeError(actual, expected);
  std::printf("[ measured ] hidden state max relative error %.2e\n", err);
  EXPECT_LE(err, kTolerance) << "hidden state, batch of " << lengths.size() << " at seq " << seq;

  if (s.pooling != "none") {
    ASSERT_EQ(out.pooled.size(), lengths.size() * s.hidden);
    actual.assign(out.pooled.begin(), out.pooled.end());
    expected.clear();
    for (auto &row : ref.pooled)
      expected.insert(expected.end(), row.begin(), row.end());
    EXPECT_LE(maxRelativeError(actual, expected), kTolerance) << "pooled output";
  } else {
    EXPECT_TRUE(out.pooled.empty());
  }
}

TEST_P(TinyModels, MatchReference) {
  const Case &c = GetParam();
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/model", c.spec);
  std::string artifact = dir.path() + "/model.encm";
  ASSERT_EQ(compile(model.dir, artifact, kMaxSeq, c.spec.pooling == "none" ? "none" : ""), "");

  encrt::Model m(artifact);
  encrt_model_info info = m.info();
  EXPECT_EQ(info.hidden_size, c.spec.hidden);
  EXPECT_EQ(info.num_layers, c.spec.layers);
  EXPECT_EQ(info.max_seq, kMaxSeq);
  EXPECT_EQ(info.has_pooled_output != 0, c.spec.pooling != "none");
  EXPECT_EQ(std::string(info.pooling), c.spec.pooling); // the artifact's enum, named back
  encrt::Session session(m);

  // Mixed lengths with 1 and the maximum; then shapes that shrink and grow the
  // arena on the same session. BERT tells two token types apart: batches with
  // a text pair's types (a type table row that was never added would fail).
  const bool twoTypes = c.spec.modelType != "distilbert" && c.spec.typeVocab >= 2;
  EXPECT_EQ(info.type_vocab_size, twoTypes ? 2 : 1);
  checkBatch(session, model, {kMaxSeq, 1, 7, kMaxSeq - 3, 13}, kMaxSeq, 1, twoTypes);
  checkBatch(session, model, {1}, 1, 2);
  checkBatch(session, model, {5, 9, 2}, 9, 3, twoTypes);
  checkBatch(session, model, {kMaxSeq, kMaxSeq}, kMaxSeq, 4);
  if (!twoTypes) {
    // One token type: all-0 type ids are accepted (as transformers does), 1 is not.
    checkBatch(session, model, {4, 2}, 4, 5, /*typed=*/false);
    std::vector<int32_t> ids(8, 5), types(8, 0), lens = {4, 2};
    EXPECT_NO_THROW(session.runTyped(ids, types, lens, 4));
    types[1] = 1;
    try {
      session.runTyped(ids, types, lens, 4);
      ADD_FAILURE() << "type id 1 accepted by a model with one token type";
    } catch (const encrt::Error &e) {
      EXPECT_EQ(e.code(), ENCRT_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("type_ids[0][1] is 1, outside the model's token types [0, 1)"),
                std::string::npos) << e.what();
    }
  }
}

// One artifact carrying v4, v3 and v2 code: every target this CPU runs gives
// the reference's numbers.
TEST(MultiTarget, EveryCodeObjectMatchesReference) {
  TempDir dir;
  TinyModelSpec s = spec("bert", 64, 2, 2, "gelu", "mean");
  TinyModel model = writeTinyModel(dir.path() + "/model", s);
  std::string artifact = dir.path() + "/model.encm";
  ASSERT_EQ(compile(model.dir, artifact, kMaxSeq, "", {"x86-64-v4", "x86-64-v3", "x86-64-v2"}), "");
  int ran = 0;
  for (const char *target : {"cpu-x86-64-v4", "cpu-x86-64-v3", "cpu-x86-64-v2"}) {
    encrt::ModelOptions options;
    options.cpuTarget = target;
    std::unique_ptr<encrt::Model> m;
    try {
      m = std::make_unique<encrt::Model>(artifact, options);
    } catch (const encrt::Error &e) {
      // Only "this CPU lacks ..." is acceptable (e.g. no AVX-512 here).
      EXPECT_EQ(e.code(), ENCRT_UNSUPPORTED) << target << ": " << e.what();
      continue;
    }
    EXPECT_EQ(std::string(m->info().cpu_target), target);
    encrt::Session session(*m);
    checkBatch(session, model, {kMaxSeq, 1, 11}, kMaxSeq, 5);
    ++ran;
  }
  EXPECT_GE(ran, 2) << "v2 and v3 run on any x86-64 machine with AVX2";
}

// MPNet's relative position bias over sequences long enough to reach every
// bucket (distances 8 .. 91 and beyond, both directions), in each plan: the
// fused attention on the packed and the padded layout, and the unfused ops
// (the relative_position_bias kernel) of --pipeline=none.
TEST(TinyMpnet, LongSequencesMatchReferenceInEveryPlan) {
  constexpr int64_t kLong = 140;
  TempDir dir;
  TinyModelSpec s = withTypes(spec("mpnet", 64, 2, 4, "gelu", "mean"), 1);
  s.maxPositions = kLong + 2;
  TinyModel model = writeTinyModel(dir.path() + "/model", s);
  struct Plan {
    const char *name, *pipeline;
    bool packed;
  };
  for (const Plan &p : {Plan{"packed", "", true}, Plan{"padded", "", false}, Plan{"unfused", "none", false}}) {
    SCOPED_TRACE(p.name);
    encc::CompileOptions o;
    o.modelDir = model.dir;
    o.output = dir.path() + "/" + p.name + ".encm";
    o.maxSeq = kLong;
    o.pipeline = p.pipeline;
    o.allowPackedPlan = p.packed;
    ASSERT_EQ(compile(o), "");
    encrt::Model m(o.output);
    EXPECT_EQ(m.info().type_vocab_size, 1);
    encrt::Session session(m);
    checkBatch(session, model, {kLong, 97, 1, 130}, kLong, 21);
    checkBatch(session, model, {40, 3}, 40, 22);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TinyModels,
    ::testing::Values(Case{"bert_d32_l1_gelu_mean", spec("bert", 64, 2, 1, "gelu", "mean")},
                      Case{"bert_d64_l2_gelunew_cls", spec("bert", 128, 2, 2, "gelu_new", "cls")},
                      Case{"bert_d32_l3_gelu_none", spec("bert", 96, 3, 3, "gelu", "none")},
                      Case{"bert_d64_l2_bf16_prefixed", spec("bert", 64, 1, 2, "gelu", "mean", "BF16", "bert.")},
                      Case{"roberta_d32_l2_f16", withTypes(spec("roberta", 64, 2, 2, "gelu_new", "mean", "F16"), 1)},
                      Case{"distilbert_d32_l2", spec("distilbert", 64, 2, 2, "gelu", "mean")},
                      // Last-token pooling (sentence-transformers' pooling_mode_lasttoken).
                      Case{"roberta_d48_l2_last", withTypes(spec("roberta", 48, 3, 2, "gelu", "last"), 1)},
                      Case{"mpnet_d32_l2", withTypes(spec("mpnet", 64, 2, 2, "gelu", "mean"), 1)}),
    [](const ::testing::TestParamInfo<Case> &info) { return std::string(info.param.name); });

} // namespace
