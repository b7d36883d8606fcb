//===- e2e_bench.cpp - End-to-end model and tokenizer benchmarks ----------===//
//
// Times a compiled artifact through the public C API:
//   ENCC_BENCH_ARTIFACT=model.encm encc_bench [--benchmark_filter=...]
// BM_Forward/B/S runs batch B of full-length sequences of S tokens;
// BM_Tokenize times the WordPiece tokenizer on a typical sentence.
//
//===----------------------------------------------------------------------===//

#include "encrt/encrt.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

encrt_model *gModel = nullptr;

encrt_model *model() {
  if (gModel)
    return gModel;
  const char *path = std::getenv("ENCC_BENCH_ARTIFACT");
  if (!path) {
    std::fprintf(stderr, "encc_bench: set ENCC_BENCH_ARTIFACT to a compiled .encm (see scripts/bench)\n");
    std::exit(2);
  }
  encrt_model_options opt;
  encrt_model_options_initialize(&opt);
  if (const char *t = std::getenv("ENCC_BENCH_THREADS"))
    opt.num_threads = std::atoi(t);
  if (encrt_status *s = encrt_model_load(path, &opt, &gModel)) {
    std::fprintf(stderr, "encc_bench: %s\n", encrt_status_message(s));
    std::exit(2);
  }
  return gModel;
}

void BM_Forward(benchmark::State &state) {
  encrt_model_info info;
  encrt_model_get_info(model(), &info);
  const int64_t batch = state.range(0), seq = state.range(1);
  std::vector<int32_t> ids(batch * seq), lengths(batch, static_cast<int32_t>(seq));
  for (int64_t i = 0; i < batch * seq; ++i)
    ids[i] = 1000 + static_cast<int32_t>((i * 7919) % 20000);
  for (int64_t b = 0; b < batch; ++b) {
    ids[b * seq] = 101;
    ids[b * seq + seq - 1] = 102;
  }
  std::vector<float> hidden(batch * seq * info.hidden_size);
  encrt_session *session = nullptr;
  if (encrt_status *s = encrt_session_create(model(), nullptr, &session)) {
    state.SkipWithError(encrt_status_message(s));
    encrt_status_free(s);
    return;
  }
  for (auto _ : state) {
    if (encrt_status *s = encrt_session_run(session, ids.data(), lengths.data(), batch, seq, hidden.data(), nullptr)) {
      state.SkipWithError(encrt_status_message(s));
      encrt_status_free(s);
      break;
    }
    benchmark::DoNotOptimize(hidden.data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(batch * seq), benchmark::Counter::kIsIterationInvariantRate);
  encrt_session_release(session);
}
BENCHMARK(BM_Forward)->Args({1, 128})->Args({8, 128})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Tokenize(benchmark::State &state) {
  const char *text = "The quick brown fox jumps over the lazy dog, and then naïvely asks: "
                     "how many word-pieces does tokenisation produce?";
  std::vector<int32_t> ids(512);
  int64_t count = 0;
  for (auto _ : state) {
    if (encrt_status *s = encrt_model_tokenize(model(), text, ids.data(), 512, &count)) {
      state.SkipWithError(encrt_status_message(s));
      encrt_status_free(s);
      break;
    }
    benchmark::DoNotOptimize(count);
  }
  state.counters["texts/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Tokenize)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
