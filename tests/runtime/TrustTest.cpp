//===- TrustTest.cpp - Pinned SHA-256 and signatures at load --------------===//
//
// encrt_model_options.require_sha256 / trusted_public_key (issue 12,
// finding 1: "no signature or pinning option"). Signatures are made here
// with libsodium directly, following encrt/signature.h, independently of
// `encc sign` (tested in tests/lit).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "encrt/checksum.h"
#include "encrt/signature.h"

#include <sodium.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <thread>

using namespace encrt::test;

namespace {

constexpr auto kBad = ENCRT_INVALID_ARTIFACT;

std::string hex(const uint8_t *data, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += {d[data[i] >> 4], d[data[i] & 15]};
  return s;
}

struct KeyPair {
  uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  KeyPair() {
    EXPECT_EQ(sodium_init() >= 0, true);
    crypto_sign_keypair(pk, sk);
  }
  std::string publicHex() const { return hex(pk, sizeof pk); }
  /// The .sig file of `artifact` (encrt/signature.h).
  std::vector<uint8_t> sign(const std::vector<uint8_t> &artifact) const {
    uint8_t message[ENCM_SIGNATURE_CONTEXT_SIZE + ENCM_SHA256_SIZE];
    std::memcpy(message, ENCM_SIGNATURE_CONTEXT, ENCM_SIGNATURE_CONTEXT_SIZE);
    crypto_hash_sha256(message + ENCM_SIGNATURE_CONTEXT_SIZE, artifact.data(), artifact.size());
    std::vector<uint8_t> sig(ENCM_SIGNATURE_SIZE);
    std::memcpy(sig.data(), ENCM_SIGNATURE_MAGIC, 8);
    std::memcpy(sig.data() + 8, pk, sizeof pk);
    crypto_sign_detached(sig.data() + 8 + sizeof pk, nullptr, message, sizeof message, sk);
    return sig;
  }
};

class TrustTest : public RuntimeTest {
protected:
  encrt_status *loadWith(const std::string &path, const encrt_model_options &o) {
    encrt_model *m = nullptr;
    encrt_status *st = encrt_model_load(path.c_str(), &o, &m);
    encrt_model_release(m);
    return st;
  }
  encrt_model_options options() {
    encrt_model_options o;
    encrt_model_options_initialize(&o);
    o.num_threads = 1;
    return o;
  }
};

TEST_F(TrustTest, PinnedSha256) {
  const auto file = writeArtifact(TestModel::spec(kernels()));
  const std::string path = write(file);
  uint8_t digest[32];
  crypto_hash_sha256(digest, file.data(), file.size());
  std::string good = hex(digest, 32);

  encrt_model_options o = options();
  o.require_sha256 = good.c_str();
  EXPECT_EQ(loadWith(path, o), nullptr);
  std::string upper = good;
  for (char &c : upper)
    c = static_cast<char>(std::toupper(c));
  o.require_sha256 = upper.c_str();
  EXPECT_EQ(loadWith(path, o), nullptr) << "hex digits in either case";

  std::string other = good;
  other[0] = other[0] == '0' ? '1' : '0';
  o.require_sha256 = other.c_str();
  expectError(loadWith(path, o), kBad, ": SHA-256 is " + good + ", the required one is " + other);

  for (const char *malformed : {"abc", "zz", "0123", "g0"}) {
    o.require_sha256 = malformed;
    expectError(loadWith(path, o), ENCRT_INVALID_ARGUMENT, "require_sha256 must be 64 hex digits");
  }
  // Hex digits followed by junk of the right total length.
  std::string tail = good.substr(0, 62) + "x1";
  o.require_sha256 = tail.c_str();
  expectError(loadWith(path, o), ENCRT_INVALID_ARGUMENT, "require_sha256 must be 64 hex digits");
  // "" fails closed: it is not "nothing required".
  o.require_sha256 = "";
  expectError(loadWith(path, o), ENCRT_INVALID_ARGUMENT, "require_sha256 is empty (NULL means not required)");
  o.require_sha256 = nullptr;
  o.trusted_public_key = "";
  expectError(loadWith(path, o), ENCRT_INVALID_ARGUMENT, "trusted_public_key is empty");
}

TEST_F(TrustTest, Signatures) {
  KeyPair signer, stranger;
  const auto file = writeArtifact(TestModel::spec(kernels()));
  const std::string path = write(file);
  const std::string key = signer.publicHex();
  encrt_model_options o = options();
  o.trusted_public_key = key.c_str();

  // No signature yet.
  expectError(loadWith(path, o), kBad, "a signature is required and " + path + ".sig cannot be opened");

  write(signer.sign(file), "model.encm.sig");
  EXPECT_EQ(loadWith(path, o), nullptr);

  // Another trusted key: the signer is named.
  const std::string otherKey = stranger.publicHex();
  o.trusted_public_key = otherKey.c_str();
  expectError(loadWith(path, o), kBad, "is signed by key " + key + ", not by the trusted key");
  o.trusted_public_key = key.c_str();

  // The artifact changed after signing (checksum resealed, so it is
  // otherwise valid: the last byte before the trailer, in the data the
  // table points at, not the table itself): refused before it is read.
  auto changed = file;
  changed[changed.size() - ENCM_TRAILER_SIZE - 1] ^= 1;
  resealChecksum(changed);
  write(changed);
  expectError(loadWith(path, o), kBad, "does not match the artifact (modified after signing");

  // A forged signature by a stranger claiming the signer's key.
  write(file);
  auto forged = stranger.sign(file);
  std::memcpy(forged.data() + 8, signer.pk, sizeof signer.pk);
  write(forged, "model.encm.sig");
  expectError(loadWith(path, o), kBad, "does not match the artifact");

  // A damaged signature file.
  write(std::vector<uint8_t>(50, 'x'), "model.encm.sig");
  expectError(loadWith(path, o), kBad, "is not an encc signature file");

  // signature_path elsewhere; the default .sig is then not consulted.
  const std::string elsewhere = write(signer.sign(file), "elsewhere.sig");
  o.signature_path = elsewhere.c_str();
  EXPECT_EQ(loadWith(path, o), nullptr);

  // Both requirements at once.
  uint8_t digest[32];
  crypto_hash_sha256(digest, file.data(), file.size());
  const std::string pin = hex(digest, 32);
  o.require_sha256 = pin.c_str();
  EXPECT_EQ(loadWith(path, o), nullptr);
}

TEST_F(TrustTest, ASignedLoadUsesTheBytesItChecked) {
  // Issue 45, item 1: a process that can write the artifact replaces it (same
  // size, checksum resealed) the moment the loader opens the signature, i.e.
  // after the bytes were hashed. The load must run the bytes whose signature
  // it checked. (The old loader hashed its mapping of the file and then used
  // that mapping, which showed the writer's bytes: the replacement's weights
  // ran under a valid signature.)
  KeyPair signer;
  const ArtifactSpec spec = TestModel::spec(kernels());
  const auto good = writeArtifact(spec);
  ArtifactSpec other = spec;
  const int32_t H = TestModel::kHidden;
  for (int32_t h = 0; h < H; ++h) { // the bias, the last H floats: outputs move by 1.5
    uint8_t *at = other.weights.data() + other.weights.size() - 4 * (H - h);
    float x;
    std::memcpy(&x, at, 4);
    x += 1.0f;
    std::memcpy(at, &x, 4);
  }
  const auto replacement = writeArtifact(other);
  ASSERT_EQ(replacement.size(), good.size());
  const std::string path = write(good);
  const std::string sigPath = write(signer.sign(good), "model.encm.sig");
  const std::string key = signer.publicHex();
  encrt_model_options o = options();
  o.trusted_public_key = key.c_str();

  const int watch = inotify_init1(IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(inotify_add_watch(watch, sigPath.c_str(), IN_OPEN), 0);
  std::atomic<bool> replaced{false};
  std::thread attacker([&] {
    alignas(inotify_event) char event[sizeof(inotify_event) + 256];
    if (::read(watch, event, sizeof event) <= 0)
      return;
    const int fd = ::open(path.c_str(), O_WRONLY);
    replaced = fd >= 0 && ::pwrite(fd, replacement.data(), replacement.size(), 0) ==
                              static_cast<ssize_t>(replacement.size());
    if (fd >= 0)
      ::close(fd);
  });
  encrt_model *m = nullptr;
  encrt_status *st = encrt_model_load(path.c_str(), &o, &m);
  attacker.join();
  ::close(watch);
  ASSERT_TRUE(replaced.load()) << "the file was not replaced during the load";
  ASSERT_EQ(st, nullptr) << encrt_status_message(st);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  const int32_t ids[3] = {3, 17, 42}, length = 3;
  float hidden[3 * TestModel::kHidden];
  ASSERT_EQ(encrt_session_run(s, ids, &length, 1, 3, hidden, nullptr), nullptr);
  for (int t = 0; t < 3; ++t)
    for (int32_t h = 0; h < H; ++h)
      ASSERT_NEAR(hidden[t * H + h], TestModel::expected(ids[t], h), 1e-5f)
          << "the load ran bytes that are not the signed artifact";
  encrt_session_release(s);
  encrt_model_release(m);
}

TEST_F(TrustTest, BadOptionsBeforeAnyIo) {
  encrt_model_options o = options();
  o.trusted_public_key = "not hex";
  expectError(loadWith("/nonexistent.encm", o), ENCRT_INVALID_ARGUMENT,
              "trusted_public_key must be 64 hex digits");
  o = options();
  o.signature_path = "/tmp/x.sig";
  expectError(loadWith("/nonexistent.encm", o), ENCRT_INVALID_ARGUMENT,
              "signature_path is set but no trusted_public_key");
}

/// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

private:
  const char *name_;
};

TEST_F(TrustTest, EnvironmentWidePolicy) {
  // Issue 41, item 6: a deployment requires signatures for every load of the
  // process, so a program that forgets the option cannot run unsigned code:
  // ENCRT_TRUSTED_KEYS lists the trusted keys (hex, or NAME.pub files).
  // Before it, these loads with no option ran any artifact.
  KeyPair signer, stranger, third;
  const auto file = writeArtifact(TestModel::spec(kernels()));
  const std::string path = write(file);
  const encrt_model_options none = options();
  {
    ScopedEnv env("ENCRT_TRUSTED_KEYS", signer.publicHex());
    expectError(loadWith(path, none), kBad, "a signature is required and " + path + ".sig cannot be opened");
    // With no options struct at all, too.
    encrt_model *m = nullptr;
    expectError(encrt_model_load(path.c_str(), nullptr, &m), kBad, "a signature is required");

    write(stranger.sign(file), "model.encm.sig");
    expectError(loadWith(path, none), kBad,
                "is signed by key " + stranger.publicHex() + ", not by the trusted key " + signer.publicHex() +
                    " (ENCRT_TRUSTED_KEYS)");
    write(signer.sign(file), "model.encm.sig");
    EXPECT_EQ(loadWith(path, none), nullptr);
  }
  {
    // A list, with a NAME.pub file (newline-terminated, as encc keygen writes it) and spaces.
    const std::string thirdHex = third.publicHex() + "\n";
    const std::string pub = write(std::vector<uint8_t>(thirdHex.begin(), thirdHex.end()), "third.pub");
    write(third.sign(file), "model.encm.sig");
    ScopedEnv env("ENCRT_TRUSTED_KEYS", stranger.publicHex() + " , " + pub);
    EXPECT_EQ(loadWith(path, none), nullptr);
    write(signer.sign(file), "model.encm.sig");
    expectError(loadWith(path, none), kBad, "not by one of the 2 trusted keys (ENCRT_TRUSTED_KEYS)");
    // signature_path works with the environment's keys.
    const std::string elsewhere = write(third.sign(file), "elsewhere.sig");
    encrt_model_options o = options();
    o.signature_path = elsewhere.c_str();
    EXPECT_EQ(loadWith(path, o), nullptr);
    // A caller's own requirement is kept as it is (a pinned hash).
    uint8_t digest[32];
    crypto_hash_sha256(digest, file.data(), file.size());
    const std::string pin = hex(digest, 32);
    o = options();
    o.require_sha256 = pin.c_str();
    EXPECT_EQ(loadWith(path, o), nullptr);
  }
  // The policy fails closed: set but empty, or an entry that is no key.
  for (const std::string &bad : {std::string(""), std::string(" "), signer.publicHex() + ",",
                                 std::string("/nonexistent.pub"), std::string("/dev/zero"), std::string("abc")}) {
    SCOPED_TRACE(bad);
    ScopedEnv env("ENCRT_TRUSTED_KEYS", bad);
    expectError(loadWith(path, none), ENCRT_INVALID_ARGUMENT, "ENCRT_TRUSTED_KEYS: entry ");
  }
  // Unset: nothing is required (the default stays permissive).
  EXPECT_EQ(loadWith(path, none), nullptr);
}

TEST_F(TrustTest, OlderCallersStructHasNoTrustFields) {
  // A caller compiled before the trust fields existed: its struct_size ends
  // at max_text_bytes, and loading works with nothing required.
  const std::string path = write(writeArtifact(TestModel::spec(kernels())));
  encrt_model_options o = options();
  o.struct_size = offsetof(encrt_model_options, require_sha256);
  o.require_sha256 = "garbage that must not be read";
  EXPECT_EQ(loadWith(path, o), nullptr);
}

} // namespace

TEST_F(TrustTest, AHugeSparseFileIsRefusedFromItsTable) {
  // Issue 45, item 9: a 32 GiB sparse file that starts as a valid artifact
  // and ends in a valid trailer was read whole (checksummed, or copied for a
  // pinned hash: ~22 GB of page cache for a minute) before it was refused.
  // The table's extent is checked first; the error names both sizes.
  auto file = writeArtifact(TestModel::spec(kernels()));
  const std::vector<uint8_t> trailer(file.end() - ENCM_TRAILER_SIZE, file.end());
  file.resize(file.size() - ENCM_TRAILER_SIZE);
  const std::string path = write(file);
  const uint64_t size = uint64_t(32) << 30;
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const bool sparse = ::ftruncate(fd, static_cast<off_t>(size)) == 0 &&
                      ::pwrite(fd, trailer.data(), trailer.size(),
                               static_cast<off_t>(size - ENCM_TRAILER_SIZE)) ==
                          static_cast<ssize_t>(trailer.size());
  ::close(fd);
  if (!sparse) {
    ::unlink(path.c_str());
    GTEST_SKIP() << "this file system cannot hold a 32 GiB sparse file";
  }
  const std::string fragment = "the file holds " + std::to_string(size - ENCM_TRAILER_SIZE) +
                               " bytes before its trailer, its table accounts for ";
  encrt_model *m = nullptr;
  expectError(encrt_model_load(path.c_str(), nullptr, &m), ENCRT_INVALID_ARTIFACT, fragment);
  encrt_model_options o = options();
  const std::string anyPin(64, 'a');
  o.require_sha256 = anyPin.c_str(); // a trusted load: refused before it is copied
  expectError(loadWith(path, o), ENCRT_INVALID_ARTIFACT, fragment);
  ::unlink(path.c_str());
}
