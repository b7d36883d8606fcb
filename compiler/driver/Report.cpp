//===- Report.cpp - encc report: what each pass buys ----------------------===//
//
// Imports the model once, then for every cumulative prefix of the pipeline
// after the decompose pass (the first row, the baseline, runs decompose
// alone: the unfused form) and, per precision of --quantize (default
// int8; none: no such row), the whole pipeline + that precision's passes
// (quantize-linear-int8 or convert-linear-bf16, then convert-attention-bf16),
// runs the passes on a copy of the module,
// generates and builds the CPU code, writes the artifact, loads it through
// libencrt and times it on the same inputs. Errors and cosines are measured
// against the first row's output. Writes a table, report.json and report.svg.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Report.h"

#include "compiler/codegen/cpu/CpuCodegen.h"
#include "compiler/driver/ArtifactWriter.h"
#include "compiler/driver/CommandOutput.h"
#include "compiler/driver/CompileDriver.h"
#include "compiler/driver/JsonOutput.h"
#include "frontends/ImportModel.h"
#include "encrt/encrt.h"
#include "ir/EncDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

using namespace encc;

namespace {

struct Row {
  std::string name;
  std::string target; ///< the code object the runtime picked
  double medianMs = 0, p10Ms = 0, p90Ms = 0;
  double maxAbsErr = 0, meanCosine = 1; ///< NaN when an output is not finite
  int64_t nonFinite = 0;                 ///< outputs that are NaN or infinite
  int64_t ops = 0, launches = 0;
  uint64_t arenaBytes = 0, artifactBytes = 0, weightBytes = 0;
};

struct Inputs {
  int64_t batch = 0, seq = 0;
  std::vector<int32_t> ids, lengths;
};

bool parseInt(const Args &a, const char *name, int64_t lo, int64_t hi, int64_t &out) {
  if (!a.has(name))
    return true;
  std::string v = a.get(name);
  char *end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || n < lo || n > hi) {
    fail("--" + std::string(name) + " expects a number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "], got '" + v + "'");
    return false;
  }
  out = n;
  return true;
}

/// Lengths spread evenly from seq down to seq/8; ids random (fixed seed).
Inputs makeInputs(int64_t batch, int64_t seq, int32_t vocab, int32_t cls, int32_t sep) {
  Inputs in;
  in.batch = batch;
  in.seq = seq;
  in.ids.assign(batch * seq, 0);
  in.lengths.resize(batch);
  std::mt19937 rng(1234);
  int32_t lo = std::min<int32_t>(1000, vocab - 1);
  std::uniform_int_distribution<int32_t> dist(lo, vocab - 1);
  int64_t shortest = std::max<int64_t>(1, seq / 8);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = batch == 1 ? seq : seq - (seq - shortest) * b / (batch - 1);
    in.lengths[b] = static_cast<int32_t>(len);
    for (int64_t t = 0; t < len; ++t)
      in.ids[b * seq + t] = t == 0 ? cls : t == len - 1 && len > 1 ? sep : dist(rng);
  }
  return in;
}

int64_t countOps(mlir::ModuleOp module) {
  int64_t n = 0;
  module.walk([&](mlir::Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "enc" &&
        !mlir::isa<mlir::enc::WeightOp, mlir::enc::FusionOp, mlir::enc::YieldOp>(op))
      ++n; // compute ops, inside fusion groups or not
  });
  return n;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  double idx = p * (v.size() - 1);
  size_t i = static_cast<size_t>(idx);
  double frac = idx - i;
  // v[i] + frac * (v[i+1] - v[i]), kept within [v[i], v[i+1]]: the blend
  // v[i] * (1 - frac) + v[i+1] * frac could land an ulp above two equal
  // neighbours, and a p10 above the median (seen in report.test).
  return i + 1 < v.size() ? std::min(v[i + 1], v[i] + frac * (v[i + 1] - v[i])) : v[i];
}

std::string fmt(const char *f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Runs the artifact at `path`: fills the row's timings and the valid rows of
/// the hidden state.
llvm::Error measure(const std::string &path, const Inputs &in, int32_t threads, int64_t runs, Row &row,
                    std::vector<float> &valid) {
  encrt_model_options mo;
  encrt_model_options_initialize(&mo);
  mo.num_threads = threads;
  encrt_model *model = nullptr;
  auto check = [](encrt_status *s) -> llvm::Error {
    if (!s)
      return llvm::Error::success();
    std::string msg = encrt_status_message(s);
    encrt_status_free(s);
    return llvm::createStringError(msg);
  };
  if (auto err = check(encrt_model_load(path.c_str(), &mo, &model)))
    return err;
  encrt_model_info info;
  encrt_model_get_info(model, &info, sizeof info);
  encrt_session *session = nullptr;
  if (auto err = check(encrt_session_create(model, nullptr, &session))) {
    encrt_model_release(model);
    return err;
  }
  const int64_t h = info.hidden_size;
  std::vector<float> hidden(in.batch * in.seq * h);
  std::vector<double> times;
  llvm::Error result = llvm::Error::success();
  for (int64_t i = 0; i < runs + 2; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if ((result = check(encrt_session_run(session, in.ids.data(), in.lengths.data(), in.batch, in.seq, hidden.data(),
                                          nullptr))))
      break;
    if (i >= 2)
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!result) {
    row.medianMs = percentile(times, 0.5);
    row.p10Ms = percentile(times, 0.1);
    row.p90Ms = percentile(times, 0.9);
    row.arenaBytes = encrt_session_arena_bytes(session);
    row.weightBytes = info.weight_bytes;
    row.target = info.cpu_target ? info.cpu_target : "";
    valid.clear();
    for (int64_t b = 0; b < in.batch; ++b)
      valid.insert(valid.end(), hidden.begin() + b * in.seq * h, hidden.begin() + (b * in.seq + in.lengths[b]) * h);
  }
  encrt_session_release(session);
  encrt_model_release(model);
  return result;
}

/// Max abs difference and mean per-token cosine of `a` vs `base` (rows of h);
/// both NaN, and the count in nonFinite, when `a` has a NaN or an infinity
/// (std::max would silently skip a NaN).
void compareOutputs(const std::vector<float> &a, const std::vector<float> &base, int64_t h, Row &row) {
  double maxErr = 0, cosSum = 0;
  int64_t rows = static_cast<int64_t>(base.size()) / h, nonFinite = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0, na = 0, nb = 0;
    for (int64_t k = 0; k < h; ++k) {
      double x = a[r * h + k], y = base[r * h + k];
      nonFinite += !std::isfinite(x);
      maxErr = std::max(maxErr, std::fabs(x - y));
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    cosSum += dot / std::max(1e-30, std::sqrt(na * nb));
  }
  row.nonFinite = nonFinite;
  row.maxAbsErr = nonFinite ? NAN : maxErr;
  row.meanCosine = nonFinite ? NAN : rows ? cosSum / rows : 1;
}

/// 1, with an error naming each row, when a row produced NaN or infinity: the
/// report is written either way so the numbers can be looked at.
int failIfNonFinite(const std::vector<Row> &rows) {
  int status = 0;
  for (const Row &r : rows)
    if (r.nonFinite) {
      llvm::errs() << "encc: error: " << r.name << ": " << r.nonFinite << " outputs are NaN or infinite\n";
      status = 1;
    }
  return status;
}

std::string xmlEscape(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

/// Latency per row as bars (left axis), max abs error as a line (right, log).
std::string renderSvg(const std::vector<Row> &rows, const std::string &title) {
  const double W = 760, H = 420, left = 130, right = 80, top = 50, bottom = 130;
  const double pw = W - left - right, ph = H - top - bottom;
  double maxMs = 0;
  for (auto &r : rows)
    maxMs = std::max(maxMs, r.p90Ms);
  maxMs = maxMs > 0 ? maxMs * 1.1 : 1;
  double lo = 1e-8, hi = 1; // error axis: 1e-8 .. 1 (int8 rows reach ~1e-1)
  auto errY = [&](double e) {
    double l = std::log10(std::clamp(e, lo, hi));
    return top + ph - (l - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * ph;
  };
  std::string s;
  llvm::raw_string_ostream o(s);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << xmlEscape(title)
    << "</text>\n";
  for (int i = 0; i <= 4; ++i) { // latency grid
    double v = maxMs * i / 4, y = top + ph - ph * i / 4;
    o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
      << fmt("%.1f", v) << "</text>\n";
  }
  o << "<text transform=\"translate(18," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << "latency, ms (median; whisker p10-p90)</text>\n";
  for (int e = -8; e <= 0; e += 2)
    o << "<text x=\"" << left + pw + 6 << "\" y=\"" << errY(std::pow(10, e)) + 4 << "\" fill=\"#c0392b\">1e" << e
      << "</text>\n";
  o << "<text transform=\"translate(" << W - 14 << "," << top + ph / 2
    << ") rotate(90)\" text-anchor=\"middle\" fill=\"#c0392b\">max abs error vs baseline</text>\n";
  double slot = pw / std::max<size_t>(1, rows.size());
  std::string line;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    double cx = left + slot * (i + 0.5), bw = slot * 0.55;
    double y = top + ph - r.medianMs / maxMs * ph;
    o << "<rect x=\"" << cx - bw / 2 << "\" y=\"" << y << "\" width=\"" << bw << "\" height=\"" << top + ph - y
      << "\" fill=\"#4a7fb5\"/>\n";
    double y10 = top + ph - r.p10Ms / maxMs * ph, y90 = top + ph - r.p90Ms / maxMs * ph;
    o << "<line x1=\"" << cx << "\" x2=\"" << cx << "\" y1=\"" << y10 << "\" y2=\"" << y90
      << "\" stroke=\"black\"/>\n<text x=\"" << cx << "\" y=\"" << y - 6 << "\" text-anchor=\"middle\">"
      << fmt("%.1f", r.medianMs) << "</text>\n";
    o << "<text transform=\"translate(" << cx + 4 << "," << top + ph + 14
      << ") rotate(-35)\" text-anchor=\"end\">" << xmlEscape(r.name) << "</text>\n";
    line += (i ? " " : "") + fmt("%.1f", cx) + "," + fmt("%.1f", errY(i ? r.maxAbsErr : lo));
  }
  o << "<polyline points=\"" << line << "\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\"/>\n";
  o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << top + ph << "\" y2=\"" << top + ph
    << "\" stroke=\"black\"/>\n</svg>\n";
  return s;
}

llvm::Error writeFile(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "%s: cannot write: %s", path.c_str(), ec.message().c_str());
  os << text;
  return llvm::Error::success();
}

/// What a report measured on: the model folder, levels, shape and runs.
struct ReportSettings {
  std::string dir, cpu;
  int64_t batch, seq, runs, threads;
  std::vector<int32_t> lengths;
};

/// report.json: the settings and one object per row.
Json reportJson(const ReportSettings &s, const std::vector<Row> &rows) {
  Json report;
  report["model"] = s.dir;
  report["batch"] = s.batch;
  report["seq"] = s.seq;
  report["lengths"] = s.lengths;
  report["runs"] = s.runs;
  report["threads"] = s.threads;
  report["cpu"] = s.cpu;
  Json &jsonRows = report["rows"] = Json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    Json &j = jsonRows.emplace_back();
    j["name"] = r.name;
    j["cpu_target"] = r.target;
    j["median_ms"] = r.medianMs;
    j["p10_ms"] = r.p10Ms;
    j["p90_ms"] = r.p90Ms;
    j["speedup_vs_baseline"] = rows[0].medianMs / r.medianMs;
    j["speedup_vs_previous"] = (i ? rows[i - 1].medianMs : r.medianMs) / r.medianMs;
    // JSON has no NaN: a non-finite error is null (jsonText writes it so), and counted.
    j["max_abs_error"] = r.maxAbsErr;
    j["mean_cosine"] = r.meanCosine;
    j["nonfinite_outputs"] = r.nonFinite;
    j["ops"] = r.ops;
    j["kernel_launches"] = r.launches;
    j["arena_bytes"] = static_cast<int64_t>(r.arenaBytes);
    j["weight_bytes"] = static_cast<int64_t>(r.weightBytes);
    j["artifact_bytes"] = static_cast<int64_t>(r.artifactBytes);
  }
  return report;
}

/// The table `encc report` prints.
void printReportTable(llvm::raw_ostream &os, const std::string &title, const ReportSettings &s,
                      const std::vector<Row> &rows) {
  os << title << " (lengths " << s.lengths.front() << ".." << s.lengths.back() << "), " << s.runs << " runs, "
     << (s.threads ? std::to_string(s.threads) : std::string("all")) << " threads, " << s.cpu << "\n\n";
  os << llvm::left_justify("pass", 28) << llvm::right_justify("median ms", 10) << llvm::right_justify("p10-p90", 15)
     << llvm::right_justify("vs base", 9) << llvm::right_justify("vs prev", 9) << llvm::right_justify("max abs err", 13)
     << llvm::right_justify("cosine", 10) << llvm::right_justify("ops", 6) << llvm::right_justify("launches", 10)
     << llvm::right_justify("arena MB", 10) << llvm::right_justify("artifact MB", 13) << "  target\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    os << llvm::left_justify(r.name, 28) << llvm::right_justify(fmt("%.2f", r.medianMs), 10)
       << llvm::right_justify(fmt("%.2f", r.p10Ms) + "-" + fmt("%.2f", r.p90Ms), 15)
       << llvm::right_justify(fmt("%.2fx", rows[0].medianMs / r.medianMs), 9)
       << llvm::right_justify(fmt("%.2fx", (i ? rows[i - 1].medianMs : r.medianMs) / r.medianMs), 9)
       << llvm::right_justify(fmt("%.2e", r.maxAbsErr), 13) << llvm::right_justify(fmt("%.7f", r.meanCosine), 10)
       << llvm::right_justify(std::to_string(r.ops), 6) << llvm::right_justify(std::to_string(r.launches), 10)
       << llvm::right_justify(fmt("%.2f", r.arenaBytes / 1e6), 10)
       << llvm::right_justify(fmt("%.1f", r.artifactBytes / 1e6), 13) << "  " << r.target << "\n";
  }
}

} // namespace

int encc::reportCommand(const Args &args) {
  if (args.positionals.size() != 1)
    return fail("'encc report' takes one model folder: encc report MODEL_DIR [--batch B --seq S --runs N]");
  int64_t batch = 8, seq = 128, runs = 20, threads = 0;
  if (!parseInt(args, "batch", 1, 4096, batch) || !parseInt(args, "seq", 1, 1 << 16, seq) ||
      !parseInt(args, "runs", 1, 100000, runs) || !parseInt(args, "threads", 0, 1024, threads))
    return 1;
  std::string outDir = args.get("output", ".");
  // Built like `encc compile` builds (the runtime picks the first level this
  // CPU runs), unless --cpu names one level for every row.
  const std::vector<std::string> fp32Cpu =
      args.has("cpu") ? std::vector<std::string>{args.get("cpu")} : defaultCpuLevels("none");
  const std::string cpu = llvm::join(fp32Cpu, ",");
  auto passes = resolvePipeline(args.get("pipeline"), {});
  if (!passes)
    return fail(llvm::toString(passes.takeError()));
  // Every row starts from the unfused form (the frontend emits fused
  // attention): the baseline row runs the decompose pass alone.
  if (passes->empty() || passes->front() != kDecomposePass)
    passes->insert(passes->begin(), kDecomposePass);
  // One more row per precision in --quantize: the whole pipeline + its passes
  // (those the pipeline lacks), built for its default levels.
  struct PrecisionRow {
    std::string mode;  ///< "int8" | "bf16"
    std::string label; ///< the passes it adds, " +"-separated
    std::vector<std::string> passes, cpuLevels;
  };
  std::vector<PrecisionRow> precisionRows;
  const std::string quantize = args.get("quantize", "int8");
  llvm::SmallVector<llvm::StringRef> modes;
  llvm::StringRef(quantize).split(modes, ',', -1, false);
  for (llvm::StringRef mode : modes) {
    if (mode == "none" && modes.size() == 1)
      break;
    if (mode != "int8" && mode != "bf16")
      return fail("--quantize expects none or a comma list of int8 and bf16, got '" + quantize + "'");
    PrecisionRow row;
    row.mode = mode.str();
    row.passes = *passes;
    for (const std::string &pass : precisionPasses(mode.str()))
      if (std::find(passes->begin(), passes->end(), pass) == passes->end()) {
        row.label += (row.label.empty() ? "" : " +") + pass;
        row.passes.push_back(pass);
      }
    if (row.label.empty())
      continue;
    row.cpuLevels = args.has("cpu") ? fp32Cpu : defaultCpuLevels(mode.str());
    precisionRows.push_back(std::move(row));
  }
  auto weights = parseWeightsOption(args.get("weights", "file"));
  if (!weights)
    return fail(llvm::toString(weights.takeError()));
  if (auto ec = llvm::sys::fs::create_directories(outDir))
    return fail(outDir + ": cannot create: " + ec.message());
  auto progress = [](const std::string &line) { llvm::errs() << "encc: " << line << "\n"; };

  auto ctx = makeContext();
  const std::string &dir = args.positionals[0];
  ImportOptions io;
  io.randomWeightsSeed = *weights;
  auto model = importModel(*ctx, dir, io);
  if (!model)
    return fail(llvm::toString(model.takeError()));
  if (*weights)
    progress("weights: random (seed " + std::to_string(**weights) + "): latencies are real, outputs meaningless");
  if (seq > model->description.maxSeq)
    return fail("--seq " + std::to_string(seq) + " exceeds the model's maximum sequence " +
                std::to_string(model->description.maxSeq));
  // Without a vocabulary (random weights, config.json only) any ids do.
  const int32_t cls = model->tokenizer.clsId >= 0 ? model->tokenizer.clsId : 1;
  const int32_t sep = model->tokenizer.sepId >= 0 ? model->tokenizer.sepId : 2;
  Inputs in = makeInputs(batch, seq, static_cast<int32_t>(model->description.vocab), cls, sep);

  llvm::SmallString<128> tmpDir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("encc-report", tmpDir))
    return fail(std::string("cannot create a temporary directory: ") + ec.message());
  std::vector<Row> rows;
  std::vector<float> baseline, output;
  const size_t total = passes->size() + precisionRows.size();
  for (size_t k = 0; k < total; ++k) {
    const PrecisionRow *precision = k >= passes->size() ? &precisionRows[k - passes->size()] : nullptr;
    Row row;
    row.name = k == 0 ? "baseline (unfused)" : "+" + (precision ? precision->label : (*passes)[k]);
    progress("[" + std::to_string(k + 1) + "/" + std::to_string(total) + "] " + row.name +
             ": passes, codegen, host compiler ...");
    mlir::OwningOpRef<mlir::ModuleOp> module = model->module->clone();
    PipelineOptions po;
    if (precision) {
      po.passes = precision->passes;
      if (precision->mode == "int8") // the family's float weights, as encc compile keeps them
        po.quantizeSkip = model->description.int8KeepFloat;
    } else
      po.passes.assign(passes->begin(), passes->begin() + k + 1);
    po.passes.push_back(kFormFusionGroupsPass); // as encc compile runs it, on every row
    if (auto err = runEncPipeline(*module, &model->weights, po))
      return fail(llvm::toString(std::move(err)));
    row.ops = countOps(*module);
    auto code = generateCpuCode(*module, model->weights);
    if (!code)
      return fail(llvm::toString(code.takeError()));
    row.launches = static_cast<int64_t>(code->plan.steps.size());
    auto objects = buildCodeObjects(code->source, precision ? precision->cpuLevels : fp32Cpu, "",
                                    [](const std::string &) {});
    if (!objects)
      return fail(llvm::toString(objects.takeError()));
    ArtifactContents contents;
    contents.codeObjects = std::move(*objects);
    contents.model = &model->description;
    contents.tokenizer = &model->tokenizer;
    contents.plan = &code->plan;
    contents.weights = &model->weights;
    contents.passes = po.passes;
    contents.source = dir;
    contents.randomWeightsSeed = *weights;
    std::string path = std::string(tmpDir) + "/row" + std::to_string(k) + ".encm";
    if (auto err = writeArtifact(path, contents))
      return fail(llvm::toString(std::move(err)));
    llvm::sys::fs::file_size(path, row.artifactBytes);
    progress("[" + std::to_string(k + 1) + "/" + std::to_string(total) + "] " + row.name + ": running " +
             std::to_string(runs) + "x (batch " + std::to_string(batch) + ", seq " + std::to_string(seq) + ")");
    if (auto err = measure(path, in, static_cast<int32_t>(threads), runs, row, k == 0 ? baseline : output))
      return fail(llvm::toString(std::move(err)));
    llvm::sys::fs::remove(path);
    compareOutputs(k == 0 ? baseline : output, baseline, model->description.hidden, row);
    rows.push_back(row);
  }
  llvm::sys::fs::remove_directories(tmpDir);

  const ReportSettings settings{dir, cpu, batch, seq, runs, threads, in.lengths};
  const std::string json = jsonText(reportJson(settings, rows), 2);
  std::string jsonPath = outDir + "/report.json", svgPath = outDir + "/report.svg";
  if (auto err = writeFile(jsonPath, json + "\n"))
    return fail(llvm::toString(std::move(err)));
  std::string title = "encc report: " + llvm::sys::path::filename(llvm::StringRef(dir).rtrim('/')).str() +
                      ", batch " + std::to_string(batch) + ", seq <= " + std::to_string(seq);
  if (auto err = writeFile(svgPath, renderSvg(rows, title)))
    return fail(llvm::toString(std::move(err)));

  if (args.get("format") == "json") {
    llvm::outs() << json << "\n";
    return failIfNonFinite(rows);
  }
  printReportTable(llvm::outs(), title, settings, rows);
  llvm::outs() << "\nwrote " << jsonPath << " and " << svgPath << "\n";
  return failIfNonFinite(rows);
}
