//===- OnnxModel.cpp - An ONNX model file, read with bounds ---------------===//
//
// Field numbers from onnx.proto (ONNX 1.17): ModelProto ir_version = 1,
// producer_name = 2, producer_version = 3, graph = 7, opset_import = 8
// (domain = 1, version = 2). GraphProto node = 1, name = 2, initializer = 5,
// input = 11, output = 12. NodeProto input = 1, output = 2, name = 3,
// op_type = 4, attribute = 5, domain = 7. AttributeProto name = 1, f = 2,
// i = 3, s = 4, t = 5, g = 6, floats = 7, ints = 8, strings = 9, type = 20.
// TensorProto dims = 1, data_type = 2, float_data = 4, int32_data = 5,
// int64_data = 7, name = 8, raw_data = 9, double_data = 10, uint64_data = 11,
// external_data = 13 (key = 1, value = 2), data_location = 14.
// ValueInfoProto name = 1, type = 2; TypeProto tensor_type = 1 (elem_type =
// 1, shape = 2); TensorShapeProto dim = 1 (dim_value = 1, dim_param = 2).
// onnx.proto is proto2, so repeated numbers may come packed or one per field:
// both are read.
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/OnnxModel.h"

#include "frontends/ProtoWire.h"
#include "frontends/RegularFile.h"
#include "encrt/float16.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <limits>
#include <map>
#include <memory>

using namespace encc;
using namespace encc::onnx;
using llvm::StringRef;
using llvm::Twine;

namespace {

/// Dimensions and element counts past this are refused (2^40 elements: far
/// beyond any encoder, small enough that sizes in bytes cannot overflow).
constexpr int64_t kMaxElements = int64_t(1) << 40;

llvm::Error fail(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), encc::onnx::printable(msg.str()));
}

size_t elementSize(int32_t type) {
  switch (type) {
  case kFloat: case kInt32: case kUint32: return 4;
  case kUint8: case kInt8: case kBool: return 1;
  case kUint16: case kInt16: case kFloat16: case kBFloat16: return 2;
  case kInt64: case kDouble: case kUint64: return 8;
  default: return 0;
  }
}

/// Appends a repeated number field's value(s): packed (wire type 2) or one.
template <typename T, typename Conv>
bool appendRepeated(std::vector<T> &out, uint32_t wireType, uint64_t v, StringRef bytes, Conv conv) {
  if (wireType == 0) {
    out.push_back(conv(v));
    return true;
  }
  if (wireType != 2)
    return false;
  return ProtoWire::eachPackedVarint(bytes, [&](uint64_t x) { out.push_back(conv(x)); });
}

template <typename T> bool appendFixed(std::vector<T> &out, uint32_t wireType, StringRef bytes) {
  if (wireType != 2 && wireType != (sizeof(T) == 4 ? 5u : 1u))
    return false;
  if (bytes.size() % sizeof(T))
    return false;
  for (size_t i = 0; i < bytes.size(); i += sizeof(T)) {
    T x;
    std::memcpy(&x, bytes.data() + i, sizeof(T));
    out.push_back(x);
  }
  return true;
}

struct ExternalRef {
  std::string location;
  int64_t offset = 0, length = -1;
};

bool parseTensor(StringRef bytes, Tensor &t, ExternalRef &ext, bool &external) {
  external = false;
  return ProtoWire(bytes).each([&](uint32_t f, uint32_t w, uint64_t v, StringRef b) {
    switch (f) {
    case 1: return appendRepeated(t.dims, w, v, b, [](uint64_t x) { return int64_t(x); });
    case 2: t.dataType = int32_t(v); return w == 0;
    case 4: return appendFixed(t.floatData, w, b);
    case 5: return appendRepeated(t.int32Data, w, v, b, [](uint64_t x) { return int32_t(x); });
    case 7: return appendRepeated(t.int64Data, w, v, b, [](uint64_t x) { return int64_t(x); });
    case 8: t.name = b.str(); return w == 2;
    case 9: t.raw = b.str(); return w == 2;
    case 10: return appendFixed(t.doubleData, w, b);
    case 11: return appendRepeated(t.uint64Data, w, v, b, [](uint64_t x) { return x; });
    case 13: {
      std::string key, value;
      bool ok = w == 2 && ProtoWire(b).each([&](uint32_t f2, uint32_t w2, uint64_t, StringRef b2) {
        if (f2 == 1) key = b2.str();
        else if (f2 == 2) value = b2.str();
        return w2 == 2;
      });
      if (!ok)
        return false;
      if (key == "location")
        ext.location = value;
      else if (key == "offset" || key == "length") {
        int64_t n = 0;
        if (value.empty() || value.size() > 15 || StringRef(value).getAsInteger(10, n) || n < 0)
          return false;
        (key == "offset" ? ext.offset : ext.length) = n;
      }
      return true;
    }
    case 14: external = v == 1; return w == 0;
    default: return true;
    }
  });
}

bool parseAttribute(StringRef bytes, Attribute &a, std::string &why) {
  return ProtoWire(bytes).each([&](uint32_t f, uint32_t w, uint64_t v, StringRef b) {
    switch (f) {
    case 1: a.name = b.str(); return w == 2;
    case 2: if (w != 5) return false; a.f = ProtoWire::fixed32Float(b); return true;
    case 3: a.i = int64_t(v); return w == 0;
    case 4: a.s = b.str(); return w == 2;
    case 5: {
      a.t.emplace_back();
      ExternalRef ext;
      bool external = false;
      if (w != 2 || !parseTensor(b, a.t.back(), ext, external))
        return false;
      if (external) {
        why = "a tensor attribute with external data";
        return false;
      }
      return true;
    }
    case 6: a.type = Attribute::kGraph; return w == 2; // a subgraph: recorded, not read
    case 7: return appendFixed(a.floats, w, b);
    case 8: return appendRepeated(a.ints, w, v, b, [](uint64_t x) { return int64_t(x); });
    case 9: a.strings.push_back(b.str()); return w == 2;
    case 20: if (a.type != Attribute::kGraph) a.type = int32_t(v); return w == 0;
    default: return true;
    }
  });
}

bool parseNode(StringRef bytes, Node &n, std::string &why) {
  return ProtoWire(bytes).each([&](uint32_t f, uint32_t w, uint64_t, StringRef b) {
    switch (f) {
    case 1: n.inputs.push_back(b.str()); return w == 2;
    case 2: n.outputs.push_back(b.str()); return w == 2;
    case 3: n.name = b.str(); return w == 2;
    case 4: n.opType = b.str(); return w == 2;
    case 5: n.attributes.emplace_back(); return w == 2 && parseAttribute(b, n.attributes.back(), why);
    case 7: n.domain = b.str(); return w == 2;
    default: return true;
    }
  });
}

bool parseValueInfo(StringRef bytes, ValueInfo &vi) {
  return ProtoWire(bytes).each([&](uint32_t f, uint32_t w, uint64_t, StringRef b) {
    if (f == 1) {
      vi.name = b.str();
      return w == 2;
    }
    if (f != 2)
      return true;
    return w == 2 && ProtoWire(b).each([&](uint32_t f2, uint32_t w2, uint64_t, StringRef b2) {
      if (f2 != 1) // only tensor types
        return true;
      return w2 == 2 && ProtoWire(b2).each([&](uint32_t f3, uint32_t w3, uint64_t v3, StringRef b3) {
        if (f3 == 1) {
          vi.elemType = int32_t(v3);
          return w3 == 0;
        }
        if (f3 != 2)
          return true;
        vi.hasShape = true;
        return w3 == 2 && ProtoWire(b3).each([&](uint32_t f4, uint32_t w4, uint64_t, StringRef b4) {
          if (f4 != 1)
            return true;
          Dim d;
          bool ok = w4 == 2 && ProtoWire(b4).each([&](uint32_t f5, uint32_t w5, uint64_t v5, StringRef b5) {
            if (f5 == 1) d.value = int64_t(v5);
            else if (f5 == 2) d.param = b5.str();
            return f5 == 1 ? w5 == 0 : f5 == 2 ? w5 == 2 : true;
          });
          vi.dims.push_back(std::move(d));
          return ok;
        });
      });
    });
  });
}

/// Checks dims and that the data holds numElements() values; reads external data.
class TensorLoader {
public:
  TensorLoader(const std::string &path, const std::string &baseDir) : path(path), baseDir(baseDir) {}

  llvm::Error finish(Tensor &t, const ExternalRef &ext, bool external, const Twine &where) {
    const std::string what = (where + " '" + t.name + "'").str();
    int64_t n = 1;
    for (int64_t d : t.dims) {
      if (d < 0 || (d > 0 && n > kMaxElements / d))
        return fail(path + ": " + what + " has an invalid shape (a negative or too large dimension)");
      n *= d;
    }
    if (t.dataType == kString)
      return llvm::Error::success(); // never lowered; tensorFloats refuses it
    const size_t es = elementSize(t.dataType);
    if (es == 0)
      return fail(path + ": " + what + " has an unsupported data type " + Twine(t.dataType));
    if (!external)
      return llvm::Error::success();
    if (ext.location.empty())
      return fail(path + ": " + what + " has external data without a location");
    if (llvm::sys::path::is_absolute(ext.location) || StringRef(ext.location).contains(".."))
      return fail(path + ": " + what + ": external data location '" + ext.location +
                  "' must be a path inside the model's folder");
    if (baseDir.empty())
      return fail(path + ": " + what + " has external data, which needs the model's folder");
    auto &buf = files[ext.location];
    if (!buf) {
      llvm::SmallString<256> file(baseDir);
      llvm::sys::path::append(file, ext.location);
      // The text of the location is inside the folder; what it names must be
      // too (a symlink in the folder can point anywhere).
      llvm::SmallString<256> realDir, realFile;
      if (llvm::sys::fs::real_path(baseDir, realDir) || llvm::sys::fs::real_path(file, realFile))
        return fail(path + ": " + what + ": cannot read external data '" + file + "'");
      llvm::SmallString<256> prefix(realDir);
      llvm::sys::path::append(prefix, "");
      if (!llvm::StringRef(realFile).starts_with(prefix))
        return fail(path + ": " + what + ": external data location '" + ext.location + "' resolves to " +
                    realFile + ", outside the model's folder " + realDir);
      auto mb = readRegularFile(file.str().str(), kMaxWeightFileBytes, "external data");
      if (!mb)
        return fail(path + ": " + what + ": cannot use external data '" + ext.location + "': " +
                    llvm::toString(mb.takeError()));
      buf = std::move(*mb);
    }
    const uint64_t size = buf->getBufferSize();
    const uint64_t want = uint64_t(n) * es;
    const uint64_t len = ext.length < 0 ? want : uint64_t(ext.length);
    if (len != want || uint64_t(ext.offset) > size || len > size - uint64_t(ext.offset))
      return fail(path + ": " + what + ": external data (offset " + Twine(ext.offset) + ", length " + Twine(len) +
                  ") does not hold " + Twine(n) + " values in '" + ext.location + "' of " + Twine(size) + " bytes");
    t.raw.assign(buf->getBufferStart() + ext.offset, len);
    return llvm::Error::success();
  }

private:
  const std::string &path, &baseDir;
  std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> files;
};

} // namespace

const char *encc::onnx::dataTypeName(int32_t type) {
  switch (type) {
  case kFloat: return "FLOAT";
  case kUint8: return "UINT8";
  case kInt8: return "INT8";
  case kUint16: return "UINT16";
  case kInt16: return "INT16";
  case kInt32: return "INT32";
  case kInt64: return "INT64";
  case kString: return "STRING";
  case kBool: return "BOOL";
  case kFloat16: return "FLOAT16";
  case kDouble: return "DOUBLE";
  case kUint32: return "UINT32";
  case kUint64: return "UINT64";
  case kBFloat16: return "BFLOAT16";
  default: return "an unsupported type";
  }
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d; // dims were checked when the tensor was read
  return n;
}

std::string encc::onnx::printable(StringRef text) {
  // Each byte that does not start a valid UTF-8 sequence becomes U+FFFD.
  std::string s;
  auto *p = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  auto *end = reinterpret_cast<const llvm::UTF8 *>(text.end());
  while (p < end) {
    const llvm::UTF8 *valid = p;
    const bool rest = llvm::isLegalUTF8String(&p, end); // stops p at the first bad sequence
    s.append(reinterpret_cast<const char *>(valid), reinterpret_cast<const char *>(p));
    if (rest)
      break;
    s += "\xEF\xBF\xBD";
    ++p;
  }
  for (char &c : s)
    if ((unsigned char)c < 0x20 || c == 0x7f)
      c = '?';
  return s;
}

int64_t encc::onnx::saturatingInt(double v) {
  if (!(v == v))
    return 0;
  if (v >= 9.2233720368547748e18)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

namespace {

/// Calls f(i, value as double) for each element; an error when the data does
/// not hold numElements() values of the tensor's type.
template <typename F> llvm::Error eachValue(const Tensor &t, F f) {
  const int64_t n = t.numElements();
  auto mismatch = [&](size_t have) {
    return fail("tensor '" + t.name + "' (" + dataTypeName(t.dataType) + ", " + Twine(n) + " values) holds " +
                Twine(have) + " values");
  };
  if (t.dataType == kString || elementSize(t.dataType) == 0)
    return fail("tensor '" + t.name + "' has type " + dataTypeName(t.dataType) + ", not a number");
  if (!t.raw.empty() || (t.floatData.empty() && t.int32Data.empty() && t.int64Data.empty() &&
                         t.doubleData.empty() && t.uint64Data.empty() && n != 0)) {
    const size_t es = elementSize(t.dataType);
    if (t.raw.size() != uint64_t(n) * es)
      return mismatch(t.raw.size() / es);
    const char *p = t.raw.data();
    for (int64_t i = 0; i < n; ++i, p += es) {
      double v = 0;
      switch (t.dataType) {
      case kFloat: { float x; std::memcpy(&x, p, 4); v = x; break; }
      case kDouble: { double x; std::memcpy(&x, p, 8); v = x; break; }
      case kInt64: { int64_t x; std::memcpy(&x, p, 8); f(i, double(x), x); continue; }
      case kUint64: { uint64_t x; std::memcpy(&x, p, 8); f(i, double(x), int64_t(x)); continue; }
      case kInt32: { int32_t x; std::memcpy(&x, p, 4); v = x; break; }
      case kUint32: { uint32_t x; std::memcpy(&x, p, 4); v = x; break; }
      case kInt16: { int16_t x; std::memcpy(&x, p, 2); v = x; break; }
      case kUint16: { uint16_t x; std::memcpy(&x, p, 2); v = x; break; }
      case kInt8: v = int8_t(*p); break;
      case kUint8: case kBool: v = uint8_t(*p); break;
      case kFloat16: { uint16_t x; std::memcpy(&x, p, 2); v = encm_f16_to_f32(x); break; }
      case kBFloat16: { uint16_t x; std::memcpy(&x, p, 2); v = encm_bf16_to_f32(x); break; }
      }
      f(i, v, saturatingInt(v));
    }
    return llvm::Error::success();
  }
  switch (t.dataType) {
  case kFloat:
    if (int64_t(t.floatData.size()) != n) return mismatch(t.floatData.size());
    for (int64_t i = 0; i < n; ++i) f(i, double(t.floatData[i]), saturatingInt(t.floatData[i]));
    return llvm::Error::success();
  case kDouble:
    if (int64_t(t.doubleData.size()) != n) return mismatch(t.doubleData.size());
    for (int64_t i = 0; i < n; ++i) f(i, t.doubleData[i], saturatingInt(t.doubleData[i]));
    return llvm::Error::success();
  case kInt64:
    if (int64_t(t.int64Data.size()) != n) return mismatch(t.int64Data.size());
    for (int64_t i = 0; i < n; ++i) f(i, double(t.int64Data[i]), t.int64Data[i]);
    return llvm::Error::success();
  case kUint32: case kUint64:
    if (int64_t(t.uint64Data.size()) != n) return mismatch(t.uint64Data.size());
    for (int64_t i = 0; i < n; ++i) f(i, double(t.uint64Data[i]), int64_t(t.uint64Data[i]));
    return llvm::Error::success();
  default: // int32_data carries every narrower type, f16/bf16 as their bits
    if (int64_t(t.int32Data.size()) != n) return mismatch(t.int32Data.size());
    for (int64_t i = 0; i < n; ++i) {
      const int32_t x = t.int32Data[i];
      const double v = t.dataType == kFloat16    ? double(encm_f16_to_f32(uint16_t(x)))
                       : t.dataType == kBFloat16 ? double(encm_bf16_to_f32(uint16_t(x)))
                                                 : double(x);
      f(i, v, saturatingInt(v));
    }
    return llvm::Error::success();
  }
}

} // namespace

llvm::Expected<std::vector<float>> encc::onnx::tensorFloats(const Tensor &t) {
  std::vector<float> out(size_t(t.numElements()));
  if (auto err = eachValue(t, [&](int64_t i, double v, int64_t) { out[size_t(i)] = float(v); }))
    return std::move(err);
  return out;
}

llvm::Expected<std::vector<int64_t>> encc::onnx::tensorInts(const Tensor &t) {
  std::vector<int64_t> out(size_t(t.numElements()));
  if (auto err = eachValue(t, [&](int64_t i, double, int64_t v) { out[size_t(i)] = v; }))
    return std::move(err);
  return out;
}

const Attribute *Node::attribute(StringRef name) const {
  for (const Attribute &a : attributes)
    if (a.name == name)
      return &a;
  return nullptr;
}

int64_t Model::opset(StringRef domain) const {
  const bool main = domain.empty() || domain == "ai.onnx";
  for (auto &[d, v] : opsets)
    if (main ? (d.empty() || d == "ai.onnx") : d == domain)
      return v;
  return 0;
}

llvm::Expected<Model> encc::onnx::parseOnnxModel(StringRef bytes, const std::string &path,
                                                 const std::string &baseDir) {
  Model m;
  std::string why;
  StringRef graphBytes;
  bool sawGraph = false;
  bool ok = ProtoWire(bytes).each([&](uint32_t f, uint32_t w, uint64_t v, StringRef b) {
    switch (f) {
    case 1: m.irVersion = int64_t(v); return w == 0;
    case 2: m.producerName = b.str(); return w == 2;
    case 3: m.producerVersion = b.str(); return w == 2;
    case 7: graphBytes = b; sawGraph = true; return w == 2;
    case 8: {
      std::string domain;
      int64_t version = 0;
      bool good = w == 2 && ProtoWire(b).each([&](uint32_t f2, uint32_t w2, uint64_t v2, StringRef b2) {
        if (f2 == 1) domain = b2.str();
        else if (f2 == 2) version = int64_t(v2);
        return f2 == 1 ? w2 == 2 : f2 == 2 ? w2 == 0 : true;
      });
      m.opsets.emplace_back(domain, version);
      return good;
    }
    default: return true;
    }
  });
  if (!ok)
    return fail(path + ": not an ONNX model (malformed or truncated protobuf)");
  if (!sawGraph || m.irVersion <= 0)
    return fail(path + ": not an ONNX model (no " + (sawGraph ? "ir_version" : "graph") + ")");
  if (m.opset("") == 0)
    return fail(path + ": the model imports no ai.onnx opset");

  TensorLoader loader(path, baseDir);
  std::vector<std::pair<ExternalRef, bool>> exts;
  std::string where = "the graph"; // what was being read when a message was malformed
  ok = ProtoWire(graphBytes).each([&](uint32_t f, uint32_t w, uint64_t, StringRef b) {
    if (w != 2 && (f == 1 || f == 2 || f == 5 || f == 11 || f == 12))
      return false;
    switch (f) {
    case 1:
      where = "graph.node[" + std::to_string(m.graph.nodes.size()) + "]";
      m.graph.nodes.emplace_back();
      return parseNode(b, m.graph.nodes.back(), why);
    case 2: m.graph.name = b.str(); return true;
    case 5: {
      m.graph.initializers.emplace_back();
      ExternalRef ext;
      bool external = false;
      where = "graph.initializer[" + std::to_string(m.graph.initializers.size() - 1) + "]";
      bool good = parseTensor(b, m.graph.initializers.back(), ext, external);
      exts.emplace_back(ext, external);
      return good;
    }
    case 11: where = "graph.input"; m.graph.inputs.emplace_back(); return parseValueInfo(b, m.graph.inputs.back());
    case 12: where = "graph.output"; m.graph.outputs.emplace_back(); return parseValueInfo(b, m.graph.outputs.back());
    default: return true;
    }
  });
  if (!ok)
    return fail(path + ": not an ONNX model (malformed protobuf in " + where + ")" + (why.empty() ? "" : ": " + why));
  for (size_t i = 0; i < m.graph.initializers.size(); ++i)
    if (auto err = loader.finish(m.graph.initializers[i], exts[i].first, exts[i].second, "initializer"))
      return std::move(err);
  for (Node &n : m.graph.nodes)
    for (Attribute &a : n.attributes)
      for (Tensor &t : a.t)
        if (auto err = loader.finish(t, ExternalRef{}, false, "node '" + n.name + "' attribute " + a.name))
          return std::move(err);
  return m;
}

llvm::Expected<Model> encc::onnx::readOnnxModel(const std::string &path) {
  auto buf = readRegularFile(path, kMaxWeightFileBytes, "ONNX model");
  if (!buf)
    return buf.takeError();
  std::string dir = llvm::sys::path::parent_path(path).str();
  if (dir.empty())
    dir = ".";
  return parseOnnxModel((*buf)->getBuffer(), path, dir);
}
