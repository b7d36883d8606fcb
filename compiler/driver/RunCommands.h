//===- RunCommands.h - encc run / embed / tokenize / inspect----------------------===//
//
// The subcommands that only execute or read artifacts. They use libencrt's C
// API (and the schema for `inspect`, InspectCommand.cpp), never the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_RUNCOMMANDS_H
#define ENCC_COMPILER_RUNCOMMANDS_H

#include "compiler/driver/Args.h"

namespace encc {

int runCommand(const Args &args);
int embedCommand(const Args &args);
int rerankCommand(const Args &args);
/// encc tokenize ARTIFACT TEXT...: the token ids the artifact's tokenizer gives.
int tokenizeCommand(const Args &args);
int inspectCommand(const Args &args);

} // namespace encc

#endif // ENCC_COMPILER_RUNCOMMANDS_H
