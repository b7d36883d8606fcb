//===- encc.cpp - The encc command-line driver ----------------------------===//
//
//   encc compile MODEL_DIR|MODEL.onnx [-o model.encm] [--emit=artifact|mlir|cpp] ...
//   encc run model.encm --ids "101 7592 102" [--ids ...] [--format=json]
//   encc embed model.encm "text" ... [--file lines.txt] [--format=json]
//   encc rerank model.encm "query" "doc" ... [--file docs.txt] [--format=json]
//   encc tokenize model.encm "text" ... [--file lines.txt] [--format=json]
//   encc inspect model.encm [--format=json] [-v]
//   encc keygen NAME; encc sign model.encm --key NAME.key
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/CudaCodegen.h"
#include "compiler/driver/Args.h"
#include "compiler/driver/CompileDriver.h"
#include "compiler/driver/Report.h"
#include "compiler/driver/RunCommands.h"
#include "compiler/driver/SignCommands.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace encc;

namespace {

const char *kUsage = R"(encc - ahead-of-time compiler for Transformer encoders

usage: encc <command> [options]

commands:
  compile MODEL       compile a Hugging Face model folder (config.json, model.safetensors,
                      vocab.txt or tokenizer.json) or an ONNX file into a .encm artifact
  run ARTIFACT        run on token ids; prints the last hidden state (and pooled output)
  embed ARTIFACT TEXT...
                      tokenize, run, pool: sentence embeddings and their cosine matrix
  rerank ARTIFACT QUERY DOC...
                      score (query, document) pairs with a cross-encoder, best first
  tokenize ARTIFACT TEXT...
                      the token ids the artifact's tokenizer gives each text
  inspect ARTIFACT    metadata, targets, tensors, plan steps and sizes
  report MODEL        compile once per pass-pipeline prefix and measure what each pass buys
  keygen NAME         an Ed25519 key pair for signing artifacts: NAME.key (secret), NAME.pub
  sign ARTIFACT       sign an artifact (ARTIFACT.sig); runtimes given the public key refuse
                      artifacts without a valid signature (docs/security.md)
  serve ARTIFACT      an HTTP embedding server (TEI and OpenAI APIs): runs encc-serve, which
                      takes the same arguments ('encc serve --help')

'encc <command> --help' describes each command's options. 'encc --version' prints the version.
)";

const char *kCompileUsage = R"(usage: encc compile MODEL [options]

MODEL is a Hugging Face model folder (config.json, model.safetensors, vocab.txt or
tokenizer.json) or an ONNX file (MODEL.onnx, from torch.onnx.export; its tokenizer and
pooling come from config.json, vocab.txt / tokenizer.json and the sentence-transformers
files beside it, or from --tokenizer DIR).

  -o, --output FILE     artifact to write (default: model.encm); with --emit=mlir|cpp|cu the
                        file for that text (without -o: stdout)
  --emit KIND           artifact (default) | mlir (the enc IR after the passes, weights by name)
                        | cpp (the generated C++ kernels) | cu (the generated CUDA kernels)
  --target LIST         cpu (default) | cuda | cuda,cpu: which plans and code the artifact
                        carries (cuda: a fatbin built with nvcc, fp16/bf16 weights, GEMMs
                        through cuBLASLt; the runtime picks CUDA when a GPU is present)
  --cuda-arch LIST      GPU architectures of the fatbin (default: sm_80,sm_86,sm_89,sm_90,
                        compute_90; compute_XY embeds PTX for newer GPUs)
  --cuda-dtype T        f16 (default) | bf16: GPU activations and GEMM weights
  --cuda-attention K    auto (default: tensor cores where the head dim is a multiple of 16,
                        else CUDA cores) | tensor-cores | cuda-cores: the GPU attention kernel
  --cpu LEVELS          comma-separated CPU targets, best first: x86-64-v2, x86-64-v3,
                        x86-64-v3-vnni (AVX-VNNI), x86-64-v4 (AVX-512), x86-64-v4-vnni (AVX-512
                        VNNI), x86-64-v4-bf16 (AVX512-BF16), x86-64-v4-amx (AMX-BF16 tiles),
                        native. The runtime picks the first this CPU runs. Default:
                        x86-64-v4,x86-64-v3; with --quantize=int8:
                        x86-64-v4-amx,x86-64-v4-vnni,x86-64-v3; with --quantize=bf16:
                        x86-64-v4-amx,x86-64-v4-bf16,x86-64-v3.
  --max-seq N           longest sequence the artifact accepts (default: the model's
                        sentence-transformers max_seq_length, else max_position_embeddings)
  --pooling MODE        cls | mean | last | none | splade (default: from modules.json / 1_Pooling or
                        SpladePooling, else mean); splade: SPLADE's weights from the masked-LM head
                        (BertForMaskedLM's cls.predictions), max over the tokens of log(1 + relu)
  --normalize, --no-normalize
                        L2-normalise the pooled output (default: from modules.json, else on)
  --save-temps DIR      keep the generated C++ and the shared objects in DIR
  --weights SRC         file (default: model.safetensors) | random:SEED: generate every weight
                        from SEED (BERT-like init, for the passes and quantisation)
                        instead; MODEL_DIR then needs only config.json, the artifact
                        stores no weight bytes (the runtime fills every weight at load
                        with its own uniform values) and outputs are meaningless: for
                        benchmarking model shapes only
  --allow-nonfinite     compile weights with NaN or infinite values (by default an error
                        naming the tensor: every output of such a model is NaN)
  --no-token-heads      leave out the per-token heads beside the checkpoint (bge-m3's
                        sparse_linear / colbert_linear .safetensors, compiled by default into
                        the same pass as the [CLS] embedding: encrt_session_encode's outputs)
  --tokenizer DIR       ONNX models: the folder with config.json and the tokenizer files
                        (default: the .onnx file's folder)
  -q, --quiet           no progress lines

passes (default pipeline: canonicalize, fuse-qkv, fuse-scale-mask-softmax, fuse-attention,
        fuse-bias-gelu, fuse-residual-layernorm):
  --pipeline LIST       comma-separated passes to run, in order ("none": no optimisation, the
                        unfused form: decompose alone; decompose spells the frontend's fused
                        attention as split heads, Q.K^T, scale, mask, softmax, .V, merge heads)
  --disable-pass NAME   leave NAME out (repeatable)
  --print-ir-after NAME print the IR after NAME on stderr (repeatable)
  --print-ir-after-all  print the IR after every pass
  --pass-timing         a table of per-pass times on stderr
  --pass-statistics     what each pass changed (its counters) on stderr

quantisation:
  --quantize MODE       none (default: fp32) | int8: appends quantize-linear-int8 (Linears int8
                        with per-channel weight scales and per-token activation scales; the
                        word embeddings int8 with per-row scales) and convert-attention-bf16-amx
                        (attention in bf16 on CPUs with AMX tiles, where it is faster, fp32 on
                        others; --disable-pass it for fp32 everywhere) | bf16: appends
                        convert-linear-bf16 (Linears with bf16 weights and activations, fp32
                        sums; AMX tiles on CPUs with AMX-BF16, vdpbf16ps on AVX512-BF16 CPUs,
                        widened to fp32 on others; CPU only) and convert-attention-bf16
                        (attention's p.v over bf16 probabilities and values, q.k^T too as three
                        bf16 products on AMX tiles; --disable-pass it to keep attention in
                        fp32); the rest fp32
  --quantize-skip PAT   keep the Linears whose weight name matches the glob PAT in float
                        (repeatable), e.g. '*attention.output*' or 'encoder.layer.5.*'
  --calibrate FILE      static activation scales instead of per-token ones: FILE has lines
                        '<linear weight name> <absmax of its input>' ('#' comments)
)";

const char *kReportUsage = R"(usage: encc report MODEL [options]

MODEL is a Hugging Face model folder or an ONNX file (as for encc compile).

Compiles the model once per cumulative prefix of the pass pipeline, from the unfused form (the
first row, the baseline, runs the decompose pass alone), runs each build on the same inputs and tabulates what every pass buys: latency
(median and p10-p90 spread), speed-up vs the baseline and vs the previous row, max abs error
and mean cosine of the hidden states vs the baseline, ops in the IR, kernel launches per
forward, arena bytes and artifact bytes.

  --batch B             sequences per run (default 8)
  --seq S               longest sequence; lengths spread from S down to S/8 (default 128)
  --runs N              timed runs per row after 2 warm-up runs (default 20)
  --threads N           worker threads (default 0: all cores)
  --pipeline LIST       the passes to measure, in order (default: the default pipeline)
  --quantize LIST       int8 (default) | bf16 | int8,bf16: one more row per precision, the whole
                        pipeline + quantize-linear-int8 / convert-linear-bf16 (built for that
                        precision's default CPU levels unless --cpu is given); none: no such row
  --cpu LEVEL           one CPU target for every row (default: as encc compile builds,
                        x86-64-v4,x86-64-v3 for the fp32 rows; the runtime picks)
  -o, --output DIR      where report.json and report.svg go (default: .)
  --format FMT          text (default) | json (the JSON also goes to stdout)
  --weights SRC         file (default) | random:SEED (see 'encc compile --help')
)";

// What every command that loads an artifact says about trust (issue 41, item 6).
#define ENCC_TRUST_NOTE                                                                              \
  "\nAn artifact is code: loading it runs the native kernels its author compiled into it, with your\n" \
  "rights. Without --trusted-key or --require-sha256 any artifact runs, unless the environment sets\n"  \
  "ENCRT_TRUSTED_KEYS (public keys, comma-separated: 64 hex digits or NAME.pub files): then every\n"   \
  "load that names no key of its own, in encc, encc-serve, Python or any program using libencrt,\n"   \
  "must be signed by one of them. See docs/security.md.\n"

const char *kRunUsage = R"(usage: encc run ARTIFACT --ids "101 7592 2088 102" [--ids "..."]... [options]

  --ids IDS             token ids of one sequence (space or comma separated, with [CLS]/[SEP]);
                        repeat for a batch; shorter sequences are padded on the right
  --type-ids IDS        token type ids of the sequence of the same position (0 for the first
                        text of a pair, 1 for the second; as encc tokenize --pair prints them);
                        none: every token type 0
  --format FMT          text (default) | json (full hidden states of the valid tokens, pooled
                        or a cross-encoder's logits)
  --threads N           worker threads (default 0: all cores)
  --cpu-target T        force a code object (e.g. cpu-x86-64-v2)
  --device D            auto (default: CUDA when the artifact has a CUDA plan and a GPU is
                        present, else CPU) | cpu | cuda | cuda:N
  --runs N              time N runs after one warm-up run: the median latency with p10/p90,
                        and with --profile the mean per-step times (default 1: one cold run)
  --profile             per-step times on stderr
  --require-sha256 HEX  refuse the artifact unless its SHA-256 (sha256sum) is HEX
  --trusted-key FILE    refuse the artifact unless signed by this public key (encc keygen's
                        NAME.pub; the signature is read from ARTIFACT.sig, see encc sign)
  --signature FILE      the signature file for --trusted-key (default: ARTIFACT.sig)
)" ENCC_TRUST_NOTE;

const char *kTokenizeUsage = R"(usage: encc tokenize ARTIFACT TEXT... [options]

The token ids the model runs on for each text (its special tokens included,
truncated to the compiled maximum sequence length).

  --file FILE           also tokenize each non-empty line of FILE (repeatable)
  --format FMT          text (default) | json ({"texts": [...], "ids": [[...], ...]}, with
                        "type_ids" for pairs)
  --offsets             each token with the bytes [start:stop] of the text it covers and its
                        string (the tokenizers library's offsets; special: added by the model's
                        template); JSON: "tokens": [[{"id", "token", "special", "start", "stop"}]]
  --pair                the texts are pairs (query, document; sentence, sentence), taken two
                        at a time: the model's pair template ([CLS] a [SEP] b [SEP], <s> a
                        </s></s> b </s>) with each token's type id
  --truncation S        how a pair longer than the maximum is cut: longest_first (default),
                        only_first, only_second (as the tokenizers library)
  --require-sha256 HEX  refuse the artifact unless its SHA-256 (sha256sum) is HEX
  --trusted-key FILE    refuse the artifact unless signed by this public key (the artifact is
                        loaded whole, code included, to tokenize)
  --signature FILE      the signature file for --trusted-key (default: ARTIFACT.sig)
)" ENCC_TRUST_NOTE;

const char *kEmbedUsage = R"(usage: encc embed ARTIFACT TEXT... [options]

  --file FILE           also embed each non-empty line of FILE (repeatable)
  --prompt-name NAME    put the model's prompt NAME before each text (sentence-transformers'
                        prompt_name: e.g. query for Qwen3-Embedding; encc inspect lists them);
                        "" none. Default: the model's default prompt, if it has one
  --truncate-dim N      keep the first N dimensions of each embedding (Matryoshka models;
                        sentence-transformers' truncate_dim: after the model's normalisation,
                        not renormalised; the cosines are of the truncated vectors)
  --top-k N             SPLADE models and bge-m3's lexical weights: show each text's N heaviest
                        entries (default 5; with --format json every non-zero one)
  --role NAME           a ColBERT model (PyLate checkpoint): encode the texts as NAME, query or
                        document (a query gets a [Q] marker and [MASK] expansion, a document a
                        [D] marker and no punctuation vectors); shows each text's token vectors
                        and the MaxSim matrix (encc rerank ranks documents for a query)
  --format FMT          text (default) | json (embeddings and the cosine matrix; a SPLADE
                        model's non-zero entries, heaviest first, as index and value; a model
                        with token heads adds its lexical weights, token-vector counts and
                        the lexical and ColBERT scores)
  --threads N           worker threads (default 0: all cores)
  --cpu-target T        force a code object (e.g. cpu-x86-64-v2)
  --device D            auto (default: CUDA when the artifact has a CUDA plan and a GPU is
                        present, else CPU) | cpu | cuda | cuda:N
  --profile             per-step times on stderr
  --require-sha256 HEX  refuse the artifact unless its SHA-256 (sha256sum) is HEX
  --trusted-key FILE    refuse the artifact unless signed by this public key (encc keygen's
                        NAME.pub; the signature is read from ARTIFACT.sig, see encc sign)
  --signature FILE      the signature file for --trusted-key (default: ARTIFACT.sig)
)" ENCC_TRUST_NOTE;

const char *kRerankUsage = R"(usage: encc rerank ARTIFACT QUERY DOC... [options]

Scores each (QUERY, DOC) pair with a cross-encoder (a model compiled from a
*ForSequenceClassification folder, e.g. a reranker) as sentence-transformers'
CrossEncoder.predict does (the model's activation: sigmoid for one label) and
prints the documents best first. With a ColBERT model (a PyLate checkpoint),
the query is encoded as a query and each DOC as a document, and the score is
MaxSim (PyLate's colbert_scores: the sum over the query's token vectors of the
best dot product with the document's).

  --file FILE           also score each non-empty line of FILE as a document (repeatable)
  --truncation S        how a pair longer than the maximum is cut: longest_first (default),
                        only_first, only_second
  --format FMT          text (default) | json (query, and per document its index and score)
  --threads N           worker threads (default 0: all cores)
  --cpu-target T        force a code object (e.g. cpu-x86-64-v2)
  --device D            auto (default) | cpu (classification heads run on the CPU)
  --profile             per-step times on stderr
  --require-sha256 HEX  refuse the artifact unless its SHA-256 (sha256sum) is HEX
  --trusted-key FILE    refuse the artifact unless signed by this public key
  --signature FILE      the signature file for --trusted-key (default: ARTIFACT.sig)
)" ENCC_TRUST_NOTE;

const char *kKeygenUsage = R"(usage: encc keygen NAME

Writes a new Ed25519 key pair: NAME.key (the secret key, mode 0600: keep it private) and
NAME.pub (the public key, 64 hex digits: give it to runtimes as --trusted-key NAME.pub or
encrt_model_options.trusted_public_key). Never overwrites an existing key.

  -q, --quiet           no progress line
)";

const char *kSignUsage = R"(usage: encc sign ARTIFACT --key NAME.key [-o SIGNATURE]

Signs the SHA-256 of every byte of ARTIFACT with the secret key and writes the detached
signature (104 bytes, encrt/signature.h) to ARTIFACT.sig. Re-sign after any change to the file.

  --key FILE            the secret key (encc keygen NAME writes NAME.key)
  -o, --output FILE     where the signature goes (default: ARTIFACT.sig)
  -q, --quiet           no progress line
)";

const char *kInspectUsage = R"(usage: encc inspect ARTIFACT [options]

  --format FMT          text (default) | json
  -v, --verbose         also list every plan step and tensor
)";

int usageError(const std::string &msg, const char *usage) {
  llvm::errs() << "encc: error: " << msg << "\n\n" << usage;
  return 2;
}

int compileCommand(const Args &args) {
  if (args.positionals.size() != 1)
    return usageError(args.positionals.empty() ? "'encc compile' needs a model folder"
                                               : "'encc compile' takes one model folder",
                      kCompileUsage);
  CompileOptions opt;
  opt.modelDir = args.positionals[0];
  opt.output = args.get("output", opt.output);
  opt.emit = args.get("emit", opt.emit);
  if (opt.emit != "artifact" && opt.emit != "mlir" && opt.emit != "cpp" && opt.emit != "cu")
    return usageError("--emit expects artifact, mlir, cpp or cu, got '" + opt.emit + "'", kCompileUsage);
  if (args.has("target")) {
    auto targets = parseTargets(args.get("target"));
    if (!targets)
      return usageError(llvm::toString(targets.takeError()), kCompileUsage);
    opt.targets = *targets;
  }
  if (args.has("cuda-arch")) {
    auto archs = parseCudaArchs(args.get("cuda-arch"));
    if (!archs)
      return usageError(llvm::toString(archs.takeError()), kCompileUsage);
    opt.cudaArchs = *archs;
  }
  opt.cudaDType = args.get("cuda-dtype", opt.cudaDType);
  if (opt.cudaDType != "f16" && opt.cudaDType != "bf16")
    return usageError("--cuda-dtype expects f16 or bf16, got '" + opt.cudaDType + "'", kCompileUsage);
  opt.cudaAttention = args.get("cuda-attention", opt.cudaAttention);
  if (auto kernel = parseCudaAttentionKernel(opt.cudaAttention); !kernel)
    return usageError(llvm::toString(kernel.takeError()), kCompileUsage);
  if (args.has("cpu")) {
    opt.cpuLevels.clear();
    const std::string list = args.get("cpu"); // `parts` point into it
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(list).split(parts, ',', -1, false);
    for (llvm::StringRef p : parts)
      opt.cpuLevels.push_back(p.trim().str());
    if (opt.cpuLevels.empty())
      return usageError("--cpu expects a list of CPU targets", kCompileUsage);
  }
  if (args.has("max-seq")) {
    std::string v = args.get("max-seq");
    char *end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || n < 1 || n > 1 << 20)
      return usageError("--max-seq expects a positive number of tokens, got '" + v + "'", kCompileUsage);
    opt.maxSeq = n;
  }
  if (const std::string pooling = args.get("pooling"); !pooling.empty()) {
    opt.pooling = parsePooling(pooling);
    if (!opt.pooling)
      return usageError("--pooling expects one of " + std::string(kPoolingNames) + ", got '" + pooling + "'",
                        kCompileUsage);
  }
  if (args.has("normalize"))
    opt.normalize = 1;
  if (args.has("no-normalize"))
    opt.normalize = 0;
  opt.saveTemps = args.get("save-temps");
  opt.pipeline = args.get("pipeline");
  opt.disabledPasses = args.all("disable-pass");
  opt.pipelineOptions.printIrAfter = args.all("print-ir-after");
  opt.pipelineOptions.printIrAfterAll = args.has("print-ir-after-all");
  opt.pipelineOptions.timing = args.has("pass-timing");
  opt.pipelineOptions.statistics = args.has("pass-statistics");
  opt.quantize = args.get("quantize", "none");
  if (opt.quantize != "none" && opt.quantize != "int8" && opt.quantize != "bf16")
    return usageError("--quantize expects none, int8 or bf16, got '" + opt.quantize + "'", kCompileUsage);
  opt.quantizeSkip = args.all("quantize-skip");
  for (const std::string &p : opt.quantizeSkip)
    if (p.empty())
      return usageError("--quantize-skip expects a pattern", kCompileUsage);
  opt.calibrate = args.get("calibrate");
  auto weights = parseWeightsOption(args.get("weights", "file"));
  if (!weights)
    return usageError(llvm::toString(weights.takeError()), kCompileUsage);
  opt.randomWeightsSeed = *weights;
  opt.allowNonFinite = args.has("allow-nonfinite");
  opt.tokenHeads = !args.has("no-token-heads");
  opt.tokenizerDir = args.get("tokenizer");
  bool quiet = args.has("quiet");
  auto progress = [&](const std::string &line) {
    if (!quiet)
      llvm::errs() << "encc: " << line << "\n";
  };
  // --emit=mlir|cpp|cu: to -o's file when given, else to stdout.
  std::unique_ptr<llvm::raw_fd_ostream> file;
  if (opt.emit != "artifact" && args.has("output")) {
    std::error_code ec;
    file = std::make_unique<llvm::raw_fd_ostream>(opt.output, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      llvm::errs() << "encc: error: cannot write '" << opt.output << "': " << ec.message() << "\n";
      return 1;
    }
  }
  if (auto err = compileModel(opt, file ? *file : llvm::outs(), progress)) {
    llvm::errs() << "encc: error: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  if (file) {
    file->close();
    if (file->has_error()) {
      llvm::errs() << "encc: error: writing '" << opt.output << "': " << file->error().message() << "\n";
      file->clear_error();
      return 1;
    }
    progress("wrote " + opt.output);
  }
  return 0;
}

/// `encc serve ARGS`: replaces this process with encc-serve ARGS, taken from
/// encc's own directory, else from PATH.
int serveCommand(int argc, char **argv) {
  std::vector<char *> args = {const_cast<char *>("encc-serve")};
  args.insert(args.end(), argv + 2, argv + argc);
  args.push_back(nullptr);
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], reinterpret_cast<void *>(&serveCommand));
  std::string beside = llvm::sys::path::parent_path(self).str() + "/encc-serve";
  if (!self.empty() && ::access(beside.c_str(), X_OK) == 0)
    ::execv(beside.c_str(), args.data());
  ::execvp("encc-serve", args.data());
  llvm::errs() << "encc: error: encc serve needs encc-serve, found neither beside encc ("
               << (self.empty() ? std::string("?") : beside) << ") nor on PATH: " << std::strerror(errno)
               << " (it is built with the runtime where zlib1g-dev and nlohmann-json3-dev are installed)\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2)
    return usageError("no command given", kUsage);
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (cmd == "--version") {
    llvm::outs() << "encc " << ENCC_VERSION << "\n";
    return 0;
  }
  if (cmd == "serve")
    return serveCommand(argc, argv);
  struct Command {
    const char *name, *usage;
    std::set<std::string> valued, flags;
    int (*fn)(const Args &);
    bool texts = false; ///< its positionals after the artifact are texts (parseArgs' textPositionals)
  };
  static const Command commands[] = {
      {"compile", kCompileUsage,
       {"output", "emit", "cpu", "max-seq", "pooling", "save-temps", "pipeline", "disable-pass", "print-ir-after",
        "quantize", "quantize-skip", "calibrate", "weights", "target", "cuda-arch", "cuda-dtype", "cuda-attention", "tokenizer"},
       {"normalize", "no-normalize", "quiet", "help", "print-ir-after-all", "pass-timing", "pass-statistics",
        "allow-nonfinite", "no-token-heads"},
       compileCommand},
      {"report", kReportUsage,
       {"batch", "seq", "runs", "threads", "pipeline", "cpu", "output", "format", "quantize", "weights"},
       {"help"}, reportCommand},
      {"run", kRunUsage,
       {"ids", "type-ids", "format", "threads", "cpu-target", "device", "runs", "require-sha256", "trusted-key",
        "signature"},
       {"profile", "help"}, runCommand},
      {"embed", kEmbedUsage,
       {"file", "format", "prompt-name", "truncate-dim", "top-k", "role", "threads", "cpu-target", "device", "require-sha256", "trusted-key",
        "signature"},
       {"profile", "help"}, embedCommand, /*texts=*/true},
      {"rerank", kRerankUsage,
       {"file", "format", "truncation", "threads", "cpu-target", "device", "require-sha256", "trusted-key",
        "signature"},
       {"profile", "help"}, rerankCommand, /*texts=*/true},
      {"tokenize", kTokenizeUsage, {"file", "format", "truncation", "require-sha256", "trusted-key", "signature"},
       {"pair", "offsets", "help"}, tokenizeCommand, /*texts=*/true},
      {"inspect", kInspectUsage, {"format"}, {"verbose", "help"}, inspectCommand},
      {"keygen", kKeygenUsage, {}, {"quiet", "help"}, keygenCommand},
      {"sign", kSignUsage, {"key", "output"}, {"quiet", "help"}, signCommand},
  };
  for (const Command &c : commands) {
    if (cmd != c.name)
      continue;
    Args args = parseArgs(argc, argv, 2, c.valued, c.flags, c.texts);
    if (!args.error.empty())
      return usageError(args.error, c.usage);
    if (args.has("help")) {
      llvm::outs() << c.usage;
      return 0;
    }
    std::string format = args.get("format", "text");
    if (format != "text" && format != "json")
      return usageError("--format expects text or json, got '" + format + "'", c.usage);
    return c.fn(args);
  }
  return usageError("unknown command '" + cmd + "' (commands: compile, run, embed, rerank, tokenize, inspect, report, keygen, sign, serve)", kUsage);
}
