//===- ApiTest.cpp - libencrt through its C API and C++ wrapper -----------===//
//
// A complete artifact written by ArtifactBuilder (with TestKernels.cpp as its
// code object) is loaded and run; results are checked against the closed
// form of the test model. Then every run-time argument error.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "encrt/schema_version.h"
#include "encrt/encrt.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <sys/stat.h>
#include <thread>

using namespace encrt::test;

extern "C" int encrt_test_c_header(void);

TEST(CApi, HeaderIsPlainC) { EXPECT_EQ(encrt_test_c_header(), 0); }

namespace {

constexpr int32_t H = TestModel::kHidden;
constexpr float kTol = 1e-5f;

/// Right-padded ids with junk (out-of-vocab) padding the runtime must ignore.
struct Batch {
  std::vector<int32_t> ids, lengths;
  int64_t batch, seq;
};

Batch makeBatch(int64_t batch, int64_t seq, uint32_t seed) {
  Batch b{{}, {}, batch, seq};
  b.ids.assign(static_cast<size_t>(batch * seq), 999);
  for (int64_t i = 0; i < batch; ++i) {
    int32_t len = 1 + static_cast<int32_t>((seed * 7 + i * 13) % seq);
    b.lengths.push_back(len);
    for (int32_t s = 0; s < len; ++s)
      b.ids[i * seq + s] =
          static_cast<int32_t>((seed + i * 31 + s * 17) % TestModel::kVocab);
  }
  return b;
}

void checkOutputs(const Batch &b, const std::vector<float> &hidden,
                  const std::vector<float> &pooled) {
  for (int64_t i = 0; i < b.batch; ++i) {
    for (int64_t s = 0; s < b.seq; ++s) {
      // Padding ids are replaced by 0 before the kernels run.
      int32_t id = s < b.lengths[i] ? b.ids[i * b.seq + s] : 0;
      for (int32_t h = 0; h < H; ++h)
        ASSERT_NEAR(hidden[(i * b.seq + s) * H + h], TestModel::expected(id, h),
                    kTol)
            << "b " << i << " s " << s << " h " << h;
    }
    if (pooled.empty())
      continue;
    for (int32_t h = 0; h < H; ++h) {
      double sum = 0;
      for (int32_t s = 0; s < b.lengths[i]; ++s)
        sum += TestModel::expected(b.ids[i * b.seq + s], h);
      ASSERT_NEAR(pooled[i * H + h], sum / b.lengths[i], kTol)
          << "b " << i << " h " << h;
    }
  }
}

} // namespace

TEST_F(RuntimeTest, LoadsAndReportsInfo) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  EXPECT_STREQ(info.architecture, "bert");
  EXPECT_EQ(info.hidden_size, H);
  EXPECT_EQ(info.max_seq, TestModel::kMaxSeq);
  EXPECT_EQ(info.vocab_size, TestModel::kVocab);
  EXPECT_STREQ(info.pooling, "mean");
  EXPECT_EQ(info.has_pooled_output, 1);
  EXPECT_STREQ(info.cpu_target, "cpu-x86-64-v2");
  EXPECT_EQ(info.num_steps, 4);
  EXPECT_GE(info.weight_bytes, uint64_t(TestModel::kVocab) * H * 4);
  EXPECT_STREQ(encrt_version(), "0.1.0");
  encrt_model_release(m);
}

TEST_F(RuntimeTest, RunMatchesReferenceAcrossShapesAndThreads) {
  auto bytes = writeArtifact(TestModel::spec(kernels()));
  for (int threads : {1, 3}) {
    encrt_model *m = load(bytes, threads);
    ASSERT_NE(m, nullptr);
    encrt_session *s = nullptr;
    ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
    // Grow, shrink, grow again: the arena is re-planned for each shape.
    const std::pair<int64_t, int64_t> shapes[] = {
        {1, 4}, {8, 64}, {3, 5}, {2, 64}, {1, 1}, {16, 64}};
    uint32_t seed = 1;
    for (auto [batch, seq] : shapes) {
      Batch b = makeBatch(batch, seq, seed++);
      std::vector<float> hidden(static_cast<size_t>(batch * seq * H), -7.f);
      std::vector<float> pooled(static_cast<size_t>(batch * H), -7.f);
      encrt_status *st = encrt_session_run(s, b.ids.data(), b.lengths.data(),
                                           batch, seq, hidden.data(),
                                           pooled.data());
      ASSERT_EQ(st, nullptr) << encrt_status_message(st);
      checkOutputs(b, hidden, pooled);
      // Outputs are optional.
      std::vector<float> pooledOnly(static_cast<size_t>(batch * H));
      ASSERT_EQ(encrt_session_run(s, b.ids.data(), b.lengths.data(), batch,
                                  seq, nullptr, pooledOnly.data()),
                nullptr);
      EXPECT_EQ(pooledOnly, pooled);
    }
    encrt_session_release(s);
    encrt_model_release(m);
  }
}

TEST_F(RuntimeTest, ModelWithoutPooledOutput) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels(), false)));
  ASSERT_NE(m, nullptr);
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  EXPECT_EQ(info.has_pooled_output, 0);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  Batch b = makeBatch(2, 6, 3);
  std::vector<float> hidden(2 * 6 * H), pooled(2 * H);
  ASSERT_EQ(encrt_session_run(s, b.ids.data(), b.lengths.data(), 2, 6,
                              hidden.data(), nullptr),
            nullptr);
  checkOutputs(b, hidden, {});
  expectError(encrt_session_run(s, b.ids.data(), b.lengths.data(), 2, 6,
                                hidden.data(), pooled.data()),
              ENCRT_INVALID_ARGUMENT, "the model has no pooled output");
  const char *texts[] = {"hello"};
  expectError(encrt_session_embed(s, texts, 1, pooled.data()),
              ENCRT_UNSUPPORTED, "has no pooled output");
  encrt_session_release(s);
  encrt_model_release(m);
}

// max_seq_length (API version 6; sentence-transformers' max_seq_length below
// the compiled maximum): texts are cut to it, special tokens included, in
// tokenize and embed alike; over the compiled maximum or negative is an error.
TEST_F(RuntimeTest, MaxSeqLengthCutsTextsBelowTheCompiledMaximum) {
  const std::string path = write(writeArtifact(TestModel::spec(kernels())));
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  o.max_seq_length = 4;
  encrt_model *m = nullptr;
  ASSERT_EQ(encrt_model_load(path.c_str(), &o, &m), nullptr);
  EXPECT_EQ(tokenize(m, "hello world the a hello"), (std::vector<int32_t>{2, 4, 5, 3})); // [CLS] hello world [SEP]
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  const char *texts[] = {"hello world the a hello", "hello world"};
  std::vector<float> emb(2 * H);
  ASSERT_EQ(encrt_session_embed(s, texts, 2, emb.data()), nullptr);
  for (int32_t h = 0; h < H; ++h) // both texts are [CLS] hello world [SEP] once cut
    EXPECT_EQ(emb[h], emb[H + h]) << h;
  encrt_session_release(s);
  encrt_model_release(m);
  o.max_seq_length = TestModel::kMaxSeq + 1;
  expectError(encrt_model_load(path.c_str(), &o, &m), ENCRT_INVALID_ARGUMENT,
              "max_seq_length 65 is over the compiled maximum 64 (recompile with encc compile --max-seq N)");
  o.max_seq_length = -1;
  expectError(encrt_model_load(path.c_str(), &o, &m), ENCRT_INVALID_ARGUMENT, "max_seq_length is -1");
}

/// encrt_model_get_token's string of `id` ("<error>" when it fails).
std::string tokenText(encrt_model *m, int32_t id) {
  const char *text = nullptr;
  int64_t size = -1;
  if (encrt_status *st = encrt_model_get_token(m, id, &text, &size)) {
    encrt_status_free(st);
    return "<error>";
  }
  return std::string(text, size_t(size));
}

TEST_F(RuntimeTest, TokenizeAndEmbed) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  // vocab: [PAD] [UNK] [CLS] [SEP] hello world ##s , the a
  EXPECT_EQ(tokenize(m, "Hello, worlds!"),
            (std::vector<int32_t>{2, 4, 7, 5, 6, 1, 3}));
  EXPECT_EQ(tokenText(m, 6), "##s");
  EXPECT_EQ(tokenText(m, 2), "[CLS]");
  const char *text = nullptr;
  expectError(encrt_model_get_token(m, -1, &text, nullptr), ENCRT_INVALID_ARGUMENT, "token id -1 is not in the vocabulary");
  expectError(encrt_model_get_token(m, 0, nullptr, nullptr), ENCRT_INVALID_ARGUMENT, "out_text is NULL");
  EXPECT_EQ(tokenize(m, ""), (std::vector<int32_t>{2, 3}));
  int32_t small[2];
  int64_t n = 0;
  expectError(encrt_model_tokenize(m, "hello world", small, 2, &n),
              ENCRT_INVALID_ARGUMENT, "the buffer holds 2 ids, the text needs 4");
  EXPECT_EQ(n, 4);

  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  const char *texts[] = {"hello world", "the", "a, a, a hello"};
  std::vector<float> emb(3 * H);
  ASSERT_EQ(encrt_session_embed(s, texts, 3, emb.data()), nullptr);
  for (int t = 0; t < 3; ++t) {
    std::vector<int32_t> ids = tokenize(m, texts[t]);
    for (int32_t h = 0; h < H; ++h) {
      double sum = 0;
      for (int32_t id : ids)
        sum += TestModel::expected(id, h);
      EXPECT_NEAR(emb[t * H + h], sum / ids.size(), kTol) << t;
    }
  }
  // Texts longer than max_seq are truncated, not rejected.
  std::string longText;
  for (int i = 0; i < 200; ++i)
    longText += "hello ";
  EXPECT_EQ(tokenize(m, longText.c_str()).size(), size_t(TestModel::kMaxSeq));
  const char *longTexts[] = {longText.c_str()};
  EXPECT_EQ(encrt_session_embed(s, longTexts, 1, emb.data()), nullptr);
  // 0 texts is a no-op; NULL entries are errors.
  EXPECT_EQ(encrt_session_embed(s, nullptr, 0, nullptr), nullptr);
  const char *withNull[] = {"hello", nullptr};
  expectError(encrt_session_embed(s, withNull, 2, emb.data()),
              ENCRT_INVALID_ARGUMENT, "texts[1] is NULL");
  encrt_session_release(s);
  encrt_model_release(m);
}

TEST_F(RuntimeTest, EmbedManyTextsInChunks) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  const char *words[] = {"hello", "world", "the", "a hello", "worlds , the"};
  std::vector<const char *> texts;
  for (int i = 0; i < 70; ++i)
    texts.push_back(words[i % 5]);
  std::vector<float> emb(texts.size() * H), one(H);
  ASSERT_EQ(encrt_session_embed(s, texts.data(), texts.size(), emb.data()),
            nullptr);
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(encrt_session_embed(s, &texts[i], 1, one.data()), nullptr);
    for (int32_t h = 0; h < H; ++h)
      ASSERT_NEAR(emb[i * H + h], one[h], kTol) << i;
  }
  encrt_session_release(s);
  encrt_model_release(m);
}

// Sparse embeddings need a splade model; this one pools by mean.
TEST_F(RuntimeTest, EmbedSparseRefusesAModelThatIsNotSplade) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  const encrt_text text = {"hello", 5};
  int32_t count = 0, id = 0;
  float weight = 0;
  expectError(encrt_session_embed_sparse(nullptr, nullptr, &text, 1, 1, 0, &count, &id, &weight),
              ENCRT_INVALID_ARGUMENT, "session is NULL");
  expectError(encrt_session_embed_sparse(s, nullptr, &text, 1, 1, 0, &count, &id, &weight), ENCRT_INVALID_ARGUMENT,
              "encrt_session_embed_sparse: the model has no sparse output (pooling 'mean' and no lexical-weights head)");
  encrt_session_release(s);
  encrt_model_release(m);
}

TEST_F(RuntimeTest, Profiling) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  encrt_session *plain = nullptr, *prof = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &plain), nullptr);
  encrt_session_options o;
  encrt_session_options_initialize(&o);
  EXPECT_EQ(o.enable_profiling, 0);
  o.enable_profiling = 1;
  ASSERT_EQ(encrt_session_create(m, &o, &prof), nullptr);
  EXPECT_EQ(encrt_session_profile_count(plain), 0);
  Batch b = makeBatch(4, 16, 5);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(encrt_session_run(prof, b.ids.data(), b.lengths.data(), 4, 16,
                                nullptr, nullptr),
              nullptr);
  ASSERT_EQ(encrt_session_profile_count(prof), 4);
  const char *kernelsNames[] = {"test_embed", "test_scale", "test_add",
                                "test_mean_pool"};
  for (int i = 0; i < 4; ++i) {
    encrt_step_profile p;
    encrt_session_profile_get(prof, i, &p, sizeof p);
    EXPECT_STREQ(p.kernel, kernelsNames[i]);
    EXPECT_EQ(p.calls, 3);
    EXPECT_GE(p.total_ms, 0.0);
  }
  encrt_step_profile p;
  encrt_session_profile_get(prof, 4, &p, sizeof p);
  EXPECT_EQ(p.kernel, nullptr);
  EXPECT_EQ(p.calls, 0);
  encrt_session_release(plain);
  encrt_session_release(prof);
  encrt_model_release(m);
}

TEST_F(RuntimeTest, SessionOutlivesModelHandleAndThreadsShareModel) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())), 4);
  ASSERT_NE(m, nullptr);
  std::vector<encrt_session *> sessions(4, nullptr);
  for (auto &s : sessions)
    ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  encrt_model_release(m); // sessions keep the model alive
  std::vector<std::thread> threads;
  std::vector<int> failures(sessions.size(), 0);
  for (size_t t = 0; t < sessions.size(); ++t)
    threads.emplace_back([&, t] {
      for (int it = 0; it < 20; ++it) {
        Batch b = makeBatch(1 + (it + t) % 5, 8 + (it * 7 + t) % 57, it + t);
        std::vector<float> hidden(b.ids.size() * H), pooled(b.lengths.size() * H);
        encrt_status *st = encrt_session_run(
            sessions[t], b.ids.data(), b.lengths.data(), b.batch, b.seq,
            hidden.data(), pooled.data());
        if (st) {
          ++failures[t];
          encrt_status_free(st);
          continue;
        }
        for (int64_t i = 0; i < b.batch; ++i)
          for (int32_t h = 0; h < H; ++h) {
            double sum = 0;
            for (int32_t s = 0; s < b.lengths[i]; ++s)
              sum += TestModel::expected(b.ids[i * b.seq + s], h);
            if (std::fabs(pooled[i * H + h] - sum / b.lengths[i]) > kTol)
              ++failures[t];
          }
      }
    });
  for (auto &t : threads)
    t.join();
  for (size_t t = 0; t < sessions.size(); ++t)
    EXPECT_EQ(failures[t], 0) << "session " << t;
  for (auto *s : sessions)
    encrt_session_release(s);
}

TEST_F(RuntimeTest, RunArgumentErrors) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  std::vector<int32_t> ids(2 * 100, 4), lengths = {3, 3};
  std::vector<float> out(2 * 100 * H);
  auto run = [&](int64_t batch, int64_t seq) {
    return encrt_session_run(s, ids.data(), lengths.data(), batch, seq,
                             out.data(), nullptr);
  };
  expectError(run(2, 65), ENCRT_INVALID_ARGUMENT,
              "sequence length 65 exceeds the compiled maximum 64");
  expectError(run(2, 0), ENCRT_INVALID_ARGUMENT, "sequence length is 0");
  expectError(run(0, 4), ENCRT_INVALID_ARGUMENT, "batch is 0");
  expectError(run(-3, 4), ENCRT_INVALID_ARGUMENT, "batch is -3");
  lengths = {3, 0};
  expectError(run(2, 4), ENCRT_INVALID_ARGUMENT,
              "lengths[1] is 0 (expected 1..4");
  lengths = {5, 3};
  expectError(run(2, 4), ENCRT_INVALID_ARGUMENT, "lengths[0] is 5");
  lengths = {3, 3};
  ids[4 + 2] = TestModel::kVocab;
  expectError(run(2, 4), ENCRT_INVALID_ARGUMENT,
              "ids[1][2] is 50, outside the vocabulary [0, 50)");
  ids[4 + 2] = -1;
  expectError(run(2, 4), ENCRT_INVALID_ARGUMENT, "ids[1][2] is -1");
  ids[4 + 2] = 4;
  ids[4 + 3] = -1; // padding: ignored
  EXPECT_EQ(run(2, 4), nullptr);
  expectError(encrt_session_run(s, nullptr, lengths.data(), 2, 4, nullptr,
                                nullptr),
              ENCRT_INVALID_ARGUMENT, "ids is NULL");
  expectError(encrt_session_run(s, ids.data(), nullptr, 2, 4, nullptr, nullptr),
              ENCRT_INVALID_ARGUMENT, "lengths is NULL");
  expectError(encrt_session_run(nullptr, ids.data(), lengths.data(), 2, 4,
                                nullptr, nullptr),
              ENCRT_INVALID_ARGUMENT, "session is NULL");
  expectError(encrt_session_run(s, ids.data(), lengths.data(),
                                int64_t(1) << 40, 64, nullptr, nullptr),
              ENCRT_OUT_OF_MEMORY, "too large");
  // After errors the session still works.
  EXPECT_EQ(run(2, 4), nullptr);
  encrt_session_release(s);
  encrt_model_release(m);
}

TEST_F(RuntimeTest, NullArguments) {
  encrt_model *m = nullptr;
  expectError(encrt_model_load(nullptr, nullptr, &m), ENCRT_INVALID_ARGUMENT,
              "path is NULL");
  expectError(encrt_model_load("x.encm", nullptr, nullptr),
              ENCRT_INVALID_ARGUMENT, "out_model is NULL");
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  o.num_threads = -2;
  expectError(encrt_model_load("x.encm", &o, &m), ENCRT_INVALID_ARGUMENT,
              "num_threads is -2");
  encrt_session *s = nullptr;
  expectError(encrt_session_create(nullptr, nullptr, &s),
              ENCRT_INVALID_ARGUMENT, "model is NULL");
  int64_t n;
  expectError(encrt_model_tokenize(nullptr, "x", nullptr, 0, &n),
              ENCRT_INVALID_ARGUMENT, "model is NULL");
  expectError(encrt_session_embed(nullptr, nullptr, 0, nullptr),
              ENCRT_INVALID_ARGUMENT, "session is NULL");
  EXPECT_EQ(encrt_status_get_code(nullptr), ENCRT_OK);
  EXPECT_STREQ(encrt_status_message(nullptr), "");
  encrt_status_free(nullptr);
  encrt_model_release(nullptr);
  encrt_session_release(nullptr);
  encrt_model_info info;
  encrt_model_get_info(nullptr, &info, sizeof info);
  EXPECT_EQ(info.hidden_size, 0);
  encrt_model_get_info(nullptr, nullptr, sizeof info);
  EXPECT_EQ(encrt_session_profile_count(nullptr), 0);
  encrt_step_profile p;
  encrt_session_profile_get(nullptr, 0, &p, sizeof p);
  EXPECT_EQ(p.calls, 0);
  encrt_model_options_initialize(nullptr);
  encrt_session_options_initialize(nullptr);

  encrt_model *real = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(real, nullptr);
  expectError(encrt_model_tokenize(real, nullptr, nullptr, 0, &n),
              ENCRT_INVALID_ARGUMENT, "text is NULL");
  expectError(encrt_model_tokenize(real, "x", nullptr, 0, nullptr),
              ENCRT_INVALID_ARGUMENT, "out_count is NULL");
  expectError(encrt_model_tokenize(real, "x", nullptr, 5, &n),
              ENCRT_INVALID_ARGUMENT, "out_ids is NULL");
  expectError(encrt_session_create(real, nullptr, nullptr),
              ENCRT_INVALID_ARGUMENT, "out_session is NULL");
  ASSERT_EQ(encrt_session_create(real, nullptr, &s), nullptr);
  float out[H];
  expectError(encrt_session_embed(s, nullptr, 1, out), ENCRT_INVALID_ARGUMENT,
              "texts is NULL");
  const char *texts[] = {"hello"};
  expectError(encrt_session_embed(s, texts, 1, nullptr),
              ENCRT_INVALID_ARGUMENT, "out_embeddings is NULL");
  expectError(encrt_session_embed(s, texts, -1, out), ENCRT_INVALID_ARGUMENT,
              "count is -1");
  encrt_session_release(s);
  encrt_model_release(real);
}

// Prompts: listed in the artifact's order; embedding with one is embedding
// the prompt + text; the default applies when none is named (NULL), "" is
// none; an unknown name or index is an error naming the prompts.
TEST_F(RuntimeTest, Prompts) {
  ArtifactSpec spec = TestModel::spec(kernels());
  spec.prompts = {{"query", "hello "}, {"none", ""}};
  spec.defaultPrompt = "query";
  spec.requiredFeatures = {ENCM_FEATURE_DEFAULT_PROMPT};
  const std::string path = write(writeArtifact(spec));
  encrt::Model model(path, {2, ""});
  const std::vector<encrt::Model::Prompt> prompts = model.prompts();
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].name, "query");
  EXPECT_EQ(prompts[0].text, "hello ");
  EXPECT_TRUE(prompts[0].isDefault);
  EXPECT_FALSE(prompts[1].isDefault);
  encrt::Session session(model);
  const std::vector<float> prompted = session.embed({"hello world"}, "");
  EXPECT_EQ(session.embed({"world"}, "query"), prompted);
  EXPECT_EQ(session.embed({"world"}), prompted); // the default prompt
  EXPECT_EQ(session.embed({"hello world"}, "none"), prompted);
  EXPECT_NE(session.embed({"world"}, ""), prompted);

  const char *name = nullptr, *text = nullptr;
  int32_t isDefault = -1;
  ASSERT_EQ(encrt_model_get_prompt(model.get(), 1, &name, &text, &isDefault), nullptr);
  EXPECT_STREQ(name, "none");
  EXPECT_EQ(isDefault, 0);
  expectError(encrt_model_get_prompt(model.get(), 2, &name, &text, &isDefault), ENCRT_INVALID_ARGUMENT,
              "prompt index 2 is out of range (the model has 2 prompts)");
  EXPECT_EQ(encrt_model_prompt_count(nullptr), 0);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(model.get(), nullptr, &s), nullptr);
  std::vector<float> out(H);
  const encrt_text world{"world", 5};
  expectError(encrt_session_embed_prompted(s, "passage", &world, 1, out.data()), ENCRT_INVALID_ARGUMENT,
              "encrt_session_embed_prompted: " + path + ": no prompt named 'passage' (the model's prompts: query, "
              "none)");
  encrt_session_release(s);

  // A model without prompts: NULL and "" are the text alone, a name is an error.
  encrt::Model plain(write(writeArtifact(TestModel::spec(kernels())), "plain.encm"), {2, ""});
  encrt::Session plainSession(plain);
  EXPECT_TRUE(plain.prompts().empty());
  EXPECT_EQ(plainSession.embed({"world"}), plainSession.embed({"world"}, ""));
  try {
    plainSession.embed({"world"}, "query");
    ADD_FAILURE() << "a prompt name was accepted by a model without prompts";
  } catch (const encrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("no prompt named 'query' (the model has no prompts)"), std::string::npos)
        << e.what();
  }
}

TEST_F(RuntimeTest, CppWrapper) {
  std::string path = write(writeArtifact(TestModel::spec(kernels())));
  encrt::Model model(path, {2, ""});
  EXPECT_EQ(model.info().hidden_size, H);
  EXPECT_EQ(model.tokenize("hello world"), (std::vector<int32_t>{2, 4, 5, 3}));
  encrt::Session session(model, true);
  Batch b = makeBatch(3, 10, 9);
  encrt::RunResult r = session.run(b.ids, b.lengths, 10);
  ASSERT_EQ(r.hidden.size(), size_t(3 * 10 * H));
  ASSERT_EQ(r.pooled.size(), size_t(3 * H));
  checkOutputs(b, r.hidden, r.pooled);
  std::vector<float> emb = session.embed({"hello world", "the"});
  ASSERT_EQ(emb.size(), size_t(2 * H));
  EXPECT_NEAR(emb[0], (TestModel::expected(2, 0) + TestModel::expected(4, 0) +
                       TestModel::expected(5, 0) + TestModel::expected(3, 0)) / 4,
              kTol);
  EXPECT_EQ(session.profile().size(), 4u);
  encrt::Session moved = std::move(session);
  EXPECT_EQ(moved.embed({"a"}).size(), size_t(H));

  try {
    b.lengths[0] = 11;
    moved.run(b.ids, b.lengths, 10);
    FAIL() << "expected encrt::Error";
  } catch (const encrt::Error &e) {
    EXPECT_EQ(e.code(), ENCRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("lengths[0] is 11"), std::string::npos)
        << e.what();
  }
  try {
    encrt::Model missing(dir_ + "/missing.encm");
    FAIL() << "expected encrt::Error";
  } catch (const encrt::Error &e) {
    EXPECT_EQ(e.code(), ENCRT_IO_ERROR);
    EXPECT_NE(std::string(e.what()).find("missing.encm: cannot open"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(RuntimeTest, CppWrapperOptionalOutputsSizesAndMoves) {
  std::string path = write(writeArtifact(TestModel::spec(kernels())));
  encrt::Model model(path);
  encrt::Session session(model);
  Batch b = makeBatch(2, 7, 21);
  encrt::RunResult full = session.run(b.ids, b.lengths, 7);
  checkOutputs(b, full.hidden, full.pooled);

  // Each output on its own: the other is empty, the one asked for unchanged.
  encrt::RunResult pooledOnly = session.run(b.ids, b.lengths, 7, /*wantHidden=*/false);
  EXPECT_TRUE(pooledOnly.hidden.empty());
  EXPECT_EQ(pooledOnly.pooled, full.pooled);
  encrt::RunResult hiddenOnly = session.run(b.ids, b.lengths, 7, true, /*wantPooled=*/false);
  EXPECT_TRUE(hiddenOnly.pooled.empty());
  EXPECT_EQ(hiddenOnly.hidden, full.hidden);

  // ids that do not hold batch x seq values are refused before the C API.
  for (size_t n : {size_t(13), size_t(15), size_t(0)}) {
    std::vector<int32_t> ids(b.ids.begin(), b.ids.begin() + std::min(n, b.ids.size()));
    ids.resize(n, 4);
    try {
      session.run(ids, b.lengths, 7);
      FAIL() << "ids of " << n << " values accepted for 2 x 7";
    } catch (const encrt::Error &e) {
      EXPECT_EQ(e.code(), ENCRT_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("ids has " + std::to_string(n)), std::string::npos) << e.what();
    }
  }

  // Moves: the moved-to handle works, the moved-from one is released once
  // (no double free under ASan), and move assignment gives up the old handle.
  encrt::Model other(path);
  other = std::move(model);
  encrt::Model third(std::move(other));
  EXPECT_EQ(third.info().hidden_size, H);
  EXPECT_EQ(third.tokenize("hello world"), (std::vector<int32_t>{2, 4, 5, 3}));
  encrt::Session s2(third);
  s2 = std::move(session);
  encrt::Session s3(std::move(s2));
  EXPECT_EQ(s3.run(b.ids, b.lengths, 7).hidden, full.hidden);
}

/// A byte-level BPE table for `t`: "hello" -> h e l l o -> he, ll (ranks 0,
/// 1) -> hell (2) -> hello (3); " world" -> \u0120 w o r l d -> \u0120w (4) o r
/// l d; no unknown token.
void useTinyBytePairTokenizer(SpecTokenizer &t) {
  t.vocab = {"<s>", "<pad>", "</s>", "<unk>", "h", "e", "l", "o", "\u0120", "w", "r", "d",
             "he", "ll", "hell", "hello", "\u0120w"};
  t.bpe = true;
  t.unkId = -1;
  t.merges = {{4, 5}, {6, 6}, {12, 13}, {14, 7}, {8, 9}};
}

TEST_F(RuntimeTest, BytePairTokenizerThroughTheCApi) {
  // A byte-level BPE table in the artifact: merges by rank, the template
  // around the pieces, an added token cut out first. Ids worked out by hand:
  // "hello" -> h e l l o -> he, ll (ranks 0, 1) -> hell (2) -> hello (3);
  // " world" -> \u0120 w o r l d -> \u0120w (4) o r l d.
  ArtifactSpec spec = TestModel::spec(kernels());
  SpecTokenizer &t = *spec.tokenizer;
  useTinyBytePairTokenizer(t);
  t.added = {{"<mask>", 17}};
  t.templateIds = {0, -1, 2};
  encrt_model *m = load(writeArtifact(spec));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(tokenize(m, "hello world"), (std::vector<int32_t>{0, 15, 16, 7, 10, 6, 11, 2}));
  EXPECT_EQ(tokenize(m, "hello<mask>"), (std::vector<int32_t>{0, 15, 17, 2}));
  EXPECT_EQ(tokenize(m, ""), (std::vector<int32_t>{0, 2}));
  // Truncated to max_seq: the specials stay.
  std::string longText;
  for (int i = 0; i < 100; ++i)
    longText += "hello ";
  std::vector<int32_t> ids = tokenize(m, longText.c_str());
  ASSERT_EQ(static_cast<int64_t>(ids.size()), TestModel::kMaxSeq);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), 2);
  // Token strings as the library's id_to_token: the byte alphabet's spelling,
  // an added token's content past the vocabulary, nothing past that.
  EXPECT_EQ(tokenText(m, 16), "\u0120w");
  EXPECT_EQ(tokenText(m, 15), "hello");
  EXPECT_EQ(tokenText(m, 17), "<mask>");
  const char *text = nullptr;
  expectError(encrt_model_get_token(m, 18, &text, nullptr), ENCRT_INVALID_ARGUMENT, "token id 18 is not in the vocabulary");
  encrt_model_release(m);
}

/// encrt_model_tokenize_offsets's tokens as (id, special, start, stop) (a
/// size query first).
std::vector<std::array<int64_t, 4>> tokenOffsets(encrt_model *m, const std::string &text, int32_t special = 1,
                                                 int64_t maxTokens = 0) {
  const encrt_text t{text.data(), int64_t(text.size())};
  int64_t n = -1;
  EXPECT_EQ(encrt_model_tokenize_offsets(m, t, special, maxTokens, nullptr, 0, &n), nullptr);
  std::vector<encrt_token> tokens(size_t(std::max<int64_t>(n, 0)));
  EXPECT_EQ(encrt_model_tokenize_offsets(m, t, special, maxTokens, tokens.data(), n, &n), nullptr);
  std::vector<std::array<int64_t, 4>> out;
  for (const encrt_token &k : tokens)
    out.push_back({k.id, k.special, k.start, k.stop});
  return out;
}

TEST_F(RuntimeTest, TokenOffsetsThroughTheCApi) {
  // WordPiece (vocab: [PAD] [UNK] [CLS] [SEP] hello world ##s , the a):
  // offsets are bytes of the text as given, the template's tokens special
  // at (0, 0), a special token written in the text not special.
  encrt_model *wp = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(wp, nullptr);
  using T = std::vector<std::array<int64_t, 4>>;
  EXPECT_EQ(tokenOffsets(wp, "Hello, worlds!"),
            (T{{2, 1, 0, 0}, {4, 0, 0, 5}, {7, 0, 5, 6}, {5, 0, 7, 12}, {6, 0, 12, 13}, {1, 0, 13, 14}, {3, 1, 0, 0}}));
  // Without the template; an accent stripped still covers its two bytes;
  // [SEP] in the text is a piece; an invalid byte is in no token.
  EXPECT_EQ(tokenOffsets(wp, "h\xc3\xa9llo [SEP]\xff the", 0),
            (T{{4, 0, 0, 6}, {3, 0, 7, 12}, {8, 0, 14, 17}}));
  // Cut to three tokens: one piece between [CLS] and [SEP].
  EXPECT_EQ(tokenOffsets(wp, "hello world", 1, 3), (T{{2, 1, 0, 0}, {4, 0, 0, 5}, {3, 1, 0, 0}}));
  EXPECT_EQ(tokenOffsets(wp, "", 1), (T{{2, 1, 0, 0}, {3, 1, 0, 0}}));
  const encrt_text hello{"hello world", 11};
  encrt_token small[2];
  int64_t n = -1;
  expectError(encrt_model_tokenize_offsets(wp, hello, 1, 0, small, 2, &n), ENCRT_INVALID_ARGUMENT,
              "the buffer holds 2 tokens, the text has 4");
  EXPECT_EQ(n, 4);
  expectError(encrt_model_tokenize_offsets(wp, hello, 2, 0, small, 2, &n), ENCRT_INVALID_ARGUMENT,
              "add_special_tokens is 2 (expected 0 or 1)");
  expectError(encrt_model_tokenize_offsets(wp, hello, 1, -1, small, 2, &n), ENCRT_INVALID_ARGUMENT,
              "max_tokens is -1");
  expectError(encrt_model_tokenize_offsets(wp, hello, 1, 0, nullptr, 2, &n), ENCRT_INVALID_ARGUMENT,
              "out_tokens is NULL");
  expectError(encrt_model_tokenize_offsets(wp, hello, 1, 0, small, 2, nullptr), ENCRT_INVALID_ARGUMENT,
              "out_count is NULL");
  encrt_model_release(wp);

  // Byte-level BPE with RobertaProcessing's trimming: "\u0120w" starts after
  // its space; the added token's offsets are its own.
  ArtifactSpec spec = TestModel::spec(kernels());
  SpecTokenizer &t = *spec.tokenizer;
  useTinyBytePairTokenizer(t);
  t.added = {{"<mask>", 17}};
  t.templateIds = {0, -1, 2};
  t.offsetTrim = encm::OffsetTrim::Trim;
  encrt_model *bpe = load(writeArtifact(spec));
  ASSERT_NE(bpe, nullptr);
  EXPECT_EQ(tokenOffsets(bpe, "hello wo<mask>"),
            (T{{0, 1, 0, 0}, {15, 0, 0, 5}, {16, 0, 6, 7}, {7, 0, 7, 8}, {17, 0, 8, 14}, {2, 1, 0, 0}}));
  encrt_model_release(bpe);
  // Untrimmed, "\u0120w" covers its space.
  t.offsetTrim = encm::OffsetTrim::None;
  bpe = load(writeArtifact(spec));
  ASSERT_NE(bpe, nullptr);
  EXPECT_EQ(tokenOffsets(bpe, "hello wo", 0), (T{{15, 0, 0, 5}, {16, 0, 5, 7}, {7, 0, 7, 8}}));
  encrt_model_release(bpe);
  // An artifact from before schema 9.6 did not record the trimming: no guess.
  t.offsetTrim = encm::OffsetTrim::Unrecorded;
  bpe = load(writeArtifact(spec));
  ASSERT_NE(bpe, nullptr);
  expectError(encrt_model_tokenize_offsets(bpe, hello, 1, 0, nullptr, 0, &n), ENCRT_UNSUPPORTED,
              "compile the model again for offsets");
  EXPECT_EQ(tokenize(bpe, "hello"), (std::vector<int32_t>{0, 15, 2})); // ids are unaffected
  encrt_model_release(bpe);
}

/// encrt_model_decode's text (a size query first).
std::string decodeIds(encrt_model *m, const std::vector<int32_t> &ids, int32_t skip = 1) {
  int64_t size = -1;
  EXPECT_EQ(encrt_model_decode(m, ids.data(), int64_t(ids.size()), skip, nullptr, 0, &size), nullptr);
  std::string text(size_t(std::max<int64_t>(size, 0)), '\0');
  EXPECT_EQ(encrt_model_decode(m, ids.data(), int64_t(ids.size()), skip, text.data(), size, &size), nullptr);
  return text;
}

TEST_F(RuntimeTest, DecodeThroughTheCApi) {
  // WordPiece (vocab: [PAD] [UNK] [CLS] [SEP] hello world ##s , the a): "##"
  // joins, the clean-up drops the space before ",", [CLS] / [SEP] skipped.
  ArtifactSpec spec = TestModel::spec(kernels());
  encrt_model *wp = load(writeArtifact(spec));
  ASSERT_NE(wp, nullptr);
  EXPECT_EQ(decodeIds(wp, {2, 4, 7, 5, 6, 3}), "hello, worlds");
  EXPECT_EQ(decodeIds(wp, {2, 4, 7, 5, 6, 3}, 0), "[CLS] hello, worlds [SEP]");
  EXPECT_EQ(decodeIds(wp, {6, 8}), "##s the"); // a continuation first keeps its "##"
  EXPECT_EQ(decodeIds(wp, {}), "");
  const int32_t ids[] = {4, 10};
  char small[4];
  int64_t n = -1;
  expectError(encrt_model_decode(wp, ids, 2, 1, small, 4, &n), ENCRT_INVALID_ARGUMENT,
              "ids[1] = 10 is not in the vocabulary or the added tokens");
  expectError(encrt_model_decode(wp, ids, 1, 1, small, 4, &n), ENCRT_INVALID_ARGUMENT,
              "the buffer holds 4 bytes, the text has 5");
  EXPECT_EQ(n, 5);
  expectError(encrt_model_decode(wp, ids, 1, 3, small, 4, &n), ENCRT_INVALID_ARGUMENT, "skip_special_tokens is 3");
  expectError(encrt_model_decode(wp, ids, -1, 1, small, 4, &n), ENCRT_INVALID_ARGUMENT, "count is -1");
  expectError(encrt_model_decode(wp, nullptr, 1, 1, small, 4, &n), ENCRT_INVALID_ARGUMENT, "ids is NULL");
  encrt_model_release(wp);

  // Byte-level BPE: the byte alphabet back to UTF-8; the special added
  // token skipped unless asked, <s> / </s> (no added tokens here) kept; a
  // lone lead byte is one U+FFFD.
  SpecTokenizer &t = *spec.tokenizer;
  useTinyBytePairTokenizer(t);
  t.vocab.push_back("\u00c3"); // byte C3 alone
  t.added = {{"<mask>", 18}};
  t.templateIds = {0, -1, 2};
  encrt_model *bpe = load(writeArtifact(spec));
  ASSERT_NE(bpe, nullptr);
  EXPECT_EQ(decodeIds(bpe, {0, 15, 16, 7, 10, 6, 11, 18, 2}), "<s>hello world</s>");
  EXPECT_EQ(decodeIds(bpe, {0, 15, 16, 7, 10, 6, 11, 18, 2}, 0), "<s>hello world<mask></s>");
  EXPECT_EQ(decodeIds(bpe, {15, 17, 7}), "hello\xef\xbf\xbdo"); // "\u00c3" is byte C3, a lead without its tail
  encrt_model_release(bpe);
  // An artifact from before schema 9.6 did not record its decoder.
  t.recordDecoder = false;
  bpe = load(writeArtifact(spec));
  ASSERT_NE(bpe, nullptr);
  expectError(encrt_model_decode(bpe, ids, 1, 1, nullptr, 0, &n), ENCRT_UNSUPPORTED,
              "compile the model again to decode");
  encrt_model_release(bpe);
}

/// encrt_model_tokenize_pair's ids and type ids (a size query first).
std::pair<std::vector<int32_t>, std::vector<int32_t>> tokenizePair(encrt_model *m, const std::string &a,
                                                                   const std::string &b,
                                                                   encrt_pair_truncation t = ENCRT_TRUNCATE_LONGEST_FIRST) {
  int64_t n = -1;
  const encrt_text ta{a.data(), int64_t(a.size())}, tb{b.data(), int64_t(b.size())};
  EXPECT_EQ(encrt_model_tokenize_pair(m, ta, tb, t, nullptr, nullptr, 0, &n), nullptr);
  std::vector<int32_t> ids(size_t(std::max<int64_t>(n, 0))), types(ids.size());
  EXPECT_EQ(encrt_model_tokenize_pair(m, ta, tb, t, ids.data(), types.data(), n, &n), nullptr);
  return {ids, types};
}

TEST_F(RuntimeTest, TextPairsThroughTheCApi) {
  // WordPiece: [CLS] a [SEP] b [SEP], types 0 then 1 (built in).
  encrt_model *wp = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(wp, nullptr);
  using V = std::vector<int32_t>;
  EXPECT_EQ(tokenizePair(wp, "hello", "world"), (std::pair<V, V>{{2, 4, 3, 5, 3}, {0, 0, 0, 1, 1}}));
  // Longest first: a long first text gives way; only_second cannot cut it.
  std::string longText;
  for (int i = 0; i < 100; ++i)
    longText += "hello ";
  auto [ids, types] = tokenizePair(wp, longText, "world");
  ASSERT_EQ(int64_t(ids.size()), TestModel::kMaxSeq);
  EXPECT_EQ(ids[ids.size() - 2], 5); // "world" kept whole
  EXPECT_EQ(types.back(), 1);
  const encrt_text lt{longText.data(), int64_t(longText.size())}, w{"world", 5};
  int64_t n = 0;
  expectError(encrt_model_tokenize_pair(wp, lt, w, ENCRT_TRUNCATE_ONLY_SECOND, nullptr, nullptr, 0, &n),
              ENCRT_INVALID_ARGUMENT, "the second text is too short to cut the pair to");
  expectError(encrt_model_tokenize_pair(wp, w, w, 7, nullptr, nullptr, 0, &n),
              ENCRT_INVALID_ARGUMENT, "encrt_model_tokenize_pair: truncation is 7");
  expectError(encrt_model_tokenize_pair(nullptr, w, w, ENCRT_TRUNCATE_LONGEST_FIRST, nullptr, nullptr, 0, &n),
              ENCRT_INVALID_ARGUMENT, "model");
  int32_t one[1], oneType[1];
  expectError(encrt_model_tokenize_pair(wp, w, w, ENCRT_TRUNCATE_LONGEST_FIRST, one, nullptr, 1, &n),
              ENCRT_INVALID_ARGUMENT, "out_type_ids");
  expectError(encrt_model_tokenize_pair(wp, w, w, ENCRT_TRUNCATE_LONGEST_FIRST, one, oneType, 1, &n),
              ENCRT_INVALID_ARGUMENT, "the buffers hold 1 ids, the pair needs 5");
  encrt_model_release(wp);

  // BPE with RoBERTa's pair template; then without one: unsupported.
  ArtifactSpec spec = TestModel::spec(kernels());
  SpecTokenizer &t = *spec.tokenizer;
  useTinyBytePairTokenizer(t);
  t.templateIds = {0, -1, 2};
  t.pairTemplateIds = {0, -1, 2, 2, -2, 2};
  t.pairTypeIds = {0, 0, 0, 0, 0, 0};
  encrt_model *bpe = load(writeArtifact(spec));
  ASSERT_NE(bpe, nullptr);
  EXPECT_EQ(tokenizePair(bpe, "hello", "world"), (std::pair<V, V>{{0, 15, 2, 2, 9, 7, 10, 6, 11, 2}, V(10, 0)}));
  encrt_model_release(bpe);
  t.pairTemplateIds.clear();
  t.pairTypeIds.clear();
  encrt_model *noPairs = load(writeArtifact(spec));
  ASSERT_NE(noPairs, nullptr);
  expectError(encrt_model_tokenize_pair(noPairs, w, w, ENCRT_TRUNCATE_LONGEST_FIRST, nullptr, nullptr, 0, &n),
              ENCRT_UNSUPPORTED, "this tokenizer has no template for text pairs");
  encrt_model_release(noPairs);
  // A template naming a text twice is refused at load, before any code.
  t.pairTemplateIds = {0, -1, 2, -1, 2};
  t.pairTypeIds = {0, 0, 0, 1, 1};
  expectLoadError(writeArtifact(spec), ENCRT_INVALID_ARTIFACT, "pair template must hold each text exactly once");
}

TEST_F(RuntimeTest, ApiVersionAndStructSizes) {
  EXPECT_EQ(encrt_api_version(), ENCRT_API_VERSION);
  EXPECT_EQ(ENCRT_API_VERSION, 11);
  std::string path = write(writeArtifact(TestModel::spec(kernels())));

  // Options never initialised: refused, not guessed.
  encrt_model_options o{};
  encrt_model *m = nullptr;
  expectError(encrt_model_load(path.c_str(), &o, &m), ENCRT_INVALID_ARGUMENT,
              "encrt_model_load: encrt_model_options.struct_size is 0 (call "
              "encrt_model_options_initialize first)");
  EXPECT_EQ(m, nullptr);
  encrt_model_options_initialize(&o);
  EXPECT_EQ(o.struct_size, sizeof(encrt_model_options));
  o.struct_size = 0xFFFFFFFFu; // garbage, not a newer caller
  expectError(encrt_model_load(path.c_str(), &o, &m), ENCRT_INVALID_ARGUMENT,
              "struct_size is 4294967295");

  // A newer caller's larger struct: the known prefix is read, the tail ignored.
  struct NewerOptions {
    encrt_model_options known;
    int64_t futureField;
  } newer{};
  encrt_model_options_initialize(&newer.known);
  newer.known.struct_size = sizeof(NewerOptions);
  newer.known.num_threads = 1;
  newer.futureField = 42;
  ASSERT_EQ(encrt_model_load(path.c_str(), &newer.known, &m), nullptr);

  // get_info writes no more than the caller's size: an older, smaller struct
  // keeps the bytes after it.
  const size_t oldSize = offsetof(encrt_model_info, num_layers);
  std::vector<unsigned char> buf(sizeof(encrt_model_info), 0xAB);
  encrt_model_get_info(m, reinterpret_cast<encrt_model_info *>(buf.data()), oldSize);
  encrt_model_info prefix;
  std::memcpy(&prefix, buf.data(), oldSize);
  EXPECT_EQ(prefix.hidden_size, H);
  EXPECT_STREQ(prefix.architecture, "bert");
  for (size_t i = oldSize; i < buf.size(); ++i)
    ASSERT_EQ(buf[i], 0xAB) << "byte " << i << " written past the caller's size";

  encrt_session_options so{};
  encrt_session *s = nullptr;
  expectError(encrt_session_create(m, &so, &s), ENCRT_INVALID_ARGUMENT,
              "encrt_session_options.struct_size is 0");
  encrt_session_options_initialize(&so);
  so.enable_profiling = 1;
  ASSERT_EQ(encrt_session_create(m, &so, &s), nullptr);
  Batch b = makeBatch(1, 4, 3);
  ASSERT_EQ(encrt_session_run(s, b.ids.data(), b.lengths.data(), 1, 4, nullptr, nullptr), nullptr);
  std::vector<unsigned char> pbuf(sizeof(encrt_step_profile), 0xCD);
  const size_t kernelOnly = sizeof(const char *);
  encrt_session_profile_get(s, 0, reinterpret_cast<encrt_step_profile *>(pbuf.data()), kernelOnly);
  const char *kernel = nullptr;
  std::memcpy(&kernel, pbuf.data(), kernelOnly);
  ASSERT_NE(kernel, nullptr);
  EXPECT_GT(std::strlen(kernel), 0u);
  for (size_t i = kernelOnly; i < pbuf.size(); ++i)
    ASSERT_EQ(pbuf[i], 0xCD) << "byte " << i;
  // An API 10 caller's encrt_encode_outputs ends before `role`: read as it is, the rest as initialised.
  encrt_encode_outputs eo;
  encrt_encode_outputs_initialize(&eo);
  eo.struct_size = offsetof(encrt_encode_outputs, role);
  std::vector<float> dense(H);
  eo.dense = dense.data();
  const encrt_text text{"x", 1};
  encrt_status *st = encrt_session_encode(s, nullptr, &text, 1, &eo);
  EXPECT_EQ(st, nullptr) << encrt_status_message(st);
  encrt_status_free(st);
  EXPECT_NE(dense[0], 0.0f);
  eo.struct_size = offsetof(encrt_encode_outputs, role) - 1;
  expectError(encrt_session_encode(s, nullptr, &text, 1, &eo), ENCRT_INVALID_ARGUMENT,
              "encrt_encode_outputs.struct_size is");
  encrt_session_release(s);
  encrt_model_release(m);
}

TEST_F(RuntimeTest, TextsWithByteLengths) {
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  auto tokenizeText = [&](std::string_view text) {
    int64_t n = 0;
    const encrt_text t{text.data(), static_cast<int64_t>(text.size())};
    EXPECT_EQ(encrt_model_tokenize_text(m, t, nullptr, 0, &n), nullptr);
    std::vector<int32_t> ids(static_cast<size_t>(n));
    EXPECT_EQ(encrt_model_tokenize_text(m, t, ids.data(), n, &n), nullptr);
    return ids;
  };
  // The bytes after an embedded NUL are text: NUL is a control character the
  // BERT normaliser drops (as the tokenizers library's clean_text does), so
  // "hello\0world" reads as "helloworld", never as "hello".
  using namespace std::string_literals;
  EXPECT_EQ(tokenizeText("hello\0world the"s), tokenize(m, "helloworld the"));
  EXPECT_NE(tokenizeText("hello\0world the"s), tokenize(m, "hello"));
  // Only the given bytes count: no terminator is needed.
  EXPECT_EQ(tokenizeText(std::string_view("hello worldXXXX", 11)), tokenize(m, "hello world"));
  EXPECT_EQ(tokenizeText(std::string_view()), tokenize(m, ""));
  int64_t n = 0;
  expectError(encrt_model_tokenize_text(m, encrt_text{nullptr, 3}, nullptr, 0, &n),
              ENCRT_INVALID_ARGUMENT, "encrt_model_tokenize_text: text.data is NULL");
  expectError(encrt_model_tokenize_text(m, encrt_text{"x", -1}, nullptr, 0, &n),
              ENCRT_INVALID_ARGUMENT, "text.size is -1 (expected >= 0)");

  // Counting: what tokenize gives below max_seq, the untruncated count above.
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  auto countTokens = [&](std::string_view text) {
    int64_t count = -1;
    EXPECT_EQ(encrt_model_count_tokens(m, encrt_text{text.data(), int64_t(text.size())}, &count), nullptr);
    return count;
  };
  EXPECT_EQ(countTokens("hello world"), int64_t(tokenize(m, "hello world").size()));
  EXPECT_EQ(countTokens(""), 2);
  std::string longText;
  for (int i = 0; i < info.max_seq + 5; ++i)
    longText += "the ";
  EXPECT_EQ(int64_t(tokenizeText(longText).size()), info.max_seq);
  EXPECT_EQ(countTokens(longText), info.max_seq + 5 + 2);
  expectError(encrt_model_count_tokens(m, encrt_text{nullptr, 1}, &n), ENCRT_INVALID_ARGUMENT,
              "encrt_model_count_tokens: text.data is NULL");
  expectError(encrt_model_count_tokens(m, encrt_text{"x", 1}, nullptr), ENCRT_INVALID_ARGUMENT,
              "encrt_model_count_tokens: out_count is NULL");
  expectError(encrt_model_count_tokens(nullptr, encrt_text{"x", 1}, &n), ENCRT_INVALID_ARGUMENT,
              "encrt_model_count_tokens: model is NULL");

  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  const std::string withNul = "the\0a, a"s;
  const encrt_text texts[] = {{"hello world", 11}, {withNul.data(), int64_t(withNul.size())}};
  const char *cstrings[] = {"hello world", "thea, a"};
  std::vector<float> a(2 * H), c(2 * H);
  ASSERT_EQ(encrt_session_embed_texts(s, texts, 2, a.data()), nullptr);
  ASSERT_EQ(encrt_session_embed(s, cstrings, 2, c.data()), nullptr);
  for (int i = 0; i < 2 * H; ++i)
    ASSERT_EQ(a[i], c[i]) << i;
  const encrt_text bad[] = {{"hello", 5}, {nullptr, 2}};
  expectError(encrt_session_embed_texts(s, bad, 2, a.data()), ENCRT_INVALID_ARGUMENT,
              "encrt_session_embed_texts: texts[1].data is NULL");
  expectError(encrt_session_embed_texts(s, nullptr, 2, a.data()), ENCRT_INVALID_ARGUMENT,
              "texts is NULL");
  EXPECT_EQ(encrt_session_embed_texts(s, nullptr, 0, nullptr), nullptr);
  encrt_session_release(s);
  encrt_model_release(m);
}

TEST_F(RuntimeTest, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = dir_ + "/pipe.encm";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  encrt_model *m = nullptr;
  // Before the fix, open() waited for a writer forever.
  expectError(encrt_model_load(fifo.c_str(), nullptr, &m), ENCRT_IO_ERROR,
              fifo + ": not a regular file");
  EXPECT_EQ(m, nullptr);
  std::remove(fifo.c_str());
}

TEST_F(RuntimeTest, ThreadCountIsBounded) {
  std::string path = write(writeArtifact(TestModel::spec(kernels())));
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  o.num_threads = 1000000;
  encrt_model *m = nullptr;
  expectError(encrt_model_load(path.c_str(), &o, &m), ENCRT_INVALID_ARGUMENT,
              "encrt_model_load: num_threads is 1000000 (expected 0 = all cores, up to ");
  EXPECT_EQ(m, nullptr);
  o.num_threads = 64; // always allowed, whatever the core count
  ASSERT_EQ(encrt_model_load(path.c_str(), &o, &m), nullptr);
  encrt_model_release(m);
}

TEST_F(RuntimeTest, TextBytesAreBounded) {
  std::string path = write(writeArtifact(TestModel::spec(kernels())));
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  EXPECT_EQ(o.max_text_bytes, 0);
  o.max_text_bytes = -1;
  encrt_model *m = nullptr;
  expectError(encrt_model_load(path.c_str(), &o, &m), ENCRT_INVALID_ARGUMENT,
              "max_text_bytes is -1 (expected >= 0, 0 = 1 MiB)");
  o.max_text_bytes = 16;
  ASSERT_EQ(encrt_model_load(path.c_str(), &o, &m), nullptr);
  int64_t n = 0;
  EXPECT_EQ(encrt_model_tokenize(m, "hello world the", nullptr, 0, &n), nullptr); // 15 bytes
  expectError(encrt_model_tokenize(m, "hello world the a", nullptr, 0, &n), ENCRT_INVALID_ARGUMENT,
              "encrt_model_tokenize: text is 17 bytes, more than max_text_bytes (16;");
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  const char *texts[] = {"hello", "hello world the a"};
  std::vector<float> emb(2 * H);
  expectError(encrt_session_embed(s, texts, 2, emb.data()), ENCRT_INVALID_ARGUMENT,
              "encrt_session_embed: texts[1] is 17 bytes, more than max_text_bytes (16;");
  encrt_session_release(s);
  encrt_model_release(m);

  // The default: 1 MiB.
  m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  std::string big((1 << 20) + 1, 'a');
  expectError(encrt_model_tokenize(m, big.c_str(), nullptr, 0, &n), ENCRT_INVALID_ARGUMENT,
              "text is 1048577 bytes, more than max_text_bytes (1048576;");
  big.pop_back();
  EXPECT_EQ(encrt_model_tokenize(m, big.c_str(), nullptr, 0, &n), nullptr);
  encrt_model_release(m);
}

/// Sharing a session between threads is a usage error: every call either runs
/// alone (and is right) or is refused; none returns corrupted results.
TEST_F(RuntimeTest, SharedSessionRefusesConcurrentCalls) {
  std::string path = write(writeArtifact(TestModel::spec(kernels())));
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  o.num_threads = 1;
  encrt_model *m = nullptr;
  ASSERT_EQ(encrt_model_load(path.c_str(), &o, &m), nullptr);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  std::atomic<int> refused{0}, ran{0}, wrong{0}, otherErrors{0}, ready{0};
  constexpr int64_t kB = 64, kS = TestModel::kMaxSeq, kRuns = 300;
  auto hammer = [&](uint32_t seed) {
    ++ready;
    while (ready.load() < 2) {
    } // start together
    for (int it = 0; it < kRuns; ++it) {
      Batch b = makeBatch(kB, kS, seed + it);
      std::vector<float> hidden(kB * kS * H), pooled(kB * H);
      encrt_status *st = encrt_session_run(s, b.ids.data(), b.lengths.data(), kB, kS,
                                           hidden.data(), pooled.data());
      if (st) {
        std::string msg = encrt_status_message(st);
        (msg.find("the session is in use by another thread") != std::string::npos ? refused : otherErrors)++;
        encrt_status_free(st);
        continue;
      }
      ++ran;
      for (int64_t i = 0; i < kB; ++i)
        for (int64_t t = 0; t < b.lengths[i]; ++t)
          if (std::fabs(hidden[(i * kS + t) * H] - TestModel::expected(b.ids[i * kS + t], 0)) > kTol)
            ++wrong;
    }
  };
  std::thread a(hammer, 1), b(hammer, 7);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(otherErrors.load(), 0);
  EXPECT_EQ(ran.load() + refused.load(), 2 * kRuns);
  EXPECT_GT(ran.load(), 0);
  std::printf("[ info ] shared session: %d runs, %d refused as concurrent\n", ran.load(), refused.load());
  encrt_session_release(s);
  encrt_model_release(m);
}
