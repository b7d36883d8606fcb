//===- CommandOutput.h - What every encc subcommand prints the same way ---===//
//
// One error line ("encc: error: ..."), fixed-point numbers, the random
// weights warning: shared by the subcommands so that they read alike.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_DRIVER_COMMANDOUTPUT_H
#define ENCC_COMPILER_DRIVER_COMMANDOUTPUT_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace encc {

/// Prints "encc: error: MSG" to stderr; returns the exit status 1.
inline int fail(const std::string &msg) {
  llvm::errs() << "encc: error: " << msg << "\n";
  return 1;
}

/// `v` with `prec` digits after the point.
inline std::string num(double v, int prec = 4) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

/// What run, embed and inspect say of an artifact whose weights are generated.
inline std::string randomWeightsLine(uint64_t seed) {
  return "weights: random (seed " + std::to_string(seed) + "): outputs are meaningless";
}

} // namespace encc

#endif // ENCC_COMPILER_DRIVER_COMMANDOUTPUT_H
