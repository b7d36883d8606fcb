//===- Safetensors.cpp - Minimal safetensors reader/writer for tests ------===//

#include "tests/support/Safetensors.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace encc::testing {

namespace {

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw std::runtime_error(path + ": " + what);
}

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

size_t dtypeSize(const std::string &dt) {
  if (dt == "F64" || dt == "I64" || dt == "U64")
    return 8;
  if (dt == "F32" || dt == "I32" || dt == "U32")
    return 4;
  if (dt == "F16" || dt == "BF16" || dt == "I16" || dt == "U16")
    return 2;
  if (dt == "I8" || dt == "U8" || dt == "BOOL")
    return 1;
  return 0;
}

template <typename T> T readLE(const unsigned char *p) {
  // Little-endian host assumed (x86-64 / aarch64), as safetensors is LE.
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double decode(const std::string &dt, const unsigned char *p) {
  if (dt == "F64")
    return readLE<double>(p);
  if (dt == "F32")
    return readLE<float>(p);
  if (dt == "F16")
    return halfBitsToFloat(readLE<uint16_t>(p));
  if (dt == "BF16")
    return bf16BitsToFloat(readLE<uint16_t>(p));
  if (dt == "I64")
    return double(readLE<int64_t>(p));
  if (dt == "U64")
    return double(readLE<uint64_t>(p));
  if (dt == "I32")
    return readLE<int32_t>(p);
  if (dt == "U32")
    return readLE<uint32_t>(p);
  if (dt == "I16")
    return readLE<int16_t>(p);
  if (dt == "U16")
    return readLE<uint16_t>(p);
  if (dt == "I8")
    return readLE<int8_t>(p);
  return readLE<uint8_t>(p); // U8, BOOL
}

} // namespace

uint16_t floatToHalfBits(float f) {
  uint32_t x = floatBits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) // inf / NaN
    return uint16_t(sign | 0x7c00u | (man ? 0x200u : 0u));
  int e = int(exp) - 127 + 15;
  if (e >= 0x1f)
    return uint16_t(sign | 0x7c00u);
  if (e <= 0) {
    // Subnormal half (or zero): shift the full mantissa into place.
    if (e < -10)
      return sign;
    man |= 0x800000u;
    int shift = 14 - e; // 24-bit mantissa -> 10-bit field at exponent 0
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
    ++half; // may carry into the exponent, up to inf: correct RNE
  return uint16_t(sign | half);
}

float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  if (exp == 0x1f)
    return bitsFloat(sign | 0x7f800000u | (man << 13));
  return bitsFloat(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

uint16_t floatToBF16Bits(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet
    return uint16_t((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

float bf16BitsToFloat(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

double roundToDtype(double x, const std::string &dtype) {
  if (dtype == "F64")
    return x;
  float f = float(x);
  if (dtype == "F32")
    return f;
  if (dtype == "F16")
    return halfBitsToFloat(floatToHalfBits(f));
  if (dtype == "BF16")
    return bf16BitsToFloat(floatToBF16Bits(f));
  throw std::runtime_error("roundToDtype: unsupported dtype '" + dtype +
                           "' (expected F64, F32, F16 or BF16)");
}

SafetensorsF64 loadSafetensorsF64(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, "cannot open safetensors file");
  in.seekg(0, std::ios::end);
  uint64_t fileSize = uint64_t(in.tellg());
  in.seekg(0);
  if (fileSize < 8)
    fail(path, "file too small for a safetensors header");
  unsigned char lenBytes[8];
  in.read(reinterpret_cast<char *>(lenBytes), 8);
  uint64_t headerLen = readLE<uint64_t>(lenBytes);
  if (headerLen > fileSize - 8)
    fail(path, "header length " + std::to_string(headerLen) +
                   " exceeds file size " + std::to_string(fileSize));
  std::string header(headerLen, '\0');
  in.read(header.data(), std::streamsize(headerLen));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const std::exception &e) {
    fail(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!j.is_object())
    fail(path, "header is not a JSON object");
  uint64_t dataStart = 8 + headerLen, dataSize = fileSize - dataStart;
  std::vector<unsigned char> data(dataSize);
  in.read(reinterpret_cast<char *>(data.data()), std::streamsize(dataSize));
  if (!in)
    fail(path, "short read of the data section");

  SafetensorsF64 out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string &name = it.key();
    const auto &t = it.value();
    if (name == "__metadata__") {
      if (t.is_object())
        for (auto m = t.begin(); m != t.end(); ++m)
          if (m.value().is_string())
            out.metadata[m.key()] = m.value().get<std::string>();
      continue;
    }
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") ||
        !t.contains("data_offsets"))
      fail(path, "tensor '" + name +
                     "': expected an object with dtype, shape, data_offsets");
    std::string dt = t["dtype"].get<std::string>();
    size_t es = dtypeSize(dt);
    if (!es)
      fail(path, "tensor '" + name + "': unsupported dtype '" + dt + "'");
    std::vector<int64_t> shape = t["shape"].get<std::vector<int64_t>>();
    uint64_t n = 1;
    for (int64_t d : shape) {
      if (d < 0)
        fail(path, "tensor '" + name + "': negative dimension");
      n *= uint64_t(d);
    }
    auto offs = t["data_offsets"].get<std::vector<uint64_t>>();
    if (offs.size() != 2 || offs[0] > offs[1] || offs[1] > dataSize)
      fail(path, "tensor '" + name + "': data_offsets out of range");
    if (offs[1] - offs[0] != n * es)
      fail(path, "tensor '" + name + "': data_offsets span " +
                     std::to_string(offs[1] - offs[0]) + " bytes, shape needs " +
                     std::to_string(n * es));
    std::vector<double> v(n);
    const unsigned char *p = data.data() + offs[0];
    for (uint64_t i = 0; i < n; ++i)
      v[i] = decode(dt, p + i * es);
    out.weights[name] = std::move(v);
    out.shapes[name] = shape;
    out.dtypes[name] = dt;
  }
  return out;
}

void writeSafetensors(const std::string &path, const WeightMap &weights,
                      const ShapeMap &shapes, const std::string &dtype) {
  size_t es = (dtype == "F32") ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
  if (!es)
    fail(path, "writeSafetensors: unsupported dtype '" + dtype +
                   "' (expected F32, F16 or BF16)");
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const auto &[name, values] : weights) {
    auto s = shapes.find(name);
    if (s == shapes.end())
      fail(path, "writeSafetensors: no shape for tensor '" + name + "'");
    uint64_t n = 1;
    for (int64_t d : s->second)
      n *= uint64_t(d);
    if (n != values.size())
      fail(path, "writeSafetensors: tensor '" + name + "' has " +
                     std::to_string(values.size()) + " values, shape needs " +
                     std::to_string(n));
    header[name] = {{"dtype", dtype},
                    {"shape", s->second},
                    {"data_offsets", {offset, offset + n * es}}};
    offset += n * es;
  }
  std::string h = header.dump();
  while (h.size() % 8)
    h.push_back(' ');
  std::ofstream out(path, std::ios::binary);
  if (!out)
    fail(path, "cannot create file");
  uint64_t len = h.size();
  unsigned char lenBytes[8];
  for (int i = 0; i < 8; ++i)
    lenBytes[i] = (unsigned char)(len >> (8 * i));
  out.write(reinterpret_cast<const char *>(lenBytes), 8);
  out.write(h.data(), std::streamsize(h.size()));
  std::vector<unsigned char> buf;
  for (const auto &[name, values] : weights) {
    buf.resize(values.size() * es);
    for (size_t i = 0; i < values.size(); ++i) {
      float f = float(values[i]);
      if (es == 4) {
        std::memcpy(&buf[i * 4], &f, 4);
      } else {
        uint16_t b = dtype == "F16" ? floatToHalfBits(f) : floatToBF16Bits(f);
        buf[i * 2] = (unsigned char)(b & 0xff);
        buf[i * 2 + 1] = (unsigned char)(b >> 8);
      }
    }
    out.write(reinterpret_cast<const char *>(buf.data()),
              std::streamsize(buf.size()));
  }
  if (!out)
    fail(path, "write failed");
}

} // namespace encc::testing
