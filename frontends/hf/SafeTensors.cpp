//===- SafeTensors.cpp - Reader for the safetensors file format -----------===//
#include "frontends/hf/SafeTensors.h"
#include "frontends/hf/HFUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <set>

using namespace encc;
using llvm::Twine;

unsigned encc::safeTensorsDTypeSize(const std::string &dtype) {
  static const std::map<std::string, unsigned> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

const SafeTensorInfo *SafeTensorsFile::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

llvm::Expected<SafeTensorsFile> SafeTensorsFile::open(const std::string &path) {
  auto buf = readRegularFile(path, kMaxWeightFileBytes, "safetensors checkpoint");
  if (!buf)
    return buf.takeError();
  return fromBuffer(std::move(*buf), path);
}

llvm::Expected<SafeTensorsFile>
SafeTensorsFile::fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, const std::string &path) {
  using nlohmann::json;
  const uint8_t *base = reinterpret_cast<const uint8_t *>(buffer->getBufferStart());
  uint64_t fileSize = buffer->getBufferSize();
  if (fileSize < 8)
    return hfError(path + ": not a safetensors file: " + Twine(fileSize) +
                   " bytes, shorter than the 8-byte header length");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | base[i];
  if (headerSize > fileSize - 8)
    return hfError(path + ": header length " + Twine(headerSize) + " exceeds the file size " +
                   Twine(fileSize));

  const char *hdr = reinterpret_cast<const char *>(base + 8);
  // JSON objects keep the last of two equal keys: find duplicated tensor
  // names while parsing, before they are silently merged.
  std::set<std::string> names;
  std::string duplicate;
  auto onEvent = [&](int depth, json::parse_event_t event, json &parsed) {
    if (depth == 1 && event == json::parse_event_t::key && duplicate.empty() &&
        !names.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header = json::parse(hdr, hdr + headerSize, onEvent, /*allow_exceptions=*/false);
  if (header.is_discarded())
    return hfError(path + ": header is not valid JSON");
  if (!duplicate.empty())
    return hfError(path + ": tensor '" + duplicate + "' is listed twice in the header");
  if (!header.is_object())
    return hfError(path + ": header must be a JSON object");

  SafeTensorsFile file;
  file.path_ = path;
  file.data_ = base + 8 + headerSize;
  file.dataSize_ = fileSize - 8 - headerSize;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    if (name == "__metadata__")
      continue;
    std::string where = path + ": tensor '" + name + "'";
    const json &e = it.value();
    if (!e.is_object())
      return hfError(where + ": entry must be an object");
    auto dt = e.find("dtype"), sh = e.find("shape"), off = e.find("data_offsets");
    if (dt == e.end() || !dt->is_string())
      return hfError(where + ": missing or non-string 'dtype'");
    if (sh == e.end() || !sh->is_array())
      return hfError(where + ": missing or non-array 'shape'");
    if (off == e.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      return hfError(where + ": 'data_offsets' must be [begin, end] with non-negative integers");
    SafeTensorInfo info;
    info.dtype = dt->get<std::string>();
    unsigned elemSize = safeTensorsDTypeSize(info.dtype);
    if (elemSize == 0)
      return hfError(where + ": unknown dtype '" + info.dtype + "'");
    uint64_t numel = 1;
    for (const json &d : *sh) {
      if (!d.is_number_unsigned())
        return hfError(where + ": shape entries must be non-negative integers");
      uint64_t v = d.get<uint64_t>();
      if (v > uint64_t(INT64_MAX) || __builtin_mul_overflow(numel, v, &numel))
        return hfError(where + ": shape is too large");
      info.shape.push_back(int64_t(v));
    }
    uint64_t nbytes;
    if (__builtin_mul_overflow(numel, uint64_t(elemSize), &nbytes))
      return hfError(where + ": shape is too large");
    info.begin = (*off)[0].get<uint64_t>();
    info.end = (*off)[1].get<uint64_t>();
    if (info.begin > info.end || info.end > file.dataSize_)
      return hfError(where + ": data_offsets [" + Twine(info.begin) + ", " + Twine(info.end) +
                     "] out of range of the " + Twine(file.dataSize_) + "-byte data section");
    if (info.end - info.begin != nbytes)
      return hfError(where + ": data_offsets cover " + Twine(info.end - info.begin) +
                     " bytes, but shape and dtype " + info.dtype + " need " + Twine(nbytes));
    file.tensors_.emplace(name, std::move(info));
  }
  // Tensors must not share bytes: sort by start, each must begin at or after
  // the previous end (empty tensors overlap nothing).
  std::vector<std::pair<const std::string *, const SafeTensorInfo *>> byStart;
  for (const auto &[name, info] : file.tensors_)
    if (info.end > info.begin)
      byStart.emplace_back(&name, &info);
  std::sort(byStart.begin(), byStart.end(),
            [](const auto &a, const auto &b) { return a.second->begin < b.second->begin; });
  for (size_t i = 1; i < byStart.size(); ++i) {
    const auto &[prevName, prev] = byStart[i - 1];
    const auto &[name, info] = byStart[i];
    if (info->begin < prev->end)
      return hfError(path + ": tensors '" + *prevName + "' [" + Twine(prev->begin) + ", " + Twine(prev->end) +
                     ") and '" + *name + "' [" + Twine(info->begin) + ", " + Twine(info->end) +
                     ") overlap in the data section");
  }
  file.buffer_ = std::move(buffer);
  return std::move(file);
}

llvm::Expected<mlir::enc::WeightTensor> SafeTensorsFile::read(const std::string &name) const {
  const SafeTensorInfo *info = find(name);
  if (!info)
    return hfError(path_ + ": tensor '" + name + "' is missing");
  mlir::enc::WeightType type;
  if (info->dtype == "F32")
    type = mlir::enc::WeightType::F32;
  else if (info->dtype == "F16")
    type = mlir::enc::WeightType::F16;
  else if (info->dtype == "BF16")
    type = mlir::enc::WeightType::BF16;
  else
    return hfError(path_ + ": tensor '" + name + "' has dtype " + info->dtype +
                   "; supported: F32, F16, BF16");
  const uint8_t *at = data_ + info->begin;
  if (reinterpret_cast<uintptr_t>(at) % mlir::enc::weightTypeSize(type) == 0)
    return mlir::enc::WeightTensor::view(type, info->shape, buffer_, at);
  // Misaligned for its element type (a header whose length is not a multiple
  // of 8): copied, so that readers may use it as an array.
  mlir::enc::WeightTensor copy = mlir::enc::WeightTensor::allocate(type, info->shape);
  std::memcpy(copy.mutableData(), at, copy.byteSize());
  return std::move(copy);
}
