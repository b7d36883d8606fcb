//===- CodeModule.cpp - Loading the CPU code object -----------------------===//
#include "CodeModule.h"

#include "Artifact.h"
#include "CpuFeatures.h"
#include "ElfCheck.h"
#include "Failure.h"
#include "KernelContract.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>

namespace encrt::rt {

namespace {

bool writeAll(int fd, const uint8_t *data, uint64_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

std::vector<std::string> missingFeatures(const encm::CodeObject &co) {
  std::vector<std::string> missing;
  if (co.isa_features())
    for (const auto *f : *co.isa_features())
      if (!cpuSupports(f->string_view()))
        missing.push_back(f->str());
  return missing;
}

std::string join(const std::vector<std::string> &items,
                 const char *separator = ", ") {
  std::string s;
  for (const auto &item : items)
    s += (s.empty() ? "" : separator) + item;
  return s;
}

bool isCpuTarget(const encm::CodeObject &co) {
  return co.target()->string_view().substr(0, 4) == "cpu-";
}

/// dlopen's the memfd through /proc/self/fd. glibc recognises an already
/// loaded object by its path, and a path of a closed (and reused) descriptor
/// may still name an object that was never unloaded, so move the descriptor
/// until its path is free.
void *openMemfd(int &fd, std::string &error) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (void *stale = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(stale);
      int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
      if (moved < 0)
        break;
      ::close(fd);
      fd = moved;
      continue;
    }
    if (void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
      return handle;
    const char *e = dlerror();
    error = e ? e : "dlopen failed";
    return nullptr;
  }
  error = "no free descriptor path for the code object";
  return nullptr;
}

/// Fallback: a temporary file, unlinked right after dlopen.
void *openTempFile(const uint8_t *data, uint64_t size, std::string &error) {
  const char *dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/encrt-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) {
    error = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return nullptr;
  }
  bool ok = writeAll(fd, data, size);
  ::close(fd);
  void *handle = nullptr;
  if (!ok) {
    error = std::string("cannot write a temporary file: ") + std::strerror(errno);
  } else if (!(handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) {
    const char *e = dlerror();
    error = e ? e : "dlopen failed";
  }
  ::unlink(path.c_str());
  return handle;
}

} // namespace

std::unique_ptr<CodeModule> CodeModule::load(const Artifact &artifact,
                                             const char *forcedTarget) {
  const std::string &p = artifact.path();
  const auto &objects = *artifact.model().code_objects();

  // Choose.
  const encm::CodeObject *chosen = nullptr;
  if (forcedTarget && *forcedTarget) {
    std::vector<std::string> available;
    for (const auto *co : objects) {
      available.push_back(co->target()->str());
      if (co->target()->string_view() == forcedTarget)
        chosen = co;
    }
    if (!chosen)
      fail(ENCRT_INVALID_ARGUMENT, p, ": no code object for target ",
           forcedTarget, " (artifact has ", join(available), ")");
    if (!isCpuTarget(*chosen))
      fail(ENCRT_UNSUPPORTED, p, ": target ", forcedTarget,
           " is not a CPU target");
    auto missing = missingFeatures(*chosen);
    if (!missing.empty())
      fail(ENCRT_UNSUPPORTED, p, ": target ", forcedTarget,
           " needs features this CPU lacks: ", join(missing));
  } else {
    std::vector<std::string> described, lacking;
    for (const auto *co : objects) {
      if (!isCpuTarget(*co))
        continue;
      auto missing = missingFeatures(*co);
      if (missing.empty()) {
        chosen = co;
        break;
      }
      std::vector<std::string> needs;
      for (const auto *f : *co->isa_features())
        needs.push_back(f->str());
      described.push_back(co->target()->str() + " needing " + join(needs));
      for (auto &m : missing)
        if (std::find(lacking.begin(), lacking.end(), m) == lacking.end())
          lacking.push_back(m);
    }
    if (!chosen && described.empty())
      fail(ENCRT_UNSUPPORTED, p, ": artifact has no CPU code object");
    if (!chosen)
      fail(ENCRT_UNSUPPORTED, p,
           ": no CPU code object runs on this CPU (artifact has ",
           join(described, "; "), "; this CPU lacks ", join(lacking), ")");
  }

  std::unique_ptr<CodeModule> module(new CodeModule());
  module->target_ = chosen->target()->str();
  const std::string &target = module->target_;
  const std::string what = p + ": code object " + target;

  // Verify a private copy (the file could change under its mapping), then
  // load exactly those bytes: nothing of the object runs before its hash,
  // its ELF structure and its kernels' contracts are checked.
  const std::vector<uint8_t> blob = artifact.codeObjectCopy(*chosen, what);
  const ElfLayout layout = checkCodeObjectElf(blob.data(), blob.size(), what);

  // Load: a sealed memfd (no one can change it once checked). Only where
  // memfds cannot be used at all (no memfd_create, no /proc to dlopen it
  // through) a temporary file instead; a memfd the loader refuses is an
  // error, not retried from a file another process could replace.
  std::string memfdError, fileError;
  bool memfdUnavailable = false;
  int fd = memfd_create(("encm-" + target).c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd >= 0) {
    if (!writeAll(fd, blob.data(), blob.size()))
      memfdError = std::string("cannot write memfd: ") + std::strerror(errno);
    else if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
      memfdError = std::string("cannot seal memfd: ") + std::strerror(errno);
    else if (::access("/proc/self/fd", X_OK) != 0) {
      memfdUnavailable = true;
      memfdError = "no /proc/self/fd to load a memfd through";
    } else {
      module->handle_ = openMemfd(fd, memfdError);
    }
    if (module->handle_)
      module->fd_ = fd;
    else
      ::close(fd);
  } else {
    memfdUnavailable = errno == ENOSYS || errno == EINVAL || errno == EPERM;
    memfdError = std::string("memfd_create: ") + std::strerror(errno);
  }
  if (!module->handle_ && memfdUnavailable)
    module->handle_ = openTempFile(blob.data(), blob.size(), fileError);
  if (!module->handle_)
    fail(ENCRT_INVALID_ARTIFACT, p, ": cannot load code object ", target, " (", memfdError,
         fileError.empty() ? "" : "; temporary file: " + fileError, ")");

  // Only symbols defined by the code object itself count (dlsym also
  // searches its dependencies, e.g. libc).
  struct link_map *self = nullptr;
  if (dlinfo(module->handle_, RTLD_DI_LINKMAP, &self) != 0 || !self)
    fail(ENCRT_INTERNAL, p, ": dlinfo failed on code object ", target);
  auto ownSymbol = [&](const char *name) -> void * {
    void *sym = dlsym(module->handle_, name);
    Dl_info where;
    if (!sym || !dladdr(sym, &where) || !where.dli_fname ||
        std::strcmp(where.dli_fname, self->l_name) != 0)
      return nullptr;
    return sym;
  };

  // Check the ABI and the plan against the kernels' contracts (data only).
  const auto *ci = static_cast<const enc_code_info_t *>(ownSymbol("enc_code_info"));
  if (!ci)
    fail(ENCRT_INVALID_ARTIFACT, what, " does not export enc_code_info (not built by encc?)");
  if (!layout.contains(static_cast<uintptr_t>(self->l_addr), ci, sizeof *ci))
    fail(ENCRT_INVALID_ARTIFACT, what, ": enc_code_info does not lie inside the code object");
  if (ci->abi_version != ENC_KERNEL_ABI_VERSION)
    fail(ENCRT_UNSUPPORTED, what, " has kernel ABI version ", ci->abi_version,
         ", this runtime speaks version ", ENC_KERNEL_ABI_VERSION,
         " (recompile with a matching encc)");
  verifyKernelContracts(*ci, artifact.model(), what, layout, static_cast<uintptr_t>(self->l_addr));

  // Resolve every kernel.
  const auto &steps = *artifact.model().steps();
  std::unordered_map<std::string_view, enc_kernel_fn> resolved;
  module->kernels_.resize(steps.size());
  for (uint32_t s = 0; s < steps.size(); ++s) {
    std::string_view name = steps.Get(s)->kernel()->string_view();
    auto it = resolved.find(name);
    if (it == resolved.end()) {
      void *sym = ownSymbol(steps.Get(s)->kernel()->c_str());
      if (!sym)
        fail(ENCRT_INVALID_ARTIFACT, p, ": step ", s, " kernel \"", name,
             "\" is not exported by code object ", target);
      it = resolved.emplace(name, reinterpret_cast<enc_kernel_fn>(sym)).first;
    }
    module->kernels_[s] = it->second;
  }
  return module;
}

CodeModule::~CodeModule() {
  if (handle_)
    dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
}

} // namespace encrt::rt
