//===- MockCudaTest.cpp - The CUDA backend against a mock driver ----------===//
//
// Runs with LD_LIBRARY_PATH at the mock libcuda.so.1 / libcublasLt.so.13
// (MockCuda.cpp, MockCublasLt.cpp), so the whole CUDA path of libencrt runs
// without a GPU: weights upload, kernel resolution, arena and io placement,
// launch shapes, packed outputs scattered to the padded layout, int8 GEMMs
// through cuBLASLt, graph capture and replay with its LRU cache, profiling
// with events, embed, error messages, and that everything is released.
// Expected values come from closed forms computed here.
//
//===----------------------------------------------------------------------===//
#include "CudaTestPlan.h"
#include "encrt/float16.h"
#include "TestUtil.h"

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>

using namespace encrt::test;

namespace {

struct Stats {
  long kernelLaunches, graphLaunches, captures, liveGraphExecs, liveAllocs,
      liveStreams, liveEvents, badLaunches;
};

const Stats &stats() {
  static const Stats *s = [] {
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    auto fn = h ? reinterpret_cast<const Stats *(*)()>(dlsym(h, "mock_cuda_stats")) : nullptr;
    return fn ? fn() : nullptr;
  }();
  if (!s) {
    std::fprintf(stderr, "the mock libcuda.so.1 is not on LD_LIBRARY_PATH\n");
    std::abort();
  }
  return *s;
}

void setAllocLimit(uint64_t bytes) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  reinterpret_cast<void (*)(uint64_t)>(dlsym(h, "mock_cuda_set_alloc_limit"))(bytes);
}

constexpr int32_t H = TestModel::kHidden;

std::vector<uint8_t> mockFatbin() {
  std::string s = "MOCKFATBIN kernels";
  return {s.begin(), s.end()};
}

class MockCuda : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    (void)stats();
  }
  ArtifactSpec spec() {
    ArtifactSpec s = TestModel::spec(kernels());
    addCudaPlan(s);
    s.codes.back().bytes = mockFatbin();
    return s;
  }
  encrt_model *loadOn(const std::vector<uint8_t> &bytes, const char *device = "cuda") {
    std::string path = write(bytes, "m" + std::to_string(files_.size()) + ".encm");
    encrt_model_options o;
    encrt_model_options_initialize(&o);
    o.num_threads = 1;
    o.device = device;
    encrt_model *m = nullptr;
    encrt_status *st = encrt_model_load(path.c_str(), &o, &m);
    EXPECT_EQ(st, nullptr) << encrt_status_message(st);
    encrt_status_free(st);
    return m;
  }
  encrt_session *session(encrt_model *m, bool profiling = false) {
    encrt_session_options so;
    encrt_session_options_initialize(&so);
    so.enable_profiling = profiling;
    encrt_session *s = nullptr;
    encrt_status *st = encrt_session_create(m, &so, &s);
    EXPECT_EQ(st, nullptr) << encrt_status_message(st);
    encrt_status_free(st);
    return s;
  }
};

struct Batch {
  int64_t batch, seq;
  std::vector<int32_t> ids, lengths;
};

/// Junk (out-of-vocabulary) padding the runtime must ignore.
Batch makeBatch(std::vector<int32_t> lengths, int64_t seq, int32_t salt) {
  Batch b{static_cast<int64_t>(lengths.size()), seq, {}, lengths};
  b.ids.assign(static_cast<size_t>(b.batch * seq), 999);
  for (int64_t i = 0; i < b.batch; ++i)
    for (int32_t s = 0; s < lengths[i]; ++s)
      b.ids[i * seq + s] = (salt + 7 * i + 3 * s) % TestModel::kVocab;
  return b;
}

/// Runs `b`; checks hidden (valid rows = `row(id, h)`, padding exactly 0)
/// and pooled (mean of the valid rows).
template <typename Row>
void runAndCheck(encrt_session *s, const Batch &b, Row row, float tol = 1e-5f) {
  std::vector<float> hidden(static_cast<size_t>(b.batch * b.seq * H), NAN);
  std::vector<float> pooled(static_cast<size_t>(b.batch * H), NAN);
  encrt_status *st = encrt_session_run(s, b.ids.data(), b.lengths.data(), b.batch,
                                       b.seq, hidden.data(), pooled.data());
  ASSERT_EQ(st, nullptr) << encrt_status_message(st);
  for (int64_t i = 0; i < b.batch; ++i) {
    for (int64_t t = 0; t < b.seq; ++t)
      for (int32_t h = 0; h < H; ++h) {
        float got = hidden[static_cast<size_t>((i * b.seq + t) * H + h)];
        if (t < b.lengths[i])
          ASSERT_NEAR(got, row(b.ids[i * b.seq + t], h), tol) << i << " " << t << " " << h;
        else
          ASSERT_EQ(got, 0.0f) << "padding row " << i << " " << t;
      }
    for (int32_t h = 0; h < H; ++h) {
      double sum = 0;
      for (int32_t t = 0; t < b.lengths[i]; ++t)
        sum += row(b.ids[i * b.seq + t], h);
      ASSERT_NEAR(pooled[static_cast<size_t>(i * H + h)], sum / b.lengths[i], tol) << i;
    }
  }
}

float expectedRow(int32_t id, int32_t h) { return TestModel::expected(id, h); }

} // namespace

TEST_F(MockCuda, LoadsOnTheDevice) {
  encrt_model *m = loadOn(writeArtifact(spec()));
  ASSERT_NE(m, nullptr);
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  EXPECT_STREQ(info.device, "cuda:0 Mock GPU");
  EXPECT_STREQ(info.cpu_target, "");
  EXPECT_EQ(info.num_steps, 2); // the CUDA plan's
  encrt_model_release(m);
  // auto prefers the device.
  m = loadOn(writeArtifact(spec()), nullptr);
  encrt_model_get_info(m, &info, sizeof info);
  EXPECT_STREQ(info.device, "cuda:0 Mock GPU");
  encrt_model_release(m);
  EXPECT_EQ(stats().liveAllocs, 0);
}

TEST_F(MockCuda, RunsPackedAndScattersToThePaddedLayout) {
  encrt_model *m = loadOn(writeArtifact(spec()));
  encrt_session *s = session(m);
  runAndCheck(s, makeBatch({7, 1, 4}, 7, 1), expectedRow);
  runAndCheck(s, makeBatch({1}, 1, 2), expectedRow);
  runAndCheck(s, makeBatch({64, 3, 64, 10, 1}, 64, 3), expectedRow);
  EXPECT_EQ(stats().badLaunches, 0);
  // Packed: hidden [tokens, H] + pooled [batch, H] (both live to the end),
  // not batch x seq rows.
  EXPECT_EQ(encrt_session_arena_bytes(s), uint64_t(64 + 3 + 64 + 10 + 1 + 5) * H * 4);
  encrt_session_release(s);
  encrt_model_release(m);
  EXPECT_EQ(stats().liveAllocs, 0);
  EXPECT_EQ(stats().liveStreams, 0);
  EXPECT_EQ(stats().liveGraphExecs, 0);
}

TEST_F(MockCuda, ReplaysGraphsOfRepeatedShapes) {
  encrt_model *m = loadOn(writeArtifact(spec()));
  encrt_session *s = session(m);
  const Stats before = stats();
  runAndCheck(s, makeBatch({5, 2}, 6, 1), expectedRow); // direct + capture
  EXPECT_EQ(stats().kernelLaunches - before.kernelLaunches, 2);
  EXPECT_EQ(stats().captures - before.captures, 1);
  EXPECT_EQ(stats().graphLaunches - before.graphLaunches, 0);
  // Same shape, other ids: the graph replays with the new inputs.
  runAndCheck(s, makeBatch({5, 2}, 6, 9), expectedRow);
  runAndCheck(s, makeBatch({2, 5}, 6, 4), expectedRow); // same tokens too
  EXPECT_EQ(stats().kernelLaunches - before.kernelLaunches, 2);
  EXPECT_EQ(stats().graphLaunches - before.graphLaunches, 2);
  // Another token count is another shape.
  runAndCheck(s, makeBatch({5, 3}, 6, 4), expectedRow);
  EXPECT_EQ(stats().kernelLaunches - before.kernelLaunches, 4);
  EXPECT_EQ(stats().captures - before.captures, 2);
  // Many shapes: at most 8 graphs stay alive, older ones still replay right.
  for (int32_t n = 1; n <= 12; ++n)
    runAndCheck(s, makeBatch({n}, 12, n), expectedRow);
  EXPECT_LE(stats().liveGraphExecs, 8);
  runAndCheck(s, makeBatch({12}, 12, 5), expectedRow);
  // Pooled only (no hidden wanted) is its own graph and gives the same pooled.
  Batch b = makeBatch({3, 6}, 6, 2);
  std::vector<float> pooled(2 * H), pooled2(2 * H), hidden(2 * 6 * H);
  ASSERT_EQ(encrt_session_run(s, b.ids.data(), b.lengths.data(), 2, 6, nullptr, pooled.data()), nullptr);
  ASSERT_EQ(encrt_session_run(s, b.ids.data(), b.lengths.data(), 2, 6, nullptr, pooled2.data()), nullptr);
  EXPECT_EQ(pooled, pooled2);
  ASSERT_EQ(encrt_session_run(s, b.ids.data(), b.lengths.data(), 2, 6, hidden.data(), pooled2.data()), nullptr);
  EXPECT_EQ(pooled, pooled2);
  EXPECT_EQ(stats().badLaunches, 0);
  encrt_session_release(s);
  encrt_model_release(m);
  EXPECT_EQ(stats().liveGraphExecs, 0);
  EXPECT_EQ(stats().liveAllocs, 0);
}

TEST_F(MockCuda, GraphsCanBeTurnedOff) {
  encrt_model *m = loadOn(writeArtifact(spec()));
  ::setenv("ENCRT_CUDA_GRAPHS", "0", 1);
  encrt_session *s = session(m);
  ::unsetenv("ENCRT_CUDA_GRAPHS");
  const Stats before = stats();
  for (int i = 0; i < 3; ++i)
    runAndCheck(s, makeBatch({4, 4}, 4, i), expectedRow);
  EXPECT_EQ(stats().captures, before.captures);
  EXPECT_EQ(stats().kernelLaunches - before.kernelLaunches, 6);
  encrt_session_release(s);
  encrt_model_release(m);
}

TEST_F(MockCuda, ProfilesStepsWithEvents) {
  encrt_model *m = loadOn(writeArtifact(spec()));
  encrt_session *s = session(m, true);
  const Stats before = stats();
  for (int i = 0; i < 3; ++i)
    runAndCheck(s, makeBatch({3, 4}, 5, i), expectedRow);
  EXPECT_EQ(stats().captures, before.captures); // no graphs while profiling
  ASSERT_EQ(encrt_session_profile_count(s), 2);
  encrt_step_profile p;
  encrt_session_profile_get(s, 0, &p, sizeof p);
  EXPECT_STREQ(p.kernel, "test_cuda_embed");
  EXPECT_STREQ(p.op, "enc.embedding");
  EXPECT_EQ(p.calls, 3);
  EXPECT_DOUBLE_EQ(p.total_ms, 0.75); // the mock's 0.25 ms per event pair
  encrt_session_profile_get(s, 1, &p, sizeof p);
  EXPECT_STREQ(p.kernel, "test_cuda_pool");
  encrt_session_release(s);
  encrt_model_release(m);
  EXPECT_EQ(stats().liveEvents, 0);
}

TEST_F(MockCuda, EmbedMatchesTheCpu) {
  std::vector<uint8_t> bytes = writeArtifact(spec());
  const char *texts[] = {"hello world", "the a", "hellos, world"};
  std::vector<float> gpu(3 * H), cpu(3 * H);
  for (const char *device : {"cuda", "cpu"}) {
    encrt_model *m = loadOn(bytes, device);
    encrt_session *s = session(m);
    encrt_status *st = encrt_session_embed(s, texts, 3, device[1] == 'u' ? gpu.data() : cpu.data());
    ASSERT_EQ(st, nullptr) << encrt_status_message(st);
    encrt_session_release(s);
    encrt_model_release(m);
  }
  for (size_t i = 0; i < gpu.size(); ++i)
    ASSERT_NEAR(gpu[i], cpu[i], 1e-5f) << i;
}

TEST_F(MockCuda, RunsInt8GemmsThroughCublasLt) {
  // embed -> quantise (x / sx) -> int8 GEMM with W8 -> dequantise (* sx) -> pool.
  using K = encm::ValueKind;
  using D = encm::DType;
  ArtifactSpec s = spec();
  const float sx = 0.05f;
  const uint64_t w8Offset = (s.weights.size() + 63) / 64 * 64;
  auto w8 = [](int32_t n, int32_t k) { return static_cast<int8_t>((n * 7 + k * 3) % 7 - 3); };
  s.weights.resize(w8Offset + H * H);
  for (int32_t n = 0; n < H; ++n)
    for (int32_t k = 0; k < H; ++k)
      s.weights[w8Offset + n * H + k] = static_cast<uint8_t>(w8(n, k));
  SpecCudaPlan &c = *s.cuda;
  c.values = {
      {"ids", K::Input, D::I32, {-1, -2}},
      {"lengths", K::Input, D::I32, {-1}},
      c.values[2], // table
      c.values[3], // bias
      {"e", K::Activation, D::F32, {-3, H}, 0, 0, 0, 1},
      {"q", K::Activation, D::I8, {-3, H}, 0, 0, 1, 2},
      {"w8", K::Weight, D::I8, {H, H}, w8Offset, uint64_t(H) * H},
      {"acc", K::Activation, D::I32, {-3, H}, 0, 0, 2, 3},
      {"hidden", K::Output, D::F32, {-3, H}, 0, 0, 3, 4},
      {"pooled", K::Output, D::F32, {-1, H}, 0, 0, 4, 4},
  };
  c.steps = {
      {"test_cuda_embed", "enc.embedding", {0, 2, 3, 4}, 1, {ENC_CUDA_GRID_ROWS, 128, 0, 4, 0, H}, {}},
      {"test_cuda_quant", "enc.quantize", {4, 5}, 1, {ENC_CUDA_GRID_ROWS, 128, 0, 4, 0, H}, {sx}},
      {ENC_CUDA_GEMM_KERNEL, "enc.linear", {5, 6, 7}, 1, {ENC_CUDA_GRID_GEMM, 0, 0, 0, 0, H, H, 0}, {}},
      {"test_cuda_dequant", "enc.dequantize", {7, 8}, 1, {ENC_CUDA_GRID_ROWS, 128, 0, 4, 0, H}, {sx}},
      {"test_cuda_pool", "enc.pool", {8, 9}, 1, {ENC_CUDA_GRID_BATCH, 32, 0, 1, 0, H}, {}},
  };
  c.outputs = {8, 9};
  // Reference: the same arithmetic, written out here.
  auto row = [&](int32_t id, int32_t n) {
    int32_t acc = 0;
    for (int32_t k = 0; k < H; ++k) {
      float x = TestModel::expected(id, k) / sx;
      int32_t q = static_cast<int32_t>(std::nearbyint(std::fmax(-127.f, std::fmin(127.f, x))));
      acc += q * w8(n, k);
    }
    return static_cast<float>(acc) * sx;
  };
  encrt_model *m = loadOn(writeArtifact(s));
  encrt_session *sess = session(m);
  runAndCheck(sess, makeBatch({9, 1, 5}, 9, 3), row, 1e-4f);
  runAndCheck(sess, makeBatch({9, 1, 5}, 9, 8), row, 1e-4f); // graph replay
  runAndCheck(sess, makeBatch({2}, 3, 1), row, 1e-4f);
  EXPECT_EQ(stats().badLaunches, 0);
  encrt_session_release(sess);
  encrt_model_release(m);
  EXPECT_EQ(stats().liveAllocs, 0);
}

namespace {

/// embed -> f16 -> GEMM f16 [H, H] (+ bias, + tanh GELU: cuBLASLt epilogue
/// 0 / 1 / 2) -> f32 -> pool; `row` gives its expected output rows.
struct Fp16GemmModel {
  ArtifactSpec spec;
  static float w(int32_t n, int32_t k) { return static_cast<float>((n * 5 + k * 3) % 11 - 5) / 16; }
  static float bias(int32_t n) { return static_cast<float>(n % 5 - 2) / 8; }
  int64_t epilogue;
  float row(int32_t id, int32_t n) const {
    double acc = 0;
    for (int32_t k = 0; k < H; ++k)
      acc += double(encm_f16_to_f32(encm_f32_to_f16(TestModel::expected(id, k)))) * w(n, k);
    if (epilogue >= 1)
      acc += bias(n);
    if (epilogue == 2)
      acc = 0.5 * acc * (1 + std::tanh(0.7978845608 * (acc + 0.044715 * acc * acc * acc)));
    return static_cast<float>(acc);
  }
};

struct LtStats {
  long heuristicCalls, heuristicRequested, matmuls;
};

const LtStats &ltStats() {
  void *h = dlopen("libcublasLt.so.13", RTLD_NOW);
  auto fn = h ? reinterpret_cast<const LtStats *(*)()>(dlsym(h, "mock_cublaslt_stats")) : nullptr;
  if (!fn) {
    std::fprintf(stderr, "the mock libcublasLt.so.13 is not on LD_LIBRARY_PATH\n");
    std::abort();
  }
  return *fn();
}

} // namespace

class MockCudaGemm : public MockCuda {
protected:
  Fp16GemmModel fp16GemmModel(int64_t epilogue) {
    using K = encm::ValueKind;
    using D = encm::DType;
    Fp16GemmModel g{spec(), epilogue};
    ArtifactSpec &s = g.spec;
    const uint64_t wOffset = (s.weights.size() + 63) / 64 * 64;
    const uint64_t bOffset = wOffset + uint64_t(H) * H * 2;
    s.weights.resize(bOffset + H * 2);
    auto *wp = reinterpret_cast<uint16_t *>(s.weights.data() + wOffset);
    auto *bp = reinterpret_cast<uint16_t *>(s.weights.data() + bOffset);
    for (int32_t n = 0; n < H; ++n) {
      bp[n] = encm_f32_to_f16(Fp16GemmModel::bias(n));
      for (int32_t k = 0; k < H; ++k)
        wp[n * H + k] = encm_f32_to_f16(Fp16GemmModel::w(n, k));
    }
    SpecCudaPlan &c = *s.cuda;
    c.values = {
        {"ids", K::Input, D::I32, {-1, -2}},
        {"lengths", K::Input, D::I32, {-1}},
        c.values[2], // table
        c.values[3], // bias (f32, of the embedding)
        {"e", K::Activation, D::F32, {-3, H}, 0, 0, 0, 1},
        {"x", K::Activation, D::F16, {-3, H}, 0, 0, 1, 2},
        {"w", K::Weight, D::F16, {H, H}, wOffset, uint64_t(H) * H * 2},
        {"b", K::Weight, D::F16, {H}, bOffset, uint64_t(H) * 2},
        {"y", K::Activation, D::F16, {-3, H}, 0, 0, 2, 3},
        {"hidden", K::Output, D::F32, {-3, H}, 0, 0, 3, 4},
        {"pooled", K::Output, D::F32, {-1, H}, 0, 0, 4, 4},
    };
    std::vector<uint32_t> gemmOps = {5, 6};
    if (epilogue >= 1)
      gemmOps.push_back(7);
    gemmOps.push_back(8);
    c.steps = {
        {"test_cuda_embed", "enc.embedding", {0, 2, 3, 4}, 1, {ENC_CUDA_GRID_ROWS, 128, 0, 4, 0, H}, {}},
        {"test_cuda_tohalf", "enc.cast", {4, 5}, 1, {ENC_CUDA_GRID_ROWS, 128, 0, 4, 0, H}, {}},
        {ENC_CUDA_GEMM_KERNEL, "enc.linear", gemmOps, 1,
         {ENC_CUDA_GRID_GEMM, 0, 0, 0, 0, H, H, epilogue}, {}},
        {"test_cuda_tofloat", "enc.cast", {8, 9}, 1, {ENC_CUDA_GRID_ROWS, 128, 0, 4, 0, H}, {}},
        {"test_cuda_pool", "enc.pool", {9, 10}, 1, {ENC_CUDA_GRID_BATCH, 32, 0, 1, 0, H}, {}},
    };
    c.outputs = {9, 10};
    return g;
  }
};

TEST_F(MockCudaGemm, RunsFp16GemmsWithBiasAndGeluThroughCublasLt) {
  for (int64_t epilogue : {0, 1, 2}) {
    const Fp16GemmModel g = fp16GemmModel(epilogue);
    auto row = [&](int32_t id, int32_t n) { return g.row(id, n); };
    encrt_model *m = loadOn(writeArtifact(g.spec));
    ASSERT_NE(m, nullptr);
    encrt_session *sess = session(m);
    // fp16 output rounding: |y| < 8 here, so within 4e-3.
    runAndCheck(sess, makeBatch({6, 2, 1}, 6, 3), row, 5e-3f);
    runAndCheck(sess, makeBatch({6, 2, 1}, 6, 5), row, 5e-3f); // graph replay
    EXPECT_EQ(stats().badLaunches, 0);
    encrt_session_release(sess);
    encrt_model_release(m);
  }
  EXPECT_EQ(stats().liveAllocs, 0);
}

TEST_F(MockCudaGemm, ChoosesGemmAlgorithmsOncePerShapeBucket) {
  const Fp16GemmModel g = fp16GemmModel(1);
  auto row = [&](int32_t id, int32_t n) { return g.row(id, n); };
  encrt_model *m = loadOn(writeArtifact(g.spec));
  ASSERT_NE(m, nullptr);
  encrt_session *sess = session(m);
  const LtStats before = ltStats();
  // 9 tokens: the heuristic's 8 best (the mock has 3) are each run once to
  // warm up and 3 times timed, then the chosen one runs, and is captured
  // into the graph for the next run of this shape.
  runAndCheck(sess, makeBatch({6, 2, 1}, 6, 3), row, 5e-3f);
  EXPECT_EQ(ltStats().heuristicCalls - before.heuristicCalls, 1);
  EXPECT_EQ(ltStats().heuristicRequested, 8);
  EXPECT_EQ(ltStats().matmuls - before.matmuls, 3 * 4 + 1 + 1);
  // 12 and 16 tokens share 9's bucket (16): no new heuristic query, also
  // from another session of the model.
  runAndCheck(sess, makeBatch({7, 5}, 7, 4), row, 5e-3f);
  encrt_session *other = session(m);
  runAndCheck(other, makeBatch({8, 8}, 8, 5), row, 5e-3f);
  EXPECT_EQ(ltStats().heuristicCalls - before.heuristicCalls, 1);
  // 40 tokens: the next bucket (64) is a new shape.
  runAndCheck(other, makeBatch({20, 20}, 20, 6), row, 5e-3f);
  EXPECT_EQ(ltStats().heuristicCalls - before.heuristicCalls, 2);
  encrt_session_release(other);
  encrt_session_release(sess);
  encrt_model_release(m);

  // ENCRT_CUDA_GEMM_TUNE=0: cuBLASLt's first choice, nothing timed.
  ASSERT_EQ(setenv("ENCRT_CUDA_GEMM_TUNE", "0", 1), 0);
  m = loadOn(writeArtifact(g.spec));
  sess = session(m);
  const LtStats untuned = ltStats();
  runAndCheck(sess, makeBatch({6, 2, 1}, 6, 3), row, 5e-3f);
  EXPECT_EQ(ltStats().heuristicRequested, 1);
  EXPECT_EQ(ltStats().matmuls - untuned.matmuls, 1 + 1); // the run and its capture
  unsetenv("ENCRT_CUDA_GEMM_TUNE");
  encrt_session_release(sess);
  encrt_model_release(m);
  EXPECT_EQ(stats().liveAllocs, 0);
  EXPECT_EQ(stats().liveEvents, 0);
}

TEST_F(MockCuda, ReportsErrorsWithTheCallAndTheDriverMessage) {
  ArtifactSpec s = spec();
  s.cuda->steps[1].kernel = "nope";
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  o.device = "cuda";
  expectLoadError(writeArtifact(s), ENCRT_INVALID_ARTIFACT,
                  "cuda plan step 1 kernel \"nope\" is not in the CUDA code object", &o);
  s = spec();
  s.codes.back().bytes = {'n', 'o', 't', ' ', 'a', ' ', 'f', 'a', 't', 'b', 'i', 'n'};
  expectLoadError(writeArtifact(s), ENCRT_INTERNAL,
                  "cuModuleLoadData(fatbin of 12 bytes): CUDA_ERROR_INVALID_IMAGE: "
                  "device kernel image is invalid", &o);
  o.device = "cuda:1";
  expectLoadError(writeArtifact(spec()), ENCRT_UNSUPPORTED,
                  "no CUDA device: cuda:1 requested, the driver reports 1 device(s)", &o);

  encrt_model *m = loadOn(writeArtifact(spec()));
  encrt_session *sess = session(m);
  setAllocLimit(1 << 16);
  Batch big = makeBatch(std::vector<int32_t>(64, 64), 64, 1);
  std::vector<float> pooled(64 * H);
  expectError(encrt_session_run(sess, big.ids.data(), big.lengths.data(), 64, 64,
                                nullptr, pooled.data()),
              ENCRT_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  setAllocLimit(~uint64_t(0));
  // The session still works afterwards.
  runAndCheck(sess, makeBatch({3}, 4, 1), expectedRow);
  encrt_session_release(sess);
  encrt_model_release(m);
  EXPECT_EQ(stats().liveAllocs, 0);
}
