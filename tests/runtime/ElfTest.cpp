//===- ElfTest.cpp - What libencrt.so links and exports -------------------===//
//
// Reads the ELF dynamic section of the built libencrt.so: it must need no
// LLVM/MLIR (or any other non-system) library, and export only encrt_*.
//
//===----------------------------------------------------------------------===//
#include "ArtifactBuilder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <elf.h>

using encrt::test::readFile;

namespace {

struct ElfInfo {
  std::vector<std::string> needed;
  std::vector<std::string> exported; ///< defined global/weak dynamic symbols
};

template <typename T> T at(const std::vector<uint8_t> &f, uint64_t off) {
  if (off + sizeof(T) > f.size())
    throw std::runtime_error("ELF read out of bounds");
  T v;
  std::memcpy(&v, f.data() + off, sizeof(T));
  return v;
}

std::string cstr(const std::vector<uint8_t> &f, uint64_t off) {
  std::string s;
  while (off < f.size() && f[off])
    s += static_cast<char>(f[off++]);
  return s;
}

ElfInfo parse(const std::vector<uint8_t> &f) {
  auto eh = at<Elf64_Ehdr>(f, 0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error("not a 64-bit ELF");
  std::vector<Elf64_Shdr> sections;
  for (unsigned i = 0; i < eh.e_shnum; ++i)
    sections.push_back(at<Elf64_Shdr>(f, eh.e_shoff + uint64_t(i) * eh.e_shentsize));
  ElfInfo info;
  for (const Elf64_Shdr &sh : sections) {
    if (sh.sh_type == SHT_DYNAMIC) {
      const Elf64_Shdr &strtab = sections.at(sh.sh_link);
      for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= sh.sh_size; o += sizeof(Elf64_Dyn)) {
        auto d = at<Elf64_Dyn>(f, sh.sh_offset + o);
        if (d.d_tag == DT_NULL)
          break;
        if (d.d_tag == DT_NEEDED)
          info.needed.push_back(cstr(f, strtab.sh_offset + d.d_un.d_val));
      }
    }
    if (sh.sh_type == SHT_DYNSYM) {
      const Elf64_Shdr &strtab = sections.at(sh.sh_link);
      for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sh.sh_size; o += sizeof(Elf64_Sym)) {
        auto s = at<Elf64_Sym>(f, sh.sh_offset + o);
        unsigned bind = ELF64_ST_BIND(s.st_info);
        if (s.st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
            ELF64_ST_VISIBILITY(s.st_other) == STV_DEFAULT)
          info.exported.push_back(cstr(f, strtab.sh_offset + s.st_name));
      }
    }
  }
  return info;
}

} // namespace

TEST(ElfTest, LibencrtNeedsNoLlvmOrMlir) {
  ElfInfo info = parse(readFile(ENCRT_LIBRARY));
  ASSERT_FALSE(info.needed.empty());
  const char *allowed[] = {"libstdc++.so", "libgcc_s.so", "libc.so",
                           "libm.so",      "libdl.so",    "libpthread.so",
                           "ld-linux",     "libasan.so",  "libubsan.so"};
  for (const std::string &lib : info.needed) {
    std::string lower = lib;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    EXPECT_EQ(lower.find("llvm"), std::string::npos) << lib;
    EXPECT_EQ(lower.find("mlir"), std::string::npos) << lib;
    bool ok = std::any_of(std::begin(allowed), std::end(allowed),
                          [&](const char *a) { return lib.rfind(a, 0) == 0; });
    EXPECT_TRUE(ok) << "unexpected dependency " << lib;
  }
}

TEST(ElfTest, LibencrtExportsOnlyTheCApi) {
  ElfInfo info = parse(readFile(ENCRT_LIBRARY));
  for (const char *fn : {"encrt_model_load", "encrt_session_run",
                         "encrt_session_embed", "encrt_status_free",
                         "encrt_version"})
    EXPECT_NE(std::find(info.exported.begin(), info.exported.end(), fn),
              info.exported.end())
        << fn;
  for (const std::string &sym : info.exported)
    EXPECT_EQ(sym.rfind("encrt_", 0), 0u) << "unexpected export " << sym;
}
