//===- Integrity.cpp - SHA-256 and signatures of artifacts and code -------===//
#include "Integrity.h"

#include "Failure.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

namespace encrt::rt {

namespace {

void initSodium() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (sodium_init() < 0)
      fail(ENCRT_INTERNAL, "libsodium failed to initialise");
  });
}

/// The signature file's bytes: exactly ENCM_SIGNATURE_SIZE.
std::array<uint8_t, ENCM_SIGNATURE_SIZE> readSignature(const std::string &sigPath,
                                                       const std::string &path) {
  int fd = ::open(sigPath.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    fail(ENCRT_INVALID_ARTIFACT, path, ": a signature is required and ", sigPath,
         " cannot be opened (", std::strerror(errno), "; sign with 'encc sign')");
  struct stat st;
  std::array<uint8_t, ENCM_SIGNATURE_SIZE> sig{};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == ENCM_SIGNATURE_SIZE;
  size_t got = 0;
  while (ok && got < sig.size()) {
    ssize_t n = ::read(fd, sig.data() + got, sig.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      ok = false;
    else
      got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (!ok || std::memcmp(sig.data(), ENCM_SIGNATURE_MAGIC, 8) != 0)
    fail(ENCRT_INVALID_ARTIFACT, path, ": ", sigPath, " is not an encc signature file (",
         ENCM_SIGNATURE_SIZE, " bytes starting with " ENCM_SIGNATURE_MAGIC ")");
  return sig;
}

/// A key of ENCRT_TRUSTED_KEYS: 64 hex digits, or a small regular file
/// holding them (surrounding whitespace ignored); empty if it is neither.
std::string environmentKey(std::string_view entry) {
  uint8_t scratch[ENCM_PUBLIC_KEY_SIZE];
  if (parseHex(entry, scratch, sizeof scratch))
    return std::string(entry);
  const std::string path(entry);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return "";
  struct stat st;
  char buf[256];
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < static_cast<off_t>(sizeof buf))
    n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0)
    return "";
  std::string_view text(buf, static_cast<size_t>(n));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    return "";
  text = text.substr(first, text.find_last_not_of(" \t\r\n") + 1 - first);
  return parseHex(text, scratch, sizeof scratch) ? std::string(text) : "";
}

} // namespace

void applyEnvironmentTrust(TrustPolicy &policy) {
  const char *value = std::getenv(kTrustedKeysVariable);
  if (policy.any() || !value)
    return;
  std::string_view rest = value;
  std::vector<std::string> keys;
  for (size_t index = 1;; ++index) {
    const size_t comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    const size_t first = entry.find_first_not_of(" \t");
    entry = first == std::string_view::npos ? std::string_view()
                                            : entry.substr(first, entry.find_last_not_of(" \t") + 1 - first);
    std::string key = environmentKey(entry);
    if (key.empty())
      fail(ENCRT_INVALID_ARGUMENT, kTrustedKeysVariable, ": entry ", index, " ('", entry,
           "') is neither 64 hex digits nor a readable file holding them (encc keygen's NAME.pub); "
           "unset the variable to load unsigned artifacts");
    keys.push_back(std::move(key));
    if (comma == std::string_view::npos)
      break;
    rest.remove_prefix(comma + 1);
  }
  policy.publicKeys = std::move(keys);
  policy.keySource = kTrustedKeysVariable;
}

Sha256 sha256(const uint8_t *data, uint64_t size) {
  initSodium();
  Sha256 digest;
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  // In pieces: the length argument is unsigned long long, but keep the
  // updates bounded anyway.
  constexpr uint64_t kPiece = uint64_t(1) << 30;
  for (uint64_t at = 0; at < size; at += kPiece)
    crypto_hash_sha256_update(&state, data + at, std::min(kPiece, size - at));
  crypto_hash_sha256_final(&state, digest.data());
  return digest;
}

std::string toHex(const uint8_t *data, size_t size) {
  std::string s(2 * size + 1, '\0');
  sodium_bin2hex(s.data(), s.size(), data, size);
  s.pop_back();
  return s;
}

bool parseHex(std::string_view hex, uint8_t *out, size_t size) {
  size_t got = 0;
  const char *end = nullptr;
  return hex.size() == 2 * size &&
         sodium_hex2bin(out, size, hex.data(), hex.size(), nullptr, &got, &end) == 0 &&
         got == size && end == hex.data() + hex.size();
}

void checkTrustPolicy(const TrustPolicy &policy) {
  uint8_t scratch[ENCM_SHA256_SIZE];
  if (!policy.sha256.empty() && !parseHex(policy.sha256, scratch, ENCM_SHA256_SIZE))
    fail(ENCRT_INVALID_ARGUMENT, "require_sha256 must be 64 hex digits (what sha256sum prints)");
  for (const std::string &key : policy.publicKeys)
    if (!parseHex(key, scratch, ENCM_PUBLIC_KEY_SIZE))
      fail(ENCRT_INVALID_ARGUMENT, policy.keySource,
           " must be 64 hex digits (the contents of encc keygen's NAME.pub)");
  if (!policy.signaturePath.empty() && policy.publicKeys.empty())
    fail(ENCRT_INVALID_ARGUMENT, "signature_path is set but no trusted_public_key (or ",
         kTrustedKeysVariable, ") to check it with");
}

void verifyTrust(const uint8_t *data, uint64_t size, const std::string &path,
                 const TrustPolicy &policy) {
  if (!policy.any())
    return;
  checkTrustPolicy(policy);
  const Sha256 digest = sha256(data, size);
  if (!policy.sha256.empty()) {
    Sha256 pinned;
    parseHex(policy.sha256, pinned.data(), pinned.size());
    if (sodium_memcmp(pinned.data(), digest.data(), digest.size()) != 0)
      fail(ENCRT_INVALID_ARTIFACT, path, ": SHA-256 is ", toHex(digest.data(), digest.size()),
           ", the required one is ", policy.sha256, " (not the pinned artifact)");
  }
  if (policy.publicKeys.empty())
    return;
  const std::string sigPath = policy.signaturePath.empty() ? path + ".sig" : policy.signaturePath;
  const auto sig = readSignature(sigPath, path);
  // The signature names its key: it must be one of the trusted ones.
  uint8_t key[ENCM_PUBLIC_KEY_SIZE];
  bool trusted = false;
  for (const std::string &hex : policy.publicKeys)
    if (parseHex(hex, key, sizeof key) && std::memcmp(sig.data() + 8, key, sizeof key) == 0) {
      trusted = true;
      break;
    }
  if (!trusted)
    fail(ENCRT_INVALID_ARTIFACT, path, ": ", sigPath, " is signed by key ",
         toHex(sig.data() + 8, ENCM_PUBLIC_KEY_SIZE),
         policy.publicKeys.size() == 1 ? ", not by the trusted key " + policy.publicKeys[0]
                                       : ", not by one of the " + std::to_string(policy.publicKeys.size()) +
                                             " trusted keys",
         policy.keySource == kTrustedKeysVariable ? std::string(" (") + kTrustedKeysVariable + ")" : "");
  uint8_t message[ENCM_SIGNATURE_CONTEXT_SIZE + ENCM_SHA256_SIZE];
  std::memcpy(message, ENCM_SIGNATURE_CONTEXT, ENCM_SIGNATURE_CONTEXT_SIZE);
  std::memcpy(message + ENCM_SIGNATURE_CONTEXT_SIZE, digest.data(), digest.size());
  if (crypto_sign_verify_detached(sig.data() + 8 + ENCM_PUBLIC_KEY_SIZE, message, sizeof message,
                                  key) != 0)
    fail(ENCRT_INVALID_ARTIFACT, path, ": the signature in ", sigPath,
         " does not match the artifact (modified after signing, or a forged signature)");
}

} // namespace encrt::rt
