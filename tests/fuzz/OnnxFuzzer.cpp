//===- OnnxFuzzer.cpp - libFuzzer target: the ONNX model reader -----------===//
//
// The compiler's reader of .onnx files (frontends/onnx/OnnxModel.cpp, the
// protobuf wire format read with bounds): any input must give a clean error
// or a model whose every numeric initialiser and attribute tensor either
// decodes to exactly numElements() values or is refused with an error.
// External data is refused here (no base folder), so nothing is read from disk.
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/OnnxModel.h"

#include <cstdio>
#include <cstdlib>

namespace {

void check(const encc::onnx::Tensor &t) {
  auto f = encc::onnx::tensorFloats(t);
  if (!f) {
    llvm::consumeError(f.takeError());
  } else if (int64_t(f->size()) != t.numElements()) {
    std::fprintf(stderr, "tensor %s: %zu floats for %lld elements\n", t.name.c_str(), f->size(),
                 static_cast<long long>(t.numElements()));
    std::abort();
  }
  auto i = encc::onnx::tensorInts(t);
  if (!i)
    llvm::consumeError(i.takeError());
  else if (int64_t(i->size()) != t.numElements())
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto model = encc::onnx::parseOnnxModel(llvm::StringRef(reinterpret_cast<const char *>(data), size),
                                          "fuzz.onnx", "");
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  for (const auto &t : model->graph.initializers)
    if (t.numElements() <= (int64_t(1) << 24)) // decoding allocates numElements() values
      check(t);
  for (const auto &n : model->graph.nodes)
    for (const auto &a : n.attributes)
      for (const auto &t : a.t)
        if (t.numElements() <= (int64_t(1) << 24))
          check(t);
  return 0;
}
