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

/// A code object to patch the way an attacker would: headers, dynamic
/// entries and relocations found through the program headers.
struct ElfPatch {
  std::vector<uint8_t> b;
  template <typename T> T get(uint64_t off) const {
    T v;
    std::memcpy(&v, b.data() + off, sizeof v);
    return v;
  }
  template <typename T> void put(uint64_t off, const T &v) { std::memcpy(b.data() + off, &v, sizeof v); }
  Elf64_Ehdr eh() const { return get<Elf64_Ehdr>(0); }
  uint64_t phdrOffset(uint32_t i) const { return eh().e_phoff + uint64_t(i) * sizeof(Elf64_Phdr); }
  /// The index of the first program header of `type`.
  uint32_t phdr(uint32_t type) const {
    for (uint32_t i = 0; i < eh().e_phnum; ++i)
      if (get<Elf64_Phdr>(phdrOffset(i)).p_type == type)
        return i;
    ADD_FAILURE() << "no program header of type " << type;
    return 0;
  }
  /// File offset of address `vaddr` (inside a PT_LOAD's file bytes).
  uint64_t offsetOf(uint64_t vaddr) const {
    for (uint32_t i = 0; i < eh().e_phnum; ++i) {
      auto p = get<Elf64_Phdr>(phdrOffset(i));
      if (p.p_type == PT_LOAD && vaddr >= p.p_vaddr && vaddr < p.p_vaddr + p.p_filesz)
        return p.p_offset + (vaddr - p.p_vaddr);
    }
    ADD_FAILURE() << "address " << vaddr << " is not in a loaded segment";
    return 0;
  }
  uint64_t dynamicOffset() const { return offsetOf(get<Elf64_Phdr>(phdrOffset(phdr(PT_DYNAMIC))).p_vaddr); }
  /// The dynamic entries up to (without) DT_NULL.
  std::vector<Elf64_Dyn> dynamic() const {
    std::vector<Elf64_Dyn> d;
    for (uint64_t off = dynamicOffset();; off += sizeof(Elf64_Dyn)) {
      auto e = get<Elf64_Dyn>(off);
      if (e.d_tag == DT_NULL)
        return d;
      d.push_back(e);
    }
  }
  /// File offset of the first dynamic entry of `tag`.
  uint64_t entryOffset(int64_t tag) const {
    for (uint64_t off = dynamicOffset();; off += sizeof(Elf64_Dyn)) {
      const auto e = get<Elf64_Dyn>(off);
      if (e.d_tag == tag)
        return off;
      if (e.d_tag == DT_NULL) {
        ADD_FAILURE() << "no dynamic entry " << tag;
        return off;
      }
    }
  }
  /// Sets the value of dynamic entry `tag`.
  void setDynamic(int64_t tag, uint64_t value) {
    const uint64_t off = entryOffset(tag);
    put(off, Elf64_Dyn{tag, {value}});
  }
  /// Replaces dynamic entry `tag` by (`with`, `value`).
  void retag(int64_t tag, int64_t with, uint64_t value) { put(entryOffset(tag), Elf64_Dyn{with, {value}}); }
  uint64_t dynamicValue(int64_t tag) const {
    for (const Elf64_Dyn &e : dynamic())
      if (e.d_tag == tag)
        return e.d_un.d_val;
    ADD_FAILURE() << "no dynamic entry " << tag;
    return 0;
  }
};

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

TEST_F(CodeObjectTest, DynamicEntriesPastTheSegmentsFileSizeAreRead) {
  // Issue 45, item 2a: the init array's entries moved behind the others and
  // the dynamic segment's p_filesz cut before them (section headers
  // dropped): the old check stopped at p_filesz, the loader reads on to
  // DT_NULL and ran the constructor inside encrt_model_load.
  ElfPatch e{variant("ctor")};
  Elf64_Ehdr eh = e.eh();
  eh.e_shnum = 0;
  e.put(0, eh);
  std::vector<Elf64_Dyn> kept, init;
  for (const Elf64_Dyn &d : e.dynamic())
    (d.d_tag == DT_INIT_ARRAY || d.d_tag == DT_INIT_ARRAYSZ ? init : kept).push_back(d);
  ASSERT_EQ(init.size(), 2u);
  const uint64_t dyn = e.dynamicOffset();
  uint64_t at = dyn;
  for (const auto *list : {&kept, &init})
    for (const Elf64_Dyn &d : *list)
      e.put(at, d), at += sizeof(Elf64_Dyn);
  const uint32_t i = e.phdr(PT_DYNAMIC);
  auto p = e.get<Elf64_Phdr>(e.phdrOffset(i));
  p.p_filesz = p.p_memsz = kept.size() * sizeof(Elf64_Dyn);
  e.put(e.phdrOffset(i), p);
  expectRefused(e.b, "has initialisers (DT_INIT / init arrays: code that runs on load)");
}

TEST_F(CodeObjectTest, IfuncBehindACutDtHashIsFound) {
  // Issue 45, item 2b: with both hash tables, DT_HASH's symbol count cut
  // before the IFUNC: the old check counted through DT_HASH, the loader
  // looks up through DT_GNU_HASH.
  ElfPatch e{variant("ifunc_both")};
  const uint64_t hash = e.offsetOf(e.dynamicValue(DT_HASH));
  e.put<uint32_t>(hash + 4, 1); // nchain: symbol 0 only
  for (uint32_t b = 0; b < e.get<uint32_t>(hash); ++b)
    e.put<uint32_t>(hash + 8 + 4 * b, 0); // and buckets that agree (a DT_HASH the loader could walk)
  expectRefused(e.b, "defines an IFUNC symbol");
}

TEST_F(CodeObjectTest, RelocationsAndRelroStayInsideTheObject) {
  // Issue 45, item 3: a relocation that writes outside the object, one that
  // names a symbol past the table, and a RELRO range outside it made the
  // loader die of SIGSEGV.
  const uint64_t rela = ElfPatch{kernels()}.offsetOf(ElfPatch{kernels()}.dynamicValue(DT_RELA));
  {
    ElfPatch e{kernels()};
    auto r = e.get<Elf64_Rela>(rela);
    r.r_offset = uint64_t(1) << 39;
    e.put(rela, r);
    e.setDynamic(DT_RELACOUNT, 0); // no leading entries taken as RELATIVE
    expectRefused(e.b, "RELA relocations: a relocation writes to [549755813888, +8), not inside a "
                       "writable loaded segment");
  }
  {
    ElfPatch e{kernels()};
    auto r = e.get<Elf64_Rela>(rela);
    r.r_info = ELF64_R_INFO(100000, R_X86_64_64);
    e.put(rela, r);
    e.setDynamic(DT_RELACOUNT, 0); // no leading entries taken as RELATIVE
    expectRefused(e.b, "RELA relocations: a relocation names symbol 100000 of");
  }
  {
    ElfPatch e{kernels()};
    auto r = e.get<Elf64_Rela>(rela);
    r.r_info = ELF64_R_INFO(0, R_X86_64_PC32);
    e.put(rela, r);
    e.setDynamic(DT_RELACOUNT, 0); // no leading entries taken as RELATIVE
    expectRefused(e.b, "RELA relocations: relocation type 2 (expected 64, GLOB_DAT, JUMP_SLOT or RELATIVE)");
  }
  {
    // Found by the ELF fuzzer's loading child: the loader applies the first
    // DT_RELACOUNT relocations as RELATIVE and asserts their type (exit 127).
    ElfPatch e{kernels()};
    auto r = e.get<Elf64_Rela>(rela);
    ASSERT_EQ(ELF64_R_TYPE(r.r_info), unsigned(R_X86_64_RELATIVE));
    r.r_info = ELF64_R_INFO(0, R_X86_64_64);
    e.put(rela, r);
    expectRefused(e.b, "RELA relocations: relocation 0 of the first DT_RELACOUNT (10) is of type 1, not RELATIVE");
  }
  {
    // And it reads DT_RELAENT without checking it is there.
    ElfPatch e{kernels()};
    const uint64_t off = e.entryOffset(DT_RELAENT);
    e.retag(DT_RELAENT, DT_RELACOUNT, 0); // a second one; DT_RELAENT is gone
    expectRefused(e.b, "DT_RELA, DT_RELASZ and DT_RELAENT must come together");
    e.put(off, Elf64_Dyn{DT_RELAENT, {12}});
    expectRefused(e.b, "DT_RELAENT is 12 (expected 24 with DT_RELA)");
  }
  {
    // Found by the fuzzer's loading child: DT_PLTREL without DT_JMPREL made
    // the loader read through a null pointer (SIGSEGV in _dl_relocate_object).
    ElfPatch e{variant("versioned")};
    e.retag(DT_JMPREL, DT_BIND_NOW, 0);
    expectRefused(e.b, "DT_JMPREL, DT_PLTRELSZ and DT_PLTREL must come together");
  }
  {
    // Found by the fuzzer's loading child: a segment mapped without
    // PROT_READ holding the symbol table (SIGSEGV in the loader).
    ElfPatch e{kernels()};
    auto p = e.get<Elf64_Phdr>(e.phdrOffset(e.phdr(PT_LOAD)));
    p.p_flags = 0;
    e.put(e.phdrOffset(e.phdr(PT_LOAD)), p);
    expectRefused(e.b, "loadable segment 0 is not readable");
  }
  {
    ElfPatch e{kernels()};
    const uint32_t i = e.phdr(PT_GNU_RELRO);
    auto p = e.get<Elf64_Phdr>(e.phdrOffset(i));
    p.p_vaddr = uint64_t(1) << 30;
    p.p_memsz = 0x2000; // two whole pages the loader would make read-only
    e.put(e.phdrOffset(i), p);
    expectRefused(e.b, "its RELRO range [1073741824, +8192) is not inside the pages of a writable loaded segment");
  }
}

TEST_F(CodeObjectTest, HashTablesAreOnesTheLoaderCanWalk) {
  // Issue 45, remaining ld.so structures: the loader takes hashes modulo the
  // bucket count (none: a division by zero once a lookup passes the Bloom
  // filter), a Bloom filter of 3 words fails its assertion (exit 127, seen
  // with ctypes), a bucket or chain past the table is read as a symbol.
  ElfPatch good{variant("versioned")};
  const uint64_t hash = good.offsetOf(good.dynamicValue(DT_HASH));
  const uint64_t gnu = good.offsetOf(good.dynamicValue(DT_GNU_HASH));
  auto with = [&](uint64_t off, uint32_t v) {
    ElfPatch e = good;
    e.put<uint32_t>(off, v);
    return e.b;
  };
  expectRefused(with(hash, 0), "DT_HASH has no buckets");
  expectRefused(with(hash + 8, 5000), "a DT_HASH bucket or chain names symbol 5000 of");
  expectRefused(with(gnu, 0), "DT_GNU_HASH has no buckets");
  expectRefused(with(gnu + 8, 3), "DT_GNU_HASH Bloom filter of 3 words (expected a power of two)");
  const uint32_t symoffset = good.get<uint32_t>(gnu + 4), bloom = good.get<uint32_t>(gnu + 8);
  ASSERT_GT(symoffset, 1u);
  expectRefused(with(gnu + 16 + 8 * bloom, 1), "a DT_GNU_HASH bucket names symbol 1, below the hashed ones");
  // A DT_HASH chain that loops back to its start.
  ElfPatch loop = good;
  const uint32_t nbucket = loop.get<uint32_t>(hash), first = loop.get<uint32_t>(hash + 8);
  ASSERT_NE(first, 0u);
  loop.put<uint32_t>(hash + 8 + 4 * (uint64_t(nbucket) + first), first);
  expectRefused(loop.b, "DT_HASH chains cycle or share symbols");
}

TEST_F(CodeObjectTest, SymbolVersionsAreReadAsTheLoaderReadsThem) {
  // The loader indexes its version table with DT_VERSYM entries unchecked
  // and follows DT_VERNEED's links to their 0, whatever the counts say.
  ElfPatch good{variant("versioned")};
  const uint64_t versym = good.offsetOf(good.dynamicValue(DT_VERSYM));
  const uint64_t verneed = good.offsetOf(good.dynamicValue(DT_VERNEED));
  {
    ElfPatch e = good;
    e.put<uint16_t>(versym + 2, 0x7123);
    expectRefused(e.b, "dynamic symbol 1 has version index 28963 (the object defines up to 2)");
  }
  {
    ElfPatch e = good;
    auto vn = e.get<Elf64_Verneed>(verneed);
    vn.vn_next = 1u << 20; // one more entry, far outside
    e.put(verneed, vn);
    expectRefused(e.b, "a DT_VERNEED entry [");
  }
  {
    ElfPatch e = good;
    auto vn = e.get<Elf64_Verneed>(verneed);
    auto aux = e.get<Elf64_Vernaux>(verneed + vn.vn_aux);
    aux.vna_next = 0x7fff0000;
    e.put(verneed + vn.vn_aux, aux);
    expectRefused(e.b, "a DT_VERNEED record [");
  }
  {
    ElfPatch e = good;
    auto vn = e.get<Elf64_Verneed>(verneed);
    vn.vn_file = e.get<Elf64_Vernaux>(verneed + vn.vn_aux).vna_name; // "GLIBC_2.27", not a library
    e.put(verneed, vn);
    expectRefused(e.b, "DT_VERNEED names \"GLIBC_2.27\", which the object does not need");
  }
  {
    ElfPatch e = good;
    auto vn = e.get<Elf64_Verneed>(verneed);
    vn.vn_version = 2;
    e.put(verneed, vn);
    expectRefused(e.b, "DT_VERNEED entry version 2 (expected 1)");
  }
  {
    // Found by the fuzzer's loading child (after 1.0 M runs): DT_VERNEED
    // without DT_VERSYM, read by the loader through a null pointer.
    ElfPatch e = good;
    e.retag(DT_VERSYM, DT_BIND_NOW, 0);
    expectRefused(e.b, "DT_VERNEED and DT_VERSYM must come together");
  }
  {
    // And DT_VERSYM 0, which the loader reads as the table at the object's
    // base (the ELF header as version indices; the check took 0 for absent).
    ElfPatch e = good;
    e.setDynamic(DT_VERSYM, 0);
    expectRefused(e.b, "dynamic symbol 0 has version index 17791"); // "\x7fE"
  }
}

TEST_F(CodeObjectTest, DynamicEntriesOutsideTheKnownSetAreRefused) {
  // DT_RELR (glibc >= 2.36 applies its relocations; nothing checked where
  // they write), DT_VERDEF, DT_SYMBOLIC: each replaces DT_RELACOUNT (without
  // it the loader only loses its fast path for RELATIVE relocations).
  ElfPatch good{variant("versioned")};
  for (const auto &[tag, hex] : {std::pair<int64_t, const char *>{36, "24"}, {DT_VERDEF, "6ffffffc"},
                                 {DT_SYMBOLIC, "10"}}) {
    ElfPatch e = good;
    e.retag(DT_RELACOUNT, tag, good.dynamicValue(DT_RELACOUNT));
    expectRefused(e.b, std::string("dynamic entry with tag 0x") + hex + " (not one a generated code object uses)");
  }
}

TEST_F(CodeObjectTest, VersionedObjectWithBothHashTablesLoads) {
  // The good variant's own structures pass, and the kernels still run.
  ArtifactSpec spec = TestModel::spec(kernels());
  spec.codes[0].bytes = variant("versioned");
  encrt_model *m = load(writeArtifact(spec));
  ASSERT_NE(m, nullptr);
  encrt_model_release(m);
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
