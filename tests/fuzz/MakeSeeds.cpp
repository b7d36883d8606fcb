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
  // Schema 9.1's fields: prompts with a default (and its feature), a BPE
  // tokenizer on Qwen2's split (and its feature).
  ArtifactSpec prompted = tok;
  prompted.prompts = {{"query", "hello "}, {"document", ""}};
  prompted.defaultPrompt = "query";
  prompted.requiredFeatures = {"default-prompt"};
  writeFile(dir + "/prompts.encm", writeArtifact(prompted));
  ArtifactSpec split = pooled;
  SpecTokenizer bpe;
  bpe.vocab = {"a", "b", "ab", "c"};
  bpe.bpe = true;
  bpe.unkId = -1;
  bpe.merges = {{0, 1}};
  bpe.templateIds = {-1};
  bpe.bpeSplit = encm::BpeSplit::Qwen2;
  split.tokenizer = bpe;
  split.requiredFeatures = {"bpe-split"};
  writeFile(dir + "/bpe-split.encm", writeArtifact(split));
  // Schema 9.9's tokenizer components: the WordPiece tokenizer above, and a
  // byte-level BPE one (with a merge and a pair template) as unions.
  ArtifactSpec components = tok;
  components.tokenizer->pipeline = SpecTokenizer::Pipeline{};
  writeFile(dir + "/components-wordpiece.encm", writeArtifact(components));
  SpecTokenizer bpeComponents = bpe;
  bpeComponents.bpeSplit = encm::BpeSplit::Gpt2;
  bpeComponents.templateIds = {0, -1, 3};
  bpeComponents.pairTemplateIds = {0, -1, 3, -2, 3};
  bpeComponents.pairTypeIds = {0, 0, 0, 1, 1};
  bpeComponents.pipeline = SpecTokenizer::Pipeline{};
  components.tokenizer = bpeComponents;
  writeFile(dir + "/components-bpe.encm", writeArtifact(components));
  // Schema 9.4's embedding_dim (equal to the hidden size here, so that the seed loads) and its feature.
  ArtifactSpec dim = pooled;
  dim.embeddingDim = TestModel::kHidden;
  dim.requiredFeatures = {"embedding-dim"};
  writeFile(dir + "/embedding-dim.encm", writeArtifact(dim));
  // Schema 9.7's token heads: the hidden output as a multi-vector head's value, [CLS] skipped.
  ArtifactSpec heads = pooled;
  heads.tokenHeads = {{encm::TokenHeadKind::MultiVector, 1, {}}};
  heads.outputs.push_back(heads.outputs[0]);
  heads.requiredFeatures = {"token-heads"};
  writeFile(dir + "/token-heads.encm", writeArtifact(heads));
  // Schema 9.8's token roles: a multi-vector head alone (no pooled output), a query role with an
  // unattended [MASK]-style expansion and a document role with a skip list.
  ArtifactSpec roles = TestModel::spec(kernels, /*pooled=*/false);
  SpecTokenHead multi{encm::TokenHeadKind::MultiVector, 0, {}, {}};
  multi.roles = {{"query", 5, 12, 4, false, {}}, {"document", 6, 20, -1, false, {7, 8}}};
  roles.tokenHeads = {multi};
  roles.outputs.push_back(roles.outputs[0]);
  roles.requiredFeatures = {"token-heads", "token-roles"};
  writeFile(dir + "/token-roles.encm", writeArtifact(roles));
  ArtifactSpec fill = pooled;
  fill.weightsFillSeed = 7;
  writeFile(dir + "/weights-fill.encm", writeArtifact(fill));
  return 0;
}
