//===- ElfCheck.h - A CPU code object, checked before it is dlopen'ed -----===//
//
// dlopen runs code of the object it loads (DT_INIT, .init_array, IFUNC
// resolvers) and maps whatever its program headers name. checkCodeObjectElf
// reads the blob as the dynamic loader would and refuses, before dlopen:
//   - anything that is not a little-endian x86-64 ELF64 shared object;
//   - headers, program headers, sections and every table the loader reads
//     (dynamic section, string table, symbols, relocations) that do not lie
//     inside the blob (a truncated object made dlopen die of SIGBUS);
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

namespace encrt::rt {

/// Throws Failure(ENCRT_INVALID_ARTIFACT) naming `what` and the first rule
/// the object breaks.
void checkCodeObjectElf(const uint8_t *data, uint64_t size, const std::string &what);

} // namespace encrt::rt

#endif // ENCRT_ELFCHECK_H
