//===- SignCommands.h - encc keygen / sign --------------------------------===//
//
// Ed25519 keys and detached artifact signatures (encrt/signature.h) for the
// runtime's trusted_public_key option; docs/security.md.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_SIGNCOMMANDS_H
#define ENCC_COMPILER_SIGNCOMMANDS_H

#include "compiler/driver/Args.h"

#include <string>

namespace encc {

int keygenCommand(const Args &args);
int signCommand(const Args &args);

/// The 64 hex digits of a public key file (NAME.pub), or "" with `error` set.
std::string readPublicKeyFile(const std::string &path, std::string &error);

} // namespace encc

#endif // ENCC_COMPILER_SIGNCOMMANDS_H
