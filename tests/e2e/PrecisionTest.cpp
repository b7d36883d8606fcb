//===- PrecisionTest.cpp - Accuracy gates of `--quantize=int8` and `bf16` ===//
//
// Tiny random models: the int8 build's hidden states and pooled outputs vs
// the float64 reference (tests/support/ReferenceEncoder), max abs error
// within a bound stated per model (about 2-3x what was measured, see below),
// and measurably above the fp32 build's error (so the int8 path really ran).
//
// all-MiniLM-L6-v2 ($ENCC_MINILM_DIR): int8 vs the fp32 build on the 64
// sentences of tests/reference/minilm_embeddings.json: mean cosine >= 0.99,
// minimum >= 0.98, and each >= 0.99 against the embeddings recorded from
// sentence-transformers (measured min 0.9946); the English paraphrase pairs of sentence-pairs.tsv still
// all outrank the unrelated ones; the int8 artifact is < 30% of the fp32
// artifact's size.
//
// bf16 (--quantize=bf16): the same tiny models vs the float64 reference with
// bounds of their own, through every code object of the artifact this CPU
// runs (AMX tiles, vdpbf16ps, the AVX2 fallback; forced with cpu_target);
// all-MiniLM-L6-v2's
// token states vs the fp32 build (min token cosine >= 0.9999, issue 14's
// gate) and its embeddings vs sentence-transformers (>= 0.9999).
//
//===----------------------------------------------------------------------===//

#include "tests/support/NanAware.h"
#include "tests/e2e/E2ETest.h"
#include "tests/support/RecordedReference.h"
#include "tests/support/ReferenceEncoder.h"
#include "tests/support/TinyModel.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

using namespace encc::testing;

namespace {

constexpr int kMaxSeq = 24;

std::string compileInt8(const std::string &modelDir, const std::string &out, int64_t maxSeq,
                        std::vector<std::string> skip = {}) {
  encc::CompileOptions opt;
  opt.modelDir = modelDir;
  opt.output = out;
  opt.maxSeq = maxSeq;
  opt.quantize = "int8";
  opt.quantizeSkip = std::move(skip);
  return compile(opt);
}

//===----------------------------------------------------------------------===//
// Tiny models vs the float64 reference
//===----------------------------------------------------------------------===//

struct TinyCase {
  const char *name;
  TinyModelSpec spec;
  double maxAbsHidden; ///< bound on |int8 - ref| over valid hidden rows
  double maxAbsPooled; ///< bound on |int8 - ref| over pooled outputs
};

TinyModelSpec tinySpec(const char *type, int hidden, int heads, int layers, const char *act, const char *pooling) {
  TinyModelSpec s;
  s.modelType = type;
  s.hidden = hidden;
  s.heads = heads;
  s.layers = layers;
  s.intermediate = hidden * 2 + 8; // N not a multiple of 16
  s.act = act;
  s.pooling = pooling;
  s.seed = static_cast<uint64_t>(hidden * 17 + layers);
  return s;
}

struct Errors {
  double hidden = 0, pooled = 0;
};

/// Max abs errors of the artifact vs the reference on a mixed batch.
Errors errorsVsReference(const std::string &artifact, const TinyModel &model,
                         const encrt::ModelOptions &options = {}) {
  const TinyModelSpec &s = model.spec;
  const std::vector<int64_t> lengths = {kMaxSeq, 1, 7, kMaxSeq - 3, 13};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dist(5, s.vocab - 1);
  std::vector<std::vector<int64_t>> ids(lengths.size(), std::vector<int64_t>(kMaxSeq, 0));
  std::vector<int32_t> flat, lens(lengths.begin(), lengths.end());
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t i = 0; i < lengths[b]; ++i)
      ids[b][i] = dist(rng);
  for (auto &row : ids)
    flat.insert(flat.end(), row.begin(), row.end());
  ReferenceOutput ref = runReferenceEncoder(model, ids, lengths);
  encrt::Model m(artifact, options);
  encrt::Session session(m);
  encrt::RunResult out = session.run(flat, lens, kMaxSeq);
  Errors e;
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t t = 0; t < lengths[b]; ++t)
      for (int k = 0; k < s.hidden; ++k)
        e.hidden = errorMax(e.hidden, std::fabs(out.hidden[(b * kMaxSeq + t) * s.hidden + k] - ref.hidden[b][t][k]));
  for (size_t b = 0; b < ref.pooled.size(); ++b)
    for (int k = 0; k < s.hidden; ++k)
      e.pooled = errorMax(e.pooled, std::fabs(out.pooled[b * s.hidden + k] - ref.pooled[b][k]));
  return e;
}

void PrintTo(const TinyCase &c, std::ostream *os) { *os << c.name; }

class Int8TinyModels : public ::testing::TestWithParam<TinyCase> {};

TEST_P(Int8TinyModels, ErrorVsReferenceIsBounded) {
  const TinyCase &c = GetParam();
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", c.spec);
  const std::string fp32 = dir.path() + "/fp32.encm", int8 = dir.path() + "/int8.encm";
  ASSERT_EQ(compile(model.dir, fp32, kMaxSeq, c.spec.pooling == "none" ? "none" : ""), "");
  ASSERT_EQ(compileInt8(model.dir, int8, kMaxSeq), "");
  Errors ef = errorsVsReference(fp32, model), eq = errorsVsReference(int8, model);
  std::cout << c.name << ": max abs error hidden " << eq.hidden << " (fp32 " << ef.hidden << "), pooled "
            << eq.pooled << " (fp32 " << ef.pooled << ")\n";
  EXPECT_LE(eq.hidden, c.maxAbsHidden) << "int8 hidden state vs the float64 reference";
  EXPECT_LE(eq.pooled, c.maxAbsPooled) << "int8 pooled output vs the float64 reference";
  EXPECT_STREQ(encrt::Model(int8).info().precision, "int8");
  // The int8 build must differ from the fp32 one (quantisation happened).
  EXPECT_GT(eq.hidden, 10 * ef.hidden + 1e-4) << "int8 build as exact as fp32: not quantised?";
}

// Bounds: about 2-3x the max abs error measured (printed by the test; hidden
// 0.017 / 0.021 / 0.026 / 0.028, pooled 0.0013 / 0.0018 / - / 0.0021) on
// LayerNorm outputs of unit variance.
INSTANTIATE_TEST_SUITE_P(
    Shapes, Int8TinyModels,
    ::testing::Values(TinyCase{"bert_h64_l2_gelu_mean", tinySpec("bert", 64, 2, 2, "gelu", "mean"), 0.05, 0.004},
                      TinyCase{"bert_h128_l2_gelunew_cls", tinySpec("bert", 128, 4, 2, "gelu_new", "cls"), 0.05,
                               0.005},
                      TinyCase{"bert_h96_l3_gelu_none", tinySpec("bert", 96, 3, 3, "gelu", "none"), 0.06, 0},
                      TinyCase{"roberta_h64_l2_mean", tinySpec("roberta", 64, 2, 2, "gelu_new", "mean"), 0.06,
                               0.005}),
    [](const ::testing::TestParamInfo<TinyCase> &info) { return std::string(info.param.name); });

//===----------------------------------------------------------------------===//
// bf16
//===----------------------------------------------------------------------===//

class Bf16TinyModels : public ::testing::TestWithParam<TinyCase> {};

TEST_P(Bf16TinyModels, ErrorVsReferenceIsBoundedOnEveryCodeObject) {
  const TinyCase &c = GetParam();
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", c.spec);
  const std::string fp32 = dir.path() + "/fp32.encm", bf16 = dir.path() + "/bf16.encm";
  ASSERT_EQ(compile(model.dir, fp32, kMaxSeq, c.spec.pooling == "none" ? "none" : ""), "");
  encc::CompileOptions opt;
  opt.modelDir = model.dir;
  opt.output = bf16;
  opt.maxSeq = kMaxSeq;
  opt.quantize = "bf16";
  opt.cpuLevels = encc::defaultCpuLevels("bf16"); // every level, each run below where the CPU can
  ASSERT_EQ(compile(opt), "");
  const Errors ef = errorsVsReference(fp32, model);
  int ran = 0;
  for (const char *target : {"cpu-x86-64-v4-amx", "cpu-x86-64-v4-bf16", "cpu-x86-64-v3"}) {
    encrt::ModelOptions options;
    options.cpuTarget = target;
    Errors e;
    try {
      e = errorsVsReference(bf16, model, options);
    } catch (const encrt::Error &err) {
      ASSERT_EQ(err.code(), ENCRT_UNSUPPORTED) << err.what();
      std::cout << c.name << ": " << target << " not run here (" << err.what() << ")\n";
      continue;
    }
    ++ran;
    std::cout << c.name << " on " << target << ": max abs error hidden " << e.hidden << " (fp32 " << ef.hidden
              << "), pooled " << e.pooled << " (fp32 " << ef.pooled << ")\n";
    EXPECT_LE(e.hidden, c.maxAbsHidden) << target << ": bf16 hidden state vs the float64 reference";
    EXPECT_LE(e.pooled, c.maxAbsPooled) << target << ": bf16 pooled output vs the float64 reference";
    EXPECT_GT(e.hidden, 10 * ef.hidden + 1e-5) << target << ": bf16 build as exact as fp32: not converted?";
  }
  EXPECT_GE(ran, 1) << "the x86-64-v3 fallback runs on every CPU these tests run on";
  EXPECT_STREQ(encrt::Model(bf16).info().precision, "bf16");
  EXPECT_STREQ(encrt::Model(fp32).info().precision, "fp32");
}

// Bounds: about 3x the max abs error measured (printed by the test; hidden
// 0.0047 / 0.0067 / 0.0050, pooled 0.00041 / - / 0.00062), a quarter of
// int8's.
INSTANTIATE_TEST_SUITE_P(
    Shapes, Bf16TinyModels,
    ::testing::Values(TinyCase{"bert_h64_l2_gelu_mean", tinySpec("bert", 64, 2, 2, "gelu", "mean"), 0.015, 0.0015},
                      TinyCase{"bert_h96_l3_gelu_none", tinySpec("bert", 96, 3, 3, "gelu", "none"), 0.02, 0},
                      TinyCase{"roberta_h64_l2_mean", tinySpec("roberta", 64, 2, 2, "gelu_new", "mean"), 0.015,
                               0.002}),
    [](const ::testing::TestParamInfo<TinyCase> &info) { return std::string(info.param.name); });

/// The enc IR after the passes (--emit=mlir).
std::string emitMlir(encc::CompileOptions opt) {
  std::string text;
  llvm::raw_string_ostream os(text);
  opt.emit = "mlir";
  if (llvm::Error err = encc::compileModel(opt, os, [](const std::string &) {}))
    return "error: " + llvm::toString(std::move(err));
  return os.str();
}

size_t occurrences(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1))
    ++n;
  return n;
}

/// Lines of `text` that contain `what` and end with `end`.
size_t linesWith(const std::string &text, const std::string &what, const std::string &end) {
  size_t n = 0, begin = 0;
  while (begin < text.size()) {
    size_t stop = text.find('\n', begin);
    if (stop == std::string::npos)
      stop = text.size();
    const std::string line = text.substr(begin, stop - begin);
    if (line.find(what) != std::string::npos && line.size() >= end.size() &&
        line.compare(line.size() - end.size(), end.size(), end) == 0)
      ++n;
    begin = stop + 1;
  }
  return n;
}

TEST(Int8Compile, SkipPatternsKeepLinearsInFloat) {
  TinyModelSpec spec = tinySpec("bert", 64, 2, 2, "gelu", "mean");
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", spec);
  encc::CompileOptions opt;
  opt.modelDir = model.dir;
  opt.maxSeq = kMaxSeq;
  opt.quantize = "int8";
  // Per layer after fuse-qkv: qkv, attention output, intermediate, output.
  std::string ir = emitMlir(opt);
  EXPECT_EQ(occurrences(ir, "enc.linear "), 0u) << ir;
  EXPECT_EQ(occurrences(ir, "enc.qlinear "), 8u) << ir;
  // bf16: every Linear takes bf16 operands, one rounding per distinct input
  // (qkv, attention output, intermediate, output per layer): an enc.to_bf16
  // for the layernorm outputs, folded into the attention and the FFN-up
  // Linear (bf16 results) for the other two; skips apply.
  opt.quantize = "bf16";
  ir = emitMlir(opt);
  EXPECT_EQ(occurrences(ir, "enc.to_bf16 "), 4u) << ir;
  EXPECT_EQ(linesWith(ir, "enc.attention ", "xbf16>"), 2u) << ir;
  EXPECT_EQ(linesWith(ir, "{epilogue = #enc.epilogue<gelu>}", "xbf16>"), 2u) << ir;
  // The eight Linears' weights and the word table.
  EXPECT_EQ(occurrences(ir, ".bf16\" : tensor<"), 9u) << ir;
  EXPECT_NE(ir.find("enc.weight \"embeddings.word_embeddings.weight.bf16\""), std::string::npos) << ir;
  opt.quantizeSkip = {"encoder.layer.1.*"};
  ir = emitMlir(opt);
  EXPECT_EQ(occurrences(ir, "enc.to_bf16 "), 2u) << ir;
  opt.quantizeSkip.clear();
  opt.quantize = "int8";
  opt.quantizeSkip = {"encoder.layer.1.*", "*attention.output*"};
  ir = emitMlir(opt);
  EXPECT_EQ(occurrences(ir, "enc.linear "), 5u) << ir;
  EXPECT_EQ(occurrences(ir, "enc.qlinear "), 3u) << ir;

  const std::string all = dir.path() + "/all.encm", some = dir.path() + "/some.encm";
  ASSERT_EQ(compileInt8(model.dir, all, kMaxSeq), "");
  ASSERT_EQ(compileInt8(model.dir, some, kMaxSeq, opt.quantizeSkip), "");
  EXPECT_GT(std::filesystem::file_size(some), std::filesystem::file_size(all));
  Errors eAll = errorsVsReference(all, model), eSome = errorsVsReference(some, model);
  EXPECT_LE(eSome.hidden, 0.05);
  std::cout << "max abs error, all int8: " << eAll.hidden << ", layer 1 and attention outputs f32: " << eSome.hidden
            << "\n";
}

//===----------------------------------------------------------------------===//
// all-MiniLM-L6-v2
//===----------------------------------------------------------------------===//

std::vector<double> row(const std::vector<float> &flat, size_t i, size_t h) {
  return std::vector<double>(flat.begin() + i * h, flat.begin() + (i + 1) * h);
}

/// all-MiniLM-L6-v2 compiled fp32 (fp32_) and with --quantize=Derived::kQuantize
/// (other_), once per test suite.
template <class Derived> class MiniLMPrecision : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    fp32_ = dir_->path() + "/minilm.encm";
    other_ = dir_->path() + "/minilm-" + Derived::kQuantize + ".encm";
    error_ = compile(minilmDir(), fp32_);
    encc::CompileOptions opt;
    opt.modelDir = minilmDir();
    opt.output = other_;
    opt.quantize = Derived::kQuantize;
    if (error_.empty())
      error_ = compile(opt);
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override { ASSERT_EQ(error_, ""); }

  static inline TempDir *dir_;
  static inline std::string fp32_, other_, error_;
};

class Int8MiniLM : public MiniLMPrecision<Int8MiniLM> {
public:
  static constexpr const char *kQuantize = "int8";
};

class Bf16MiniLM : public MiniLMPrecision<Bf16MiniLM> {
public:
  static constexpr const char *kQuantize = "bf16";
};

TEST_F(Int8MiniLM, EmbeddingsCloseToFp32AndArtifactSmall) {
  MinilmReference ref = loadMinilmReference();
  ASSERT_EQ(ref.sentences.size(), 64u);
  std::vector<std::string> texts;
  for (auto &s : ref.sentences)
    texts.push_back(s.text);
  encrt::Model mf(fp32_), mq(other_);
  encrt::Session sf(mf), sq(mq);
  std::vector<float> ef = sf.embed(texts), eq = sq.embed(texts);
  double sum = 0, worst = 1, worstVsRecorded = 1;
  for (size_t i = 0; i < texts.size(); ++i) {
    double c = cosine(row(eq, i, 384), row(ef, i, 384));
    sum += c;
    worst = std::min(worst, c);
    EXPECT_GE(c, 0.98) << texts[i];
    // And against the independent reference: the embeddings recorded from
    // sentence-transformers (a bug shared by both builds fails here).
    double r = cosine(row(eq, i, 384), ref.sentences[i].embedding);
    worstVsRecorded = std::min(worstVsRecorded, r);
    EXPECT_GE(r, 0.99) << texts[i] << " (int8 vs sentence-transformers; measured min 0.9946)";
  }
  std::cout << "int8 vs sentence-transformers: min cosine " << worstVsRecorded << "\n";
  const double mean = sum / texts.size();
  EXPECT_GE(mean, 0.99);
  const auto sizeF = std::filesystem::file_size(fp32_), sizeQ = std::filesystem::file_size(other_);
  EXPECT_LT(double(sizeQ), 0.30 * double(sizeF)) << "int8 artifact " << sizeQ << " bytes, fp32 " << sizeF;
  std::cout << "int8 vs fp32 over " << texts.size() << " sentences: mean cosine " << mean << ", min " << worst
            << "; artifact " << sizeQ / 1e6 << " MB vs " << sizeF / 1e6 << " MB ("
            << 100.0 * double(sizeQ) / double(sizeF) << "%), int8 code object " << mq.info().cpu_target << "\n";
}

TEST_F(Int8MiniLM, ParaphraseRankingUnchanged) {
  std::ifstream in(std::string(ENCC_SHARED_DATA_DIR) + "/sentence-pairs.tsv");
  ASSERT_TRUE(in) << "cannot open " << ENCC_SHARED_DATA_DIR << "/sentence-pairs.tsv";
  std::vector<std::string> labels, texts;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    ASSERT_NE(t2, std::string::npos) << line;
    labels.push_back(line.substr(0, t1));
    texts.push_back(line.substr(t1 + 1, t2 - t1 - 1));
    texts.push_back(line.substr(t2 + 1));
  }
  auto scores = [&](const std::string &artifact) {
    encrt::Model model(artifact);
    encrt::Session session(model);
    std::vector<float> emb = session.embed(texts);
    std::vector<double> s;
    for (size_t i = 0; i < labels.size(); ++i)
      s.push_back(cosine(row(emb, 2 * i, 384), row(emb, 2 * i + 1, 384)));
    // NaN-aware: std::min/max skip NaN and `>` is false both ways.
    for (size_t i = 0; i < s.size(); ++i)
      EXPECT_TRUE(std::isfinite(s[i])) << artifact << ": pair " << i << " cosine " << s[i];
    return s;
  };
  std::vector<double> sf = scores(fp32_), sq = scores(other_);
  // Every English paraphrase pair above every unrelated one, in both builds.
  for (const auto *s : {&sf, &sq}) {
    double minPara = 2, maxUnrel = -2;
    int numPara = 0, numUnrel = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == "para")
        minPara = std::min(minPara, (*s)[i]), ++numPara;
      if (labels[i] == "unrel")
        maxUnrel = std::max(maxUnrel, (*s)[i]), ++numUnrel;
    }
    ASSERT_GT(numPara, 0);
    ASSERT_GT(numUnrel, 0);
    EXPECT_GT(minPara, maxUnrel) << (s == &sq ? "int8" : "fp32");
    std::cout << (s == &sq ? "int8" : "fp32") << ": lowest paraphrase cosine " << minPara << ", highest unrelated "
              << maxUnrel << "\n";
  }
  // And the same order of the English pairs (para vs unrel) pair by pair.
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t j = 0; j < labels.size(); ++j)
      if (labels[i] == "para" && labels[j] == "unrel")
        EXPECT_EQ(sf[i] > sf[j], sq[i] > sq[j]) << "pairs " << i << " and " << j;
}

TEST_F(Bf16MiniLM, TokenStatesWithinGateOfFp32AndEmbeddingsOfSentenceTransformers) {
  MinilmReference ref = loadMinilmReference();
  ASSERT_EQ(ref.sentences.size(), 64u);
  encrt::Model mf(fp32_), mb(other_);
  encrt::Session sf(mf), sb(mb);
  double worstToken = 1, worstVsRecorded = 1;
  for (const auto &sentence : ref.sentences) {
    const std::vector<int32_t> ids = mf.tokenize(sentence.text);
    ASSERT_EQ(ids, mb.tokenize(sentence.text));
    const std::vector<int32_t> lengths = {static_cast<int32_t>(ids.size())};
    encrt::RunResult of = sf.run(ids, lengths, ids.size()), ob = sb.run(ids, lengths, ids.size());
    for (size_t t = 0; t < ids.size(); ++t) {
      const double c = cosine(row(ob.hidden, t, 384), row(of.hidden, t, 384));
      worstToken = std::min(worstToken, c);
      EXPECT_GE(c, 0.9999) << sentence.text << " token " << t;
    }
    const double r = cosine(row(ob.pooled, 0, 384), sentence.embedding);
    worstVsRecorded = std::min(worstVsRecorded, r);
    EXPECT_GE(r, 0.9999) << sentence.text << " (bf16 vs sentence-transformers)";
  }
  std::cout << "bf16 (" << mb.info().cpu_target << ") vs fp32: min token cosine " << worstToken
            << "; vs sentence-transformers: min embedding cosine " << worstVsRecorded << "\n";
}

} // namespace
