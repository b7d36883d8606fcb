//===- CodeObjectTest.cpp - Code objects refused before they are loaded ---===//
//
// Issue 12, findings 1 and 3: a replaced code object with a constructor ran it
// inside dlopen (before any check), and a truncated one crashed dlopen with
// SIGBUS. The runtime now checks each object's SHA-256 and ELF structure on a
// private copy before anything maps it; these tests would fail (or crash)
// without those checks.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <cstring>
#include <elf.h>

using namespace encrt::test;

namespace {

constexpr auto kBad = ENCRT_INVALID_ARTIFACT;
constexpr const char *kRanVar = "ENCRT_TEST_CONSTRUCTOR_RAN";

std::vector<uint8_t> variant(const char *name) {
  return readFile(std::string(ENCRT_TEST_KERNELS_DIR) + "/libruntime_test_kernels_" + name + ".so");
}

class CodeObjectTest : public RuntimeTest {
protected:
  /// The test model with `code` as its code object; the load must fail with
  /// `fragment` and nothing of the object may have run.
  void expectRefused(const std::vector<uint8_t> &code, const std::string &fragment) {
    ::unsetenv(kRanVar);
    ArtifactSpec spec = TestModel::spec(kernels());
    spec.codes[0].bytes = code;
    expectLoadError(writeArtifact(spec), kBad, fragment);
    EXPECT_EQ(std::getenv(kRanVar), nullptr) << "code of the refused object ran";
  }
  /// The good object with the ELF header field at `offset` set to `value`.
  template <typename T> std::vector<uint8_t> patched(size_t offset, T value) {
    std::vector<uint8_t> code = kernels();
    std::memcpy(code.data() + offset, &value, sizeof value);
    return code;
  }
};

TEST_F(CodeObjectTest, ConstructorNeverRuns) {
  expectRefused(variant("ctor"), "code object cpu-x86-64-v2: has initialisers");
  // Without section headers (the loader never reads them) the dynamic
  // section still gives the constructor away.
  std::vector<uint8_t> stripped = variant("ctor");
  const uint16_t none = 0;
  std::memcpy(stripped.data() + offsetof(Elf64_Ehdr, e_shnum), &none, sizeof none);
  expectRefused(stripped, "has initialisers (DT_INIT / init arrays: code that runs on load)");
}

TEST_F(CodeObjectTest, DtInitAloneRefused) {
  // An initialiser only the dynamic section names (no init array section).
  expectRefused(variant("dtinit"), "has initialisers (DT_INIT / init arrays: code that runs on load)");
}

TEST_F(CodeObjectTest, StartFilesInitialisersRefused) {
  // The compiler's default link (crti/crtbegin): DT_INIT and init arrays.
  expectRefused(variant("startfiles"), "has initialisers");
}

TEST_F(CodeObjectTest, IfuncResolverNeverRuns) {
  expectRefused(variant("ifunc"), "IFUNC");
}

TEST_F(CodeObjectTest, AMemfdTheLoaderRefusesIsNotRetriedFromAFile) {
  // Issue 45, item 9: a memfd dlopen that failed for any reason was retried
  // from a file in $TMPDIR, which another process of the user can replace
  // between its write and the dlopen; that fallback is for systems without
  // memfds only.
  ArtifactSpec spec = TestModel::spec(kernels());
  spec.codes[0].bytes = variant("undefined");
  expectLoadError(writeArtifact(spec), kBad, "encrt_test_symbol_defined_nowhere");
  std::string path = write(writeArtifact(spec), "again.encm");
  encrt_model *m = nullptr;
  encrt_status *st = encrt_model_load(path.c_str(), nullptr, &m);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(std::string(encrt_status_message(st)).find("temporary file"), std::string::npos)
      << encrt_status_message(st);
  encrt_status_free(st);
}

TEST_F(CodeObjectTest, LibrarySearchPathRefused) {
  expectRefused(variant("rpath"), "has a library search path (RPATH/RUNPATH)");
}

TEST_F(CodeObjectTest, ExecutableStackRefused) {
  expectRefused(variant("execstack"), "asks for an executable stack");
}

TEST_F(CodeObjectTest, TruncatedObjectIsAnErrorNotSigbus) {
  // Finding 3: the blob cut short (its recorded size and hash match the cut
  // bytes), so its segments reach past the end.
  const std::vector<uint8_t> &full = kernels();
  for (size_t keep : {full.size() / 2, full.size() - 1, size_t(200)}) {
    SCOPED_TRACE("kept " + std::to_string(keep) + " bytes");
    expectRefused(std::vector<uint8_t>(full.begin(), full.begin() + keep),
                  "outside the object (" + std::to_string(keep) + " bytes; truncated?)");
  }
  expectRefused(std::vector<uint8_t>(full.begin(), full.begin() + 63),
                "too small (63 bytes) to be an ELF object");
}

TEST_F(CodeObjectTest, ReplacedObjectFailsItsHash) {
  // The table's SHA-256 no longer matches the blob (a swap that recomputed
  // only the file checksum).
  ArtifactSpec spec = TestModel::spec(kernels());
  spec.codes[0].sha256 = std::vector<uint8_t>(32, 0xAB);
  expectLoadError(writeArtifact(spec), kBad,
                  "code object cpu-x86-64-v2: SHA-256 is ");
  expectLoadError(writeArtifact(spec), kBad,
                  "the artifact records abababab");
  spec.codes[0].sha256 = std::vector<uint8_t>(31, 0);
  expectLoadError(writeArtifact(spec), kBad, "code object 0 (cpu-x86-64-v2) has no SHA-256");
}

TEST_F(CodeObjectTest, DamagedElfHeadersRefused) {
  expectRefused(patched<uint16_t>(offsetof(Elf64_Ehdr, e_machine), EM_AARCH64),
                "not a little-endian x86-64 ELF64 object");
  expectRefused(patched<uint16_t>(offsetof(Elf64_Ehdr, e_type), ET_EXEC),
                "not a shared object");
  expectRefused(patched<uint64_t>(offsetof(Elf64_Ehdr, e_phoff), uint64_t(1) << 40),
                "program headers");
  expectRefused(patched<uint16_t>(offsetof(Elf64_Ehdr, e_phnum), 0), "0 program headers");
  expectRefused(patched<uint64_t>(offsetof(Elf64_Ehdr, e_shoff), ~uint64_t(0) - 8),
                "section headers");
  // A program header's file range past the end.
  std::vector<uint8_t> code = kernels();
  Elf64_Ehdr eh;
  std::memcpy(&eh, code.data(), sizeof eh);
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, code.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_LOAD)
      continue;
    ph.p_filesz = ph.p_memsz = code.size() * 4;
    std::memcpy(code.data() + eh.e_phoff + i * sizeof ph, &ph, sizeof ph);
    break;
  }
  expectRefused(code, "lies outside the object");
}

TEST_F(CodeObjectTest, GoodObjectStillLoads) {
  ::unsetenv(kRanVar);
  encrt_model *m = load(writeArtifact(TestModel::spec(kernels())));
  ASSERT_NE(m, nullptr);
  encrt_model_release(m);
}

} // namespace
