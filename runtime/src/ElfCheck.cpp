//===- ElfCheck.cpp - A CPU code object, checked before it is dlopen'ed ---===//
#include "ElfCheck.h"

#include "Failure.h"
#include "VerifyUtil.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <string_view>
#include <vector>

namespace encrt::rt {

namespace {

/// Libraries a generated object may need (all part of the C/C++ runtime).
constexpr std::string_view kAllowedNeeded[] = {"libc.so.6", "libm.so.6", "libmvec.so.1",
                                               "libstdc++.so.6", "libgcc_s.so.1"};
/// More is a damaged or hostile object (generated ones have a handful).
constexpr uint32_t kMaxProgramHeaders = 64;
constexpr uint64_t kMaxDynamicEntries = 4096;
constexpr uint64_t kMaxSymbols = uint64_t(1) << 20;

std::string toHexTag(int64_t tag) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(tag));
  return buf;
}

class ElfReader {
public:
  ElfReader(const uint8_t *data, uint64_t size, const std::string &what)
      : data_(data), size_(size), what_(what) {}

  ElfLayout check();

private:
  template <typename... Parts> [[noreturn]] void reject(const Parts &...parts) const {
    fail(ENCRT_INVALID_ARTIFACT, what_, ": ", parts...);
  }
  /// A T at file offset `off`, bounds-checked.
  template <typename T> T at(uint64_t off, const char *field) const {
    if (!fitsIn(off, sizeof(T), size_))
      reject(field, " at offset ", off, " lies outside the object (", size_, " bytes)");
    T v;
    std::memcpy(&v, data_ + off, sizeof(T));
    return v;
  }
  /// The file offset of [vaddr, vaddr + bytes) inside one PT_LOAD's file
  /// bytes (what the loader reads from the mapping), or a rejection.
  uint64_t fileOffset(uint64_t vaddr, uint64_t bytes, const char *field) const;
  /// The T at address `vaddr` of the loaded image, as the loader sees it:
  /// file bytes of the PT_LOAD holding it, zeros past its file bytes; a
  /// rejection when no PT_LOAD maps it.
  template <typename T> T loaded(uint64_t vaddr, const char *field) const {
    for (const Elf64_Phdr &p : loads_)
      if (vaddr >= p.p_vaddr && fitsIn(vaddr - p.p_vaddr, sizeof(T), p.p_memsz)) {
        uint8_t bytes[sizeof(T)] = {};
        const uint64_t delta = vaddr - p.p_vaddr;
        if (delta < p.p_filesz)
          std::memcpy(bytes, data_ + p.p_offset + delta, std::min<uint64_t>(sizeof(T), p.p_filesz - delta));
        T v;
        std::memcpy(&v, bytes, sizeof(T));
        return v;
      }
    reject(field, " at address ", vaddr, " is not inside a loaded segment");
  }
  /// Whether [vaddr, vaddr + bytes) lies inside one writable PT_LOAD's memory.
  bool inWritableSegment(uint64_t vaddr, uint64_t bytes) const {
    for (const Elf64_Phdr &p : loads_)
      if ((p.p_flags & PF_W) && vaddr >= p.p_vaddr && fitsIn(vaddr - p.p_vaddr, bytes, p.p_memsz))
        return true;
    return false;
  }
  std::string_view stringAt(uint64_t strtabOff, uint64_t strsz, uint64_t index,
                            const char *field) const;

  void checkHeader();
  void checkProgramHeaders();
  void checkSections();
  void checkDynamic();
  /// `relative`: how many leading entries the loader applies as RELATIVE.
  void checkRelocations(uint64_t vaddr, uint64_t bytes, uint64_t relative, const char *field);
  uint64_t countHashSymbols() const;
  uint64_t countGnuHashSymbols() const;
  void checkSymbols();
  void checkVersions();

  const uint8_t *data_;
  uint64_t size_;
  const std::string &what_;
  Elf64_Ehdr eh_{};
  std::vector<Elf64_Phdr> loads_;
  const Elf64_Phdr *dynamic_ = nullptr;
  std::vector<Elf64_Phdr> phdrs_;
  // From the dynamic section (0 = absent).
  uint64_t strtab_ = 0, strsz_ = 0, symtab_ = 0, syment_ = 0, hash_ = 0, gnuHash_ = 0;
  uint64_t rela_ = 0, relasz_ = 0, jmprel_ = 0, pltrelsz_ = 0;
  uint64_t relaent_ = 0, relacount_ = 0, versym_ = 0, verneed_ = 0, pltgot_ = 0, soname_ = 0;
  /// The tags present. An address entry counts by its presence, not its
  /// value: the loader reads DT_RELA 0 as the table at the object's base.
  std::vector<int64_t> seen_;
  bool has(int64_t tag) const { return std::find(seen_.begin(), seen_.end(), tag) != seen_.end(); }
  std::vector<std::string_view> needed_; ///< DT_NEEDED names (in the blob)
  uint64_t numSymbols_ = 0;
};

uint64_t ElfReader::fileOffset(uint64_t vaddr, uint64_t bytes, const char *field) const {
  for (const Elf64_Phdr &p : loads_)
    if (vaddr >= p.p_vaddr && fitsIn(vaddr - p.p_vaddr, bytes, p.p_filesz))
      return p.p_offset + (vaddr - p.p_vaddr);
  reject(field, " [", vaddr, ", +", bytes, ") is not inside a loaded segment's file bytes");
}

std::string_view ElfReader::stringAt(uint64_t strtabOff, uint64_t strsz, uint64_t index,
                                     const char *field) const {
  if (index >= strsz)
    reject(field, " name offset ", index, " lies outside the string table (", strsz, " bytes)");
  const char *s = reinterpret_cast<const char *>(data_ + strtabOff + index);
  const void *nul = std::memchr(s, 0, strsz - index);
  if (!nul)
    reject(field, " name is not terminated inside the string table");
  return std::string_view(s, static_cast<const char *>(nul) - s);
}

void ElfReader::checkHeader() {
  if (size_ < sizeof(Elf64_Ehdr))
    reject("too small (", size_, " bytes) to be an ELF object");
  std::memcpy(&eh_, data_, sizeof(eh_));
  if (std::memcmp(eh_.e_ident, ELFMAG, SELFMAG) != 0)
    reject("not an ELF object");
  if (eh_.e_ident[EI_CLASS] != ELFCLASS64 || eh_.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh_.e_ident[EI_VERSION] != EV_CURRENT || eh_.e_machine != EM_X86_64)
    reject("not a little-endian x86-64 ELF64 object");
  if (eh_.e_type != ET_DYN)
    reject("not a shared object (ELF type ", eh_.e_type, ")");
  if (eh_.e_ehsize != sizeof(Elf64_Ehdr) || eh_.e_phentsize != sizeof(Elf64_Phdr) ||
      (eh_.e_shnum != 0 && eh_.e_shentsize != sizeof(Elf64_Shdr)))
    reject("unexpected ELF header sizes");
  if (eh_.e_phnum == 0 || eh_.e_phnum > kMaxProgramHeaders)
    reject(eh_.e_phnum, " program headers (expected 1 to ", kMaxProgramHeaders, ")");
  if (!fitsIn(eh_.e_phoff, uint64_t(eh_.e_phnum) * sizeof(Elf64_Phdr), size_))
    reject("program headers [", eh_.e_phoff, ", +", uint64_t(eh_.e_phnum) * sizeof(Elf64_Phdr),
           ") lie outside the object (", size_, " bytes; truncated?)");
}

void ElfReader::checkProgramHeaders() {
  for (uint32_t i = 0; i < eh_.e_phnum; ++i)
    phdrs_.push_back(at<Elf64_Phdr>(eh_.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr),
                                    "a program header"));
  for (uint32_t i = 0; i < phdrs_.size(); ++i) {
    const Elf64_Phdr &p = phdrs_[i];
    const bool fileBacked = p.p_type == PT_LOAD || p.p_type == PT_DYNAMIC ||
                            p.p_type == PT_NOTE || p.p_type == PT_GNU_EH_FRAME;
    if (fileBacked && !fitsIn(p.p_offset, p.p_filesz, size_))
      reject("segment ", i, " [", p.p_offset, ", +", p.p_filesz,
             ") lies outside the object (", size_, " bytes; truncated?)");
    switch (p.p_type) {
    case PT_LOAD:
      if (p.p_filesz > p.p_memsz)
        reject("segment ", i, " has more file bytes than memory bytes");
      if ((p.p_flags & PF_W) && (p.p_flags & PF_X))
        reject("segment ", i, " is both writable and executable");
      // The loader (and the kernel-contract check) read the tables inside
      // the loaded segments from memory: mapped without PROT_READ they fault.
      if (!(p.p_flags & PF_R))
        reject("loadable segment ", i, " is not readable");
      // Ascending and disjoint (the ELF rule), so every address has one
      // source: what is checked here is what the loader maps.
      if (!loads_.empty() && (p.p_vaddr < loads_.back().p_vaddr ||
                              p.p_vaddr - loads_.back().p_vaddr < loads_.back().p_memsz))
        reject("loadable segment ", i, " overlaps or precedes the one before it");
      if (p.p_memsz > (uint64_t(1) << 40) || p.p_vaddr > (uint64_t(1) << 40))
        reject("loadable segment ", i, " is implausibly large or far");
      loads_.push_back(p);
      break;
    case PT_DYNAMIC:
      if (dynamic_)
        reject("more than one dynamic segment");
      dynamic_ = &phdrs_[i];
      break;
    case PT_GNU_STACK:
      if (p.p_flags & PF_X)
        reject("asks for an executable stack");
      break;
    case PT_INTERP:
      reject("has an interpreter (an executable, not a code object)");
    case PT_TLS:
      reject("has thread-local storage (generated code has none)");
    default:
      break;
    }
  }
  if (loads_.empty())
    reject("no loadable segment");
  if (!dynamic_)
    reject("no dynamic segment (not a shared object built by encc)");
  // The loader makes the RELRO pages read-only after relocating (start and
  // end rounded down to pages): outside the pages of a writable segment of
  // the object it would change other memory.
  constexpr uint64_t kPage = 4096;
  for (const Elf64_Phdr &r : phdrs_) {
    if (r.p_type != PT_GNU_RELRO)
      continue;
    if (r.p_memsz > (uint64_t(1) << 40) || r.p_vaddr > (uint64_t(1) << 40))
      reject("its RELRO range is implausibly large or far");
    const uint64_t start = r.p_vaddr / kPage * kPage, end = (r.p_vaddr + r.p_memsz) / kPage * kPage;
    bool inside = start == end; // nothing protected
    for (const Elf64_Phdr &p : loads_)
      inside |= (p.p_flags & PF_W) && start >= p.p_vaddr / kPage * kPage &&
                end <= (p.p_vaddr + p.p_memsz + kPage - 1) / kPage * kPage;
    if (!inside)
      reject("its RELRO range [", r.p_vaddr, ", +", r.p_memsz,
             ") is not inside the pages of a writable loaded segment");
  }
}

void ElfReader::checkSections() {
  if (eh_.e_shnum == 0)
    return;
  if (!fitsIn(eh_.e_shoff, uint64_t(eh_.e_shnum) * sizeof(Elf64_Shdr), size_))
    reject("section headers [", eh_.e_shoff, ", +", uint64_t(eh_.e_shnum) * sizeof(Elf64_Shdr),
           ") lie outside the object (", size_, " bytes; truncated?)");
  for (uint32_t i = 0; i < eh_.e_shnum; ++i) {
    auto sh = at<Elf64_Shdr>(eh_.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr), "a section header");
    if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL && !fitsIn(sh.sh_offset, sh.sh_size, size_))
      reject("section ", i, " [", sh.sh_offset, ", +", sh.sh_size,
             ") lies outside the object (", size_, " bytes; truncated?)");
    if (sh.sh_type == SHT_INIT_ARRAY || sh.sh_type == SHT_FINI_ARRAY ||
        sh.sh_type == SHT_PREINIT_ARRAY)
      reject("has initialisers or finalisers (init/fini array sections: code that runs on "
             "load or unload)");
  }
}

void ElfReader::checkDynamic() {
  // The loader reads it from memory, at its address, entry after entry up to
  // DT_NULL, whatever p_filesz says: so does this (entries placed past
  // p_filesz were read by the loader and not by the old check).
  std::vector<Elf64_Dyn> entries;
  for (uint64_t i = 0;; ++i) {
    if (i == kMaxDynamicEntries)
      reject("dynamic section has no DT_NULL within ", kMaxDynamicEntries, " entries");
    auto d = loaded<Elf64_Dyn>(dynamic_->p_vaddr + i * sizeof(Elf64_Dyn), "a dynamic entry");
    if (d.d_tag == DT_NULL)
      break;
    entries.push_back(d);
  }
  for (const Elf64_Dyn &d : entries) {
    seen_.push_back(d.d_tag); // (the loader keeps the last entry of each tag)
    switch (d.d_tag) {
    case DT_INIT:
    case DT_INIT_ARRAY:
    case DT_PREINIT_ARRAY:
      reject("has initialisers (DT_INIT / init arrays: code that runs on load)");
    case DT_FINI:
    case DT_FINI_ARRAY:
      reject("has finalisers (DT_FINI / fini arrays: code that runs on unload)");
    case DT_RPATH:
    case DT_RUNPATH:
      reject("has a library search path (RPATH/RUNPATH)");
    case DT_AUDIT:
    case DT_DEPAUDIT:
    case DT_AUXILIARY:
    case DT_FILTER:
      reject("names audit or filter libraries");
    case DT_TEXTREL:
      reject("has text relocations");
    case DT_FLAGS:
      if (d.d_un.d_val & DF_TEXTREL)
        reject("has text relocations");
      if (d.d_un.d_val & ~uint64_t(DF_BIND_NOW))
        reject("DT_FLAGS ", d.d_un.d_val, " (only BIND_NOW is expected)");
      break;
    case DT_REL:
      reject("has REL relocations (x86-64 objects use RELA)");
    case DT_STRTAB: strtab_ = d.d_un.d_ptr; break;
    case DT_STRSZ: strsz_ = d.d_un.d_val; break;
    case DT_SYMTAB: symtab_ = d.d_un.d_ptr; break;
    case DT_SYMENT: syment_ = d.d_un.d_val; break;
    case DT_HASH: hash_ = d.d_un.d_ptr; break;
    case DT_GNU_HASH: gnuHash_ = d.d_un.d_ptr; break;
    case DT_RELA: rela_ = d.d_un.d_ptr; break;
    case DT_RELASZ: relasz_ = d.d_un.d_val; break;
    case DT_JMPREL: jmprel_ = d.d_un.d_ptr; break;
    case DT_PLTRELSZ: pltrelsz_ = d.d_un.d_val; break;
    case DT_PLTREL:
      if (d.d_un.d_val != DT_RELA)
        reject("PLT relocations are not RELA");
      break;
    case DT_VERSYM: versym_ = d.d_un.d_ptr; break;
    case DT_VERNEED: verneed_ = d.d_un.d_ptr; break;
    case DT_FLAGS_1:
      if (d.d_un.d_val & ~uint64_t(DF_1_NOW | DF_1_NODELETE))
        reject("DT_FLAGS_1 ", d.d_un.d_val, " (only NOW and NODELETE are expected)");
      break;
    case DT_RELAENT: relaent_ = d.d_un.d_val; break;
    case DT_RELACOUNT: relacount_ = d.d_un.d_val; break;
    case DT_PLTGOT: pltgot_ = d.d_un.d_ptr; break;
    case DT_SONAME: soname_ = d.d_un.d_val; break;
    // Read by the loader but harmless, or not read by it at all.
    case DT_NEEDED: // checked below
    case DT_VERNEEDNUM: // the loader follows the entries' links instead
    case DT_BIND_NOW:
    case DT_DEBUG:
    case DT_GNU_PRELINKED:
    case DT_CHECKSUM:
      break;
    default:
      // Everything else the loader may act on (DT_RELR relocations, symbol
      // version definitions, DT_SYMBOLIC, TLS descriptors, ...) is refused
      // rather than left unchecked: generated objects use none of it.
      reject("dynamic entry with tag 0x", toHexTag(d.d_tag),
             " (not one a generated code object uses)");
    }
  }
  if (!has(DT_STRTAB) || !has(DT_STRSZ) || !has(DT_SYMTAB) || (!has(DT_HASH) && !has(DT_GNU_HASH)))
    reject("dynamic section lacks its string table, symbol table or hash table");
  // The loader reads the entries of a group through each other without
  // checking they are there (DT_PLTREL without DT_JMPREL: a null pointer
  // read in ld.so), and asserts DT_RELAENT.
  if (has(DT_RELA) != has(DT_RELASZ) || has(DT_RELA) != has(DT_RELAENT))
    reject("DT_RELA, DT_RELASZ and DT_RELAENT must come together");
  if (has(DT_JMPREL) != has(DT_PLTRELSZ) || has(DT_JMPREL) != has(DT_PLTREL))
    reject("DT_JMPREL, DT_PLTRELSZ and DT_PLTREL must come together");
  if (has(DT_RELACOUNT) && !has(DT_RELA))
    reject("DT_RELACOUNT without DT_RELA");
  if (has(DT_VERNEED) != has(DT_VERSYM))
    reject("DT_VERNEED and DT_VERSYM must come together");
  if (has(DT_RELA) && relaent_ != sizeof(Elf64_Rela))
    reject("DT_RELAENT is ", relaent_, " (expected ", sizeof(Elf64_Rela), " with DT_RELA)");
  // The loader sets up the first GOT entries of an object with PLT relocations.
  if (has(DT_PLTGOT) && !inWritableSegment(pltgot_, 3 * 8))
    reject("DT_PLTGOT [", pltgot_, ", +24) is not inside a writable loaded segment");
  if (syment_ != 0 && syment_ != sizeof(Elf64_Sym))
    reject("unexpected symbol entry size ", syment_);
  const uint64_t strOff = fileOffset(strtab_, strsz_, "the dynamic string table");
  for (const Elf64_Dyn &d : entries)
    if (d.d_tag == DT_NEEDED) {
      std::string_view name = stringAt(strOff, strsz_, d.d_un.d_val, "DT_NEEDED");
      bool allowed = false;
      for (std::string_view ok : kAllowedNeeded)
        allowed |= name == ok;
      if (!allowed)
        reject("needs library \"", name, "\" (only the C and C++ runtime libraries are allowed)");
      needed_.push_back(name);
    }
  if (has(DT_SONAME))
    stringAt(strOff, strsz_, soname_, "DT_SONAME"); // compared with names the loader looks for
}

void ElfReader::checkRelocations(uint64_t vaddr, uint64_t bytes, uint64_t relative,
                                 const char *field) {
  if (bytes % sizeof(Elf64_Rela) != 0)
    reject(field, " size ", bytes, " is not a whole number of entries");
  const uint64_t off = fileOffset(vaddr, bytes, field);
  // The loader applies the first DT_RELACOUNT entries of DT_RELA as RELATIVE
  // without looking at their type (it asserts it).
  if (relative > bytes / sizeof(Elf64_Rela))
    reject("DT_RELACOUNT ", relative, " exceeds the ", bytes / sizeof(Elf64_Rela), " RELA relocations");
  for (uint64_t o = 0; o < bytes; o += sizeof(Elf64_Rela)) {
    auto r = at<Elf64_Rela>(off + o, field);
    const uint32_t type = ELF64_R_TYPE(r.r_info);
    if (o / sizeof(Elf64_Rela) < relative && type != R_X86_64_RELATIVE)
      reject(field, ": relocation ", o / sizeof(Elf64_Rela), " of the first DT_RELACOUNT (", relative,
             ") is of type ", type, ", not RELATIVE");
    if (type == R_X86_64_IRELATIVE)
      reject("has IRELATIVE relocations (resolvers that run on load)");
    if (type == R_X86_64_NONE)
      continue;
    // What a shared object's dynamic relocations are; each writes 8 bytes
    // into the object's writable memory, for a symbol of its table.
    if (type != R_X86_64_64 && type != R_X86_64_GLOB_DAT && type != R_X86_64_JUMP_SLOT &&
        type != R_X86_64_RELATIVE)
      reject(field, ": relocation type ", type, " (expected 64, GLOB_DAT, JUMP_SLOT or RELATIVE)");
    if (!inWritableSegment(r.r_offset, 8))
      reject(field, ": a relocation writes to [", r.r_offset,
             ", +8), not inside a writable loaded segment");
    if (ELF64_R_SYM(r.r_info) >= numSymbols_)
      reject(field, ": a relocation names symbol ", ELF64_R_SYM(r.r_info), " of ", numSymbols_);
  }
}

/// The number of dynamic symbols by DT_HASH's nchain, once its buckets and
/// chains are checked as the loader walks them: symbol = buckets[hash %
/// nbucket], then chain[symbol] until 0 (no bucket count: a division by
/// zero; an index past nchain or a cycle: reads past the table or forever).
uint64_t ElfReader::countHashSymbols() const {
  const uint64_t off = fileOffset(hash_, 8, "DT_HASH");
  const uint32_t nbucket = at<uint32_t>(off, "DT_HASH nbucket");
  const uint32_t nchain = at<uint32_t>(off + 4, "DT_HASH nchain");
  if (nbucket == 0)
    reject("DT_HASH has no buckets");
  if (nchain > kMaxSymbols)
    reject("DT_HASH holds ", nchain, " symbols");
  fileOffset(hash_, 8 + (uint64_t(nbucket) + nchain) * 4, "DT_HASH buckets and chains");
  const uint64_t buckets = off + 8, chains = buckets + uint64_t(nbucket) * 4;
  uint64_t steps = 0;
  for (uint32_t b = 0; b < nbucket; ++b)
    for (uint32_t i = at<uint32_t>(buckets + uint64_t(b) * 4, "a DT_HASH bucket"); i != 0;
         i = at<uint32_t>(chains + uint64_t(i) * 4, "a DT_HASH chain")) {
      if (i >= nchain)
        reject("a DT_HASH bucket or chain names symbol ", i, " of ", nchain);
      if (++steps > nchain)
        reject("DT_HASH chains cycle or share symbols");
    }
  return nchain;
}

/// The number of dynamic symbols by walking DT_GNU_HASH's buckets and chains
/// (as the loader's lookups do), once its header is one the loader accepts:
/// at least one bucket (it divides by their number), a Bloom filter of a
/// power-of-two number of words (it asserts so and masks indices with
/// count - 1), buckets that are 0 or name a hashed symbol.
uint64_t ElfReader::countGnuHashSymbols() const {
  const uint64_t off = fileOffset(gnuHash_, 16, "DT_GNU_HASH");
  const uint32_t nbuckets = at<uint32_t>(off, "DT_GNU_HASH");
  const uint32_t symoffset = at<uint32_t>(off + 4, "DT_GNU_HASH");
  const uint32_t bloomSize = at<uint32_t>(off + 8, "DT_GNU_HASH");
  if (nbuckets == 0)
    reject("DT_GNU_HASH has no buckets");
  if (bloomSize == 0 || (bloomSize & (bloomSize - 1)) != 0)
    reject("DT_GNU_HASH Bloom filter of ", bloomSize, " words (expected a power of two)");
  if (symoffset > kMaxSymbols)
    reject("DT_GNU_HASH symbol offset ", symoffset);
  const uint64_t bucketsAt = gnuHash_ + 16 + uint64_t(bloomSize) * 8;
  const uint64_t chainsAt = bucketsAt + uint64_t(nbuckets) * 4;
  const uint64_t buckets = fileOffset(gnuHash_, chainsAt - gnuHash_, "DT_GNU_HASH buckets") +
                           (bucketsAt - gnuHash_);
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b) {
    const uint32_t first = at<uint32_t>(buckets + uint64_t(b) * 4, "a DT_GNU_HASH bucket");
    if (first != 0 && first < symoffset)
      reject("a DT_GNU_HASH bucket names symbol ", first, ", below the hashed ones (", symoffset, ")");
    last = std::max(last, first);
  }
  if (last == 0)
    return symoffset;
  // The chain of the highest bucket ends last; every other chain ends at or
  // before its end. Read from the loaded image, as the loader reads it.
  for (uint64_t i = last; i < kMaxSymbols; ++i) {
    uint32_t h = loaded<uint32_t>(chainsAt + (i - symoffset) * 4, "a DT_GNU_HASH chain");
    if (h & 1)
      return i + 1;
  }
  reject("DT_GNU_HASH chain does not end");
}

/// Symbol versions as the loader reads them: the DT_VERNEED entries and
/// their auxiliary records (linked by relative offsets, names in the string
/// table, each from a library this object needs) give the version indices,
/// and DT_VERSYM gives one per dynamic symbol; the loader indexes its table
/// of versions with it unchecked, so each must name a version defined here
/// (0 local, 1 global, or a DT_VERNEED record's index).
void ElfReader::checkVersions() {
  constexpr uint64_t kMaxVersionRecords = 1024;
  uint32_t highest = 1;
  if (has(DT_VERNEED)) {
    // The loader follows vn_next / vna_next until 0 (not the counts).
    const uint64_t strOff = fileOffset(strtab_, strsz_, "the dynamic string table");
    uint64_t records = 0;
    for (uint64_t entry = verneed_;;) {
      auto vn = at<Elf64_Verneed>(fileOffset(entry, sizeof(Elf64_Verneed), "a DT_VERNEED entry"),
                                  "a DT_VERNEED entry");
      if (vn.vn_version != 1)
        reject("DT_VERNEED entry version ", vn.vn_version, " (expected 1)");
      std::string_view file = stringAt(strOff, strsz_, vn.vn_file, "a DT_VERNEED entry");
      if (std::find(needed_.begin(), needed_.end(), file) == needed_.end())
        reject("DT_VERNEED names \"", file, "\", which the object does not need");
      for (uint64_t aux = entry + vn.vn_aux;;) {
        if (++records > kMaxVersionRecords)
          reject("more than ", kMaxVersionRecords, " symbol version records");
        auto a = at<Elf64_Vernaux>(fileOffset(aux, sizeof(Elf64_Vernaux), "a DT_VERNEED record"),
                                   "a DT_VERNEED record");
        stringAt(strOff, strsz_, a.vna_name, "a DT_VERNEED record");
        highest = std::max<uint32_t>(highest, a.vna_other & 0x7fff);
        if (a.vna_next == 0)
          break;
        aux += a.vna_next;
      }
      if (vn.vn_next == 0)
        break;
      entry += vn.vn_next;
    }
  }
  if (!has(DT_VERSYM))
    return;
  const uint64_t off = fileOffset(versym_, numSymbols_ * 2, "the DT_VERSYM table");
  for (uint64_t i = 0; i < numSymbols_; ++i) {
    const uint32_t v = at<uint16_t>(off + i * 2, "a DT_VERSYM entry") & 0x7fff;
    if (v > highest)
      reject("dynamic symbol ", i, " has version index ", v, " (the object defines up to ", highest, ")");
  }
}

void ElfReader::checkSymbols() {
  // Every symbol either table reaches: the loader looks names up through
  // DT_GNU_HASH when there is one, so a DT_HASH cut short must not hide any.
  const uint64_t count =
      std::max(has(DT_HASH) ? countHashSymbols() : 0, has(DT_GNU_HASH) ? countGnuHashSymbols() : 0);
  if (count > kMaxSymbols)
    reject(count, " dynamic symbols");
  const uint64_t off = fileOffset(symtab_, count * sizeof(Elf64_Sym), "the dynamic symbol table");
  const uint64_t strOff = fileOffset(strtab_, strsz_, "the dynamic string table");
  for (uint64_t i = 0; i < count; ++i) {
    auto sym = at<Elf64_Sym>(off + i * sizeof(Elf64_Sym), "a dynamic symbol");
    if (ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC && sym.st_shndx != SHN_UNDEF)
      reject("defines an IFUNC symbol (its resolver would run on lookup)");
    stringAt(strOff, strsz_, sym.st_name, "a dynamic symbol");
    // A defined symbol is an address in the object (dlsym adds the base).
    if (sym.st_shndx != SHN_UNDEF && sym.st_shndx != SHN_ABS && i != 0) {
      bool mapped = false;
      for (const Elf64_Phdr &p : loads_)
        mapped |= sym.st_value >= p.p_vaddr && sym.st_value - p.p_vaddr < p.p_memsz;
      if (!mapped)
        reject("dynamic symbol ", i, " lies at ", sym.st_value, ", outside the loaded segments");
    }
  }
  numSymbols_ = count;
}

ElfLayout ElfReader::check() {
  checkHeader();
  checkProgramHeaders();
  checkSections();
  checkDynamic();
  checkSymbols();
  checkVersions();
  if (has(DT_RELA))
    checkRelocations(rela_, relasz_, relacount_, "RELA relocations");
  if (has(DT_JMPREL))
    checkRelocations(jmprel_, pltrelsz_, 0, "PLT relocations");
  ElfLayout layout;
  for (const Elf64_Phdr &p : loads_)
    layout.segments.push_back({p.p_vaddr, p.p_memsz});
  return layout;
}

} // namespace

bool ElfLayout::contains(uintptr_t base, const void *p, uint64_t bytes) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (const Segment &s : segments) {
    const uintptr_t start = base + s.vaddr;
    if (a >= start && fitsIn(a - start, bytes, s.memsz))
      return true;
  }
  return false;
}

bool ElfLayout::containsString(uintptr_t base, const char *s, uint64_t maxBytes) const {
  for (uint64_t n = 0; n < maxBytes; ++n) {
    if (!contains(base, s + n, 1))
      return false;
    if (s[n] == 0)
      return true;
  }
  return false;
}

ElfLayout checkCodeObjectElf(const uint8_t *data, uint64_t size, const std::string &what) {
  return ElfReader(data, size, what).check();
}

} // namespace encrt::rt
