//===- encc.cpp - The encc command-line driver ----------------------------===//
//
//   encc compile MODEL_DIR [-o model.encm] [--emit=artifact|mlir|cpp] ...
//   encc run model.encm --ids "101 7592 102" [--ids ...] [--format=json]
//   encc embed model.encm "text" ... [--file lines.txt] [--format=json]
//   encc inspect model.encm [--format=json] [-v]
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Args.h"
#include "compiler/driver/CompileDriver.h"
#include "compiler/driver/RunCommands.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace encc;

namespace {

const char *kUsage = R"(encc - ahead-of-time compiler for Transformer encoders

usage: encc <command> [options]

commands:
  compile MODEL_DIR   compile a Hugging Face model folder (config.json, model.safetensors,
                      vocab.txt or tokenizer.json) into a .encm artifact
  run ARTIFACT        run on token ids; prints the last hidden state (and pooled output)
  embed ARTIFACT TEXT...
                      tokenize, run, pool: sentence embeddings and their cosine matrix
  inspect ARTIFACT    metadata, targets, tensors, plan steps and sizes

'encc <command> --help' describes each command's options. 'encc --version' prints the version.
)";

const char *kCompileUsage = R"(usage: encc compile MODEL_DIR [options]

  -o, --output FILE     artifact to write (default: model.encm)
  --emit KIND           artifact (default) | mlir (the enc IR after the passes, weights by name)
                        | cpp (the generated C++ kernels)
  --cpu LEVELS          comma-separated CPU targets, best first: x86-64-v2, x86-64-v3 (default),
                        x86-64-v4 (AVX-512), native. The runtime picks the first this CPU runs.
  --max-seq N           longest sequence the artifact accepts (default: the model's
                        sentence-transformers max_seq_length, else max_position_embeddings)
  --pooling MODE        cls | mean | none (default: from modules.json / 1_Pooling, else mean)
  --normalize, --no-normalize
                        L2-normalise the pooled output (default: from modules.json, else on)
  --save-temps DIR      keep the generated C++ and the shared objects in DIR
  -q, --quiet           no progress lines
)";

const char *kRunUsage = R"(usage: encc run ARTIFACT --ids "101 7592 2088 102" [--ids "..."]... [options]

  --ids IDS             token ids of one sequence (space or comma separated, with [CLS]/[SEP]);
                        repeat for a batch; shorter sequences are padded on the right
  --format FMT          text (default) | json (full hidden states of the valid tokens, pooled)
  --threads N           worker threads (default 0: all cores)
  --cpu-target T        force a code object (e.g. cpu-x86-64-v2)
  --profile             per-step times on stderr
)";

const char *kEmbedUsage = R"(usage: encc embed ARTIFACT TEXT... [options]

  --file FILE           also embed each non-empty line of FILE (repeatable)
  --format FMT          text (default) | json (embeddings and the cosine matrix)
  --threads N           worker threads (default 0: all cores)
  --cpu-target T        force a code object (e.g. cpu-x86-64-v2)
  --profile             per-step times on stderr
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
  if (opt.emit != "artifact" && opt.emit != "mlir" && opt.emit != "cpp")
    return usageError("--emit expects artifact, mlir or cpp, got '" + opt.emit + "'", kCompileUsage);
  if (args.has("cpu")) {
    opt.cpuLevels.clear();
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(args.get("cpu")).split(parts, ',', -1, false);
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
  opt.pooling = args.get("pooling");
  if (!opt.pooling.empty() && opt.pooling != "cls" && opt.pooling != "mean" && opt.pooling != "none")
    return usageError("--pooling expects cls, mean or none, got '" + opt.pooling + "'", kCompileUsage);
  if (args.has("normalize"))
    opt.normalize = 1;
  if (args.has("no-normalize"))
    opt.normalize = 0;
  opt.saveTemps = args.get("save-temps");
  bool quiet = args.has("quiet");
  auto progress = [&](const std::string &line) {
    if (!quiet)
      llvm::errs() << "encc: " << line << "\n";
  };
  if (auto err = compileModel(opt, llvm::outs(), progress)) {
    llvm::errs() << "encc: error: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
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
  struct Command {
    const char *name, *usage;
    std::set<std::string> valued, flags;
    int (*fn)(const Args &);
  };
  static const Command commands[] = {
      {"compile", kCompileUsage, {"output", "emit", "cpu", "max-seq", "pooling", "save-temps"},
       {"normalize", "no-normalize", "quiet", "help"}, compileCommand},
      {"run", kRunUsage, {"ids", "format", "threads", "cpu-target"}, {"profile", "help"}, runCommand},
      {"embed", kEmbedUsage, {"file", "format", "threads", "cpu-target"}, {"profile", "help"}, embedCommand},
      {"inspect", kInspectUsage, {"format"}, {"verbose", "help"}, inspectCommand},
  };
  for (const Command &c : commands) {
    if (cmd != c.name)
      continue;
    Args args = parseArgs(argc, argv, 2, c.valued, c.flags);
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
  return usageError("unknown command '" + cmd + "' (commands: compile, run, embed, inspect)", kUsage);
}
