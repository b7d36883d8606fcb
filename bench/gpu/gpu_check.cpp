//===- gpu_check.cpp - CUDA backend checks and timings through encrt.h ----===//
//
// Needs nothing but libencrt. Commands (exit 0 = pass, 1 = fail, 2 = usage or
// load error):
//   gpu_check record  ARTIFACT REF          CPU outputs of the fixed inputs -> REF
//   gpu_check compare ARTIFACT REF MIN_COS  CUDA outputs vs REF
//   gpu_check both    ARTIFACT MIN_COS      CUDA vs CPU outputs of one artifact
//                                           (not --weights=random: each plan's are
//                                           generated at load, so they differ)
//   gpu_check time    ARTIFACT BATCHES SEQ RUNS   median encrt_session_run ms
//   gpu_check profile ARTIFACT BATCH SEQ RUNS     per-kernel device time of a run
// The fixed inputs: two padded batches with mixed lengths (1 .. seq) of
// deterministic ids, and (with a tokenizer and pooled output) a few texts
// through encrt_session_embed. Compared: the cosine of every valid hidden
// row and every pooled row; the minimum must reach MIN_COS. On CUDA every
// batch also runs twice (the second replays the captured graph: results
// must be identical) and once in a profiling session (no graph).
// GPU_CHECK_DEVICE=cpu runs the "CUDA" side on the CPU (to try it anywhere).
//
//===----------------------------------------------------------------------===//
#include "encrt/encrt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using Outputs = std::map<std::string, std::vector<float>>;

/// The device under test: "cuda" unless GPU_CHECK_DEVICE says otherwise
/// (e.g. "cpu", to try this program on a machine without a GPU).
const char *testDevice() {
  const char *d = std::getenv("GPU_CHECK_DEVICE");
  return d && *d ? d : "cuda";
}

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "gpu_check: %s\n", msg.c_str());
  std::exit(2);
}

void check(encrt_status *st, const char *what) {
  if (!st)
    return;
  std::string msg = std::string(what) + ": " + encrt_status_message(st);
  encrt_status_free(st);
  die(msg);
}

encrt_model *load(const char *path, const char *device) {
  encrt_model_options o;
  encrt_model_options_initialize(&o);
  o.device = device;
  encrt_model *m = nullptr;
  check(encrt_model_load(path, &o, &m), "encrt_model_load");
  return m;
}

struct Batch {
  int64_t batch, seq;
  std::vector<int32_t> ids, lengths;
};

std::vector<Batch> fixedBatches(const encrt_model *m) {
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  // [CLS] and [SEP] from the tokenizer when there is one.
  int32_t cls = -1, sep = -1;
  int32_t special[2];
  int64_t n = 0;
  encrt_status *st = encrt_model_tokenize(m, "", special, 2, &n);
  if (!st && n == 2) {
    cls = special[0];
    sep = special[1];
  }
  encrt_status_free(st);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  const int32_t lo = info.vocab_size > 2000 ? 1000 : 0;
  std::vector<Batch> out;
  const int64_t seqs[] = {std::min<int64_t>(32, info.max_seq),
                          std::min<int64_t>(128, info.max_seq)};
  const int64_t batches[] = {4, 3};
  for (int k = 0; k < 2; ++k) {
    Batch b{batches[k], seqs[k], {}, {}};
    b.ids.assign(static_cast<size_t>(b.batch * b.seq), 0);
    for (int64_t i = 0; i < b.batch; ++i) {
      int64_t len = i == 0 ? b.seq : i == 1 ? 1 : 1 + next() % b.seq;
      b.lengths.push_back(static_cast<int32_t>(len));
      for (int64_t s = 0; s < len; ++s)
        b.ids[i * b.seq + s] =
            lo + static_cast<int32_t>(next() % static_cast<uint32_t>(info.vocab_size - lo));
      if (cls >= 0 && len >= 2) {
        b.ids[i * b.seq] = cls;
        b.ids[i * b.seq + len - 1] = sep;
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

const char *kTexts[] = {
    "A man is playing a guitar on the stage.",
    "The quick brown fox jumps over the lazy dog",
    "GPUs run thousands of threads at once.",
    "short",
};

/// Valid hidden rows (packed) and pooled rows of every fixed batch, plus the
/// embeddings of kTexts.
Outputs runAll(encrt_model *m, bool profiling, int repeats) {
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  const int64_t H = info.hidden_size;
  encrt_session_options so;
  encrt_session_options_initialize(&so);
  so.enable_profiling = profiling;
  encrt_session *s = nullptr;
  check(encrt_session_create(m, &so, &s), "encrt_session_create");
  Outputs out;
  int k = 0;
  for (const Batch &b : fixedBatches(m)) {
    std::vector<float> hidden(static_cast<size_t>(b.batch * b.seq * H));
    std::vector<float> pooled(info.has_pooled_output ? static_cast<size_t>(b.batch * H) : 0);
    std::vector<float> first;
    for (int r = 0; r < repeats; ++r) {
      std::fill(hidden.begin(), hidden.end(), NAN);
      check(encrt_session_run(s, b.ids.data(), b.lengths.data(), b.batch, b.seq,
                              hidden.data(), pooled.empty() ? nullptr : pooled.data()),
            "encrt_session_run");
      std::vector<float> all = hidden;
      all.insert(all.end(), pooled.begin(), pooled.end());
      if (r == 0)
        first = all;
      else if (std::memcmp(first.data(), all.data(), all.size() * sizeof(float)) != 0)
        die("batch " + std::to_string(k) + ": run " + std::to_string(r) +
            " differs from run 0 (graph replay is not deterministic)");
    }
    std::vector<float> valid;
    for (int64_t i = 0; i < b.batch; ++i)
      valid.insert(valid.end(), hidden.begin() + i * b.seq * H,
                   hidden.begin() + (i * b.seq + b.lengths[i]) * H);
    out["batch" + std::to_string(k) + ".hidden"] = valid;
    if (!pooled.empty())
      out["batch" + std::to_string(k) + ".pooled"] = pooled;
    ++k;
  }
  int64_t probe = 0;
  encrt_status *st = encrt_model_tokenize(m, "x", nullptr, 0, &probe);
  bool hasTokenizer = st == nullptr;
  encrt_status_free(st);
  if (hasTokenizer && info.has_pooled_output) {
    const int64_t n = sizeof(kTexts) / sizeof(kTexts[0]);
    std::vector<float> e(static_cast<size_t>(n * H));
    check(encrt_session_embed(s, kTexts, n, e.data()), "encrt_session_embed");
    out["embed"] = e;
  }
  if (profiling) {
    struct Row { std::string kernel, op; double ms; int64_t calls; };
    std::vector<Row> rows;
    for (int64_t i = 0; i < encrt_session_profile_count(s); ++i) {
      encrt_step_profile p;
      encrt_session_profile_get(s, i, &p, sizeof p);
      rows.push_back({p.kernel, p.op, p.total_ms, p.calls});
    }
    std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.ms > b.ms; });
    double total = 0;
    for (const Row &r : rows)
      total += r.ms;
    std::printf("  profile: %zu steps, %.3f ms in all; top:", rows.size(), total);
    for (size_t i = 0; i < rows.size() && i < 4; ++i)
      std::printf(" %s(%s) %.3f ms;", rows[i].kernel.c_str(), rows[i].op.c_str(), rows[i].ms);
    std::printf("\n");
  }
  encrt_session_release(s);
  return out;
}

void writeRef(const std::string &path, const Outputs &o) {
  std::ofstream f(path, std::ios::binary);
  f.write("ENCREF01", 8);
  for (const auto &[name, v] : o) {
    uint32_t n = static_cast<uint32_t>(name.size());
    uint64_t c = v.size();
    f.write(reinterpret_cast<const char *>(&n), 4);
    f.write(name.data(), n);
    f.write(reinterpret_cast<const char *>(&c), 8);
    f.write(reinterpret_cast<const char *>(v.data()), static_cast<std::streamsize>(c * 4));
  }
  if (!f)
    die("cannot write " + path);
}

Outputs readRef(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "ENCREF01", 8) != 0)
    die(path + ": not a gpu_check reference (ENCREF01)");
  Outputs o;
  uint32_t n;
  while (f.read(reinterpret_cast<char *>(&n), 4)) {
    std::string name(n, '\0');
    uint64_t c = 0;
    f.read(name.data(), n);
    f.read(reinterpret_cast<char *>(&c), 8);
    if (!f || c > (uint64_t(1) << 32))
      die(path + ": truncated");
    std::vector<float> v(c);
    f.read(reinterpret_cast<char *>(v.data()), static_cast<std::streamsize>(c * 4));
    o[name] = std::move(v);
  }
  return o;
}

/// Minimum row cosine of every output; false when one is below minCos.
bool compare(const Outputs &ref, const Outputs &got, int64_t hidden, double minCos) {
  bool ok = true;
  for (const auto &[name, r] : ref) {
    auto it = got.find(name);
    if (it == got.end() || it->second.size() != r.size()) {
      std::printf("  %-14s MISSING or size %zu vs %zu\n", name.c_str(),
                  it == got.end() ? 0 : it->second.size(), r.size());
      ok = false;
      continue;
    }
    const std::vector<float> &g = it->second;
    double worst = 1, maxAbs = 0;
    bool finite = true;
    for (size_t row = 0; row * hidden < r.size(); ++row) {
      double dot = 0, nr = 0, ng = 0;
      for (int64_t h = 0; h < hidden; ++h) {
        double a = r[row * hidden + h], b = g[row * hidden + h];
        finite = finite && std::isfinite(b);
        dot += a * b;
        nr += a * a;
        ng += b * b;
        maxAbs = std::max(maxAbs, std::fabs(a - b));
      }
      double cos = nr == 0 && ng == 0 ? 1 : dot / std::sqrt(nr * ng + 1e-300);
      worst = std::min(worst, cos);
    }
    bool pass = finite && worst >= minCos;
    std::printf("  %-14s rows %6zu  min cosine %.6f  max |diff| %.4g  %s\n",
                name.c_str(), r.size() / hidden, worst, maxAbs,
                pass ? "ok" : finite ? "FAIL" : "FAIL (non-finite)");
    ok = ok && pass;
  }
  return ok;
}

void describe(encrt_model *m, const char *path) {
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  std::printf("%s: %s, hidden %d, %d layers, %d steps on %s%s\n", path,
              info.architecture, info.hidden_size, info.num_layers, info.num_steps,
              info.device, info.random_weights ? " (random weights)" : "");
}

int runCompare(const char *path, const Outputs &ref, double minCos) {
  encrt_model *m = load(path, testDevice());
  describe(m, path);
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  Outputs got = runAll(m, false, 2);
  bool ok = compare(ref, got, info.hidden_size, minCos);
  // Profiling mode: direct launches, events; the same numbers.
  Outputs prof = runAll(m, true, 1);
  ok = compare(got, prof, info.hidden_size, 0.99999) && ok;
  encrt_model_release(m);
  std::printf("%s %s (min cosine %.4f)\n", ok ? "PASS" : "FAIL", path, minCos);
  return ok ? 0 : 1;
}

std::vector<int64_t> parseList(const char *s) {
  std::vector<int64_t> v;
  for (const char *p = s; *p;) {
    v.push_back(std::strtoll(p, const_cast<char **>(&p), 10));
    if (*p == ',')
      ++p;
    else if (*p)
      die(std::string("bad list: ") + s);
  }
  return v;
}

/// `batch` sequences of `seq` deterministic ids, all full length, and the
/// output buffers a run writes (pooled rows when the model pools, else the
/// hidden states).
struct FullBatch {
  int64_t batch, seq;
  std::vector<int32_t> ids, lengths;
  std::vector<float> hidden, pooled;
  FullBatch(const encrt_model_info &info, int64_t b, int64_t s)
      : batch(b), seq(s), ids(static_cast<size_t>(b * s)),
        lengths(static_cast<size_t>(b), static_cast<int32_t>(s)),
        hidden(info.has_pooled_output ? 0 : static_cast<size_t>(b * s * info.hidden_size)),
        pooled(info.has_pooled_output ? static_cast<size_t>(b * info.hidden_size) : 0) {
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = static_cast<int32_t>((i * 7919 + 13) % static_cast<size_t>(info.vocab_size));
  }
  void run(encrt_session *s, const char *what) {
    check(encrt_session_run(s, ids.data(), lengths.data(), batch, seq,
                            hidden.empty() ? nullptr : hidden.data(),
                            pooled.empty() ? nullptr : pooled.data()),
          what);
  }
};

int runTime(const char *path, const char *batches, int64_t seq, int runs) {
  encrt_model *m = load(path, testDevice());
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  encrt_session *s = nullptr;
  check(encrt_session_create(m, nullptr, &s), "encrt_session_create");
  seq = std::min<int64_t>(seq, info.max_seq);
  for (int64_t b : parseList(batches)) {
    FullBatch in(info, b, seq);
    for (int i = 0; i < 10; ++i) // warm-up: graph capture, cuBLASLt tuning
      in.run(s, "warm-up");
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      in.run(s, "run");
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms[ms.size() / 2];
    const char *tune = std::getenv("ENCRT_CUDA_GEMM_TUNE");
    const std::string label = std::string(path) + (tune && std::string(tune) == "0" ? "[untuned]" : "");
    std::printf("TIME %s batch %ld seq %ld median_ms %.3f p10_ms %.3f p90_ms %.3f "
                "seq_per_s %.0f device %s\n",
                label.c_str(), static_cast<long>(b), static_cast<long>(seq), median,
                ms[ms.size() / 10], ms[ms.size() * 9 / 10], 1000.0 * b / median,
                info.device);
    std::fflush(stdout);
  }
  encrt_session_release(s);
  encrt_model_release(m);
  return 0;
}

/// The per-step profile (CUDA events around every step, no graph) of RUNS
/// runs at BATCH x SEQ (all full length), summed per kernel symbol: ms per
/// run, share of the summed step time, launches per run. Also the wall time
/// of the same run through a graph-replaying session, for the launch gaps
/// the events do not see.
int runProfile(const char *path, int64_t batch, int64_t seq, int runs) {
  encrt_model *m = load(path, testDevice());
  encrt_model_info info;
  encrt_model_get_info(m, &info, sizeof info);
  seq = std::min<int64_t>(seq, info.max_seq);
  FullBatch in(info, batch, seq);

  encrt_session_options so;
  encrt_session_options_initialize(&so);
  so.enable_profiling = true;
  encrt_session *s = nullptr;
  check(encrt_session_create(m, &so, &s), "encrt_session_create");
  for (int i = 0; i < 3; ++i) // warm-up (cuBLASLt heuristics), then reset by a new session
    in.run(s, "warm-up");
  encrt_session_release(s);
  check(encrt_session_create(m, &so, &s), "encrt_session_create");
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i)
    in.run(s, "run");
  const double directMs = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - t0).count() / runs;
  struct Row { std::string op; double ms = 0; int64_t launches = 0; };
  std::map<std::string, Row> byKernel;
  double total = 0;
  for (int64_t i = 0; i < encrt_session_profile_count(s); ++i) {
    encrt_step_profile p;
    encrt_session_profile_get(s, i, &p, sizeof p);
    Row &r = byKernel[p.kernel];
    r.op = p.op;
    r.ms += p.total_ms / runs;
    r.launches += 1;
    total += p.total_ms / runs;
  }
  encrt_session_release(s);

  check(encrt_session_create(m, nullptr, &s), "encrt_session_create");
  for (int i = 0; i < 5; ++i)
    in.run(s, "warm-up");
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    t0 = std::chrono::steady_clock::now();
    in.run(s, "run");
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  encrt_session_release(s);
  encrt_model_release(m);

  std::vector<std::pair<std::string, Row>> rows(byKernel.begin(), byKernel.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.second.ms > b.second.ms; });
  std::printf("PROFILE %s batch %ld seq %ld: steps %.3f ms per run (CUDA events, direct launches); "
              "a direct run %.3f ms wall; a graph replay %.3f ms wall (median of %d)\n",
              path, static_cast<long>(batch), static_cast<long>(seq), total, directMs,
              ms[ms.size() / 2], runs);
  std::printf("  %-48s %-16s %9s %6s %8s\n", "kernel", "op", "ms/run", "share", "launches");
  for (const auto &[kernel, r] : rows)
    std::printf("  %-48s %-16s %9.4f %5.1f%% %8ld\n", kernel.c_str(), r.op.c_str(), r.ms,
                100.0 * r.ms / total, static_cast<long>(r.launches));
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "record" && argc == 4) {
    encrt_model *m = load(argv[2], "cpu");
    describe(m, argv[2]);
    writeRef(argv[3], runAll(m, false, 1));
    encrt_model_release(m);
    return 0;
  }
  if (cmd == "compare" && argc == 5)
    return runCompare(argv[2], readRef(argv[3]), std::atof(argv[4]));
  if (cmd == "both" && argc == 4) {
    encrt_model *m = load(argv[2], "cpu");
    encrt_model_info info;
    encrt_model_get_info(m, &info, sizeof info);
    if (info.random_weights)
      die(std::string(argv[2]) + ": random weights are generated per plan at load, so its CPU and "
          "CUDA plans hold different weights; compare with a reference of stored weights instead");
    Outputs ref = runAll(m, false, 1);
    encrt_model_release(m);
    return runCompare(argv[2], ref, std::atof(argv[3]));
  }
  if (cmd == "profile" && argc == 6)
    return runProfile(argv[2], std::atoll(argv[3]), std::atoll(argv[4]), std::atoi(argv[5]));
  if (cmd == "time" && argc == 6)
    return runTime(argv[2], argv[3], std::atoll(argv[4]), std::atoi(argv[5]));
  std::fprintf(stderr,
               "usage: gpu_check record ARTIFACT REF | compare ARTIFACT REF MIN_COS |\n"
               "       both ARTIFACT MIN_COS | time ARTIFACT BATCHES SEQ RUNS |\n"
               "       profile ARTIFACT BATCH SEQ RUNS\n");
  return 2;
}
