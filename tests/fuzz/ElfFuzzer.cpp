//===- ElfFuzzer.cpp - libFuzzer target: the code-object ELF checks -------===//
//
// checkCodeObjectElf reads an untrusted blob as the dynamic loader would
// (headers, segments, dynamic section, strings, symbols, relocations, both
// hash tables, symbol versions): any input must give a clean accept or a
// Failure, never an out-of-bounds read. What it accepts is then loaded as
// the runtime loads it (a memfd, dlopen RTLD_NOW, dlsym of enc_code_info),
// in a child process: the loader dying of a signal, failing one of its
// assertions (exit 127) or code of the object running (it would have to set
// the marker the test kernels' constructors set, or crash) is a finding.
// Seeds: the runtime tests' code objects (tests/runtime/TestKernels.cpp and
// its refused variants).
//
//===----------------------------------------------------------------------===//
#include "ElfCheck.h"
#include "Failure.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// In a child: load the object from a memfd and look up its code info. Exit
/// status 0 whether or not the loader accepts it; 3 when code of it ran.
[[noreturn]] void loadInChild(const uint8_t *data, size_t size) {
  ::unsetenv("ENCRT_TEST_CONSTRUCTOR_RAN");
  int fd = memfd_create("encrt-fuzz-elf", MFD_CLOEXEC);
  if (fd < 0 || ::write(fd, data, size) != static_cast<ssize_t>(size))
    _exit(0); // nothing to learn
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    (void)dlsym(handle, "enc_code_info");
    dlclose(handle);
  }
  _exit(std::getenv("ENCRT_TEST_CONSTRUCTOR_RAN") ? 3 : 0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string what = "fuzz";
  try {
    encrt::rt::checkCodeObjectElf(data, size, what);
  } catch (const encrt::rt::Failure &) {
    return 0;
  }
  const pid_t pid = fork();
  if (pid == 0)
    loadInChild(data, size);
  if (pid < 0)
    return 0; // cannot tell; not a finding of the checker
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 0;
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "ElfFuzzer: an accepted object killed the loader with signal %d\n",
                 WTERMSIG(status));
    std::abort();
  }
  if (WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "ElfFuzzer: loading an accepted object exited with %d (127: a loader "
                 "assertion; 3: its code ran)\n", WEXITSTATUS(status));
    std::abort();
  }
  return 0;
}
