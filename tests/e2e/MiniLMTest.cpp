//===- MiniLMTest.cpp - all-MiniLM-L6-v2 vs sentence-transformers ---------===//
//
// Compiles the real model once and checks its sentence embeddings for the 64
// sentences of shared/data/sentence-pairs.tsv against the ones recorded with
// sentence-transformers on PyTorch (tests/reference/record_minilm.py):
// cosine >= 0.9999 for each, from text (our tokenizer) and from the recorded
// token ids; and the paraphrase pairs outrank the unrelated ones. The whole
// last hidden state (every valid row, every feature) is compared with the
// float64 reference encoder (tests/support/ReferenceEncoder, itself checked
// against PyTorch in support_test) on a mixed-length batch and on one
// sequence of the compiled maximum length.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/RecordedReference.h"
#include "tests/support/ReferenceEncoder.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

using namespace encc::testing;

namespace {

constexpr double kMinCosine = 0.9999;
// fp32 vs float64 over the whole last hidden state, relative to its largest
// magnitude: measured 5.6e-7 (batch of 8, seq 13) and 4.3e-7 (256 tokens);
// the gate leaves about 9x.
constexpr double kHiddenTolerance = 5e-6;

class MiniLM : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    artifact_ = dir_->path() + "/minilm.encm";
    compileError_ = compile(minilmDir(), artifact_);
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override { ASSERT_EQ(compileError_, ""); }

  static TempDir *dir_;
  static std::string artifact_, compileError_;
};
TempDir *MiniLM::dir_;
std::string MiniLM::artifact_, MiniLM::compileError_;

std::vector<double> row(const std::vector<float> &flat, size_t i, size_t h) {
  return std::vector<double>(flat.begin() + i * h, flat.begin() + (i + 1) * h);
}

TEST_F(MiniLM, EmbeddingsFromTextMatchSentenceTransformers) {
  MinilmReference ref = loadMinilmReference();
  ASSERT_GE(ref.sentences.size(), 8u);
  encrt::Model model(artifact_);
  encrt_model_info info = model.info();
  ASSERT_EQ(info.hidden_size, 384);
  EXPECT_EQ(std::string(info.pooling), "mean");
  EXPECT_TRUE(info.normalize);
  encrt::Session session(model);

  std::vector<std::string> texts;
  for (auto &s : ref.sentences)
    texts.push_back(s.text);
  std::vector<float> emb = session.embed(texts);
  double worst = 1;
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(model.tokenize(texts[i]), std::vector<int32_t>(ref.sentences[i].ids.begin(), ref.sentences[i].ids.end()))
        << texts[i];
    double c = cosine(row(emb, i, 384), ref.sentences[i].embedding);
    worst = std::min(worst, c);
    EXPECT_GE(c, kMinCosine) << texts[i];
  }
  std::cout << "worst cosine vs sentence-transformers over " << texts.size() << " sentences: " << worst << "\n";
}

TEST_F(MiniLM, HiddenStatesFromRecordedIdsMatch) {
  MinilmReference ref = loadMinilmReference();
  encrt::Model model(artifact_);
  encrt::Session session(model);
  // One padded batch of the first 8 sentences (mixed lengths).
  const size_t batch = 8;
  int64_t seq = 0;
  for (size_t b = 0; b < batch; ++b)
    seq = std::max<int64_t>(seq, ref.sentences[b].ids.size());
  std::vector<int32_t> ids(batch * seq, 0), lengths(batch);
  for (size_t b = 0; b < batch; ++b) {
    lengths[b] = static_cast<int32_t>(ref.sentences[b].ids.size());
    std::copy(ref.sentences[b].ids.begin(), ref.sentences[b].ids.end(), ids.begin() + b * seq);
  }
  encrt::RunResult out = session.run(ids, lengths, seq);
  for (size_t b = 0; b < batch; ++b) {
    EXPECT_GE(cosine(row(out.pooled, b, 384), ref.sentences[b].embedding), kMinCosine) << ref.sentences[b].text;
    for (size_t t = 0; t < ref.sentences[b].hiddenHead.size(); ++t) {
      std::vector<double> head(out.hidden.begin() + (b * seq + t) * 384, out.hidden.begin() + (b * seq + t) * 384 + 8);
      EXPECT_LE(maxRelativeError(head, ref.sentences[b].hiddenHead[t]), 1e-3) << "sentence " << b << " token " << t;
    }
  }
}

// Runs `ids` (right-padded to one length, `lengths` valid) through the
// artifact and the float64 reference; returns the largest error over the
// valid rows relative to the reference's largest magnitude (NaN -> infinity).
double hiddenStateError(const std::string &artifact, const LoadedModel &reference,
                        const std::vector<std::vector<int64_t>> &ids, const std::vector<int64_t> &lengths) {
  const size_t seq = ids.front().size(), hidden = static_cast<size_t>(reference.spec.hidden);
  std::vector<int32_t> flat, lens;
  for (size_t b = 0; b < ids.size(); ++b) {
    flat.insert(flat.end(), ids[b].begin(), ids[b].end());
    lens.push_back(static_cast<int32_t>(lengths[b]));
  }
  encrt::Model model(artifact);
  encrt::Session session(model);
  encrt::RunResult out = session.run(flat, lens, static_cast<int64_t>(seq));
  ReferenceOutput want = runReferenceEncoder(reference.weights, reference.spec, ids, lengths);
  std::vector<double> got, expected;
  for (size_t b = 0; b < ids.size(); ++b)
    for (int64_t s = 0; s < lengths[b]; ++s) {
      const float *row = out.hidden.data() + (b * seq + s) * hidden;
      got.insert(got.end(), row, row + hidden);
      expected.insert(expected.end(), want.hidden[b][s].begin(), want.hidden[b][s].end());
    }
  return maxRelativeError(got, expected);
}

TEST_F(MiniLM, FullHiddenStatesMatchFloat64Reference) {
  LoadedModel reference = loadModelF64(minilmDir());
  MinilmReference ref = loadMinilmReference();
  // The first 8 recorded sentences, one right-padded batch of mixed lengths.
  std::vector<std::vector<int64_t>> ids;
  std::vector<int64_t> lengths;
  size_t seq = 0;
  for (size_t b = 0; b < 8; ++b) {
    ids.push_back(ref.sentences[b].ids);
    lengths.push_back(static_cast<int64_t>(ref.sentences[b].ids.size()));
    seq = std::max(seq, ref.sentences[b].ids.size());
  }
  for (auto &v : ids)
    v.resize(seq, 0);
  double batchError = hiddenStateError(artifact_, reference, ids, lengths);
  std::printf("[ measured ] MiniLM hidden state, 8 sentences (seq %zu), max relative error %.2e\n", seq, batchError);
  EXPECT_LE(batchError, kHiddenTolerance);

  // One sequence of the compiled maximum length, of real tokens: all 64
  // sentences' word pieces back to back, [CLS] ... [SEP].
  const int64_t maxSeq = encrt::Model(artifact_).info().max_seq;
  std::vector<int64_t> longIds = {ref.sentences[0].ids.front()};
  for (size_t i = 0; static_cast<int64_t>(longIds.size()) < maxSeq - 1; i = (i + 1) % ref.sentences.size()) {
    const std::vector<int64_t> &s = ref.sentences[i].ids;
    for (size_t t = 1; t + 1 < s.size() && static_cast<int64_t>(longIds.size()) < maxSeq - 1; ++t)
      longIds.push_back(s[t]);
  }
  longIds.push_back(ref.sentences[0].ids.back());
  double longError = hiddenStateError(artifact_, reference, {longIds}, {maxSeq});
  std::printf("[ measured ] MiniLM hidden state, one sequence of %lld tokens, max relative error %.2e\n",
              static_cast<long long>(maxSeq), longError);
  EXPECT_LE(longError, kHiddenTolerance);
}

TEST_F(MiniLM, ParaphrasesOutrankUnrelatedPairs) {
  // sentence-pairs.tsv: label, a, b. English 'para' pairs must all score above
  // every English 'unrel' pair.
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
  encrt::Model model(artifact_);
  encrt::Session session(model);
  std::vector<float> emb = session.embed(texts);
  // NaN-aware: std::min/max skip NaN and `>` is false both ways, so a NaN
  // embedding must fail here, not pass the ranking below.
  for (size_t i = 0; i < emb.size(); ++i)
    ASSERT_TRUE(std::isfinite(emb[i])) << "embedding value " << i << " is " << emb[i];
  double minPara = 2, maxUnrel = -2;
  int numPara = 0, numUnrel = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    double c = cosine(row(emb, 2 * i, 384), row(emb, 2 * i + 1, 384));
    ASSERT_TRUE(std::isfinite(c)) << "pair " << i;
    if (labels[i] == "para")
      minPara = std::min(minPara, c), ++numPara;
    if (labels[i] == "unrel")
      maxUnrel = std::max(maxUnrel, c), ++numUnrel;
  }
  ASSERT_GT(numPara, 0);
  ASSERT_GT(numUnrel, 0);
  EXPECT_GT(minPara, maxUnrel);
  std::cout << "lowest paraphrase cosine " << minPara << ", highest unrelated " << maxUnrel << "\n";
}

TEST_F(MiniLM, LongestAcceptedSequenceRunsAndLongerIsRejected) {
  encrt::Model model(artifact_);
  encrt::Session session(model);
  const int64_t maxSeq = model.info().max_seq;
  std::vector<int32_t> ids(maxSeq, 2000);
  ids.front() = 101;
  ids.back() = 102;
  encrt::RunResult out = session.run(ids, {static_cast<int32_t>(maxSeq)}, maxSeq);
  for (float v : out.pooled)
    ASSERT_TRUE(std::isfinite(v));
  ids.push_back(102);
  try {
    session.run(ids, {static_cast<int32_t>(maxSeq + 1)}, maxSeq + 1);
    FAIL() << "a sequence over the compiled maximum was accepted";
  } catch (const encrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the compiled maximum"), std::string::npos) << e.what();
  }
}

} // namespace
