//===- SharedLibrary.h - dlopen'd libraries loaded once per process -------===//
//
// What CudaDriver (libcuda.so.1) and CublasLt (libcublasLt.so.N) share: the
// first of several sonames that opens, symbols resolved into typed function
// pointers, and one process-wide instance created on first use (thread-safe)
// that is never unloaded once it works and is closed when loading fails.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_SHAREDLIBRARY_H
#define ENCRT_CUDA_SHAREDLIBRARY_H

#include <dlfcn.h>

#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>

namespace encrt::rt::cuda {

class SharedLibrary {
public:
  SharedLibrary() = default;
  ~SharedLibrary() {
    if (handle_)
      dlclose(handle_);
  }
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;

  /// Opens the first of `sonames` that loads (RTLD_NOW | RTLD_LOCAL) and
  /// returns it; null with each failure's dlerror text in `errors` ("; ").
  const char *openFirst(std::initializer_list<const char *> sonames, std::string &errors) {
    for (const char *name : sonames) {
      handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle_)
        return name;
      const char *e = dlerror();
      errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
    }
    return nullptr;
  }

  /// `fn` = the symbol `name` (null when the library lacks it).
  template <typename Fn> bool resolve(Fn &fn, const char *name) const {
    fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    return fn != nullptr;
  }

private:
  void *handle_ = nullptr;
};

/// The process-wide Lib, made by `Lib::load(std::string &why)` on the first
/// call; null with the (remembered) reason in `why` when loading failed.
template <typename Lib> const Lib *loadOnce(std::string &why) {
  static std::once_flag once;
  static const Lib *lib = nullptr;
  static std::string error;
  std::call_once(once, [] {
    std::unique_ptr<Lib> l(new Lib());
    if (l->load(error))
      lib = l.release(); // lives for the process: never unloaded
  });
  if (!lib)
    why = error;
  return lib;
}

} // namespace encrt::rt::cuda

#endif // ENCRT_CUDA_SHAREDLIBRARY_H
