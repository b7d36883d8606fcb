//===- OnnxImport.cpp - ONNX model -> enc module + weights ----------------===//
//
// One pass over the nodes the chosen output depends on, in graph order (ONNX
// requires topological order). Each ONNX value becomes a `Val`: a constant
// (shape vectors may hold the symbols batch and sequence), one of the model's
// id inputs or a pattern of ids (positions 0..S-1 + offset, all zeros), the
// attention mask as a * mask + c, a partial embedding (a sum of Gathers), or
// a tensor of the enc module, possibly a pending head reshape / transpose.
// transformers 5.x builds the key-padding mask by indexing: GatherND of the
// boolean mask at (arange(batch), arange(sequence)) grids, And-ed with
// all-true comparisons, Where'd into 0 / -FLT_MAX; those values are Iota
// (an arange along one axis), IndexPair, AllTrue and ShapeOnly (a value
// used only for its shape), and the mask stays a Mask throughout.
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/OnnxImport.h"
#include "frontends/EmitPooling.h"

#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

using namespace encc;
using namespace mlir;
using llvm::Twine;

namespace {

constexpr int64_t kBatch = std::numeric_limits<int64_t>::min() + 1;
constexpr int64_t kSeq = std::numeric_limits<int64_t>::min() + 2;
/// Initialisers larger than this stay undecoded until a weight needs them.
constexpr int64_t kDecodeLimit = 4096;

bool isSym(int64_t d) { return d == kBatch || d == kSeq; }

std::string dimText(int64_t d) {
  return d == kBatch ? "batch" : d == kSeq ? "sequence" : std::to_string(d);
}

std::string shapeText(llvm::ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dimText(dims[i]);
  return s + "]";
}

/// Static dims a shape computation may produce: 0 .. 2^31 (and the two symbols).
constexpr int64_t kMaxDim = int64_t(1) << 31;

/// True when every dim is a symbol or in [0, kMaxDim] and the static product
/// stays below 2^40 (so products of shapes cannot overflow).
bool saneDims(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d == kBatch || d == kSeq)
      continue;
    if (d < 0 || d > kMaxDim)
      return false;
    if (d > 0 && n > (int64_t(1) << 40) / d)
      return false;
    n *= d;
  }
  return true;
}

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

struct Val {
  enum Kind {
    Const, Ids, TypeIds, IdPattern, Mask, MaskIndex, PadDerived, Embed, Tensor,
    Iota, IndexPair, AllTrue, ShapeOnly, NanTest
  } kind = Tensor;
  std::vector<int64_t> dims; ///< the logical shape (batch / sequence as symbols)
  // Const: floats in f, integers in i (which may hold symbols); a large float
  // initialiser stays in `init` until it is used as a weight.
  bool isFloat = false;
  std::vector<double> f;
  std::vector<int64_t> i;
  const onnx::Tensor *init = nullptr;
  std::string name; ///< the ONNX value name (initialisers: their name)
  // IdPattern: ids[.., s] = s + offset, or 0 everywhere.
  bool zeros = false;
  int64_t offset = 0;
  int64_t padId = -1; ///< IdPattern from RoBERTa's pad-derived positions: the pad id they skip
  // PadDerived: RoBERTa's positions from the ids, (cumsum(ids != pad) * (ids != pad)) + pad,
  // step by step; `offset` holds the pad id.
  enum PadStage { IsPad, NotPad, CumSum, Masked } stage = IsPad;
  // Mask: a * attention_mask + c.
  double a = 1, c = 0;
  // Embed: the tables gathered so far.
  mlir::Value word, pos, type;
  int64_t posOffset = 0, posPadId = -1;
  bool typeFromInput = false;
  // Iota: the value is the index along dims[iotaAxis], an arange over the batch or the sequence
  // (iotaOf: kBatch or kSeq). IndexPair: [..., 2], the two iotas (pairOf, pairAxis) side by side.
  int64_t iotaAxis = 0, iotaOf = 0;
  int64_t pairAxis[2] = {0, 0}, pairOf[2] = {0, 0};
  // Tensor (and NanTest: the tensor tested).
  mlir::Value v;
  // Flat3 / Flat3T: a [B, h, S, D] tensor viewed as [B*h, S, D] (then transposed), on the way to
  // the keys' [B, h, D, S]; dims stay the 4-D ones.
  enum Layout { Plain, Reshaped4, HeadsT, MergePending, Flat3, Flat3T } layout = Plain;
  /// Scalars not yet applied (x * c, x / c on 4-D heads): the attention product applies them
  /// to the scores, any other use first (a multiply, then a divide, as the graph had them).
  double factor = 1, divisor = 1;

  bool isConst() const { return kind == Const; }
  int64_t numElements() const { return product(dims); }
};

class Lowerer {
public:
  Lowerer(MLIRContext &ctx, const onnx::Model &m, const std::string &src, const OnnxImportOptions &opts,
          enc::WeightStore &weights)
      : b(&ctx), m(m), src(src), opts(opts), weights(weights) {
    fileLoc = FileLineColLoc::get(&ctx, src, 0, 0);
  }

  llvm::Expected<OwningOpRef<ModuleOp>> run(ModelDescription &desc);

private:
  llvm::Error err(const Twine &msg) const { return hfError(onnx::printable((src + ": " + msg).str())); }
  llvm::Error nodeErr(const onnx::Node &n, const Twine &msg) const {
    return hfError(onnx::printable((src + ": node '" + n.name + "' (" + n.opType + "): " + msg).str()));
  }
  Location loc(const onnx::Node &n) { return NameLoc::get(b.getStringAttr(n.name), fileLoc); }

  llvm::Expected<Val> initializerVal(const onnx::Tensor &t);
  llvm::Error lowerNode(const onnx::Node &n);
  llvm::Expected<Val *> input(const onnx::Node &n, size_t k, bool optional = false);
  /// Inputs 0 and 1 of `n`, both required.
  llvm::Expected<std::pair<Val *, Val *>> inputPair(const onnx::Node &n) {
    auto a = input(n, 0);
    if (!a)
      return a.takeError();
    auto b = input(n, 1);
    if (!b)
      return b.takeError();
    return std::make_pair(*a, *b);
  }
  llvm::Expected<std::vector<int64_t>> ints(const onnx::Node &n, const Val &v, const char *what);
  llvm::Expected<std::vector<double>> floats(const onnx::Node &n, const Val &v);
  llvm::Expected<mlir::Value> tensor(const onnx::Node &n, Val &v);
  llvm::Expected<mlir::Value> weight(const onnx::Node &n, Val &v, const std::string &name, bool transpose2d);
  mlir::Value constantOp(const onnx::Node &n, const Val &v, llvm::ArrayRef<double> values);
  RankedTensorType typeOf(llvm::ArrayRef<int64_t> dims) {
    SmallVector<int64_t> shape;
    for (int64_t d : dims)
      shape.push_back(isSym(d) ? ShapedType::kDynamic : d);
    return RankedTensorType::get(shape, b.getF32Type());
  }
  /// x * factor / divisor as enc.binary ops (none where 1).
  mlir::Value applyScalars(const onnx::Node &n, mlir::Value x, double factor, double divisor) {
    const Val scalar; // rank 0
    if (factor != 1)
      x = b.create<enc::BinaryOp>(loc(n), x.getType(), x, constantOp(n, scalar, {factor}), enc::BinaryKind::mul);
    if (divisor != 1)
      x = b.create<enc::BinaryOp>(loc(n), x.getType(), x, constantOp(n, scalar, {divisor}), enc::BinaryKind::div);
    return x;
  }
  Val tensorVal(mlir::Value v, std::vector<int64_t> dims) {
    Val r;
    r.kind = Val::Tensor;
    r.v = v;
    r.dims = std::move(dims);
    return r;
  }

  llvm::Error lowerArithmetic(const onnx::Node &n, enc::BinaryKind kind);
  llvm::Error lowerMicrosoft(const onnx::Node &n);
  /// GELU of input 0 (plus input 1 as a bias: com.microsoft BiasGelu / FastGelu).
  llvm::Error lowerGelu(const onnx::Node &n, enc::GeluApproximation approx, bool withBias);
  llvm::Error refuseUsedOutputs(const onnx::Node &n, size_t from);
  llvm::Expected<mlir::Value> addBias(const onnx::Node &n, mlir::Value x, size_t biasInput);
  /// enc.layernorm of x with the gamma at input `gammaInput` and the beta at
  /// `betaInput` (optional: zeros).
  llvm::Expected<mlir::Value> layerNorm(const onnx::Node &n, mlir::Value x, size_t gammaInput, size_t betaInput,
                                        float epsilon);
  llvm::Error lowerConstArithmetic(const onnx::Node &n, Val &x, Val &y, enc::BinaryKind kind);
  llvm::Error lowerGather(const onnx::Node &n);
  llvm::Error lowerMatMul(const onnx::Node &n);
  llvm::Error lowerGemm(const onnx::Node &n);
  llvm::Error lowerReshape(const onnx::Node &n);
  llvm::Error lowerTranspose(const onnx::Node &n);
  llvm::Error lowerSlice(const onnx::Node &n);
  llvm::Error lowerUnsqueeze(const onnx::Node &n, bool squeeze);
  llvm::Expected<std::vector<int64_t>> axesOf(const onnx::Node &n, size_t inputIndex, int64_t rank);

  /// A value of `kind` and `dims`, the rest default.
  static Val shaped(Val::Kind kind, std::vector<int64_t> dims) {
    Val r;
    r.kind = kind;
    r.dims = std::move(dims);
    return r;
  }
  /// Sets n's output to a value of `kind` and `dims` (nothing else to say about it).
  llvm::Error setKind(const onnx::Node &n, Val::Kind kind, std::vector<int64_t> dims) {
    set(n, shaped(kind, std::move(dims)));
    return llvm::Error::success();
  }

  void set(const onnx::Node &n, Val v, size_t k = 0) {
    if (k < n.outputs.size() && !n.outputs[k].empty()) {
      v.name = n.outputs[k];
      vals[n.outputs[k]] = std::move(v);
    }
  }

  OpBuilder b;
  OpBuilder weightBuilder{b.getContext()};
  Location fileLoc = UnknownLoc::get(b.getContext());
  const onnx::Model &m;
  const std::string &src;
  const OnnxImportOptions &opts;
  enc::WeightStore &weights;
  std::map<std::string, Val> vals;
  std::map<std::string, const onnx::Tensor *> inits;
  std::map<std::string, mlir::Value> weightOps; ///< weight name -> enc.weight
  mlir::Value idsArg, lengthsArg, typeIdsArg;
  /// The hidden state whose [CLS] row a classification head reads (Gather
  /// along the sequence at index 0), else null.
  mlir::Value clsSource;
  int64_t typeVocab = 0;
};

llvm::Expected<Val> Lowerer::initializerVal(const onnx::Tensor &t) {
  Val v;
  v.kind = Val::Const;
  v.name = t.name;
  v.dims = t.dims;
  const bool isFloat = t.dataType == onnx::kFloat || t.dataType == onnx::kFloat16 ||
                       t.dataType == onnx::kBFloat16 || t.dataType == onnx::kDouble;
  v.isFloat = isFloat;
  if (isFloat && t.numElements() > kDecodeLimit) {
    v.init = &t;
    return v;
  }
  if (isFloat) {
    auto f = onnx::tensorFloats(t);
    if (!f)
      return f.takeError();
    v.f.assign(f->begin(), f->end());
  } else {
    auto i = onnx::tensorInts(t);
    if (!i)
      return i.takeError();
    if (llvm::any_of(*i, isSym)) // the two values that stand for batch and sequence
      return hfError("tensor '" + t.name + "' holds " + Twine(std::numeric_limits<int64_t>::min() + 1) +
                     " or one more, which the frontend reserves");
    v.i = std::move(*i);
  }
  return v;
}

llvm::Expected<Val *> Lowerer::input(const onnx::Node &n, size_t k, bool optional) {
  if (k >= n.inputs.size() || n.inputs[k].empty()) {
    if (optional)
      return nullptr;
    return nodeErr(n, "input " + Twine(k) + " is missing");
  }
  const std::string &name = n.inputs[k];
  auto it = vals.find(name);
  if (it != vals.end())
    return &it->second;
  if (auto init = inits.find(name); init != inits.end()) {
    auto v = initializerVal(*init->second);
    if (!v)
      return err(llvm::toString(v.takeError()));
    return &(vals[name] = std::move(*v));
  }
  return nodeErr(n, "input '" + name + "' is neither a graph input, an initializer nor an earlier node's output");
}

llvm::Expected<std::vector<int64_t>> Lowerer::ints(const onnx::Node &n, const Val &v, const char *what) {
  if (!v.isConst())
    return nodeErr(n, Twine(what) + " '" + v.name + "' is not a constant (shapes must be known at compile time)");
  if (!v.isFloat)
    return v.i;
  std::vector<int64_t> out;
  for (double x : v.f) {
    if (x != std::floor(x) || std::abs(x) > 1e15)
      return nodeErr(n, Twine(what) + " '" + v.name + "' holds a non-integer");
    out.push_back(int64_t(x));
  }
  return out;
}

llvm::Expected<std::vector<double>> Lowerer::floats(const onnx::Node &n, const Val &v) {
  if (!v.isConst())
    return nodeErr(n, "'" + v.name + "' is not a constant");
  if (v.init) {
    auto f = onnx::tensorFloats(*v.init);
    if (!f)
      return err(llvm::toString(f.takeError()));
    return std::vector<double>(f->begin(), f->end());
  }
  if (v.isFloat)
    return v.f;
  std::vector<double> out;
  for (int64_t x : v.i) {
    if (isSym(x))
      return nodeErr(n, "'" + v.name + "' holds the " + dimText(x) + " dimension, used as a number");
    out.push_back(double(x));
  }
  return out;
}

mlir::Value Lowerer::constantOp(const onnx::Node &n, const Val &v, llvm::ArrayRef<double> values) {
  std::vector<float> f(values.begin(), values.end());
  auto type = typeOf(v.dims);
  auto attr = DenseElementsAttr::get(type, llvm::ArrayRef<float>(f));
  return b.create<enc::ConstantOp>(loc(n), type, cast<TypedAttr>(attr));
}

llvm::Expected<mlir::Value> Lowerer::weight(const onnx::Node &n, Val &v, const std::string &nameIn,
                                            bool transpose2d) {
  if (!v.isConst() || !v.isFloat)
    return nodeErr(n, "'" + v.name + "' must be a float constant here");
  std::string name = nameIn;
  if (auto it = weightOps.find(name); it != weightOps.end())
    return it->second;
  auto values = floats(n, v);
  if (!values)
    return values.takeError();
  if (!opts.allowNonFinite)
    for (double x : *values)
      if (!std::isfinite(x))
        return nodeErr(n, "initializer '" + v.name + "' holds NaN or infinity (--allow-non-finite accepts it)");
  if (v.dims.empty() || llvm::any_of(v.dims, [](int64_t d) { return d <= 0; }))
    return nodeErr(n, "weight '" + v.name + "' has the shape " + shapeText(v.dims) + " (a tensor with no empty "
                      "dimension expected)");
  std::vector<int64_t> shape = v.dims;
  if (transpose2d) {
    if (v.dims.size() != 2)
      return nodeErr(n, "weight '" + v.name + "' is not a matrix");
    shape = {v.dims[1], v.dims[0]};
  }
  auto t = enc::WeightTensor::allocate(enc::WeightType::F32, shape);
  float *out = t.mutableF32();
  if (transpose2d) {
    const int64_t k = v.dims[0], nn = v.dims[1];
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < nn; ++c)
        out[c * k + r] = float((*values)[size_t(r * nn + c)]);
  } else {
    for (size_t i = 0; i < values->size(); ++i)
      out[i] = float((*values)[i]);
  }
  auto type = typeOf(t.shape);
  weights.set(name, std::move(t));
  mlir::Value w = weightBuilder.create<enc::WeightOp>(NameLoc::get(b.getStringAttr(v.name), fileLoc), type, name);
  weightOps[name] = w;
  return w;
}

/// The tensor of `v` for an op that reads it: a partial embedding becomes
/// its enc.embedding here; a pending head reshape is an error.
llvm::Expected<mlir::Value> Lowerer::tensor(const onnx::Node &n, Val &v) {
  if (v.kind == Val::Embed) {
    if (!v.word || !v.pos)
      return nodeErr(n, "reads an embedding sum without a " + Twine(v.word ? "position" : "word") +
                            " table Gather (the frontend needs word[input_ids] + position[0..S-1] [+ type])");
    mlir::Value type = v.type;
    if (!type) { // no token types: one zero row
      const int64_t h = cast<RankedTensorType>(v.word.getType()).getDimSize(1);
      Val zeros;
      zeros.kind = Val::Const;
      zeros.isFloat = true;
      zeros.dims = {1, h};
      zeros.f.assign(size_t(h), 0.0);
      zeros.name = "onnx.token_type_zeros";
      auto w = weight(n, zeros, "embeddings.token_type_embeddings.weight", false);
      if (!w)
        return w.takeError();
      type = *w;
    }
    v.v = b.create<enc::EmbeddingOp>(loc(n), typeOf(v.dims), idsArg, v.word, v.pos, type, uint64_t(v.posOffset),
                                     v.typeFromInput ? typeIdsArg : mlir::Value(), v.posPadId);
    v.kind = Val::Tensor;
    v.layout = Val::Plain;
    return v.v;
  }
  if (v.kind != Val::Tensor)
    return nodeErr(n, "'" + v.name + "' is used as a tensor but is a constant, an id input or the mask");
  if (v.layout != Val::Plain)
    return nodeErr(n, "'" + v.name + "' is a head reshape / transpose that is not followed by the attention "
                      "pattern the frontend knows");
  v.v = applyScalars(n, v.v, v.factor, v.divisor);
  v.factor = v.divisor = 1;
  return v.v;
}

llvm::Expected<std::vector<int64_t>> Lowerer::axesOf(const onnx::Node &n, size_t inputIndex, int64_t rank) {
  std::vector<int64_t> axes;
  if (const onnx::Attribute *a = n.attribute("axes")) {
    axes = a->ints;
  } else {
    auto in = input(n, inputIndex, /*optional=*/true);
    if (!in)
      return in.takeError();
    if (!*in)
      return axes;
    auto v = ints(n, **in, "axes");
    if (!v)
      return v.takeError();
    axes = *v;
  }
  for (int64_t &a : axes) {
    if (a < -rank || a >= rank)
      return nodeErr(n, "axis " + Twine(a) + " is out of range for rank " + Twine(rank));
    if (a < 0)
      a += rank;
  }
  return axes;
}

llvm::Error Lowerer::lowerUnsqueeze(const onnx::Node &n, bool squeeze) {
  auto x = input(n, 0);
  if (!x)
    return x.takeError();
  Val r = **x;
  const int64_t rank = int64_t(r.dims.size());
  int64_t added = 1; // Unsqueeze's output rank is the input's plus the number of axes
  if (const onnx::Attribute *a = n.attribute("axes"))
    added = int64_t(a->ints.size());
  else if (!squeeze) {
    auto in = input(n, 1, /*optional=*/true);
    if (!in)
      return in.takeError();
    if (*in && (*in)->isConst())
      added = (*in)->numElements();
  }
  auto axes = axesOf(n, 1, squeeze ? rank : rank + added);
  if (!axes)
    return axes.takeError();
  if (r.kind == Val::Tensor || r.kind == Val::Embed)
    return nodeErr(n, "(un)squeezing a tensor is not supported");
  std::vector<int64_t> dims = r.dims;
  std::vector<int64_t> origin(dims.size()); // the input axis each output axis is (-1: new)
  std::iota(origin.begin(), origin.end(), 0);
  std::set<int64_t> s(axes->begin(), axes->end());
  if (squeeze) {
    std::vector<int64_t> out, from;
    for (int64_t i = 0; i < rank; ++i) {
      if ((s.empty() && dims[i] == 1) || s.count(i)) {
        if (dims[i] != 1)
          return nodeErr(n, "squeezes dimension " + Twine(i) + " of size " + dimText(dims[i]));
        continue;
      }
      out.push_back(dims[i]);
      from.push_back(i);
    }
    dims = out;
    origin = from;
  } else {
    for (int64_t a : s) {
      dims.insert(dims.begin() + a, 1);
      origin.insert(origin.begin() + a, -1);
    }
  }
  if (r.kind == Val::Iota)
    r.iotaAxis = std::find(origin.begin(), origin.end(), r.iotaAxis) - origin.begin();
  if (r.kind == Val::IndexPair || r.kind == Val::NanTest || r.kind == Val::ShapeOnly)
    return nodeErr(n, "(un)squeezes an index grid or a NaN test, which the frontend does not follow");
  if (r.kind == Val::Mask && (dims.empty() || dims.back() != kSeq))
    return nodeErr(n, "moves the attention mask's sequence axis from the last place (the mask is over keys)");
  r.dims = dims;
  set(n, std::move(r));
  return llvm::Error::success();
}

llvm::Error Lowerer::lowerSlice(const onnx::Node &n) {
  auto x = input(n, 0);
  if (!x)
    return x.takeError();
  const Val &data = **x;
  std::vector<int64_t> starts, ends, axes, steps;
  if (m.opset("") < 10) {
    const onnx::Attribute *s = n.attribute("starts"), *e = n.attribute("ends"), *a = n.attribute("axes");
    if (!s || !e)
      return nodeErr(n, "has no starts / ends");
    starts = s->ints, ends = e->ints;
    if (a)
      axes = a->ints;
  } else {
    for (size_t k = 1; k <= 4; ++k) {
      auto in = input(n, k, /*optional=*/k >= 3);
      if (!in)
        return in.takeError();
      if (!*in)
        continue;
      auto v = ints(n, **in, k == 1 ? "starts" : k == 2 ? "ends" : k == 3 ? "axes" : "steps");
      if (!v)
        return v.takeError();
      (k == 1 ? starts : k == 2 ? ends : k == 3 ? axes : steps) = *v;
    }
  }
  const int64_t rank = int64_t(data.dims.size());
  if (axes.empty())
    for (int64_t i = 0; i < int64_t(starts.size()); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return nodeErr(n, "starts, ends, axes and steps differ in length");
  if (data.kind != Val::Const || data.init)
    return nodeErr(n, "slicing '" + data.name + "' is not supported (only constants and shape vectors)");
  std::vector<int64_t> lo(size_t(rank), 0), hi(data.dims), st(size_t(rank), 1);
  int64_t symbolicAxis = -1;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank)
      return nodeErr(n, "axis " + Twine(axes[k]) + " out of range");
    if (steps[k] != 1)
      return nodeErr(n, "steps other than 1 are not supported");
    const int64_t dim = data.dims[size_t(a)];
    if (isSym(dim))
      return nodeErr(n, "slices a dimension of unknown size");
    int64_t s = starts[k], e = ends[k];
    if (isSym(s))
      return nodeErr(n, "starts at the " + dimText(s) + " dimension");
    if (s < 0)
      s += dim;
    s = std::clamp<int64_t>(s, 0, dim);
    if (isSym(e)) { // [s, S): the first S entries from s: a pattern of position ids or zeros
      if (e != kSeq)
        return nodeErr(n, "ends at the batch dimension");
      symbolicAxis = a;
      lo[size_t(a)] = s;
      hi[size_t(a)] = kSeq;
      continue;
    }
    if (e < 0)
      e += dim;
    e = std::clamp<int64_t>(e, s, dim);
    lo[size_t(a)] = s;
    hi[size_t(a)] = e;
  }
  if (symbolicAxis >= 0) {
    // A row of ids sliced to the sequence: [1, N] or [N] with values i + offset, or zeros.
    std::vector<int64_t> v = data.i;
    if (data.isFloat || int64_t(v.size()) != data.numElements() || data.numElements() != data.dims[size_t(symbolicAxis)])
      return nodeErr(n, "slices '" + data.name + "' to the sequence length; only a row of position ids or "
                        "zeros is supported");
    const int64_t start = lo[size_t(symbolicAxis)];
    if (start >= int64_t(v.size()))
      return nodeErr(n, "slices '" + data.name + "' from " + Twine(start) + ", past its end");
    bool zeros = true, arange = true;
    for (size_t j = size_t(start); j < v.size(); ++j) {
      zeros &= v[j] == 0;
      arange &= v[j] == v[size_t(start)] + int64_t(j) - start;
    }
    if (!zeros && !arange)
      return nodeErr(n, "slices '" + data.name + "' to the sequence length, but it is neither 0, 1, 2, ... nor zeros");
    Val r;
    r.kind = Val::IdPattern;
    r.zeros = zeros;
    r.offset = zeros ? 0 : v[size_t(start)];
    r.dims = data.dims;
    r.dims[size_t(symbolicAxis)] = kSeq;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (rank != 1)
    return nodeErr(n, "slicing a constant of rank " + Twine(rank) + " is not supported");
  Val r = data;
  r.dims = {hi[0] - lo[0]};
  if (data.isFloat)
    r.f.assign(data.f.begin() + lo[0], data.f.begin() + hi[0]);
  else
    r.i.assign(data.i.begin() + lo[0], data.i.begin() + hi[0]);
  set(n, std::move(r));
  return llvm::Error::success();
}

llvm::Error Lowerer::lowerGather(const onnx::Node &n) {
  auto in = inputPair(n);
  if (!in)
    return in.takeError();
  Val &d = *in->first, &ix = *in->second;
  int64_t axis = 0;
  if (const onnx::Attribute *a = n.attribute("axis"))
    axis = a->i;
  if (axis < 0)
    axis += int64_t(d.dims.size());
  // A table lookup: word[input_ids], position[positions], type[token_type_ids].
  if (d.isConst() && d.isFloat && d.dims.size() == 2 && axis == 0 &&
      (ix.kind == Val::Ids || ix.kind == Val::TypeIds || ix.kind == Val::IdPattern)) {
    auto table = weight(n, d, d.name, false);
    if (!table)
      return table.takeError();
    Val r;
    r.kind = Val::Embed;
    r.dims = {kBatch, kSeq, d.dims[1]};
    if (ix.kind == Val::Ids) {
      r.word = *table;
    } else if (ix.kind == Val::TypeIds || (ix.kind == Val::IdPattern && ix.zeros)) {
      r.type = *table;
      r.typeFromInput = ix.kind == Val::TypeIds;
    } else {
      r.pos = *table;
      r.posOffset = ix.offset;
      r.posPadId = ix.padId;
      if (ix.offset < 0)
        return nodeErr(n, "position ids start at " + Twine(ix.offset));
    }
    set(n, std::move(r));
    return llvm::Error::success();
  }
  // A classification head's hidden[:, 0]: the [CLS] row of each sequence.
  if (d.kind == Val::Tensor && d.dims.size() == 3 && d.dims[0] == kBatch && d.dims[1] == kSeq && axis == 1 &&
      ix.isConst() && !ix.isFloat && ix.dims.empty() && ix.i.size() == 1 && ix.i[0] == 0) {
    auto x = tensor(n, d);
    if (!x)
      return x.takeError();
    std::vector<int64_t> dims = {kBatch, d.dims[2]};
    clsSource = *x;
    set(n, tensorVal(b.create<enc::PoolOp>(loc(n), typeOf(dims), *x, lengthsArg, enc::PoolingMode::cls), dims));
    return llvm::Error::success();
  }
  // Shape arithmetic: picking entries of a constant vector.
  if (d.isConst() && !d.init && d.dims.size() == 1 && ix.isConst()) {
    auto pick = ints(n, ix, "indices");
    if (!pick)
      return pick.takeError();
    Val r = d;
    r.i.clear();
    r.f.clear();
    for (int64_t k : *pick) {
      if (k < 0)
        k += d.dims[0];
      if (k < 0 || k >= d.dims[0])
        return nodeErr(n, "index " + Twine(k) + " out of range");
      if (d.isFloat)
        r.f.push_back(d.f[size_t(k)]);
      else
        r.i.push_back(d.i[size_t(k)]);
    }
    r.dims = ix.dims;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  return nodeErr(n, "only embedding-table lookups by input_ids / token_type_ids / position ids, the [CLS] row "
                    "of the hidden state and shape-vector indexing are supported");
}

/// Gemm: alpha * A B' + beta * C, as torch exports a Linear on a 2-D input
/// (a classification head): a Linear with the constant B as its weight.
llvm::Error Lowerer::lowerGemm(const onnx::Node &n) {
  auto in = inputPair(n);
  if (!in)
    return in.takeError();
  Val &a = *in->first, &bv = *in->second;
  auto attr = [&](const char *name, int64_t dflt) {
    const onnx::Attribute *at = n.attribute(name);
    return at ? at->i : dflt;
  };
  auto fattr = [&](const char *name) {
    const onnx::Attribute *at = n.attribute(name);
    return at ? at->f : 1.0f;
  };
  if (attr("transA", 0) != 0 || fattr("alpha") != 1.0f || fattr("beta") != 1.0f)
    return nodeErr(n, "only alpha = beta = 1 without transA is supported");
  if (!bv.isConst() || !bv.isFloat || bv.dims.size() != 2)
    return nodeErr(n, "only a constant matrix B is supported");
  const bool transB = attr("transB", 0) != 0;
  const int64_t k = transB ? bv.dims[1] : bv.dims[0], outDim = transB ? bv.dims[0] : bv.dims[1];
  if (a.dims.size() != 2 || a.dims[1] != k)
    return nodeErr(n, "multiplies " + shapeText(a.dims) + " by " + shapeText(bv.dims) +
                          (transB ? " (transposed)" : ""));
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    auto c = input(n, 2);
    if (!c)
      return c.takeError();
    if ((*c)->dims != std::vector<int64_t>{outDim})
      return nodeErr(n, "has C of shape " + shapeText((*c)->dims) + " (supported: a bias of [" + Twine(outDim) + "])");
  }
  auto x = tensor(n, a);
  if (!x)
    return x.takeError();
  auto w = weight(n, bv, transB ? bv.name : bv.name + ".T", /*transpose2d=*/!transB);
  if (!w)
    return w.takeError();
  std::vector<int64_t> dims = {a.dims[0], outDim};
  mlir::Value y = b.create<enc::LinearOp>(loc(n), typeOf(dims), *x, *w, mlir::Value(), enc::Epilogue::none);
  auto biased = addBias(n, y, 2);
  if (!biased)
    return biased.takeError();
  set(n, tensorVal(*biased, dims));
  return llvm::Error::success();
}

llvm::Error Lowerer::lowerMatMul(const onnx::Node &n) {
  auto in = inputPair(n);
  if (!in)
    return in.takeError();
  Val &a = *in->first, &bv = *in->second;
  if (bv.isConst() && bv.isFloat && bv.dims.size() == 2) {
    auto x = tensor(n, a);
    if (!x)
      return x.takeError();
    if (a.dims.empty() || a.dims.back() != bv.dims[0])
      return nodeErr(n, "multiplies " + shapeText(a.dims) + " by " + shapeText(bv.dims));
    // The Linear's [N, K] weight: named after the module the node belongs to
    // ("/encoder/layer.0/attention/self/query/MatMul" -> "encoder.layer.0.
    // attention.self.query.weight"), else after the initialiser.
    std::string name = bv.name + ".T";
    llvm::StringRef nodeName(n.name);
    if (nodeName.starts_with("/") && nodeName.count('/') >= 2) {
      llvm::StringRef mod = nodeName.drop_front().rsplit('/').first;
      std::string dotted = mod.str();
      std::replace(dotted.begin(), dotted.end(), '/', '.');
      if (!weights.find(dotted + ".weight") && !inits.count(dotted + ".weight"))
        name = dotted + ".weight";
    }
    auto w = weight(n, bv, name, /*transpose2d=*/true);
    if (!w)
      return w.takeError();
    std::vector<int64_t> dims = a.dims;
    dims.back() = bv.dims[1];
    mlir::Value y = b.create<enc::LinearOp>(loc(n), typeOf(dims), *x, *w, mlir::Value(), enc::Epilogue::none);
    set(n, tensorVal(y, dims));
    return llvm::Error::success();
  }
  // Attention: [B, h, S, D] x [B, h, D, S] (a transposed split) and [B, h, S, S] x [B, h, S, D].
  if (a.kind == Val::Tensor && bv.kind == Val::Tensor && a.layout == Val::Plain && a.dims.size() == 4 &&
      bv.dims.size() == 4) {
    const bool transposeB = bv.layout == Val::HeadsT;
    if (!transposeB && bv.layout != Val::Plain)
      return nodeErr(n, "the right operand is a pending head reshape");
    if (a.dims[3] != bv.dims[2])
      return nodeErr(n, "multiplies " + shapeText(a.dims) + " by " + shapeText(bv.dims));
    std::vector<int64_t> dims = {a.dims[0], a.dims[1], a.dims[2], bv.dims[3]};
    mlir::Value y = b.create<enc::MatmulOp>(loc(n), typeOf(dims), a.v, bv.v, transposeB);
    y = applyScalars(n, y, a.factor * bv.factor, a.divisor * bv.divisor); // the operands' pending scalars
    set(n, tensorVal(y, dims));
    return llvm::Error::success();
  }
  return nodeErr(n, "only x · W (a constant matrix) and the attention products of 4-D head tensors are supported");
}

/// ONNX Reshape's target (0 copies the input dim, -1 is inferred) with
/// batch and sequence as symbols.
static std::optional<std::vector<int64_t>> reshapeTarget(const std::vector<int64_t> &in, std::vector<int64_t> t,
                                                         bool allowZero) {
  int64_t inferred = -1;
  for (size_t k = 0; k < t.size(); ++k) {
    if (t[k] == 0 && !allowZero) {
      if (k >= in.size())
        return std::nullopt;
      t[k] = in[k];
    } else if (t[k] == -1) {
      if (inferred >= 0)
        return std::nullopt;
      inferred = int64_t(k);
    } else if (t[k] < 0 && !isSym(t[k])) {
      return std::nullopt;
    }
  }
  // The symbols on both sides must match as multisets; the static parts divide.
  std::multiset<int64_t> symIn, symOut;
  int64_t statIn = 1, statOut = 1;
  for (int64_t d : in)
    isSym(d) ? (void)symIn.insert(d) : (void)(statIn *= d);
  for (size_t k = 0; k < t.size(); ++k)
    if (int64_t(k) != inferred)
      isSym(t[k]) ? (void)symOut.insert(t[k]) : (void)(statOut *= t[k]);
  if (inferred >= 0) {
    if (statOut == 0 || statIn % statOut)
      return std::nullopt;
    // What is left of the symbols goes into the inferred dim (one at most).
    std::vector<int64_t> left;
    std::set_difference(symIn.begin(), symIn.end(), symOut.begin(), symOut.end(), std::back_inserter(left));
    if (left.size() > 1 || (left.size() == 1 && statIn / statOut != 1))
      return std::nullopt;
    t[size_t(inferred)] = left.empty() ? statIn / statOut : left[0];
    if (!left.empty())
      symOut.insert(left[0]);
    else
      statOut *= statIn / statOut;
  }
  if (symIn != symOut || statIn != statOut)
    return std::nullopt;
  return t;
}

llvm::Error Lowerer::lowerReshape(const onnx::Node &n) {
  auto x = input(n, 0), shape = input(n, 1);
  if (!x)
    return x.takeError();
  if (!shape)
    return shape.takeError();
  auto target = ints(n, **shape, "shape");
  if (!target)
    return target.takeError();
  Val &in = **x;
  bool allowZero = false;
  if (const onnx::Attribute *a = n.attribute("allowzero"))
    allowZero = a->i != 0;
  // The keys' transpose as torch's SDPA export writes it: [B, h, S, D] -> [-1, S, D] -> transposed
  // [B*h, D, S] -> [B, h, D, S].
  if (in.kind == Val::Tensor && in.dims.size() == 4 && in.factor == 1 && in.divisor == 1) {
    const std::vector<int64_t> &d = in.dims;
    if (in.layout == Val::Plain && *target == std::vector<int64_t>{-1, d[2], d[3]}) {
      Val r = in;
      r.layout = Val::Flat3;
      set(n, std::move(r));
      return llvm::Error::success();
    }
    if (in.layout == Val::Flat3T && *target == std::vector<int64_t>{d[0], d[1], d[3], d[2]}) {
      Val r = in;
      r.layout = Val::HeadsT;
      r.dims = *target;
      set(n, std::move(r));
      return llvm::Error::success();
    }
  }
  std::vector<int64_t> checkedTarget = *target;
  for (int64_t &d : checkedTarget)
    d = d == -1 ? 1 : d; // -1: inferred
  if (!saneDims(checkedTarget))
    return nodeErr(n, "has an invalid target shape " + shapeText(*target));
  auto dims = reshapeTarget(in.dims, *target, allowZero);
  if (!dims)
    return nodeErr(n, "cannot reshape " + shapeText(in.dims) + " to " + shapeText(*target));
  Val r = in;
  r.dims = *dims;
  if (in.kind == Val::Const) {
    if (in.init && !in.isFloat)
      return nodeErr(n, "reshapes a large integer constant");
  } else if (in.kind == Val::Mask || in.kind == Val::Ids || in.kind == Val::TypeIds || in.kind == Val::IdPattern) {
    // [B, S] <-> [B, 1, 1, S]: only size-1 dims may come and go, and the
    // sequence stays last (the mask is over keys).
    std::vector<int64_t> a, c;
    for (int64_t d : in.dims) if (d != 1) a.push_back(d);
    for (int64_t d : *dims) if (d != 1) c.push_back(d);
    if (a != c || dims->empty() || dims->back() != in.dims.back())
      return nodeErr(n, "reshapes the mask or ids " + shapeText(in.dims) + " to " + shapeText(*dims));
  } else if (in.dims == *dims && in.layout == Val::Plain) {
    // no change
  } else if (in.kind == Val::Tensor && in.layout == Val::Plain && in.dims.size() == 3 && dims->size() == 4 &&
             (*dims)[0] == in.dims[0] && (*dims)[1] == in.dims[1] && !isSym((*dims)[2])) {
    r.layout = Val::Reshaped4; // [B, S, H] -> [B, S, h, D]: split_heads once transposed
  } else if (in.kind == Val::Tensor && in.layout == Val::MergePending && dims->size() == 3 &&
             (*dims)[0] == in.dims[0] && (*dims)[1] == in.dims[1]) {
    r.v = b.create<enc::MergeHeadsOp>(loc(n), typeOf(*dims), in.v);
    r.layout = Val::Plain;
  } else {
    return nodeErr(n, "reshaping " + shapeText(in.dims) + " to " + shapeText(*dims) +
                          " is not one of the attention head reshapes the frontend knows");
  }
  set(n, std::move(r));
  return llvm::Error::success();
}

llvm::Error Lowerer::lowerTranspose(const onnx::Node &n) {
  auto x = input(n, 0);
  if (!x)
    return x.takeError();
  Val &in = **x;
  std::vector<int64_t> perm;
  if (const onnx::Attribute *a = n.attribute("perm"))
    perm = a->ints;
  using P = std::vector<int64_t>;
  if (in.kind == Val::Tensor && in.layout == Val::Flat3 && perm == P{0, 2, 1}) { // [B*h, S, D] -> [B*h, D, S]
    Val r = in;
    r.layout = Val::Flat3T;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (in.kind != Val::Tensor || in.dims.size() != 4)
    return nodeErr(n, "only the attention heads' transposes are supported");
  Val r = in;
  r.dims.clear();
  for (int64_t p : perm) {
    if (p < 0 || p >= 4)
      return nodeErr(n, "has an invalid perm");
    r.dims.push_back(in.dims[size_t(p)]);
  }
  if (r.dims.size() != 4)
    return nodeErr(n, "has an invalid perm");
  if (in.layout == Val::Reshaped4 && (perm == P{0, 2, 1, 3} || perm == P{0, 2, 3, 1})) {
    // [B, S, h, D] -> [B, h, S, D] (or its transpose [B, h, D, S], the keys).
    const int64_t heads = in.dims[2], headDim = in.dims[3];
    r.v = b.create<enc::SplitHeadsOp>(loc(n), typeOf({in.dims[0], heads, in.dims[1], headDim}), in.v,
                                      uint64_t(heads));
    r.layout = perm == P{0, 2, 1, 3} ? Val::Plain : Val::HeadsT;
  } else if (in.layout == Val::Plain && perm == P{0, 1, 3, 2}) {
    r.layout = Val::HeadsT;
  } else if (in.layout == Val::HeadsT && perm == P{0, 1, 3, 2}) {
    r.layout = Val::Plain;
  } else if (in.layout == Val::Plain && perm == P{0, 2, 1, 3}) {
    auto v = tensor(n, in); // its pending scalars first: merge_heads reads the value
    if (!v)
      return v.takeError();
    r.v = *v;
    r.factor = r.divisor = 1;
    r.layout = Val::MergePending;
  } else {
    return nodeErr(n, "the transpose " + shapeText(perm) + " of " + shapeText(in.dims) +
                          " is not one of the attention head transposes the frontend knows");
  }
  set(n, std::move(r));
  return llvm::Error::success();
}

/// The logical broadcast of two shapes (symbols stretch over 1 only).
static std::optional<std::vector<int64_t>> broadcastDims(const std::vector<int64_t> &x,
                                                         const std::vector<int64_t> &y) {
  const size_t rank = std::max(x.size(), y.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t p = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
    const int64_t q = i < rank - y.size() ? 1 : y[i - (rank - y.size())];
    if (p == q || q == 1)
      out[i] = p;
    else if (p == 1)
      out[i] = q;
    else
      return std::nullopt;
  }
  return out;
}

static double apply(enc::BinaryKind k, double x, double y) {
  switch (k) {
  case enc::BinaryKind::add: return x + y;
  case enc::BinaryKind::sub: return x - y;
  case enc::BinaryKind::mul: return x * y;
  case enc::BinaryKind::div: return x / y;
  case enc::BinaryKind::pow: return std::pow(x, y);
  }
  return 0;
}

/// Constant folding (shape vectors and scalars; symbols pass through + 0, * 1).
llvm::Error Lowerer::lowerConstArithmetic(const onnx::Node &n, Val &x, Val &y, enc::BinaryKind kind) {
  if (x.init || y.init)
    return nodeErr(n, "arithmetic on large constants is not supported");
  auto dims = broadcastDims(x.dims, y.dims);
  if (!dims)
    return nodeErr(n, "operands " + shapeText(x.dims) + " and " + shapeText(y.dims) + " do not broadcast");
  const int64_t count = product(*dims);
  if (count > kDecodeLimit)
    return nodeErr(n, "folds a constant of " + Twine(count) + " elements");
  auto at = [&](const Val &v, int64_t flat) -> size_t { // broadcast index
    if (v.numElements() == 1)
      return 0;
    size_t idx = 0, stride = 1;
    int64_t rem = flat;
    std::vector<int64_t> coord(dims->size());
    for (size_t d = dims->size(); d-- > 0;) {
      coord[d] = rem % (*dims)[d];
      rem /= (*dims)[d];
    }
    const size_t off = dims->size() - v.dims.size();
    for (size_t d = v.dims.size(); d-- > 0;) {
      idx += size_t(v.dims[d] == 1 ? 0 : coord[d + off]) * stride;
      stride *= size_t(v.dims[d]);
    }
    return idx;
  };
  Val r;
  r.kind = Val::Const;
  r.dims = *dims;
  r.isFloat = x.isFloat || y.isFloat;
  for (int64_t k = 0; k < count; ++k) {
    if (r.isFloat) {
      const double p = x.isFloat ? x.f[at(x, k)] : double(x.i[at(x, k)]);
      const double q = y.isFloat ? y.f[at(y, k)] : double(y.i[at(y, k)]);
      r.f.push_back(apply(kind, p, q));
      continue;
    }
    const int64_t p = x.i[at(x, k)], q = y.i[at(y, k)];
    if (isSym(p) || isSym(q)) {
      const int64_t s = isSym(p) ? p : q, o = isSym(p) ? q : p;
      const bool keeps = (kind == enc::BinaryKind::mul && o == 1) || (kind == enc::BinaryKind::div && isSym(p) && q == 1) ||
                         ((kind == enc::BinaryKind::add || kind == enc::BinaryKind::sub) && o == 0 && !(isSym(p) && isSym(q)));
      if (!keeps)
        return nodeErr(n, "computes with the " + dimText(s) + " dimension, which is known only at run time");
      r.i.push_back(s);
      continue;
    }
    if (kind == enc::BinaryKind::div && q == 0)
      return nodeErr(n, "divides by zero");
    if (kind == enc::BinaryKind::div && p == std::numeric_limits<int64_t>::min() && q == -1)
      return nodeErr(n, "overflows");
    r.i.push_back(kind == enc::BinaryKind::div ? p / q : onnx::saturatingInt(apply(kind, double(p), double(q))));
  }
  set(n, std::move(r));
  return llvm::Error::success();
}

llvm::Error Lowerer::lowerArithmetic(const onnx::Node &n, enc::BinaryKind kind) {
  auto in = inputPair(n);
  if (!in)
    return in.takeError();
  Val &x = *in->first, &y = *in->second;
  if (x.isConst() && y.isConst())
    return lowerConstArithmetic(n, x, y, kind);
  // RoBERTa's positions: cumsum(ids != pad) * (ids != pad) + pad. For right-padded
  // text (no pad id among the valid tokens) that is s + pad + 1 at position s.
  if (x.kind == Val::PadDerived || y.kind == Val::PadDerived) {
    Val &pd = x.kind == Val::PadDerived ? x : y;
    Val &other = x.kind == Val::PadDerived ? y : x;
    if (kind == enc::BinaryKind::mul && pd.stage == Val::CumSum && other.kind == Val::PadDerived &&
        other.stage == Val::NotPad && other.offset == pd.offset) {
      Val r = pd;
      r.stage = Val::Masked;
      set(n, std::move(r));
      return llvm::Error::success();
    }
    if (kind == enc::BinaryKind::add && pd.stage == Val::Masked && other.isConst() && other.numElements() == 1) {
      auto k = ints(n, other, "the position offset");
      if (!k)
        return k.takeError();
      Val r;
      r.kind = Val::IdPattern;
      r.offset = (*k)[0] + 1;
      r.padId = pd.offset;
      r.dims = pd.dims;
      set(n, std::move(r));
      return llvm::Error::success();
    }
    return nodeErr(n, "computes with (input_ids == pad) in a way the frontend does not know (it knows RoBERTa's "
                      "cumsum(ids != pad) * (ids != pad) + pad)");
  }
  // The attention mask: a * mask + c, kept symbolic until it meets the scores.
  if (x.kind == Val::Mask || y.kind == Val::Mask) {
    Val &mask = x.kind == Val::Mask ? x : y;
    Val &other = x.kind == Val::Mask ? y : x;
    const bool maskFirst = x.kind == Val::Mask;
    if (other.isConst() && other.numElements() == 1 && !other.init) {
      auto c = floats(n, other);
      if (!c)
        return c.takeError();
      const double k = (*c)[0];
      Val r = mask;
      switch (kind) {
      case enc::BinaryKind::add: r.c += k; break;
      case enc::BinaryKind::sub: maskFirst ? (void)(r.c -= k) : (void)(r.a = -r.a, r.c = k - r.c); break;
      case enc::BinaryKind::mul: r.a *= k, r.c *= k; break;
      case enc::BinaryKind::div:
        if (!maskFirst || k == 0)
          return nodeErr(n, "divides by the attention mask");
        r.a /= k, r.c /= k;
        break;
      default: return nodeErr(n, "raises the attention mask to a power");
      }
      set(n, std::move(r));
      return llvm::Error::success();
    }
    if (kind == enc::BinaryKind::add && other.kind == Val::Tensor && other.dims.size() == 4 &&
        mask.dims.size() == 4 && mask.dims[1] == 1 && mask.dims[2] == 1 && mask.dims[3] == kSeq) {
      // valid keys (mask 1) must get a + c = 0, padded ones (mask 0) c <= -1e4
      if (std::abs(mask.a + mask.c) > 1e-6 * std::abs(mask.c) || !(mask.c <= -1e4))
        return nodeErr(n, "adds " + Twine(std::to_string(mask.a)) + " * attention_mask + " + Twine(std::to_string(mask.c)) +
                              " to the scores; only masks that are 0 on valid keys and <= -1e4 on padded ones "
                              "map to the runtime's key-padding mask");
      auto s = tensor(n, other);
      if (!s)
        return s.takeError();
      mlir::Value r = b.create<enc::MaskOp>(loc(n), s->getType(), *s, lengthsArg);
      set(n, tensorVal(r, other.dims));
      return llvm::Error::success();
    }
    return nodeErr(n, "uses the attention mask in a way the frontend does not know (as " + shapeText(mask.dims) +
                          " with " + shapeText(other.dims) + ")");
  }
  // A 4-D head tensor times or over a scalar (torch's SDPA export scales q and kᵀ by sqrt(scale)
  // each): kept as a factor that the attention product applies to the scores.
  if (kind == enc::BinaryKind::mul || kind == enc::BinaryKind::div) {
    Val *t = x.kind == Val::Tensor ? &x : kind == enc::BinaryKind::mul && y.kind == Val::Tensor ? &y : nullptr;
    Val *k = t == &x ? &y : &x;
    if (t && t->dims.size() == 4 && (t->layout == Val::Plain || t->layout == Val::HeadsT) && k->isConst() &&
        k->numElements() == 1 && !k->init) {
      auto f = floats(n, *k);
      if (!f)
        return f.takeError();
      if (!std::isfinite((*f)[0]) || (kind == enc::BinaryKind::div && (*f)[0] == 0))
        return nodeErr(n, "scales the attention heads by " + Twine(std::to_string((*f)[0])));
      Val r = *t;
      (kind == enc::BinaryKind::mul ? r.factor : r.divisor) *= (*f)[0];
      set(n, std::move(r));
      return llvm::Error::success();
    }
  }
  if (x.kind == Val::Embed && y.kind == Val::Embed && kind == enc::BinaryKind::add) {
    Val r = x;
    for (auto [mine, theirs] : {std::pair(&r.word, y.word), std::pair(&r.pos, y.pos), std::pair(&r.type, y.type)})
      if (theirs) {
        if (*mine)
          return nodeErr(n, "adds two lookups of the same kind of embedding table");
        *mine = theirs;
      }
    if (y.pos) {
      r.posOffset = y.posOffset;
      r.posPadId = y.posPadId;
    }
    r.typeFromInput |= y.typeFromInput;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  // Tensor arithmetic: enc.add for same-shaped tensors, else enc.binary
  // (the recognition passes fold it).
  auto operand = [&](Val &v) -> llvm::Expected<mlir::Value> {
    if (!v.isConst())
      return tensor(n, v);
    if (!v.isFloat && !v.i.empty() && llvm::any_of(v.i, isSym))
      return nodeErr(n, "uses a shape as a tensor");
    if (v.numElements() == 1 && !v.init) { // a scalar; vectors are weights
      auto f = floats(n, v);
      if (!f)
        return f.takeError();
      return constantOp(n, v, *f);
    }
    return weight(n, v, v.name, false);
  };
  auto lhs = operand(x);
  if (!lhs)
    return lhs.takeError();
  auto rhs = operand(y);
  if (!rhs)
    return rhs.takeError();
  auto dims = broadcastDims(x.dims, y.dims);
  if (!dims)
    return nodeErr(n, "operands " + shapeText(x.dims) + " and " + shapeText(y.dims) + " do not broadcast");
  mlir::Value r;
  if (kind == enc::BinaryKind::add && x.kind == Val::Tensor && y.kind == Val::Tensor && x.dims == y.dims)
    r = b.create<enc::AddOp>(loc(n), lhs->getType(), *lhs, *rhs);
  else
    r = b.create<enc::BinaryOp>(loc(n), typeOf(*dims), *lhs, *rhs, kind);
  set(n, tensorVal(r, *dims));
  return llvm::Error::success();
}

llvm::Error Lowerer::refuseUsedOutputs(const onnx::Node &n, size_t from) {
  for (size_t k = from; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty())
      for (const onnx::Node &other : m.graph.nodes)
        if (llvm::is_contained(other.inputs, n.outputs[k]))
          return nodeErr(n, "its output " + Twine(k) + " ('" + n.outputs[k] + "') is used; only output 0 is supported");
  return llvm::Error::success();
}

/// x + the bias vector at input `biasInput` (when given): an enc.binary the
/// recognition passes fold into the Linear that produced x.
llvm::Expected<mlir::Value> Lowerer::addBias(const onnx::Node &n, mlir::Value x, size_t biasInput) {
  auto bias = input(n, biasInput, /*optional=*/true);
  if (!bias)
    return bias.takeError();
  if (!*bias)
    return x;
  const int64_t width = cast<RankedTensorType>(x.getType()).getShape().back();
  if ((*bias)->dims != std::vector<int64_t>{width})
    return nodeErr(n, "has a bias of shape " + shapeText((*bias)->dims) + " for rows of " + Twine(width));
  auto w = weight(n, **bias, (*bias)->name, false);
  if (!w)
    return w.takeError();
  return b.create<enc::BinaryOp>(loc(n), x.getType(), x, *w, enc::BinaryKind::add).getResult();
}

llvm::Expected<mlir::Value> Lowerer::layerNorm(const onnx::Node &n, mlir::Value x, size_t gammaInput,
                                               size_t betaInput, float epsilon) {
  auto gamma = input(n, gammaInput), beta = input(n, betaInput, /*optional=*/true);
  if (!gamma)
    return gamma.takeError();
  if (!beta)
    return beta.takeError();
  const std::vector<int64_t> width = {cast<RankedTensorType>(x.getType()).getShape().back()};
  for (const Val *v : {*gamma, *beta})
    if (v && v->dims != width)
      return nodeErr(n, "has a scale or bias of shape " + shapeText(v->dims) + " for rows of " + Twine(width[0]));
  auto g = weight(n, **gamma, (*gamma)->name, false);
  if (!g)
    return g.takeError();
  llvm::Expected<mlir::Value> bt = mlir::Value();
  if (*beta) {
    bt = weight(n, **beta, (*beta)->name, false);
  } else {
    Val zeros = **gamma;
    zeros.init = nullptr;
    zeros.f.assign(size_t((*gamma)->numElements()), 0.0);
    bt = weight(n, zeros, (*gamma)->name + ".zero_bias", false);
  }
  if (!bt)
    return bt.takeError();
  return b.create<enc::LayerNormOp>(loc(n), x.getType(), x, *g, *bt, b.getF32FloatAttr(epsilon)).getResult();
}

/// The fused operators ONNX Runtime's transformer optimiser writes.
llvm::Error Lowerer::lowerMicrosoft(const onnx::Node &n) {
  const std::string &op = n.opType;
  auto eps = [&](float dflt) {
    const onnx::Attribute *a = n.attribute("epsilon");
    return a ? a->f : dflt;
  };
  if (op == "EmbedLayerNormalization") {
    // input_ids, segment_ids, word, position, segment tables, gamma, beta, mask, position_ids
    if (auto e = refuseUsedOutputs(n, 2))
      return e;
    Val sum;
    sum.kind = Val::Embed;
    auto ids = input(n, 0);
    if (!ids)
      return ids.takeError();
    if ((*ids)->kind != Val::Ids)
      return nodeErr(n, "its input_ids are not the graph input input_ids");
    for (auto [k, slot] : {std::pair(size_t(2), &sum.word), std::pair(size_t(3), &sum.pos), std::pair(size_t(4), &sum.type)}) {
      auto t = input(n, k, /*optional=*/k == 4);
      if (!t)
        return t.takeError();
      if (!*t)
        continue;
      auto w = weight(n, **t, (*t)->name, false);
      if (!w)
        return w.takeError();
      *slot = *w;
    }
    auto seg = input(n, 1, /*optional=*/true);
    if (!seg)
      return seg.takeError();
    if (*seg && (*seg)->kind != Val::TypeIds && !((*seg)->kind == Val::IdPattern && (*seg)->zeros))
      return nodeErr(n, "its segment_ids are not token_type_ids");
    sum.typeFromInput = *seg && (*seg)->kind == Val::TypeIds;
    if (n.inputs.size() > 8 && !n.inputs[8].empty()) {
      auto pos = input(n, 8);
      if (!pos)
        return pos.takeError();
      if ((*pos)->kind != Val::IdPattern || (*pos)->zeros)
        return nodeErr(n, "its position_ids are not 0, 1, 2, ...");
      sum.posOffset = (*pos)->offset;
      sum.posPadId = (*pos)->padId;
    }
    const int64_t h = cast<RankedTensorType>(sum.word.getType()).getDimSize(1);
    sum.dims = {kBatch, kSeq, h};
    auto x = tensor(n, sum);
    if (!x)
      return x.takeError();
    auto ln = layerNorm(n, *x, 5, 6, eps(1e-12f));
    if (!ln)
      return ln.takeError();
    set(n, tensorVal(*ln, sum.dims));
    // mask_index: the lengths of the right-padded mask.
    auto mask = input(n, 7, /*optional=*/true);
    if (!mask)
      return mask.takeError();
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
      if (!*mask || (*mask)->kind != Val::Mask || (*mask)->a != 1 || (*mask)->c != 0)
        return nodeErr(n, "its mask is not the graph input attention_mask");
      Val idx;
      idx.kind = Val::MaskIndex;
      idx.dims = {kBatch};
      set(n, std::move(idx), 1);
    }
    return llvm::Error::success();
  }
  if (op == "Attention") {
    // input, weights [H, 3H], bias [3H], mask_index; no past, no attention bias.
    for (size_t k = 4; k < n.inputs.size(); ++k)
      if (!n.inputs[k].empty())
        return nodeErr(n, "has input " + Twine(k) + " (past state or attention bias), which is not supported");
    if (auto e = refuseUsedOutputs(n, 1))
      return e;
    for (const char *attr : {"unidirectional", "do_rotary", "past_present_share_buffer"})
      if (const onnx::Attribute *a = n.attribute(attr); a && a->i != 0)
        return nodeErr(n, Twine(attr) + " = " + Twine(a->i) + " is not supported");
    const onnx::Attribute *heads = n.attribute("num_heads");
    auto x = input(n, 0), w = input(n, 1), mask = input(n, 3, /*optional=*/true);
    if (!x)
      return x.takeError();
    if (!w)
      return w.takeError();
    if (!mask)
      return mask.takeError();
    if (!heads || heads->i <= 0)
      return nodeErr(n, "has no num_heads");
    const std::vector<int64_t> &wd = (*w)->dims;
    if (wd.size() != 2 || (*x)->dims.size() != 3 || wd[0] != (*x)->dims[2] || wd[1] != 3 * wd[0] ||
        wd[0] % heads->i != 0)
      return nodeErr(n, "has weights " + shapeText(wd) + " for input " + shapeText((*x)->dims) +
                            " (supported: [H, 3H], H a multiple of num_heads)");
    if (const onnx::Attribute *q = n.attribute("qkv_hidden_sizes");
        q && q->ints != std::vector<int64_t>{wd[0], wd[0], wd[0]})
      return nodeErr(n, "has unequal qkv_hidden_sizes");
    if (!*mask || !(((*mask)->kind == Val::MaskIndex) ||
                     ((*mask)->kind == Val::Mask && (*mask)->a == 1 && (*mask)->c == 0 && (*mask)->dims.size() == 2)))
      return nodeErr(n, "its mask is neither EmbedLayerNormalization's mask_index nor the attention_mask input "
                        "(the runtime masks padded keys by sequence length)");
    auto xv = tensor(n, **x);
    if (!xv)
      return xv.takeError();
    auto wv = weight(n, **w, n.name + ".qkv.weight", /*transpose2d=*/true);
    if (!wv)
      return wv.takeError();
    std::vector<int64_t> qkvDims = {kBatch, kSeq, wd[1]};
    mlir::Value qkv = b.create<enc::LinearOp>(loc(n), typeOf(qkvDims), *xv, *wv, mlir::Value(), enc::Epilogue::none);
    auto biased = addBias(n, qkv, 2);
    if (!biased)
      return biased.takeError();
    const int64_t headDim = wd[0] / heads->i;
    const onnx::Attribute *scaleAttr = n.attribute("scale");
    const float scale = scaleAttr && scaleAttr->f != 0 ? scaleAttr->f : float(1.0 / std::sqrt(double(headDim)));
    std::vector<int64_t> dims = (*x)->dims;
    mlir::Value r = b.create<enc::AttentionOp>(loc(n), typeOf(dims), mlir::ValueRange{*biased}, lengthsArg,
                                               /*position_bias=*/mlir::Value(), b.getI64IntegerAttr(heads->i),
                                               b.getF32FloatAttr(scale),
                                               enc::PaddingAttr::get(b.getContext(), enc::Padding::right),
                                               /*bf16_pv=*/nullptr, /*bf16_amx=*/nullptr, /*max_distance=*/nullptr, /*window=*/nullptr,
                                               /*causal=*/nullptr, /*num_kv_heads=*/nullptr, /*alibi=*/nullptr);
    set(n, tensorVal(r, dims));
    return llvm::Error::success();
  }
  if (op == "SkipLayerNormalization") {
    // input, skip, gamma, beta, bias: LN(input + bias + skip).
    if (auto e = refuseUsedOutputs(n, 1))
      return e;
    auto x = input(n, 0), skip = input(n, 1);
    for (auto *v : {&x, &skip})
      if (!*v)
        return v->takeError();
    if ((*x)->dims != (*skip)->dims)
      return nodeErr(n, "adds " + shapeText((*skip)->dims) + " to " + shapeText((*x)->dims));
    auto xv = tensor(n, **x);
    if (!xv)
      return xv.takeError();
    auto biased = addBias(n, *xv, 4);
    if (!biased)
      return biased.takeError();
    auto sv = tensor(n, **skip);
    if (!sv)
      return sv.takeError();
    mlir::Value sum = b.create<enc::AddOp>(loc(n), biased->getType(), *biased, *sv);
    auto ln = layerNorm(n, sum, 2, 3, eps(1e-12f));
    if (!ln)
      return ln.takeError();
    set(n, tensorVal(*ln, (*x)->dims));
    return llvm::Error::success();
  }
  if (op == "BiasGelu" || op == "FastGelu" || op == "Gelu")
    return lowerGelu(n, op == "FastGelu" ? enc::GeluApproximation::tanh : enc::GeluApproximation::none,
                     /*withBias=*/op != "Gelu");
  return nodeErr(n, "this com.microsoft operator is not supported (supported: EmbedLayerNormalization, Attention, "
                    "SkipLayerNormalization, BiasGelu, FastGelu, Gelu)");
}

llvm::Error Lowerer::lowerGelu(const onnx::Node &n, enc::GeluApproximation approx, bool withBias) {
  auto x = input(n, 0);
  if (!x)
    return x.takeError();
  auto xv = tensor(n, **x);
  if (!xv)
    return xv.takeError();
  auto biased = withBias ? addBias(n, *xv, 1) : llvm::Expected<mlir::Value>(*xv);
  if (!biased)
    return biased.takeError();
  set(n, tensorVal(b.create<enc::GeluOp>(loc(n), biased->getType(), *biased, approx), (*x)->dims));
  return llvm::Error::success();
}

llvm::Error Lowerer::lowerNode(const onnx::Node &n) {
  const std::string &op = n.opType;
  if (n.domain == "com.microsoft")
    return lowerMicrosoft(n);
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return nodeErr(n, "operators of domain '" + n.domain + "' are not supported");
  for (const onnx::Attribute &a : n.attributes)
    if (a.type == onnx::Attribute::kGraph)
      return nodeErr(n, "has a subgraph (control flow is not supported)");
  auto unary = [&](enc::UnaryKind kind) -> llvm::Error {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    auto v = tensor(n, **x);
    if (!v)
      return v.takeError();
    set(n, tensorVal(b.create<enc::UnaryOp>(loc(n), v->getType(), *v, kind), (*x)->dims));
    return llvm::Error::success();
  };
  auto passThrough = [&]() -> llvm::Error {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    set(n, **x);
    return llvm::Error::success();
  };

  if (op == "Identity")
    return passThrough();
  if (op == "Dropout") {
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      auto t = input(n, 2);
      if (!t)
        return t.takeError();
      auto v = ints(n, **t, "training_mode");
      if (!v)
        return v.takeError();
      if (!v->empty() && (*v)[0] != 0)
        return nodeErr(n, "runs in training mode");
    }
    return passThrough();
  }
  if (op == "Cast") {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    const onnx::Attribute *to = n.attribute("to");
    if (!to)
      return nodeErr(n, "has no 'to'");
    Val r = **x;
    const bool toFloat = to->i == onnx::kFloat || to->i == onnx::kDouble || to->i == onnx::kFloat16 ||
                         to->i == onnx::kBFloat16;
    if (r.kind == Val::Const && !r.init) {
      if (toFloat && !r.isFloat) {
        auto f = floats(n, r);
        if (!f)
          return f.takeError();
        r.f = *f, r.i.clear(), r.isFloat = true;
      } else if (!toFloat && r.isFloat) {
        for (double v : r.f)
          r.i.push_back(to->i == onnx::kBool ? int64_t(v != 0) : onnx::saturatingInt(v));
        r.f.clear(), r.isFloat = false;
      }
    } else if (r.kind == Val::Tensor && !toFloat) {
      return nodeErr(n, "casts a float tensor to " + Twine(onnx::dataTypeName(int32_t(to->i))));
    } else if (r.kind == Val::Mask && to->i == onnx::kBool) { // a * mask + c != 0
      const double atValid = r.a + r.c, atPadded = r.c;
      r.c = atPadded != 0;
      r.a = double(atValid != 0) - r.c;
    }
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Constant") {
    Val r;
    r.kind = Val::Const;
    if (const onnx::Attribute *t = n.attribute("value"); t && !t->t.empty()) {
      auto v = initializerVal(t->t[0]);
      if (!v)
        return nodeErr(n, llvm::toString(v.takeError()));
      r = std::move(*v);
      r.init = nullptr; // attribute tensors are small; decode now
      if (r.isFloat && r.f.empty() && t->t[0].numElements() > 0) {
        auto f = onnx::tensorFloats(t->t[0]);
        if (!f)
          return nodeErr(n, llvm::toString(f.takeError()));
        r.f.assign(f->begin(), f->end());
      }
    } else if (const onnx::Attribute *f = n.attribute("value_float")) {
      r.isFloat = true, r.f = {f->f};
    } else if (const onnx::Attribute *i = n.attribute("value_int")) {
      r.i = {i->i};
    } else if (const onnx::Attribute *is = n.attribute("value_ints")) {
      r.i = is->ints, r.dims = {int64_t(is->ints.size())};
    } else if (const onnx::Attribute *fs = n.attribute("value_floats")) {
      r.isFloat = true, r.f.assign(fs->floats.begin(), fs->floats.end()), r.dims = {int64_t(fs->floats.size())};
    } else {
      return nodeErr(n, "has no supported value attribute");
    }
    if (llvm::any_of(r.i, isSym))
      return nodeErr(n, "holds a value the frontend reserves for the batch / sequence dimension");
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Shape") {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    const int64_t rank = int64_t((*x)->dims.size());
    int64_t start = 0, end = rank;
    if (const onnx::Attribute *a = n.attribute("start"))
      start = a->i < 0 ? std::max<int64_t>(0, a->i + rank) : std::min(a->i, rank);
    if (const onnx::Attribute *a = n.attribute("end"))
      end = a->i < 0 ? std::max<int64_t>(0, a->i + rank) : std::min(a->i, rank);
    Val r;
    r.kind = Val::Const;
    for (int64_t k = start; k < end; ++k)
      r.i.push_back((*x)->dims[size_t(k)]);
    r.dims = {int64_t(r.i.size())};
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "ConstantOfShape") {
    auto shape = input(n, 0);
    if (!shape)
      return shape.takeError();
    auto dims = ints(n, **shape, "shape");
    if (!dims)
      return dims.takeError();
    if (!saneDims(*dims))
      return nodeErr(n, "has an invalid shape " + shapeText(*dims));
    double value = 0;
    bool isFloat = true;
    if (const onnx::Attribute *a = n.attribute("value"); a && !a->t.empty()) {
      auto v = onnx::tensorFloats(a->t[0]);
      if (!v)
        return nodeErr(n, llvm::toString(v.takeError()));
      if (v->size() != 1)
        return nodeErr(n, "has a value of " + Twine(v->size()) + " elements");
      value = (*v)[0];
      isFloat = a->t[0].dataType == onnx::kFloat || a->t[0].dataType == onnx::kDouble ||
                a->t[0].dataType == onnx::kFloat16 || a->t[0].dataType == onnx::kBFloat16;
    }
    Val r;
    if (llvm::any_of(*dims, isSym)) { // ids of the run's shape: only zeros (token type 0) are known
      if (value != 0 || isFloat || *dims != std::vector<int64_t>{kBatch, kSeq})
        return nodeErr(n, "fills a tensor of the run's shape " + shapeText(*dims) +
                              " with something other than integer zeros (token type ids)");
      r.kind = Val::IdPattern;
      r.zeros = true;
    } else {
      r.kind = Val::Const;
      r.isFloat = isFloat;
      if (product(*dims) > kDecodeLimit)
        return nodeErr(n, "makes a constant of " + Twine(product(*dims)) + " elements");
      for (int64_t k = 0; k < product(*dims); ++k)
        isFloat ? r.f.push_back(value) : r.i.push_back(onnx::saturatingInt(value));
    }
    r.dims = *dims;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Equal" && n.inputs.size() == 2) {
    // ids == pad: the start of RoBERTa's position ids.
    auto x = input(n, 0), y = input(n, 1);
    if (!x)
      return x.takeError();
    if (!y)
      return y.takeError();
    // mask == k (DistilBERT: attention_mask == 0, the padded keys): still affine in the mask.
    if ((*x)->kind == Val::Mask || (*y)->kind == Val::Mask) {
      Val *mask = (*x)->kind == Val::Mask ? *x : *y;
      auto k = floats(n, mask == *x ? **y : **x);
      if (!k)
        return k.takeError();
      if (k->size() != 1)
        return nodeErr(n, "compares the attention mask with more than one value");
      const double v0 = mask->c, v1 = mask->a + mask->c; // the values at mask 0 and 1
      Val r = *mask;
      r.c = v0 == (*k)[0];
      r.a = double(v1 == (*k)[0]) - r.c;
      set(n, std::move(r));
      return llvm::Error::success();
    }
    Val *ids = (*x)->kind == Val::Ids ? *x : (*y)->kind == Val::Ids ? *y : nullptr;
    Val *pad = ids == *x ? *y : *x;
    if (ids) {
      auto p = ints(n, *pad, "the compared value");
      if (!p)
        return p.takeError();
      if (p->size() != 1)
        return nodeErr(n, "compares input_ids with more than one value");
      Val r;
      r.kind = Val::PadDerived;
      r.stage = Val::IsPad;
      r.offset = (*p)[0];
      r.dims = ids->dims;
      set(n, std::move(r));
      return llvm::Error::success();
    }
  }
  if (op == "Not") {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    if ((*x)->kind != Val::PadDerived || (*x)->stage != Val::IsPad)
      return nodeErr(n, "only (input_ids == pad) can be negated");
    Val r = **x;
    r.stage = Val::NotPad;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "CumSum") {
    auto x = input(n, 0), axis = input(n, 1);
    if (!x)
      return x.takeError();
    if (!axis)
      return axis.takeError();
    auto a = ints(n, **axis, "axis");
    if (!a)
      return a.takeError();
    const onnx::Attribute *excl = n.attribute("exclusive"), *rev = n.attribute("reverse");
    if ((*x)->kind != Val::PadDerived || (*x)->stage != Val::NotPad || a->size() != 1 ||
        ((*a)[0] != 1 && (*a)[0] != -1) || (excl && excl->i) || (rev && rev->i))
      return nodeErr(n, "only the running count of non-pad ids along the sequence is supported");
    Val r = **x;
    r.stage = Val::CumSum;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Where") {
    // masked_fill: Where(padded keys, very negative, scores) (DistilBERT).
    auto c = input(n, 0), x = input(n, 1), y = input(n, 2);
    for (auto *v : {&c, &x, &y})
      if (!*v)
        return v->takeError();
    auto scalar = [&](const Val &v) -> std::optional<double> {
      if (!v.isConst() || v.numElements() != 1 || v.init)
        return std::nullopt;
      return v.isFloat ? v.f[0] : double(v.i[0]);
    };
    if ((*c)->kind == Val::NanTest) {
      // Where(isnan(p), 0, p) (torch's SDPA export: a fully masked row's NaNs as zeros). Each valid
      // query sees at least itself, so its row has no NaN: p itself.
      const Val &p = **y;
      if (scalar(**x) != 0.0 || p.kind != Val::Tensor || p.v != (*c)->v || p.layout != Val::Plain || p.factor != 1 ||
          p.divisor != 1)
        return nodeErr(n, "selects on isnan(x) other than where(isnan(x), 0, x)");
      set(n, p);
      return llvm::Error::success();
    }
    if ((*c)->kind == Val::Mask && scalar(**x) && scalar(**y)) {
      // Where(mask, 0, -FLT_MAX) (transformers 5.x): the additive mask, a * mask + c again.
      const Val &mask = **c;
      const double atValid = mask.a + mask.c, atPadded = mask.c;
      if ((atValid != 0 && atValid != 1) || (atPadded != 0 && atPadded != 1))
        return nodeErr(n, "selects on an attention mask that is not boolean");
      Val r = mask;
      r.c = atPadded ? *scalar(**x) : *scalar(**y);
      r.a = (atValid ? *scalar(**x) : *scalar(**y)) - r.c;
      set(n, std::move(r));
      return llvm::Error::success();
    }
    if ((*c)->kind == Val::Mask) {
      const Val &mask = **c;
      const double atValid = mask.a + mask.c, atPadded = mask.c;
      // Which branch valid keys take must be the scores, padded keys a constant <= -1e4.
      const bool validTakesX = atValid != 0;
      if ((atValid != 0 && atValid != 1) || (atPadded != 0 && atPadded != 1) || atValid == atPadded)
        return nodeErr(n, "selects on the attention mask in a way the frontend does not know");
      Val &scores = validTakesX ? **x : **y, &fill = validTakesX ? **y : **x;
      auto f = fill.isConst() && fill.numElements() == 1 && !fill.init ? floats(n, fill)
                                                                         : llvm::Expected<std::vector<double>>(
                                                                               std::vector<double>{});
      if (!f)
        return f.takeError();
      if (f->size() != 1 || !((*f)[0] <= -1e4) || scores.kind != Val::Tensor || scores.dims.size() != 4 ||
          mask.dims.size() != 4 || mask.dims.back() != kSeq)
        return nodeErr(n, "fills padded keys with something other than a constant <= -1e4 on 4-D scores; only "
                          "that maps to the runtime's key-padding mask");
      auto sv = tensor(n, scores);
      if (!sv)
        return sv.takeError();
      mlir::Value r = b.create<enc::MaskOp>(loc(n), sv->getType(), *sv, lengthsArg);
      set(n, tensorVal(r, scores.dims));
      return llvm::Error::success();
    }
  }
  if (op == "Equal" || op == "Where") {
    // Shape arithmetic (torch's expand(-1) idiom): elementwise on constant vectors.
    const size_t arity = op == "Where" ? 3 : 2;
    std::vector<std::vector<int64_t>> v;
    std::vector<int64_t> dims;
    for (size_t k = 0; k < arity; ++k) {
      auto x = input(n, k);
      if (!x)
        return x.takeError();
      auto iv = ints(n, **x, "an operand");
      if (!iv)
        return iv.takeError();
      if ((*x)->dims.size() > 1 || (k > 0 && iv->size() != v[0].size() && iv->size() != 1 && v[0].size() != 1))
        return nodeErr(n, "only vectors of one length are supported");
      if (iv->size() > dims.size() || k == 0)
        dims = (*x)->dims;
      v.push_back(std::move(*iv));
    }
    const size_t len = std::max({v[0].size(), v[1].size(), arity == 3 ? v[2].size() : size_t(0)});
    auto at = [&](size_t k, size_t j) { return v[k].size() == 1 ? v[k][0] : v[k][j]; };
    Val r;
    r.kind = Val::Const;
    r.dims = {int64_t(len)};
    for (size_t j = 0; j < len; ++j) {
      if (op == "Equal") {
        const int64_t a = at(0, j), c = at(1, j);
        if (isSym(a) != isSym(c) && (isSym(a) ? c : a) >= 1)
          return nodeErr(n, "compares the " + dimText(isSym(a) ? a : c) + " dimension with " +
                                Twine(isSym(a) ? c : a) + ", which is known only at run time");
        r.i.push_back(a == c);
      } else {
        if (isSym(at(0, j)))
          return nodeErr(n, "selects on a run-time dimension");
        r.i.push_back(at(0, j) ? at(1, j) : at(2, j));
      }
    }
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Range") {
    // arange(batch) / arange(sequence): an index grid of transformers 5.x's mask.
    std::optional<int64_t> k[3];
    for (size_t j = 0; j < 3; ++j) {
      auto v = input(n, j);
      if (!v)
        return v.takeError();
      if ((*v)->isConst() && !(*v)->isFloat && (*v)->i.size() == 1 && (*v)->dims.empty())
        k[j] = (*v)->i[0];
    }
    if (!k[0] || !k[1] || !k[2] || *k[0] != 0 || *k[2] != 1 || !isSym(*k[1]))
      return nodeErr(n, "only arange(batch) and arange(sequence) (from 0, step 1) are supported");
    Val r = shaped(Val::Iota, {*k[1]});
    r.iotaOf = *k[1];
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "GreaterOrEqual") {
    // arange(...) >= 0: true everywhere.
    auto in = inputPair(n);
    if (!in)
      return in.takeError();
    const Val &x = *in->first, &y = *in->second;
    if (x.kind != Val::Iota || !y.isConst() || y.isFloat || y.i.size() != 1 || y.i[0] > 0)
      return nodeErr(n, "only arange(...) >= a constant <= 0 (always true) is supported");
    return setKind(n, Val::AllTrue, x.dims);
  }
  if (op == "And") {
    // true & x = x; the key-padding mask stays over keys (its broadcast over queries is implied).
    auto in = inputPair(n);
    if (!in)
      return in.takeError();
    Val &x = *in->first, &y = *in->second;
    auto isTrue = [](const Val &v) {
      return v.kind == Val::AllTrue || (v.isConst() && !v.isFloat && !v.init && !v.i.empty() &&
                                        llvm::all_of(v.i, [](int64_t b) { return b != 0; }));
    };
    auto dims = broadcastDims(x.dims, y.dims);
    if (!dims)
      return nodeErr(n, "operands " + shapeText(x.dims) + " and " + shapeText(y.dims) + " do not broadcast");
    if (isTrue(x) && isTrue(y))
      return setKind(n, Val::AllTrue, *dims);
    Val &other = isTrue(x) ? y : x;
    if ((isTrue(x) || isTrue(y)) && other.kind == Val::Mask && other.a == 1 && other.c == 0 &&
        other.dims.size() == dims->size()) {
      set(n, other);
      return llvm::Error::success();
    }
    return nodeErr(n, "only 'all true & the key-padding mask' is supported");
  }
  if (op == "Max") {
    // max(batch grid, sequence grid): used for its shape (the broadcast of the two).
    if (n.inputs.size() != 2)
      return nodeErr(n, "has " + Twine(n.inputs.size()) + " inputs (2 supported)");
    auto in = inputPair(n);
    if (!in)
      return in.takeError();
    const Val &x = *in->first, &y = *in->second;
    auto dims = broadcastDims(x.dims, y.dims);
    if (x.kind != Val::Iota || y.kind != Val::Iota || !dims)
      return nodeErr(n, "only the maximum of two index grids (for its shape) is supported");
    return setKind(n, Val::ShapeOnly, *dims);
  }
  if (op == "GatherND") {
    // mask[arange(batch), arange(sequence)] on grids [B, 1, .., 1, S]: the mask over keys.
    auto in = inputPair(n);
    if (!in)
      return in.takeError();
    const Val &data = *in->first, &ix = *in->second;
    const onnx::Attribute *batchDims = n.attribute("batch_dims");
    std::vector<int64_t> dims(ix.dims.begin(), ix.dims.end() - (ix.dims.empty() ? 0 : 1));
    const bool keysLast = dims.size() >= 2 && dims.front() == kBatch && dims.back() == kSeq &&
                          std::all_of(dims.begin() + 1, dims.end() - 1, [](int64_t d) { return d == 1; });
    if (data.kind != Val::Mask || data.dims != std::vector<int64_t>{kBatch, kSeq} || ix.kind != Val::IndexPair ||
        (batchDims && batchDims->i != 0) || !keysLast || ix.pairOf[0] != kBatch || ix.pairAxis[0] != 0 ||
        ix.pairOf[1] != kSeq || ix.pairAxis[1] != int64_t(dims.size()) - 1)
      return nodeErr(n, "only attention_mask[arange(batch), arange(sequence)] over the keys is supported");
    Val r = data;
    r.dims = dims;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "IsNaN") {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    auto v = tensor(n, **x);
    if (!v)
      return v.takeError();
    Val r = shaped(Val::NanTest, (*x)->dims);
    r.v = *v;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "GatherElements") {
    // A buffer of zeros (token types) gathered at the positions: token type 0.
    auto in = inputPair(n);
    if (!in)
      return in.takeError();
    const Val &data = *in->first, &ix = *in->second;
    const bool zeros = (data.kind == Val::IdPattern && data.zeros) ||
                       (data.isConst() && !data.isFloat && !data.init && !data.i.empty() &&
                        llvm::all_of(data.i, [](int64_t v) { return v == 0; }));
    if (!zeros || (ix.kind != Val::IdPattern && ix.kind != Val::Ids && ix.kind != Val::TypeIds))
      return nodeErr(n, "only gathering from a buffer of zeros (token type ids) is supported");
    Val r = shaped(Val::IdPattern, ix.dims);
    r.zeros = true;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Expand") {
    auto x = input(n, 0), shape = input(n, 1);
    if (!x)
      return x.takeError();
    if (!shape)
      return shape.takeError();
    auto target = ints(n, **shape, "shape");
    if (!target)
      return target.takeError();
    if (!saneDims(*target))
      return nodeErr(n, "has an invalid shape " + shapeText(*target));
    auto dims = broadcastDims((*x)->dims, *target);
    if (!dims)
      return nodeErr(n, "cannot expand " + shapeText((*x)->dims) + " to " + shapeText(*target));
    Val r = **x;
    if (r.kind == Val::Const && !r.isFloat && !r.init && !r.i.empty() && llvm::any_of(*target, isSym) &&
        llvm::all_of(r.i, [](int64_t v) { return v == 0; })) {
      // A buffer of zeros (transformers' token_type_ids) expanded to the run's batch: token type 0.
      r = Val();
      r.kind = Val::IdPattern;
      r.zeros = true;
    }
    if (r.kind == Val::Iota)
      r.iotaAxis += int64_t(dims->size() - (*x)->dims.size());
    if (r.kind != Val::IdPattern && r.kind != Val::Ids && r.kind != Val::TypeIds && r.kind != Val::Mask &&
        r.kind != Val::Iota)
      return nodeErr(n, "only id patterns (positions, token types), index grids and the mask can be expanded");
    if (r.kind == Val::Mask && (r.dims.empty() || r.dims.back() != kSeq || llvm::count(r.dims, kSeq) != 1))
      return nodeErr(n, "expands the attention mask " + shapeText(r.dims) + " whose last axis is not the sequence");
    r.dims = *dims;
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Gather")
    return lowerGather(n);
  if (op == "Unsqueeze" || op == "Squeeze")
    return lowerUnsqueeze(n, op == "Squeeze");
  if (op == "Concat") {
    if (n.inputs.size() == 2) { // the batch and sequence grids side by side: GatherND's indices
      auto in = inputPair(n);
      if (!in)
        return in.takeError();
      const Val &x = *in->first, &y = *in->second;
      if (x.kind == Val::Iota || y.kind == Val::Iota) {
        const onnx::Attribute *axis = n.attribute("axis");
        const int64_t rank = int64_t(x.dims.size());
        const int64_t a = axis ? (axis->i < 0 ? axis->i + rank : axis->i) : -1;
        if (x.kind != Val::Iota || y.kind != Val::Iota || x.dims != y.dims || rank == 0 || a != rank - 1 ||
            x.dims.back() != 1)
          return nodeErr(n, "only two index grids [..., 1] stacked on the last axis are supported");
        Val r = shaped(Val::IndexPair, x.dims);
        r.dims.back() = 2;
        r.pairOf[0] = x.iotaOf, r.pairAxis[0] = x.iotaAxis;
        r.pairOf[1] = y.iotaOf, r.pairAxis[1] = y.iotaAxis;
        set(n, std::move(r));
        return llvm::Error::success();
      }
    }
    Val r;
    r.kind = Val::Const;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      auto x = input(n, k);
      if (!x)
        return x.takeError();
      auto v = ints(n, **x, "a concatenated value");
      if (!v)
        return v.takeError();
      if ((*x)->dims.size() > 1)
        return nodeErr(n, "concatenates tensors of rank " + Twine((*x)->dims.size()));
      r.i.insert(r.i.end(), v->begin(), v->end());
    }
    r.dims = {int64_t(r.i.size())};
    set(n, std::move(r));
    return llvm::Error::success();
  }
  if (op == "Slice")
    return lowerSlice(n);
  if (op == "Reshape")
    return lowerReshape(n);
  if (op == "Transpose")
    return lowerTranspose(n);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow") {
    const enc::BinaryKind kind = op == "Add"   ? enc::BinaryKind::add
                                 : op == "Sub" ? enc::BinaryKind::sub
                                 : op == "Mul" ? enc::BinaryKind::mul
                                 : op == "Div" ? enc::BinaryKind::div
                                               : enc::BinaryKind::pow;
    return lowerArithmetic(n, kind);
  }
  if (op == "Sqrt")
    return unary(enc::UnaryKind::sqrt);
  if (op == "Erf")
    return unary(enc::UnaryKind::erf);
  if (op == "Tanh")
    return unary(enc::UnaryKind::tanh);
  if (op == "Gelu") { // ai.onnx Gelu (opset 20; torch's dynamo export writes it): approximate none | tanh
    std::string approx = "none";
    if (const onnx::Attribute *a = n.attribute("approximate"))
      approx = a->s;
    if (approx != "none" && approx != "tanh")
      return nodeErr(n, "approximate '" + approx + "' is not supported (supported: none, tanh)");
    return lowerGelu(n, approx == "tanh" ? enc::GeluApproximation::tanh : enc::GeluApproximation::none,
                     /*withBias=*/false);
  }
  if (op == "MatMul")
    return lowerMatMul(n);
  if (op == "Gemm")
    return lowerGemm(n);
  if (op == "ReduceMean") {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    const int64_t rank = int64_t((*x)->dims.size());
    auto axes = axesOf(n, 1, rank);
    if (!axes)
      return axes.takeError();
    const onnx::Attribute *keep = n.attribute("keepdims");
    if (*axes != std::vector<int64_t>{rank - 1} || (keep && keep->i == 0))
      return nodeErr(n, "only the mean over the last axis with keepdims is supported");
    auto v = tensor(n, **x);
    if (!v)
      return v.takeError();
    std::vector<int64_t> dims = (*x)->dims;
    dims.back() = 1;
    set(n, tensorVal(b.create<enc::ReduceMeanOp>(loc(n), typeOf(dims), *v), dims));
    return llvm::Error::success();
  }
  if (op == "ReduceSum") {
    // ORT's optimiser writes mask_index as ReduceSum(attention_mask, axis 1) when it does
    // not fuse the embeddings (RoBERTa): the lengths of the right-padded mask.
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    auto axes = axesOf(n, 1, int64_t((*x)->dims.size()));
    if (!axes)
      return axes.takeError();
    const onnx::Attribute *keep = n.attribute("keepdims");
    const Val &mask = **x;
    if (mask.kind != Val::Mask || mask.a != 1 || mask.c != 0 || mask.dims.size() != 2 ||
        *axes != std::vector<int64_t>{1} || !keep || keep->i != 0)
      return nodeErr(n, "only the sum of the attention_mask input over the sequence (keepdims 0) is supported");
    Val idx;
    idx.kind = Val::MaskIndex;
    idx.dims = {kBatch};
    set(n, std::move(idx));
    return llvm::Error::success();
  }
  if (op == "LayerNormalization") {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    const int64_t rank = int64_t((*x)->dims.size());
    const onnx::Attribute *axis = n.attribute("axis");
    if (axis && axis->i != -1 && axis->i != rank - 1)
      return nodeErr(n, "normalises over more than the last axis");
    if (auto e = refuseUsedOutputs(n, 1)) // mean, inverse standard deviation
      return e;
    const onnx::Attribute *eps = n.attribute("epsilon");
    auto v = tensor(n, **x);
    if (!v)
      return v.takeError();
    auto ln = layerNorm(n, *v, 1, 2, eps ? eps->f : 1e-5f);
    if (!ln)
      return ln.takeError();
    set(n, tensorVal(*ln, (*x)->dims));
    return llvm::Error::success();
  }
  if (op == "Softmax") {
    auto x = input(n, 0);
    if (!x)
      return x.takeError();
    const int64_t rank = int64_t((*x)->dims.size());
    const onnx::Attribute *axis = n.attribute("axis");
    const int64_t a = axis ? (axis->i < 0 ? axis->i + rank : axis->i) : (m.opset("") >= 13 ? rank - 1 : 1);
    if (a != rank - 1)
      return nodeErr(n, "only the softmax over the last axis is supported");
    auto v = tensor(n, **x);
    if (!v)
      return v.takeError();
    set(n, tensorVal(b.create<enc::SoftmaxOp>(loc(n), v->getType(), *v), (*x)->dims));
    return llvm::Error::success();
  }
  return nodeErr(n, "is not supported by the ONNX frontend");
}

llvm::Expected<OwningOpRef<ModuleOp>> Lowerer::run(ModelDescription &desc) {
  const onnx::Graph &g = m.graph;
  for (const onnx::Tensor &t : g.initializers)
    inits[t.name] = &t;
  // The output: last_hidden_state, else the first.
  if (g.outputs.empty())
    return err("the graph has no outputs");
  std::string outName = g.outputs[0].name;
  for (const onnx::ValueInfo &o : g.outputs)
    if (o.name == "last_hidden_state")
      outName = o.name;
  // The nodes it depends on.
  std::map<std::string, size_t> producer;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (const std::string &o : g.nodes[k].outputs)
      if (!o.empty())
        producer[o] = k;
  std::vector<bool> needed(g.nodes.size(), false);
  std::vector<std::string> work{outName};
  llvm::StringSet<> usedInputs;
  while (!work.empty()) {
    std::string v = work.back();
    work.pop_back();
    auto it = producer.find(v);
    if (it == producer.end()) {
      usedInputs.insert(v);
      continue;
    }
    if (needed[it->second])
      continue;
    needed[it->second] = true;
    for (const std::string &in : g.nodes[it->second].inputs)
      if (!in.empty())
        work.push_back(in);
  }
  // Token types: a model whose type table has two or more rows takes type ids.
  llvm::StringSet<> typeNames{"token_type_ids"};
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const onnx::Node &n = g.nodes[k];
    if (!needed[k] || n.inputs.empty())
      continue;
    if ((n.opType == "Cast" || n.opType == "Identity") && typeNames.contains(n.inputs[0]))
      typeNames.insert(n.outputs[0]);
    if (n.opType == "Gather" && n.inputs.size() == 2 && typeNames.contains(n.inputs[1]))
      if (auto it = inits.find(n.inputs[0]); it != inits.end() && !it->second->dims.empty())
        typeVocab = it->second->dims[0];
    if (n.opType == "EmbedLayerNormalization" && n.inputs.size() > 4 && typeNames.contains(n.inputs[1]))
      if (auto it = inits.find(n.inputs[4]); it != inits.end() && !it->second->dims.empty())
        typeVocab = it->second->dims[0];
  }
  const bool takesTypeIds = typeVocab >= 2 && usedInputs.contains("token_type_ids");

  ModuleOp module = ModuleOp::create(fileLoc);
  OwningOpRef<ModuleOp> owned(module);
  b.setInsertionPointToEnd(module.getBody());
  auto idsTy = RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic}, b.getI32Type());
  auto lenTy = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  SmallVector<Type> args{idsTy, lenTy};
  if (takesTypeIds)
    args.push_back(idsTy);
  auto fwdLoc = NameLoc::get(b.getStringAttr("forward"), fileLoc);
  auto func = b.create<func::FuncOp>(fwdLoc, "forward", b.getFunctionType(args, {}));
  Block *entry = func.addEntryBlock();
  idsArg = entry->getArgument(0);
  lengthsArg = entry->getArgument(1);
  typeIdsArg = takesTypeIds ? entry->getArgument(2) : mlir::Value();
  weightBuilder.setInsertionPointToStart(entry);
  b.setInsertionPointToEnd(entry);

  for (const onnx::ValueInfo &in : g.inputs) {
    if (inits.count(in.name) || !usedInputs.contains(in.name))
      continue;
    Val v;
    v.name = in.name;
    v.dims = {kBatch, kSeq};
    if (in.name == "input_ids")
      v.kind = Val::Ids;
    else if (in.name == "attention_mask")
      v.kind = Val::Mask;
    else if (in.name == "token_type_ids")
      v.kind = Val::TypeIds;
    else
      return err("graph input '" + in.name + "' is not one of input_ids, attention_mask, token_type_ids");
    if (in.hasShape && in.dims.size() != 2)
      return err("graph input '" + in.name + "' has rank " + Twine(in.dims.size()) + ", not [batch, sequence]");
    for (const onnx::Dim &d : in.dims)
      if (d.value >= 0)
        return err("graph input '" + in.name + "' has a fixed dimension of " + Twine(d.value) +
                   "; export with dynamic batch and sequence axes (torch.onnx.export(..., dynamic_axes=...))");
    vals[in.name] = std::move(v);
  }
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (needed[k])
      if (auto e = lowerNode(g.nodes[k]))
        return std::move(e);
  if (!usedInputs.contains("input_ids"))
    return err("the output does not depend on a graph input named input_ids");
  if (!usedInputs.contains("attention_mask"))
    return err("the output does not depend on a graph input named attention_mask (the frontend maps it to the "
               "runtime's sequence lengths; without it padded keys would be attended to)");

  auto out = vals.find(outName);
  if (out == vals.end())
    return err("output '" + outName + "' is not computed by the graph");
  onnx::Node outNode;
  outNode.name = outName;
  outNode.opType = "output";
  auto hidden = tensor(outNode, out->second);
  if (!hidden)
    return hidden.takeError();
  const std::vector<int64_t> &dims = out->second.dims;
  SmallVector<mlir::Value> outs{*hidden};
  if (clsSource && dims.size() == 2 && dims[0] == kBatch && !isSym(dims[1]) && outName != "pooler_output") {
    // A sequence-classification head: the hidden state it read, then the logits.
    if (dims[1] < 1 || dims[1] > 4096)
      return err("output '" + outName + "' has " + Twine(dims[1]) + " labels; 1 to 4096 are supported");
    outs = {clsSource, *hidden};
    desc.numLabels = dims[1];
    desc.scoreActivation = dims[1] == 1 ? "sigmoid" : "identity";
    desc.pooling = Pooling::None;
    desc.normalize = false;
  } else if (dims.size() != 3 || dims[0] != kBatch || dims[1] != kSeq || isSym(dims[2])) {
    return err("output '" + outName + "' has shape " + shapeText(dims) +
               ", neither [batch, sequence, hidden] nor a classification head's [batch, labels]");
  }
  const int64_t h = cast<RankedTensorType>(outs[0].getType()).getDimSize(2);
  if (desc.numLabels == 0)
    if (mlir::Value p = emitPooling(b, fileLoc, desc.pooling, desc.normalize, *hidden, lengthsArg))
      outs.push_back(p);
  b.create<func::ReturnOp>(fwdLoc, outs);
  func.setFunctionType(b.getFunctionType(args, mlir::ValueRange(outs).getTypes()));
  desc.hidden = h;
  desc.typeVocab = takesTypeIds ? typeVocab : 0;
  return std::move(owned);
}

/// The facts the artifact records, read off the recognised module.
void describeModule(ModuleOp module, ModelDescription &d) {
  bool first = true;
  module.walk([&](Operation *op) {
    if (auto e = dyn_cast<enc::EmbeddingOp>(op)) {
      auto word = cast<RankedTensorType>(e.getWord().getType());
      auto pos = cast<RankedTensorType>(e.getPos().getType());
      d.vocab = word.getDimSize(0);
      d.maxSeq = pos.getDimSize(0) - int64_t(e.getPositionOffset());
    } else if (isa<enc::MaskOp>(op)) { // one per attention layer
      ++d.layers;
    } else if (auto a = dyn_cast<enc::AttentionOp>(op)) { // ONNX Runtime's Attention, already fused
      ++d.layers;
      d.heads = int64_t(a.getNumHeads());
    } else if (auto s = dyn_cast<enc::SplitHeadsOp>(op)) {
      d.heads = int64_t(s.getNumHeads());
    } else if (auto gelu = dyn_cast<enc::GeluOp>(op)) {
      switch (gelu.getApproximate()) {
      case enc::GeluApproximation::none: d.activation = Activation::Gelu; break;
      case enc::GeluApproximation::tanh: d.activation = Activation::GeluTanh; break;
      }
      d.intermediate = cast<RankedTensorType>(gelu.getType()).getShape().back();
    } else if (auto ln = dyn_cast<enc::LayerNormOp>(op); ln && first) {
      d.layerNormEps = ln.getEpsilon().convertToFloat();
      first = false;
    }
  });
}

} // namespace

bool encc::isOnnxPath(const std::string &path) { return llvm::StringRef(path).ends_with_insensitive(".onnx"); }

/// Exporters that name neither the MatMul node after its module nor the
/// weight (torch's dynamo exporter: `node_MatMul_140`, `val_147`) leave a
/// Linear's weight as `val_147.T`; when the bias added to it is named
/// `M.bias`, the weight becomes `M.weight`, the HF checkpoint's name (so
/// --quantize-skip patterns and reports read the same on both frontends).
static void nameWeightsAfterTheirBias(ModuleOp module, enc::WeightStore &weights) {
  module.walk([&](enc::LinearOp linear) {
    auto w = linear.getWeight().getDefiningOp<enc::WeightOp>();
    if (!w || !w.getName().ends_with(".T") || !w->hasOneUse() || !linear.getResult().hasOneUse())
      return;
    auto add = dyn_cast<enc::BinaryOp>(*linear.getResult().getUsers().begin());
    if (!add || add.getKind() != enc::BinaryKind::add)
      return;
    auto bias = add.getRhs().getDefiningOp<enc::WeightOp>();
    if (!bias)
      bias = add.getLhs().getDefiningOp<enc::WeightOp>();
    if (!bias || !bias.getName().ends_with(".bias"))
      return;
    const std::string name = bias.getName().drop_back(sizeof(".bias") - 1).str() + ".weight";
    if (weights.rename(w.getName().str(), name))
      w.setName(name);
  });
}

llvm::Expected<ImportedModel> encc::lowerOnnxGraph(MLIRContext &ctx, const onnx::Model &model,
                                                   const std::string &source, const OnnxImportOptions &opts) {
  ctx.loadDialect<func::FuncDialect, enc::EncDialect>();
  ImportedModel im;
  im.description.architecture = "onnx";
  im.description.pooling = opts.pooling.value_or(Pooling::None);
  im.description.normalize = opts.normalize > 0;
  Lowerer lowerer(ctx, model, source, opts, im.weights);
  auto module = lowerer.run(im.description);
  if (!module)
    return module.takeError();
  nameWeightsAfterTheirBias(**module, im.weights);
  std::string diag;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    if (failed(verify(**module)))
      return hfError(onnx::printable(source + ": internal error: the lowered enc module does not verify: " + diag));
  }
  im.module = std::move(*module);
  return std::move(im);
}

/// Runs the recognition passes and checks that no import-level op is left.
static llvm::Error recognize(MLIRContext &ctx, ModuleOp module, const std::string &source) {
  PassManager pm(&ctx);
  pm.addPass(enc::createRecognizeLayerNormPass());
  pm.addPass(enc::createRecognizeGeluPass());
  pm.addPass(enc::createRecognizeLinearBiasPass());
  pm.addPass(enc::createLowerScalarArithmeticPass());
  if (failed(pm.run(module)))
    return hfError(source + ": internal error: the recognition passes failed");
  std::string left;
  module.walk([&](Operation *op) {
    if (!left.empty() || !isa<enc::BinaryOp, enc::UnaryOp, enc::ReduceMeanOp, enc::ConstantOp>(op))
      return;
    if (isa<enc::ConstantOp>(op) && op->use_empty())
      return;
    std::string node = "?";
    if (auto name = dyn_cast<NameLoc>(op->getLoc()))
      node = name.getName().str();
    std::string what = op->getName().getStringRef().str();
    if (auto bin = dyn_cast<enc::BinaryOp>(op))
      what += " " + enc::stringifyBinaryKind(bin.getKind()).str();
    else if (auto un = dyn_cast<enc::UnaryOp>(op))
      what += " " + enc::stringifyUnaryKind(un.getKind()).str();
    left = source + ": node '" + node + "': " + what +
           " is not part of a pattern encc recognises (LayerNorm, GELU, Linear bias, scaling) and has no kernel";
  });
  if (!left.empty()) {
    return hfError(onnx::printable(left));
  }
  // Constants the patterns consumed.
  SmallVector<Operation *> dead;
  module.walk([&](enc::ConstantOp c) {
    if (c->use_empty())
      dead.push_back(c);
  });
  for (Operation *op : dead)
    op->erase();
  return llvm::Error::success();
}

llvm::Expected<ImportedModel> encc::importOnnxModel(MLIRContext &ctx, const std::string &path,
                                                    const OnnxImportOptions &optsIn) {
  auto model = onnx::readOnnxModel(path);
  if (!model)
    return model.takeError();
  OnnxImportOptions opts = optsIn;
  // The files beside the model: config.json (family, tokenizer), the
  // sentence-transformers layout (pooling), vocab.txt / tokenizer.json.
  std::string dir = opts.tokenizerDir;
  if (dir.empty()) {
    dir = llvm::sys::path::parent_path(path).str();
    if (dir.empty())
      dir = ".";
  }
  std::optional<ModelConfig> config;
  if (fileExists(dir + "/config.json")) {
    auto text = readTextFile(dir + "/config.json");
    if (!text)
      return text.takeError();
    auto c = parseModelConfig(*text, dir + "/config.json");
    if (!c)
      return c.takeError();
    if (auto e = readSentenceTransformersConfig(dir, *c))
      return std::move(e);
    config = std::move(*c);
  } else if (!opts.tokenizerDir.empty()) {
    return hfError(opts.tokenizerDir + ": --tokenizer needs a folder with config.json (and vocab.txt or "
                                       "tokenizer.json)");
  }
  if (!opts.pooling)
    opts.pooling = config ? config->pooling : Pooling::Mean;
  if (opts.normalize < 0)
    opts.normalize = config ? int(config->normalize) : 1;
  if (*opts.pooling == Pooling::None)
    opts.normalize = 0;

  auto im = lowerOnnxGraph(ctx, *model, path, opts);
  if (!im)
    return im.takeError();
  if (im->description.numLabels > 0) {
    if (optsIn.pooling && *optsIn.pooling != Pooling::None)
      return hfError(path + ": a sequence-classification model (cross-encoder) scores text pairs; --pooling=" +
                     poolingName(*optsIn.pooling) + " does not apply");
    if (config && config->classifies()) {
      if (config->numLabels != im->description.numLabels)
        return hfError(dir + "/config.json does not describe " + path + " (" + Twine(config->numLabels) +
                       " labels vs " + Twine(im->description.numLabels) + ")");
      im->description.scoreActivation = config->scoreActivation;
      im->description.labels = config->labels;
    }
  }
  if (auto e = recognize(ctx, *im->module, path))
    return std::move(e);
  ModelDescription &d = im->description;
  describeModule(*im->module, d);
  if (opts.maxSeq != 0) {
    if (opts.maxSeq < 1 || opts.maxSeq > d.maxSeq)
      return hfError(path + ": --max-seq " + Twine(opts.maxSeq) + " is out of range [1, " + Twine(d.maxSeq) +
                     "] (the model's position table)");
    d.maxSeq = opts.maxSeq;
  } else if (config && config->maxSeq > 0) {
    d.maxSeq = std::min(d.maxSeq, config->maxSeq);
  }
  if (config) {
    if (config->hidden != d.hidden || (config->vocab != d.vocab))
      return hfError(dir + "/config.json does not describe " + path + " (hidden " + Twine(config->hidden) + " vs " +
                     Twine(d.hidden) + ", vocab " + Twine(config->vocab) + " vs " + Twine(d.vocab) + ")");
    d.architecture = "onnx:" + config->modelType;
    auto tok = readTokenizer(dir, *config);
    if (!tok)
      return tok.takeError();
    im->tokenizer = std::move(*tok);
  } else {
    im->tokenizer.note = path + ": no config.json beside the model (or --tokenizer DIR): the artifact runs on token "
                                "ids only";
  }
  return im;
}
