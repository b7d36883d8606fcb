//===- SignCommands.cpp - encc keygen / sign ------------------------------===//
#include "compiler/driver/SignCommands.h"

#include "compiler/driver/ArtifactWriter.h"
#include "compiler/driver/CommandOutput.h"
#include "encrt/signature.h"
#include "frontends/RegularFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <sodium.h>

#include <cstring>

namespace encc {

namespace {

std::string toHex(const uint8_t *data, size_t size) {
  std::string s(2 * size + 1, '\0');
  sodium_bin2hex(s.data(), s.size(), data, size);
  s.pop_back();
  return s;
}

/// The file's contents without surrounding whitespace, decoded from exactly
/// 2 * size hex digits.
bool readHexFile(const std::string &path, uint8_t *out, size_t size, std::string &error) {
  auto buf = readRegularFile(path, 4096, "key file");
  if (!buf) {
    error = llvm::toString(buf.takeError());
    return false;
  }
  llvm::StringRef text = (*buf)->getBuffer().trim();
  size_t got = 0;
  if (text.size() != 2 * size ||
      sodium_hex2bin(out, size, text.data(), text.size(), nullptr, &got, nullptr) != 0 ||
      got != size) {
    error = path + ": expected " + std::to_string(2 * size) + " hex digits";
    return false;
  }
  return true;
}

llvm::Error writeText(const std::string &path, const std::string &text, unsigned mode) {
  return writeFileAtomically(path, llvm::ArrayRef<uint8_t>(
                                       reinterpret_cast<const uint8_t *>(text.data()), text.size()),
                             mode);
}

} // namespace

std::string readPublicKeyFile(const std::string &path, std::string &error) {
  uint8_t key[ENCM_PUBLIC_KEY_SIZE];
  if (!readHexFile(path, key, sizeof key, error))
    return "";
  return toHex(key, sizeof key);
}

int keygenCommand(const Args &args) {
  if (args.positionals.size() != 1)
    return fail("'encc keygen' needs one NAME (writes NAME.key and NAME.pub)");
  if (sodium_init() < 0)
    return fail("libsodium failed to initialise");
  const std::string name = args.positionals[0];
  const std::string secretPath = name + ".key", publicPath = name + ".pub";
  for (const std::string &p : {secretPath, publicPath})
    if (llvm::sys::fs::exists(p))
      return fail(p + " exists; not overwriting a key (remove it first)");
  uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  static_assert(sizeof pk == ENCM_PUBLIC_KEY_SIZE && sizeof sk == ENCM_SECRET_KEY_SIZE);
  crypto_sign_keypair(pk, sk);
  std::string secretHex = toHex(sk, sizeof sk) + "\n";
  sodium_memzero(sk, sizeof sk);
  llvm::Error e = writeText(secretPath, secretHex, 0600);
  sodium_memzero(secretHex.data(), secretHex.size());
  if (e)
    return fail(llvm::toString(std::move(e)));
  if (llvm::Error e2 = writeText(publicPath, toHex(pk, sizeof pk) + "\n", 0644))
    return fail(llvm::toString(std::move(e2)));
  if (!args.has("quiet"))
    llvm::errs() << "encc: wrote " << secretPath << " (secret: keep it private) and " << publicPath
                 << " (public key " << toHex(pk, sizeof pk) << ")\n";
  return 0;
}

int signCommand(const Args &args) {
  if (args.positionals.size() != 1)
    return fail("'encc sign' needs one ARTIFACT (encc sign model.encm --key NAME.key)");
  if (!args.has("key"))
    return fail("'encc sign' needs --key NAME.key (make one with 'encc keygen NAME')");
  if (sodium_init() < 0)
    return fail("libsodium failed to initialise");
  const std::string artifact = args.positionals[0];
  const std::string sigPath = args.get("output", artifact + ".sig");
  uint8_t sk[crypto_sign_SECRETKEYBYTES];
  std::string error;
  if (!readHexFile(args.get("key"), sk, sizeof sk, error))
    return fail(error);
  {
    // An Ed25519 secret key is seed || public key; halves of two keys would
    // sign with one and name the other, so no signature would ever verify.
    uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES], derived[crypto_sign_SECRETKEYBYTES];
    crypto_sign_ed25519_sk_to_seed(seed, sk);
    crypto_sign_seed_keypair(pk, derived, seed);
    const bool consistent = sodium_memcmp(derived, sk, sizeof sk) == 0;
    sodium_memzero(seed, sizeof seed);
    sodium_memzero(derived, sizeof derived);
    if (!consistent) {
      sodium_memzero(sk, sizeof sk);
      return fail(args.get("key") + ": not an Ed25519 secret key: its public half does not belong to its "
                  "secret half (damaged, or made of two keys); make a new one with 'encc keygen'");
    }
  }

  auto buf = readRegularFile(artifact, kMaxArtifactFileBytes, "artifact");
  if (!buf) {
    sodium_memzero(sk, sizeof sk);
    return fail(llvm::toString(buf.takeError()));
  }
  llvm::StringRef bytes = (*buf)->getBuffer();
  if (bytes.size() < 8 || bytes.substr(4, 4) != "ENCM") {
    sodium_memzero(sk, sizeof sk);
    return fail(artifact + ": not an .encm artifact (no \"ENCM\" file identifier)");
  }
  uint8_t message[ENCM_SIGNATURE_CONTEXT_SIZE + ENCM_SHA256_SIZE];
  std::memcpy(message, ENCM_SIGNATURE_CONTEXT, ENCM_SIGNATURE_CONTEXT_SIZE);
  crypto_hash_sha256(message + ENCM_SIGNATURE_CONTEXT_SIZE,
                     reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  std::vector<uint8_t> sig(ENCM_SIGNATURE_SIZE);
  std::memcpy(sig.data(), ENCM_SIGNATURE_MAGIC, 8);
  crypto_sign_ed25519_sk_to_pk(sig.data() + 8, sk);
  crypto_sign_detached(sig.data() + 8 + ENCM_PUBLIC_KEY_SIZE, nullptr, message, sizeof message, sk);
  sodium_memzero(sk, sizeof sk);
  if (llvm::Error e = writeFileAtomically(sigPath, sig, 0644))
    return fail(llvm::toString(std::move(e)));
  if (!args.has("quiet"))
    llvm::errs() << "encc: wrote " << sigPath << " (SHA-256 "
                 << toHex(message + ENCM_SIGNATURE_CONTEXT_SIZE, ENCM_SHA256_SIZE) << ", key "
                 << toHex(sig.data() + 8, ENCM_PUBLIC_KEY_SIZE) << ")\n";
  return 0;
}

} // namespace encc
