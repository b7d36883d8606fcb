//===- OnnxModel.h - An ONNX model file, read with bounds -----------------===//
//
// The parts of onnx.proto (ModelProto) the ONNX frontend lowers: opset
// imports, the graph's nodes with their attributes, initialisers (inline or
// in external-data files next to the model), inputs and outputs with their
// shapes. Read from the protobuf wire format directly (frontends/ProtoWire.h);
// every length, dimension and data size is checked, and errors are one line
// naming the file and the message that is wrong. Subgraphs (If, Loop, Scan
// bodies) are not read: such an attribute is recorded as present, and the
// importer refuses the node.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_ONNX_ONNXMODEL_H
#define ENCC_FRONTENDS_ONNX_ONNXMODEL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace encc::onnx {

/// TensorProto.DataType values.
enum DataType : int32_t {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
  kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13, kBFloat16 = 16,
};
/// "FLOAT", "INT64", ... for messages.
const char *dataTypeName(int32_t type);

/// A TensorProto. After reading, its data is in exactly one of the typed
/// fields or in `raw` (raw_data, or the bytes of its external-data file).
struct Tensor {
  std::string name;
  int32_t dataType = kUndefined;
  std::vector<int64_t> dims;
  std::string raw;
  std::vector<float> floatData;
  std::vector<int32_t> int32Data;
  std::vector<int64_t> int64Data;
  std::vector<double> doubleData;
  std::vector<uint64_t> uint64Data;

  int64_t numElements() const;
};

/// The tensor's values as float / int64 (any numeric type; f16 and bf16
/// widened). Errors name the tensor and say what does not add up (a data size
/// that is not numElements() values, a string tensor).
llvm::Expected<std::vector<float>> tensorFloats(const Tensor &t);
llvm::Expected<std::vector<int64_t>> tensorInts(const Tensor &t);

/// `text` safe to print in a one-line message: invalid UTF-8 replaced (U+FFFD),
/// control characters as '?' (names in a file are not trusted to be text).
std::string printable(llvm::StringRef text);

/// `v` as an integer: truncated, saturated at the int64 range, NaN as 0 (a
/// float read as an integer must not be undefined behaviour).
int64_t saturatingInt(double v);

struct Attribute {
  enum Type : int32_t { kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5, kFloats = 6, kInts = 7,
                        kStrings = 8 };
  std::string name;
  int32_t type = 0;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<Tensor> t; ///< one element for kTensor
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

struct Node {
  std::string name, opType, domain;
  std::vector<std::string> inputs, outputs; ///< "" = an omitted optional input
  std::vector<Attribute> attributes;
  const Attribute *attribute(llvm::StringRef name) const;
};

/// A dimension of a declared shape: a value (>= 0) or a named parameter.
struct Dim {
  int64_t value = -1;
  std::string param;
};

struct ValueInfo {
  std::string name;
  int32_t elemType = kUndefined;
  bool hasShape = false;
  std::vector<Dim> dims;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs;
};

struct Model {
  int64_t irVersion = 0;
  std::vector<std::pair<std::string, int64_t>> opsets; ///< domain ("" = ai.onnx) -> version
  std::string producerName, producerVersion;
  Graph graph;
  /// The version imported for `domain` ("" and "ai.onnx" are the same); 0 if none.
  int64_t opset(llvm::StringRef domain) const;
};

/// Parses a serialised ModelProto. External-data initialisers are read from
/// files relative to `baseDir` (a location that is absolute or leaves baseDir
/// is refused); `path` names the model in errors.
llvm::Expected<Model> parseOnnxModel(llvm::StringRef bytes, const std::string &path, const std::string &baseDir);

/// Reads and parses the file at `path` (its directory is the base of external data).
llvm::Expected<Model> readOnnxModel(const std::string &path);

} // namespace encc::onnx

#endif // ENCC_FRONTENDS_ONNX_ONNXMODEL_H
