//===- RandomWeightsFolder.cpp - A model folder with encc's random weights ===//
#include "tests/e2e/RandomWeightsFolder.h"

#include "frontends/hf/HFImport.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

void encc::testing::writeRandomWeightsFolder(const std::string &configPath, uint64_t seed, const std::string &dir) {
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(configPath, dir + "/config.json", std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(configPath);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  llvm::Expected<ModelConfig> c = parseModelConfig(text, configPath);
  if (!c)
    throw std::runtime_error(llvm::toString(c.takeError()));
  const mlir::enc::WeightStore store = randomWeights(*c, seed);

  // The checkpoint's tensors: (name, shape, bytes of the generated tensor).
  struct Part {
    std::string name;
    std::vector<int64_t> shape;
    const uint8_t *bytes;
    size_t size;
  };
  std::vector<Part> parts;
  for (const WeightSpec &spec : expectedWeights(*c)) {
    if (spec.zeros)
      continue;
    const mlir::enc::WeightTensor *t = store.find(spec.name);
    if (!t)
      throw std::runtime_error("randomWeights made no " + spec.name);
    if (spec.concatOf.empty()) {
      parts.push_back({spec.name, t->shape, t->data(), t->byteSize()});
      continue;
    }
    const size_t n = spec.concatOf.size(), each = t->byteSize() / n;
    std::vector<int64_t> shape = t->shape;
    shape[0] /= static_cast<int64_t>(n);
    for (size_t i = 0; i < n; ++i)
      parts.push_back({spec.concatOf[i], shape, t->data() + i * each, each});
  }

  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const Part &p : parts) {
    header[p.name] = {{"dtype", "F32"}, {"shape", p.shape}, {"data_offsets", {offset, offset + p.size}}};
    offset += p.size;
  }
  std::string head = header.dump();
  head.append((8 - head.size() % 8) % 8, ' ');
  const std::string path = dir + "/model.safetensors";
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = head.size();
  out.write(reinterpret_cast<const char *>(&n), 8);
  out << head;
  for (const Part &p : parts)
    out.write(reinterpret_cast<const char *>(p.bytes), static_cast<std::streamsize>(p.size));
  if (!out.good())
    throw std::runtime_error("cannot write " + path);
}
