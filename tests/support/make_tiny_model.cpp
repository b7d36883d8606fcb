//===- make_tiny_model.cpp - CLI: write a tiny random HF encoder model ----===//
//
// Used by lit/e2e tests and the reference recorder:
//   make-tiny-model DIR [--hidden N] [--layers N] [--heads N] ... (see --help)
//
//===----------------------------------------------------------------------===//

#include "tests/support/TinyModel.h"

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

using encc::testing::TinyModelSpec;

static const char *kUsage = R"(usage: make-tiny-model DIR [options]

Writes a deterministic random Hugging Face encoder model into DIR (created if
missing): config.json, model.safetensors, vocab.txt, tokenizer_config.json,
special_tokens_map.json and, unless --pooling none, the sentence-transformers
files modules.json, sentence_bert_config.json, 1_Pooling/config.json
(+ 2_Normalize/). Same options => byte-identical files.

options (default in brackets; "--opt V" and "--opt=V" both work):
  --model-type T      bert | roberta | xlm-roberta | distilbert | mpnet [bert]; roberta,
                      xlm-roberta and mpnet: pad id 1, positions from 2; distilbert: its
                      own config and tensor names, no token types; mpnet: its tensor
                      names, no token types, a [32, heads] relative position bias table
  --hidden N          hidden size [64]
  --layers N          encoder layers [2]
  --heads N           attention heads, must divide hidden [2]
  --intermediate N    FFN size [128]
  --vocab N           vocabulary size, >= 5 [120]
  --max-positions N   position table rows (roberta: >= seq len + 2) [64]
  --type-vocab N      token type rows [2]
  --act A             gelu | gelu_new | gelu_pytorch_tanh | gelu_fast | relu [gelu]
  --eps X             layer_norm_eps [1e-12]
  --seed N            weight seed [1]
  --pooling P         none | cls | mean | last [mean]
  --no-normalize      omit the Normalize module (default: normalize)
  --dtype D           F32 | F16 | BF16 storage dtype [F32]
  --weight-prefix S   prefix for every tensor name, e.g. "bert." [none]
  --num-labels N      a *ForSequenceClassification head (cross-encoder) with N
                      labels; needs --pooling none [0: none]
  -h, --help          print this help
)";

[[noreturn]] static void usageError(const std::string &msg) {
  std::cerr << "make-tiny-model: " << msg << " (see --help)\n";
  std::exit(2);
}

int main(int argc, char **argv) {
  TinyModelSpec spec;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--no-normalize") {
      spec.normalize = false;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!dir.empty())
        usageError("more than one DIR given ('" + dir + "', '" + arg + "')");
      dir = arg;
      continue;
    }
    std::string flag = arg, value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= argc)
        usageError(flag + ": missing value");
      value = argv[++i];
    }
    try {
      encc::testing::applyTinyModelFlag(spec, flag, value);
    } catch (const std::invalid_argument &e) {
      usageError(e.what());
    }
  }
  if (dir.empty())
    usageError("missing output DIR");
  try {
    encc::testing::writeTinyModel(dir, spec);
  } catch (const std::exception &e) {
    std::cerr << "make-tiny-model: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
