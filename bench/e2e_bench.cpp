//===- e2e_bench.cpp - End-to-end model and tokenizer benchmarks ----------===//
//
// Times compiled artifacts through the public C API, all in one process:
//   ENCC_BENCH_ARTIFACT=model.encm [ENCC_BENCH_ARTIFACT_INT8=model-int8.encm]
//     encc_bench [--benchmark_filter=...]
// ENCC_BENCH_ARTIFACT may also be a comma-separated list (labels: the file
// names without .encm); alone it is labelled "fp32", and
// ENCC_BENCH_ARTIFACT_INT8 adds one labelled "int8". ENCC_BENCH_THREADS sets
// the worker threads (default: all cores).
// BM_Forward/<label>/B/S runs batch B of full-length sequences of S tokens;
// BM_Encode/<label>/B/W times encrt_session_encode (every output the model
// has: bge-m3's three from one pass) on B texts of W words;
// BM_Tokenize/<label>/{sentence,paragraph} times the tokenizer of the first
// artifact that has one, and of each artifact in ENCC_BENCH_TOKENIZERS (a
// comma-separated list, e.g. a byte-level BPE one), on a typical sentence and
// on a paragraph of 20 (bench/peers/tokenizers_peer.py times the `tokenizers`
// library on the same texts). With two or more artifacts a table of time
// ratios vs the first follows the results (median of the repetitions when
// there are some).
// Load time and memory (issue 5): before the benchmarks, each artifact is
// loaded ENCC_BENCH_LOADS times (default 7; load + release, median and min
// printed), then once more for good; the resident-set growth of that load and
// of its first forward (batch 1 x 128) and the process's peak RSS so far
// (VmHWM; getrusage ru_maxrss as the fallback) are printed per artifact.
// BM_Load/<label> times encrt_model_load + release under Google Benchmark as
// well (its peak_rss_MB counter: the same peak). Artifacts
// compiled with --weights=random:SEED (e.g. BERT-base from
// bench/models/bert-base-uncased-shaped) are timed like any other; their
// load includes generating the weights.
//
//===----------------------------------------------------------------------===//

#include "encrt/encrt.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

namespace {

struct Artifact {
  std::string label, path;
  encrt_model *model = nullptr;
  bool hasTokenizer = false;
};

/// Current resident set size in MB (/proc/self/statm), 0 if unavailable.
double rssMB() {
  std::FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  long pages = 0, resident = 0;
  int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6 : 0;
}

/// Peak resident set size of this process so far in MB: VmHWM of
/// /proc/self/status; getrusage's ru_maxrss (KB) where that is missing. (On
/// Linux ru_maxrss also counts the peak of the process image before exec, so
/// it reports a Python parent's gigabytes when compare.py starts us.)
double peakRssMB() {
  if (std::FILE *f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1)
        break;
    std::fclose(f);
    if (kb >= 0)
      return kb / 1e3;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1e3;
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// One forward of batch 1 x min(128, max_seq) tokens; false on error.
bool firstRun(encrt_model *model) {
  encrt_model_info info;
  encrt_model_get_info(model, &info, sizeof info);
  const int64_t seq = std::min<int64_t>(128, info.max_seq);
  std::vector<int32_t> ids(seq, 1000), lengths(1, static_cast<int32_t>(seq));
  std::vector<float> hidden(seq * info.hidden_size);
  encrt_session *session = nullptr;
  encrt_status *st = encrt_session_create(model, nullptr, &session);
  if (!st)
    st = encrt_session_run(session, ids.data(), lengths.data(), 1, seq, hidden.data(), nullptr);
  if (st) {
    std::fprintf(stderr, "encc_bench: first run: %s\n", encrt_status_message(st));
    encrt_status_free(st);
  }
  encrt_session_release(session);
  return st == nullptr;
}

std::vector<Artifact> &artifacts() {
  static std::vector<Artifact> all;
  return all;
}

/// The int8 GEMM path of a code object (enc_qgemm.h picks it from the
/// target's ISA macros; tests/codegen checks it through enc_q8_path()).
const char *q8Path(const std::string &target) {
  if (target == "cpu-x86-64-v4-vnni" || target == "cpu-x86-64-v4-bf16")
    return "avx512vnni";
  if (target == "cpu-x86-64-v4-amx")
    return "amx-int8 (K % 64 == 0, else avx512vnni)";
  if (target == "cpu-x86-64-v3-vnni")
    return "avxvnni";
  if (target == "cpu-x86-64-v3" || target == "cpu-x86-64-v4")
    return "avx2";
  if (target == "cpu-x86-64-v2")
    return "scalar";
  return "depends on -march=native";
}

/// The non-empty items of a comma-separated list (none for null).
std::vector<std::string> splitList(const char *list) {
  std::vector<std::string> items;
  const std::string s = list ? list : "";
  for (size_t b = 0; b <= s.size();) {
    size_t e = s.find(',', b);
    if (e == std::string::npos)
      e = s.size();
    if (e > b)
      items.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return items;
}

std::string stem(const std::string &path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".encm") == 0)
    name.resize(name.size() - 5);
  return name;
}

/// Reads the environment and loads every artifact; exits with a message on
/// any problem.
void loadArtifacts() {
  const char *list = std::getenv("ENCC_BENCH_ARTIFACT");
  const char *int8 = std::getenv("ENCC_BENCH_ARTIFACT_INT8");
  if (!list || !*list) {
    std::fprintf(stderr, "encc_bench: set ENCC_BENCH_ARTIFACT to a compiled .encm (or a comma-separated list; "
                         "ENCC_BENCH_ARTIFACT_INT8 adds an int8 build; see scripts/bench)\n");
    std::exit(2);
  }
  const std::vector<std::string> paths = splitList(list);
  for (const std::string &p : paths)
    artifacts().push_back({paths.size() == 1 ? "fp32" : stem(p), p});
  if (int8 && *int8)
    artifacts().push_back({"int8", int8});
  encrt_model_options opt;
  encrt_model_options_initialize(&opt);
  if (const char *t = std::getenv("ENCC_BENCH_THREADS"))
    opt.num_threads = std::atoi(t);
  int loads = 7;
  if (const char *n = std::getenv("ENCC_BENCH_LOADS"))
    loads = std::max(1, std::atoi(n));
  for (Artifact &a : artifacts()) {
    // Load time: `loads` times load + release; the median and the fastest.
    std::vector<double> ms;
    for (int i = 0; i < loads; ++i) {
      encrt_model *m = nullptr;
      auto t0 = std::chrono::steady_clock::now();
      if (encrt_status *st = encrt_model_load(a.path.c_str(), &opt, &m)) {
        std::fprintf(stderr, "encc_bench: %s\n", encrt_status_message(st));
        std::exit(2);
      }
      ms.push_back(msSince(t0));
      encrt_model_release(m);
    }
    std::sort(ms.begin(), ms.end());
    // Memory: RSS growth of the load we keep and of its first forward.
    const double rss0 = rssMB();
    if (encrt_status *st = encrt_model_load(a.path.c_str(), &opt, &a.model)) {
      std::fprintf(stderr, "encc_bench: %s\n", encrt_status_message(st));
      std::exit(2);
    }
    const double rssLoaded = rssMB();
    if (!firstRun(a.model))
      std::exit(2);
    const double rssRun = rssMB();
    std::fprintf(stderr,
                 "encc_bench: %-6s load %.2f ms (median of %d; min %.2f), RSS +%.1f MB after load, "
                 "+%.1f MB after load + first forward (1 x 128), process peak RSS %.1f MB\n",
                 a.label.c_str(), ms[ms.size() / 2], loads, ms.front(), rssLoaded - rss0, rssRun - rss0,
                 peakRssMB());
    int64_t count = 0;
    int32_t tmp[8];
    if (encrt_status *st = encrt_model_tokenize(a.model, "hello", tmp, 8, &count))
      encrt_status_free(st);
    else
      a.hasTokenizer = true;
    encrt_model_info info;
    encrt_model_get_info(a.model, &info, sizeof info);
    std::FILE *f = std::fopen(a.path.c_str(), "rb");
    long size = 0;
    if (f) {
      std::fseek(f, 0, SEEK_END);
      size = std::ftell(f);
      std::fclose(f);
    }
    std::fprintf(stderr,
                 "encc_bench: %-6s %s: %.1f MB file, %.1f MB of weights%s, code object %s (int8 GEMM path if "
                 "any: %s), %d threads\n",
                 a.label.c_str(), a.path.c_str(), size / 1e6, info.weight_bytes / 1e6,
                 info.random_weights ? " (random, generated at load)" : "", info.cpu_target,
                 q8Path(info.cpu_target), opt.num_threads);
  }
}

void BM_Forward(benchmark::State &state, encrt_model *model) {
  encrt_model_info info;
  encrt_model_get_info(model, &info, sizeof info);
  // range(2) == 1: mixed lengths seq*(b+1)/batch (8 x 128: 16, 32, ..., 128), right-padded.
  const int64_t batch = state.range(0), seq = state.range(1);
  const bool mixed = state.range(2) != 0;
  std::vector<int32_t> ids(batch * seq), lengths(batch, static_cast<int32_t>(seq));
  for (int64_t i = 0; i < batch * seq; ++i)
    ids[i] = 1000 + static_cast<int32_t>((i * 7919) % 20000);
  for (int64_t b = 0; b < batch; ++b) {
    if (mixed)
      lengths[b] = static_cast<int32_t>(std::max<int64_t>(1, seq * (b + 1) / batch));
    ids[b * seq] = 101;
    ids[b * seq + lengths[b] - 1] = 102;
    for (int64_t t = lengths[b]; t < seq; ++t)
      ids[b * seq + t] = 0;
  }
  std::vector<float> hidden(batch * seq * info.hidden_size);
  encrt_session *session = nullptr;
  if (encrt_status *s = encrt_session_create(model, nullptr, &session)) {
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

void BM_Load(benchmark::State &state, const std::string &path) {
  encrt_model_options opt;
  encrt_model_options_initialize(&opt);
  if (const char *t = std::getenv("ENCC_BENCH_THREADS"))
    opt.num_threads = std::atoi(t);
  for (auto _ : state) {
    encrt_model *m = nullptr;
    if (encrt_status *st = encrt_model_load(path.c_str(), &opt, &m)) {
      state.SkipWithError(encrt_status_message(st));
      encrt_status_free(st);
      break;
    }
    encrt_model_release(m);
  }
  state.counters["peak_rss_MB"] = peakRssMB();
}

/// A typical sentence, and a paragraph of 20 of them (2.3 KB: the tokenizer
/// stops at the model's maximum sequence length, as encrt_model_tokenize does).
const std::string &tokenizeText(bool paragraph) {
  static const std::string sentence = "The quick brown fox jumps over the lazy dog, and then naïvely asks: "
                                      "how many word-pieces does tokenisation produce?";
  static const std::string para = [] {
    std::string p;
    for (int i = 0; i < 20; ++i)
      p += sentence + " ";
    return p;
  }();
  return paragraph ? para : sentence;
}

void BM_Tokenize(benchmark::State &state, encrt_model *model, bool paragraph) {
  const std::string &text = tokenizeText(paragraph);
  const encrt_text t{text.data(), static_cast<int64_t>(text.size())};
  std::vector<int32_t> ids(4096);
  int64_t count = 0;
  for (auto _ : state) {
    if (encrt_status *s = encrt_model_tokenize_text(model, t, ids.data(), 4096, &count)) {
      state.SkipWithError(encrt_status_message(s));
      encrt_status_free(s);
      break;
    }
    benchmark::DoNotOptimize(count);
  }
  state.counters["texts/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ids"] = static_cast<double>(count);
}

/// BM_Encode/<label>/B/W: encrt_session_encode of B texts of W words each
/// (tokenised in the run) with every output the model has: the dense
/// embedding, and the sparse entries (top 64) and token vectors where it has
/// them (bge-m3's heads). Against an artifact compiled --no-token-heads it
/// times what the heads add to one pass.
void BM_Encode(benchmark::State &state, encrt_model *model) {
  encrt_model_info info;
  encrt_model_get_info(model, &info, sizeof info);
  const int64_t batch = state.range(0), words = state.range(1);
  static const char *const kWords[] = {"retrieval", "dense", "sparse", "the", "model", "of", "vectors", "and",
                                       "a", "query", "document", "index", "search", "with", "tokens", "over"};
  std::vector<std::string> texts(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t w = 0; w < words; ++w)
      texts[size_t(b)] += std::string(w ? " " : "") + kWords[(b * 7 + w * 3 + w / 16) % 16];
  std::vector<encrt_text> views;
  for (const std::string &t : texts)
    views.push_back({t.data(), static_cast<int64_t>(t.size())});
  encrt_session *session = nullptr;
  if (encrt_status *s = encrt_session_create(model, nullptr, &session)) {
    state.SkipWithError(encrt_status_message(s));
    encrt_status_free(s);
    return;
  }
  encrt_encode_outputs o;
  encrt_encode_outputs_initialize(&o);
  std::vector<float> dense(static_cast<size_t>(batch * info.embedding_dim));
  if (std::string(info.pooling) != "splade") // SPLADE's embedding is its sparse output
    o.dense = dense.data();
  constexpr int32_t kTop = 64;
  std::vector<int32_t> counts(static_cast<size_t>(batch)), ids(static_cast<size_t>(batch * kTop));
  std::vector<float> weights(static_cast<size_t>(batch * kTop));
  if (info.sparse) {
    o.sparse_top_k = kTop, o.sparse_counts = counts.data(), o.sparse_ids = ids.data(),
    o.sparse_weights = weights.data();
  }
  std::vector<int64_t> rows(static_cast<size_t>(batch));
  std::vector<float> vectors;
  if (info.multivector_dim > 0) {
    o.vector_counts = rows.data();
    const int64_t capacity = batch * info.max_seq;
    vectors.resize(static_cast<size_t>(capacity * info.multivector_dim));
    o.vectors = vectors.data(), o.vectors_capacity = capacity;
  }
  for (auto _ : state) {
    if (encrt_status *s = encrt_session_encode(session, nullptr, views.data(), batch, &o)) {
      state.SkipWithError(encrt_status_message(s));
      encrt_status_free(s);
      break;
    }
    benchmark::DoNotOptimize(dense.data());
  }
  state.counters["texts/s"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  encrt_session_release(session);
}

/// Console output plus the per-iteration real time of each run, by name
/// (the median aggregate when repetitions are on, else the single run).
class RatioReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run> &runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run &r : runs) {
      if (r.error_occurred || r.iterations == 0)
        continue;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type == Run::RT_Iteration && !haveMedian_.count(r.run_name.str()))
        times_[r.run_name.str()] = r.GetAdjustedRealTime();
      if (median) {
        times_[r.run_name.str()] = r.GetAdjustedRealTime();
        haveMedian_[r.run_name.str()] = true;
      }
    }
  }
  const std::map<std::string, double> &times() const { return times_; }

private:
  std::map<std::string, double> times_;
  std::map<std::string, bool> haveMedian_;
};

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  loadArtifacts();
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 128}, {8, 128}};
  for (const Artifact &a : artifacts())
    benchmark::RegisterBenchmark(("BM_Forward/" + a.label).c_str(), BM_Forward, a.model)
        ->Args({1, 128, 0})
        ->Args({8, 128, 0})
        ->Args({8, 128, 1})
        ->Args({32, 64, 0})
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (const Artifact &a : artifacts()) {
    encrt_model_info info;
    encrt_model_get_info(a.model, &info, sizeof info);
    if (a.hasTokenizer && info.has_pooled_output && info.num_labels == 0)
      benchmark::RegisterBenchmark(("BM_Encode/" + a.label).c_str(), BM_Encode, a.model)
          ->Args({1, 100})
          ->Args({8, 100})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  }
  for (const Artifact &a : artifacts())
    benchmark::RegisterBenchmark(("BM_Load/" + a.label).c_str(), BM_Load, a.path)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MinTime(0.5);
  // The first artifact with a tokenizer, and each of ENCC_BENCH_TOKENIZERS
  // (a comma-separated list of artifacts timed for their tokenizer only).
  std::vector<std::pair<std::string, encrt_model *>> tokenizers;
  for (const Artifact &a : artifacts())
    if (a.hasTokenizer) {
      tokenizers.emplace_back(a.label, a.model);
      break;
    }
  for (const std::string &path : splitList(std::getenv("ENCC_BENCH_TOKENIZERS"))) {
    encrt_model *m = nullptr;
    if (encrt_status *st = encrt_model_load(path.c_str(), nullptr, &m)) {
      std::fprintf(stderr, "encc_bench: %s\n", encrt_status_message(st));
      encrt_status_free(st);
      return 1;
    }
    tokenizers.emplace_back(stem(path), m); // released at exit
  }
  for (const auto &[label, model] : tokenizers)
    for (bool paragraph : {false, true})
      benchmark::RegisterBenchmark(("BM_Tokenize/" + label + (paragraph ? "/paragraph" : "/sentence")).c_str(),
                                   BM_Tokenize, model, paragraph)
          ->Unit(benchmark::kMicrosecond);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  if (artifacts().size() >= 2) {
    const Artifact &base = artifacts().front();
    std::printf("\ntime ratio vs %s (> 1: faster than %s), same process:\n", base.label.c_str(),
                base.label.c_str());
    for (auto [b, s] : shapes) {
      const std::string suffix = "/" + std::to_string(b) + "/" + std::to_string(s) + "/real_time";
      auto it0 = reporter.times().find("BM_Forward/" + base.label + suffix);
      if (it0 == reporter.times().end())
        continue;
      for (size_t i = 1; i < artifacts().size(); ++i) {
        auto it = reporter.times().find("BM_Forward/" + artifacts()[i].label + suffix);
        if (it == reporter.times().end())
          continue;
        std::printf("  batch %lld x %lld: %s %.2f ms, %s %.2f ms, %s / %s time = %.2fx\n",
                    static_cast<long long>(b), static_cast<long long>(s), base.label.c_str(), it0->second,
                    artifacts()[i].label.c_str(), it->second, base.label.c_str(), artifacts()[i].label.c_str(),
                    it0->second / it->second);
      }
    }
  }
  std::printf("process peak RSS (VmHWM): %.1f MB\n", peakRssMB());
  benchmark::Shutdown();
  for (Artifact &a : artifacts())
    encrt_model_release(a.model);
  return 0;
}
