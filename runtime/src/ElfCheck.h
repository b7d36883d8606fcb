//===- ElfCheck.h - A CPU code object, checked before it is dlopen'ed -----===//
//
// dlopen runs code of the object it loads (DT_INIT, .init_array, IFUNC
// resolvers) and maps whatever its program headers name. checkCodeObjectElf
// reads the blob as the dynamic loader would and refuses, before dlopen:
//   - anything that is not a little-endian x86-64 ELF64 shared object;
//   - headers, program headers, sections and every table the loader reads
//     (dynamic section, string table, symbols, relocations) that do not lie
//     inside the blob (a truncated object made dlopen die of SIGBUS), read
//     as the loader reads them: the dynamic section from memory up to its
//     DT_NULL, every symbol either hash table reaches;
//   - relocations other than 64 / GLOB_DAT / JUMP_SLOT / RELATIVE, or that
//     write outside the object's writable segments or name a symbol past its
//     table; a RELRO range outside a writable segment; symbols outside the
//     loaded segments;
//   - code that would run on load or unload: DT_INIT/DT_FINI, init, fini and
//     preinit arrays, IRELATIVE relocations and IFUNC symbols (dlsym calls
//     their resolvers);
//   - other objects pulled in: DT_NEEDED outside libc/libm/libstdc++/libgcc_s,
//     RPATH/RUNPATH, audit and filter libraries;
//   - an executable stack, writable+executable segments, text relocations,
//     an interpreter or thread-local storage.
// Generated code needs none of these (encc links it with -nostartfiles).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_ELFCHECK_H
#define ENCRT_ELFCHECK_H

#include <cstdint>
#include <string>
#include <vector>

namespace encrt::rt {

/// Where a checked object's loadable segments lie (addresses relative to the
/// base the loader picks): what data read from the loaded object, such as
/// its kernel contracts, must stay inside.
struct ElfLayout {
  struct Segment {
    uint64_t vaddr, memsz;
  };
  std::vector<Segment> segments;
  /// Whether [p, p + bytes) lies in one segment of the object loaded at `base`.
  bool contains(uintptr_t base, const void *p, uint64_t bytes) const;
  /// Whether a NUL-terminated string of at most `maxBytes` starts at `s` there.
  bool containsString(uintptr_t base, const char *s, uint64_t maxBytes) const;
};

/// Throws Failure(ENCRT_INVALID_ARTIFACT) naming `what` and the first rule
/// the object breaks; else its layout.
ElfLayout checkCodeObjectElf(const uint8_t *data, uint64_t size, const std::string &what);

} // namespace encrt::rt

#endif // ENCRT_ELFCHECK_H
