//===- Integrity.h - SHA-256 and signatures of artifacts and code ---------===//
//
// Cryptography from libsodium (linked statically: libencrt's dynamic
// dependencies stay libc, libstdc++, pthreads, libdl). TrustPolicy is what a
// caller requires of an artifact before any byte of it is interpreted: a
// pinned SHA-256 and/or a valid signature (encrt/signature.h) by a trusted
// key. docs/security.md describes the trust model.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_INTEGRITY_H
#define ENCRT_INTEGRITY_H

#include "encrt/signature.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace encrt::rt {

using Sha256 = std::array<uint8_t, ENCM_SHA256_SIZE>;

Sha256 sha256(const uint8_t *data, uint64_t size);
std::string toHex(const uint8_t *data, size_t size);
/// Exactly 2 * size hex digits (either case) into `out`; false otherwise.
bool parseHex(std::string_view hex, uint8_t *out, size_t size);

struct TrustPolicy {
  std::string sha256;                  ///< 64 hex digits, or empty
  std::vector<std::string> publicKeys; ///< 64 hex digits each: a signature by any one of them
  std::string keySource = "trusted_public_key"; ///< where publicKeys came from (messages)
  std::string signaturePath;           ///< empty: the artifact's path + ".sig"
  bool any() const { return !sha256.empty() || !publicKeys.empty(); }
};

/// The environment variable holding the deployment's trusted keys.
inline constexpr const char *kTrustedKeysVariable = "ENCRT_TRUSTED_KEYS";

/// A load whose caller required nothing (no SHA-256, no key) takes the
/// environment's policy: with ENCRT_TRUSTED_KEYS set, a signature by one of
/// its keys (comma-separated; each 64 hex digits or the path of a file that
/// holds them, as encc keygen's NAME.pub). Set but empty, or an entry that is
/// neither, is ENCRT_INVALID_ARGUMENT: the policy fails closed. A caller's
/// own option is kept as it is.
void applyEnvironmentTrust(TrustPolicy &policy);

/// Checks the policy's hex fields (ENCRT_INVALID_ARGUMENT) before any I/O.
void checkTrustPolicy(const TrustPolicy &policy);

/// Throws Failure(ENCRT_INVALID_ARTIFACT) unless the `size` bytes of the
/// artifact at `path` meet `policy` (a no-op for an empty policy).
void verifyTrust(const uint8_t *data, uint64_t size, const std::string &path,
                 const TrustPolicy &policy);

} // namespace encrt::rt

#endif // ENCRT_INTEGRITY_H
