//===- enc-import.cpp - Print the enc module of an HF model folder --------===//
//
// enc-import DIR [--max-seq N] [--pooling none|cls|mean|last|splade] [--normalize 0|1]
// Prints the imported IR (weights by name only) after a summary comment, or the
// one-line error and exits 1. Used by the lit tests.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/HFImport.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::opt<std::string> modelDir(cl::Positional, cl::desc("<model dir>"), cl::Required);
static cl::opt<int64_t> maxSeq("max-seq", cl::desc("compiled maximum sequence length"),
                               cl::init(0));
static cl::opt<std::string> pooling("pooling", cl::desc("none | cls | mean | last"), cl::init(""));
static cl::opt<int> normalize("normalize", cl::desc("0 | 1 (default: from the folder)"),
                              cl::init(-1));

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  mlir::registerAsmPrinterCLOptions(); // --mlir-print-debuginfo shows the op locations
  cl::ParseCommandLineOptions(argc, argv, "enc-import: HF model folder -> enc IR\n");
  mlir::MLIRContext ctx;
  encc::ImportOptions opts;
  opts.maxSeq = maxSeq;
  if (!pooling.empty()) {
    opts.pooling = encc::parsePooling(pooling);
    if (!opts.pooling) {
      errs() << "error: --pooling expects one of " << encc::kPoolingNames << ", got '" << pooling << "'\n";
      return 1;
    }
  }
  opts.normalize = normalize;
  auto m = encc::importHFModel(ctx, modelDir, opts);
  if (!m) {
    errs() << "error: " << toString(m.takeError()) << "\n";
    return 1;
  }
  const encc::ModelDescription &c = m->description;
  outs() << "// model_type=" << c.architecture << " hidden=" << c.hidden << " layers=" << c.layers
         << " heads=" << c.heads << " intermediate=" << c.intermediate << " vocab=" << c.vocab
         << " max_seq=" << c.maxSeq << " act=" << encc::activationName(c.activation) << " pooling=" << encc::poolingName(c.pooling)
         << " normalize=" << (c.normalize ? 1 : 0) << "\n";
  outs() << "// weights=" << m->weights.all().size() << " bytes=" << m->weights.totalBytes()
         << " vocab_tokens=" << m->tokenizer.vocab.size()
         << " lowercase=" << (m->tokenizer.lowercase ? 1 : 0) << " cls=" << m->tokenizer.clsId
         << " sep=" << m->tokenizer.sepId << " unk=" << m->tokenizer.unkId
         << " pad=" << m->tokenizer.padId << "\n";
  if (!m->tokenizer.note.empty())
    outs() << "// note: " << m->tokenizer.note << "\n";
  m->module->print(outs());
  outs() << "\n";
  return 0;
}
