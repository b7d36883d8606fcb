//===- MpnetTest.cpp - all-mpnet-base-v2 vs sentence-transformers ---------===//
//
// Compiles the real all-mpnet-base-v2 ($ENCC_MPNET_DIR; scripts/lib.sh
// fetch_mpnet) once and checks, against what sentence-transformers 2.7.0 on
// PyTorch recorded for the 64 sentences of sentence-pairs.tsv
// (tests/reference/mpnet_embeddings.json, record_minilm.py --only mpnet):
// the token ids of our tokenizer, the sentence embeddings from text
// (cosine >= 0.9999 each) and the first values of the last hidden state from
// the recorded ids; the int8 and bf16 builds against the fp32 build and
// sentence-transformers (gates below); and the tokenizer against the
// `tokenizers` library on 2 116 texts and 36 pairs. The relative position bias itself is checked against the
// float64 reference (TinyModelsTest's TinyMpnet, support_test) on sequences
// that reach every bucket.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace encc::testing;

namespace {

constexpr double kMinCosine = 0.9999;
constexpr size_t kHidden = 768;

class Mpnet : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    artifact_ = dir_->path() + "/mpnet.encm";
    try {
      compileError_ = compile(mpnetDir(), artifact_);
    } catch (const std::exception &e) {
      compileError_ = e.what();
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override { ASSERT_EQ(compileError_, ""); }
  static MinilmReference reference() {
    return loadMinilmReference(referenceDataDir() + "/mpnet_embeddings.json");
  }

  static TempDir *dir_;
  static std::string artifact_, compileError_;
};
TempDir *Mpnet::dir_;
std::string Mpnet::artifact_, Mpnet::compileError_;

std::vector<double> row(const std::vector<float> &flat, size_t i) {
  return std::vector<double>(flat.begin() + i * kHidden, flat.begin() + (i + 1) * kHidden);
}

TEST_F(Mpnet, EmbeddingsFromTextMatchSentenceTransformers) {
  MinilmReference ref = reference();
  ASSERT_EQ(ref.model, "sentence-transformers/all-mpnet-base-v2");
  ASSERT_GE(ref.sentences.size(), 8u);
  encrt::Model model(artifact_);
  encrt_model_info info = model.info();
  ASSERT_EQ(info.hidden_size, int64_t(kHidden));
  EXPECT_EQ(info.num_layers, 12);
  EXPECT_EQ(info.max_seq, 384); // sentence_bert_config.json
  EXPECT_EQ(std::string(info.pooling), "mean");
  EXPECT_TRUE(info.normalize);
  EXPECT_EQ(info.type_vocab_size, 1);
  encrt::Session session(model);

  std::vector<std::string> texts;
  for (auto &s : ref.sentences)
    texts.push_back(s.text);
  std::vector<float> emb = session.embed(texts);
  double worst = 1;
  for (size_t i = 0; i < texts.size(); ++i) {
    // <s> = 0 ... </s> = 2 around WordPiece ids.
    EXPECT_EQ(model.tokenize(texts[i]), std::vector<int32_t>(ref.sentences[i].ids.begin(), ref.sentences[i].ids.end()))
        << texts[i];
    double c = cosine(row(emb, i), ref.sentences[i].embedding);
    worst = std::min(worst, c);
    EXPECT_GE(c, kMinCosine) << texts[i];
  }
  std::printf("[ measured ] all-mpnet-base-v2: worst cosine vs sentence-transformers over %zu sentences: %.12f\n",
              texts.size(), worst);
}

TEST_F(Mpnet, HiddenStatesFromRecordedIdsMatch) {
  MinilmReference ref = reference();
  encrt::Model model(artifact_);
  encrt::Session session(model);
  // One right-padded batch of the first 8 sentences (mixed lengths).
  const size_t batch = 8;
  int64_t seq = 0;
  for (size_t b = 0; b < batch; ++b)
    seq = std::max<int64_t>(seq, ref.sentences[b].ids.size());
  std::vector<int32_t> ids(batch * seq, 1), lengths(batch); // padded with <pad>
  for (size_t b = 0; b < batch; ++b) {
    lengths[b] = static_cast<int32_t>(ref.sentences[b].ids.size());
    std::copy(ref.sentences[b].ids.begin(), ref.sentences[b].ids.end(), ids.begin() + b * seq);
  }
  encrt::RunResult out = session.run(ids, lengths, seq);
  double worstHead = 0;
  for (size_t b = 0; b < batch; ++b) {
    EXPECT_GE(cosine(row(out.pooled, b), ref.sentences[b].embedding), kMinCosine) << ref.sentences[b].text;
    for (size_t t = 0; t < ref.sentences[b].hiddenHead.size(); ++t) {
      std::vector<double> head(out.hidden.begin() + (b * seq + t) * kHidden,
                               out.hidden.begin() + (b * seq + t) * kHidden + 8);
      double e = maxRelativeError(head, ref.sentences[b].hiddenHead[t]);
      worstHead = std::max(worstHead, e);
      EXPECT_LE(e, 1e-3) << "sentence " << b << " token " << t;
    }
  }
  std::printf("[ measured ] all-mpnet-base-v2: hidden state head vs PyTorch, max relative error %.2e\n", worstHead);
}

// The reduced-precision builds on the 64 sentences, against the fp32 build
// and sentence-transformers: the minimum cosine over every token's hidden
// state and over the sentence embeddings.
struct PrecisionWorst {
  double token = 1, embedding = 1;
};

PrecisionWorst worstVsFp32(const std::string &fp32, const std::string &other, const MinilmReference &ref,
                           double *worstVsRecorded) {
  encrt::Model mf(fp32), mo(other);
  encrt::Session sf(mf), so(mo);
  PrecisionWorst w;
  *worstVsRecorded = 1;
  for (const auto &sentence : ref.sentences) {
    const std::vector<int32_t> ids = mf.tokenize(sentence.text);
    const std::vector<int32_t> lengths = {static_cast<int32_t>(ids.size())};
    encrt::RunResult of = sf.run(ids, lengths, ids.size()), oo = so.run(ids, lengths, ids.size());
    for (size_t t = 0; t < ids.size(); ++t)
      w.token = std::min(w.token, cosine(row(oo.hidden, t), row(of.hidden, t)));
    w.embedding = std::min(w.embedding, cosine(row(oo.pooled, 0), row(of.pooled, 0)));
    *worstVsRecorded = std::min(*worstVsRecorded, cosine(row(oo.pooled, 0), sentence.embedding));
  }
  return w;
}

TEST_F(Mpnet, Int8AndBf16WithinTheirGates) {
  MinilmReference ref = reference();
  for (const char *mode : {"int8", "bf16"}) {
    SCOPED_TRACE(mode);
    encc::CompileOptions o;
    o.modelDir = mpnetDir();
    o.output = dir_->path() + "/mpnet-" + mode + ".encm";
    o.quantize = mode;
    ASSERT_EQ(compile(o), "");
    double vsRecorded = 0;
    PrecisionWorst w = worstVsFp32(artifact_, o.output, ref, &vsRecorded);
    std::printf("[ measured ] all-mpnet-base-v2 %s vs fp32: min token cosine %.5f, min embedding cosine %.5f; "
                "vs sentence-transformers %.5f\n",
                mode, w.token, w.embedding, vsRecorded);
    if (std::string(mode) == "int8") {
      // BERT's gates (issue 14, PrecisionTest). The family keeps the word
      // embeddings in float (Mpnet.cpp int8KeepFloat): with them in int8 the
      // min token cosine was 0.98428, under the gate.
      EXPECT_GE(w.token, 0.985);
      EXPECT_GE(w.embedding, 0.99);
      EXPECT_GE(vsRecorded, 0.99);
    } else { // measured 0.99997 / 0.99998 / 0.99998: issue 14's bf16 gate
      EXPECT_GE(w.token, 0.9999);
      EXPECT_GE(vsRecorded, 0.9999);
    }
  }
}

// Our tokenizer against the `tokenizers` library on all-mpnet-base-v2's
// tokenizer.json (tests/reference/mpnet_tokens.json, record_mpnet_tokens.py):
// the WordPiece test's texts and a sweep of code points, the added tokens
// (<mask> swallowing the space before it, <unk> matched on lowercased text),
// and text pairs in RobertaProcessing's template.
TEST_F(Mpnet, TokenizerMatchesTheTokenizersLibrary) {
  std::ifstream in(referenceDataDir() + "/mpnet_tokens.json");
  ASSERT_TRUE(in) << "cannot open mpnet_tokens.json";
  nlohmann::json j = nlohmann::json::parse(in);
  encrt::Model model(artifact_);
  size_t texts = 0, pairs = 0;
  for (const auto &c : j.at("single")) {
    const std::string text = c.at("text").get<std::string>();
    EXPECT_EQ(model.tokenize(text), c.at("ids").get<std::vector<int32_t>>()) << text;
    ++texts;
  }
  for (const auto &c : j.at("pairs")) {
    const std::string a = c.at("a").get<std::string>(), b = c.at("b").get<std::string>();
    const std::vector<int32_t> want = c.at("ids").get<std::vector<int32_t>>();
    std::vector<int32_t> ids(want.size() + 8), types(want.size() + 8);
    int64_t count = 0;
    encrt_status *st = encrt_model_tokenize_pair(model.get(), encrt_text{a.data(), int64_t(a.size())},
                                                 encrt_text{b.data(), int64_t(b.size())}, ENCRT_TRUNCATE_LONGEST_FIRST,
                                                 ids.data(), types.data(), int64_t(ids.size()), &count);
    ASSERT_EQ(st, nullptr) << encrt_status_message(st);
    ids.resize(size_t(count)), types.resize(size_t(count));
    EXPECT_EQ(ids, want) << a << " | " << b;
    EXPECT_EQ(types, c.at("type_ids").get<std::vector<int32_t>>()) << a << " | " << b;
    ++pairs;
  }
  EXPECT_GE(texts, 2000u);
  EXPECT_GE(pairs, 30u);
}

} // namespace
