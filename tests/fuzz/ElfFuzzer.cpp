//===- ElfFuzzer.cpp - libFuzzer target: the code-object ELF checks -------===//
//
// checkCodeObjectElf reads an untrusted blob as the dynamic loader would
// (headers, segments, dynamic section, strings, symbols, relocations, the
// GNU hash table): any input must give a clean accept or a Failure, never
// an out-of-bounds read. Nothing is loaded. Seeds: the runtime tests' code
// objects (tests/runtime/TestKernels.cpp and its refused variants).
//
//===----------------------------------------------------------------------===//
#include "ElfCheck.h"
#include "Failure.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string what = "fuzz";
  try {
    encrt::rt::checkCodeObjectElf(data, size, what);
  } catch (const encrt::rt::Failure &) {
  }
  return 0;
}
