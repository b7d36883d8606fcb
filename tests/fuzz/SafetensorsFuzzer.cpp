//===- SafetensorsFuzzer.cpp - libFuzzer target: the safetensors reader ---===//
//
// The compiler's reader of model.safetensors (frontends/hf/SafeTensors.cpp):
// an 8-byte header length, a JSON header, the data. Any input must give a
// clean error or a table whose every tensor lies in the data; every F32, F16
// and BF16 tensor is then converted, and the result must hold exactly
// product(shape) floats.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/SafeTensors.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.safetensors");
  auto file = encc::SafeTensorsFile::fromBuffer(std::move(buffer), "fuzz.safetensors");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  for (const auto &[name, info] : file->tensors()) {
    if (info.dtype != "F32" && info.dtype != "F16" && info.dtype != "BF16")
      continue;
    auto t = file->read(name);
    if (!t) {
      llvm::consumeError(t.takeError());
      continue;
    }
    uint64_t n = 1;
    for (int64_t d : info.shape)
      n *= static_cast<uint64_t>(d);
    const mlir::enc::WeightTensor f32 = t->widenedToF32().read(); // touches every stored byte
    if (f32.byteSize() != n * 4) {
      std::fprintf(stderr, "tensor %s: %zu bytes for %llu elements\n", name.c_str(), f32.byteSize(),
                   static_cast<unsigned long long>(n));
      std::abort();
    }
  }
  return 0;
}
