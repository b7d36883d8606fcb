//===- MakeSeeds.cpp - Seed artifacts for ArtifactFuzzer ------------------===//
//
// encrt_fuzz_seeds DIR KERNELS.so: writes the runtime tests' model
// (tests/runtime/ArtifactBuilder.h) in a few variants into DIR.
//
//===----------------------------------------------------------------------===//
#include "ArtifactBuilder.h"

#include <cstdio>

using namespace encrt::test;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: encrt_fuzz_seeds DIR KERNELS.so\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::vector<uint8_t> kernels = readFile(argv[2]);
  ArtifactSpec pooled = TestModel::spec(kernels, true);
  writeFile(dir + "/pooled.encm", writeArtifact(pooled));
  writeFile(dir + "/hidden-only.encm", writeArtifact(TestModel::spec(kernels, false)));
  ArtifactSpec tok = pooled;
  SpecTokenizer t;
  t.vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "a", "##s", "the", "x"};
  tok.tokenizer = t;
  writeFile(dir + "/tokenizer.encm", writeArtifact(tok));
  ArtifactSpec fill = pooled;
  fill.weightsFillSeed = 7;
  writeFile(dir + "/weights-fill.encm", writeArtifact(fill));
  return 0;
}
