//===- EncOps.cpp - Verifiers, folders and canonicalizations of enc ops ---===//
//
// Every verifier checks ranks and static dims; a dynamic dim (`?`) is
// compatible with any size. Messages read "expects ... but got ...".
// Folders and canonicalization patterns hold the local algebra the
// `canonicalize` step of the enc pipeline relies on.
//
//===----------------------------------------------------------------------===//
#include "ir/EncOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::enc;

namespace {

bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

RankedTensorType rtt(Value v) { return cast<RankedTensorType>(v.getType()); }

LogicalResult checkRank(Operation *op, StringRef what, RankedTensorType t,
                        int64_t rank) {
  if (t.getRank() == rank)
    return success();
  return op->emitOpError() << "expects " << what << " of rank " << rank
                           << " but got " << t;
}

LogicalResult checkMinRank(Operation *op, StringRef what, RankedTensorType t,
                           int64_t rank) {
  if (t.getRank() >= rank)
    return success();
  return op->emitOpError() << "expects " << what << " of rank >= " << rank
                           << " but got " << t;
}

/// Checks `got` (described by `gotWhat`) against `want` (`wantWhat`).
LogicalResult checkDim(Operation *op, const Twine &gotWhat, int64_t got,
                       const Twine &wantWhat, int64_t want) {
  if (compatible(got, want))
    return success();
  return op->emitOpError() << "expects " << gotWhat << " to equal " << wantWhat
                           << " (" << dimStr(want) << ") but got "
                           << dimStr(got);
}

/// Same rank and pairwise-compatible dims.
LogicalResult checkSameShape(Operation *op, StringRef gotWhat,
                             RankedTensorType got, StringRef wantWhat,
                             RankedTensorType want) {
  if (got.getRank() != want.getRank())
    return op->emitOpError()
           << "expects " << gotWhat << " to have the rank of " << wantWhat
           << " (" << want.getRank() << ") but got " << got;
  for (int64_t i = 0; i < got.getRank(); ++i)
    if (failed(checkDim(op, gotWhat + Twine(" dim ") + Twine(i),
                        got.getDimSize(i), wantWhat + Twine(" dim ") + Twine(i),
                        want.getDimSize(i))))
      return failure();
  return success();
}

/// Only right padding is implemented by the mask and the fused kernels.
LogicalResult checkPadding(Operation *op, Padding padding) {
  if (padding == Padding::right)
    return success();
  return op->emitOpError()
         << "expects padding to be right (key j of sequence b is valid "
            "iff j < lengths[b]; other mask conventions are not supported) "
            "but got "
         << stringifyPadding(padding);
}

/// `scores` [B, heads, S, S] + `lengths` [B] -> result like `scores`.
LogicalResult checkScoresAndLengths(Operation *op, RankedTensorType s,
                                    RankedTensorType len,
                                    RankedTensorType res) {
  if (failed(checkRank(op, "scores", s, 4)) ||
      failed(checkRank(op, "lengths", len, 1)) ||
      failed(checkDim(op, "lengths dim 0", len.getDimSize(0), "scores dim 0",
                      s.getDimSize(0))) ||
      failed(checkSameShape(op, "result", res, "scores", s)))
    return failure();
  return success();
}

/// A relative position bias table `[num_buckets, heads]` (num_buckets static,
/// even, >= 4) and its max_distance (> num_buckets / 4, where the log-scale
/// buckets start).
LogicalResult checkPositionBiasTable(Operation *op, RankedTensorType table,
                                     int64_t heads, int64_t maxDistance) {
  if (failed(checkRank(op, "position bias table", table, 2)) ||
      failed(checkDim(op, "position bias table dim 1", table.getDimSize(1),
                      "the head count", heads)))
    return failure();
  int64_t buckets = table.getDimSize(0);
  if (ShapedType::isDynamic(buckets) || buckets < 4 || buckets % 2 != 0)
    return op->emitOpError()
           << "expects a static, even number of position buckets >= 4 "
              "(table dim 0) but got "
           << dimStr(buckets);
  if (maxDistance <= buckets / 4)
    return op->emitOpError() << "expects max_distance > num_buckets / 4 ("
                             << buckets / 4 << ") but got " << maxDistance;
  return success();
}

LogicalResult checkLayerNormParams(Operation *op, RankedTensorType x,
                                   RankedTensorType g, RankedTensorType b,
                                   RankedTensorType res, float epsilon) {
  if (failed(checkMinRank(op, "x", x, 1)) ||
      failed(checkRank(op, "gamma", g, 1)) ||
      failed(checkRank(op, "beta", b, 1)))
    return failure();
  int64_t h = x.getDimSize(x.getRank() - 1);
  std::string hWhat = "x dim " + std::to_string(x.getRank() - 1);
  if (failed(checkDim(op, "gamma dim 0", g.getDimSize(0), hWhat, h)) ||
      failed(checkDim(op, "beta dim 0", b.getDimSize(0), hWhat, h)) ||
      failed(checkSameShape(op, "result", res, "x", x)))
    return failure();
  if (!(epsilon > 0.0f))
    return op->emitOpError() << "expects epsilon > 0 but got " << epsilon;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Custom assembly: `%q, %k, %v, %lengths` / `%qkv, %lengths`
//===----------------------------------------------------------------------===//

static ParseResult
parseAttentionOperands(OpAsmParser &parser,
                       SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
                       OpAsmParser::UnresolvedOperand &lengths) {
  SmallVector<OpAsmParser::UnresolvedOperand> all;
  if (parser.parseOperandList(all))
    return failure();
  if (all.size() < 2)
    return parser.emitError(parser.getCurrentLocation())
           << "expects the attention inputs followed by lengths";
  lengths = all.pop_back_val();
  inputs.append(all.begin(), all.end());
  return success();
}

static void printAttentionOperands(OpAsmPrinter &p, Operation *,
                                   OperandRange inputs, Value lengths) {
  p << inputs << ", " << lengths;
}

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "expects its body to end with enc.yield";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "expects its results to have the types of the yielded values";
  unsigned count = 0;
  for (Operation &op : body.without_terminator()) {
    if (isa<FusionOp, WeightOp>(op) || op.getDialect() != getOperation()->getDialect())
      return op.emitOpError() << "cannot be in an enc.fusion (enc compute ops only)";
    ++count;
  }
  if (count < 2)
    return emitOpError() << "expects at least two ops in its body";
  return success();
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError() << "expects a non-empty weight name";
  if (!getType().hasStaticShape())
    return emitOpError() << "expects a static shape but got " << getType();
  return success();
}

LogicalResult EmbeddingOp::verify() {
  Operation *op = getOperation();
  auto ids = rtt(getIds()), word = rtt(getWord()), pos = rtt(getPos()),
       type = rtt(getTokenType()), res = rtt(getResult());
  if (failed(checkRank(op, "ids", ids, 2)) ||
      failed(checkRank(op, "word table", word, 2)) ||
      failed(checkRank(op, "position table", pos, 2)) ||
      failed(checkRank(op, "token-type table", type, 2)) ||
      failed(checkRank(op, "result", res, 3)))
    return failure();
  int64_t h = word.getDimSize(1);
  if (failed(checkDim(op, "position table dim 1", pos.getDimSize(1),
                      "word table dim 1", h)) ||
      failed(checkDim(op, "token-type table dim 1", type.getDimSize(1),
                      "word table dim 1", h)) ||
      failed(checkDim(op, "result dim 0", res.getDimSize(0), "ids dim 0",
                      ids.getDimSize(0))) ||
      failed(checkDim(op, "result dim 1", res.getDimSize(1), "ids dim 1",
                      ids.getDimSize(1))) ||
      failed(checkDim(op, "result dim 2", res.getDimSize(2), "word table dim 1",
                      h)))
    return failure();
  if (IntegerAttr pad = getPositionPadIdAttr(); pad && pad.getInt() < 0)
    return emitOpError() << "position_pad_id " << pad.getInt() << " must be >= 0";
  bool int8Table = word.getElementType().isInteger(8);
  if (Value scaleValue = getWordScale()) {
    if (!int8Table)
      return emitOpError() << "expects no word_scale with an f32 or bf16 word table "
                              "(word_scale goes with an i8 table) but got "
                           << word;
    auto ws = rtt(scaleValue);
    if (failed(checkRank(op, "word_scale", ws, 1)) ||
        failed(checkDim(op, "word_scale dim 0", ws.getDimSize(0),
                        "word table dim 0", word.getDimSize(0))))
      return failure();
  } else if (int8Table) {
    return emitOpError()
           << "expects a word_scale operand with an i8 word table " << word;
  }
  if (Value typeIds = getTypeIds()) {
    auto t = rtt(typeIds);
    if (failed(checkRank(op, "type_ids", t, 2)) ||
        failed(checkDim(op, "type_ids dim 0", t.getDimSize(0), "ids dim 0",
                        ids.getDimSize(0))) ||
        failed(checkDim(op, "type_ids dim 1", t.getDimSize(1), "ids dim 1",
                        ids.getDimSize(1))))
      return failure();
  }
  int64_t offset = getPositionOffset();
  if (offset < 0)
    return emitOpError() << "expects position_offset >= 0 but got " << offset;
  int64_t s = res.getDimSize(1), rows = pos.getDimSize(0);
  if (!ShapedType::isDynamic(s) && !ShapedType::isDynamic(rows) &&
      s + offset > rows)
    return emitOpError() << "expects sequence length + position_offset <= "
                         << rows << " position rows but got " << s + offset;
  return success();
}

/// The shape rules enc.linear and enc.qlinear share: x [..., K], weight
/// [N, K], result [..., N] with x's leading dims, bias [N].
static LogicalResult verifyLinearShapes(Operation *op, RankedTensorType x,
                                        RankedTensorType w,
                                        RankedTensorType res, Value bias) {
  int64_t r = x.getRank();
  if (failed(checkDim(op, "x dim " + Twine(r - 1), x.getDimSize(r - 1),
                      "weight dim 1", w.getDimSize(1))))
    return failure();
  for (int64_t i = 0; i + 1 < r; ++i)
    if (failed(checkDim(op, "result dim " + Twine(i), res.getDimSize(i),
                        "x dim " + Twine(i), x.getDimSize(i))))
      return failure();
  if (failed(checkDim(op, "result dim " + Twine(r - 1), res.getDimSize(r - 1),
                      "weight dim 0", w.getDimSize(0))))
    return failure();
  if (bias) {
    auto b = rtt(bias);
    if (failed(checkRank(op, "bias", b, 1)) ||
        failed(checkDim(op, "bias dim 0", b.getDimSize(0), "weight dim 0",
                        w.getDimSize(0))))
      return failure();
  }
  return success();
}

LogicalResult LinearOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX()), w = rtt(getWeight()), res = rtt(getResult());
  if (failed(checkMinRank(op, "x", x, 1)) ||
      failed(checkRank(op, "weight", w, 2)) ||
      failed(checkRank(op, "result", res, x.getRank())))
    return failure();
  if (failed(verifyLinearShapes(op, x, w, res, getBias())))
    return failure();
  if (x.getElementType() != w.getElementType())
    return emitOpError() << "expects x and weight of one element type (both "
                            "f32 or both bf16) but got "
                         << x.getElementType() << " and " << w.getElementType();
  if (res.getElementType().isBF16() && !x.getElementType().isBF16())
    return emitOpError() << "expects an f32 result for f32 operands (a bf16 result only over bf16 x and weight)";
  return success();
}

LogicalResult ToBf16Op::verify() {
  return checkSameShape(getOperation(), "result", rtt(getResult()), "x", rtt(getX()));
}

LogicalResult QuantizeOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX()), q = rtt(getValues()), sc = rtt(getScales());
  if (failed(checkMinRank(op, "x", x, 1)) ||
      failed(checkSameShape(op, "values", q, "x", x)) ||
      failed(checkRank(op, "scales", sc, x.getRank() - 1)))
    return failure();
  for (int64_t i = 0; i + 1 < x.getRank(); ++i)
    if (failed(checkDim(op, "scales dim " + Twine(i), sc.getDimSize(i),
                        "x dim " + Twine(i), x.getDimSize(i))))
      return failure();
  if (auto s = getStaticScale()) {
    float v = s->convertToFloat();
    if (!(v > 0.0f) || !std::isfinite(v))
      return emitOpError() << "expects a finite static_scale > 0 but got "
                           << v;
  }
  return success();
}

LogicalResult QLinearOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX()), xs = rtt(getXScale()), w = rtt(getWeight()),
       ws = rtt(getWScale()), res = rtt(getResult());
  if (failed(checkMinRank(op, "x", x, 1)) ||
      failed(checkRank(op, "x_scale", xs, x.getRank() - 1)) ||
      failed(checkRank(op, "weight", w, 2)) ||
      failed(checkRank(op, "w_scale", ws, 1)) ||
      failed(checkRank(op, "result", res, x.getRank())))
    return failure();
  if (failed(verifyLinearShapes(op, x, w, res, getBias())) ||
      failed(checkDim(op, "w_scale dim 0", ws.getDimSize(0), "weight dim 0",
                      w.getDimSize(0))))
    return failure();
  for (int64_t i = 0; i + 1 < x.getRank(); ++i)
    if (failed(checkDim(op, "x_scale dim " + Twine(i), xs.getDimSize(i),
                        "x dim " + Twine(i), x.getDimSize(i))))
      return failure();
  auto lo = getWScaleMin(), hi = getWScaleMax();
  if (lo.has_value() != hi.has_value())
    return emitOpError()
           << "expects both w_scale_min and w_scale_max or neither";
  if (lo && !(lo->convertToFloat() >= 0.0f &&
              lo->convertToFloat() <= hi->convertToFloat()))
    return emitOpError() << "expects 0 <= w_scale_min <= w_scale_max but got "
                         << lo->convertToFloat() << " and "
                         << hi->convertToFloat();
  return success();
}

LogicalResult MatmulOp::verify() {
  Operation *op = getOperation();
  auto a = rtt(getA()), b = rtt(getB()), res = rtt(getResult());
  if (failed(checkMinRank(op, "a", a, 2)) ||
      failed(checkRank(op, "b", b, a.getRank())) ||
      failed(checkRank(op, "result", res, a.getRank())))
    return failure();
  int64_t r = a.getRank();
  for (int64_t i = 0; i + 2 < r; ++i) {
    if (failed(checkDim(op, "b batch dim " + Twine(i), b.getDimSize(i),
                        "a batch dim " + Twine(i), a.getDimSize(i))) ||
        failed(checkDim(op, "result batch dim " + Twine(i), res.getDimSize(i),
                        "a batch dim " + Twine(i), a.getDimSize(i))))
      return failure();
  }
  bool tb = getTransposeB();
  int64_t kB = tb ? r - 1 : r - 2, nB = tb ? r - 2 : r - 1;
  StringRef suffix = tb ? " (transpose_b)" : "";
  if (failed(checkDim(op, "b contraction dim " + Twine(kB) + suffix,
                      b.getDimSize(kB), "a dim " + Twine(r - 1),
                      a.getDimSize(r - 1))) ||
      failed(checkDim(op, "result dim " + Twine(r - 2), res.getDimSize(r - 2),
                      "a dim " + Twine(r - 2), a.getDimSize(r - 2))) ||
      failed(checkDim(op, "result dim " + Twine(r - 1), res.getDimSize(r - 1),
                      "b dim " + Twine(nB), b.getDimSize(nB))))
    return failure();
  return success();
}

LogicalResult MaskOp::verify() {
  Operation *op = getOperation();
  if (failed(checkScoresAndLengths(op, rtt(getScores()), rtt(getLengths()),
                                   rtt(getResult()))))
    return failure();
  return checkPadding(op, getPadding());
}

LogicalResult ScaleMaskSoftmaxOp::verify() {
  Operation *op = getOperation();
  if (failed(checkScoresAndLengths(op, rtt(getScores()), rtt(getLengths()),
                                   rtt(getResult()))))
    return failure();
  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError() << "expects a finite scale but got "
                         << getScale().convertToFloat();
  return checkPadding(op, getPadding());
}

LogicalResult RelativePositionBiasOp::verify() {
  Operation *op = getOperation();
  auto s = rtt(getScores());
  if (failed(checkRank(op, "scores", s, 4)) ||
      failed(checkDim(op, "scores dim 3", s.getDimSize(3), "scores dim 2",
                      s.getDimSize(2))))
    return failure();
  return checkPositionBiasTable(op, rtt(getTable()), s.getDimSize(1),
                                getMaxDistance());
}

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  size_t n = getInputs().size();
  if (n != 1 && n != 3)
    return emitOpError() << "expects 1 (packed qkv) or 3 (q, k, v) inputs "
                            "before lengths but got "
                         << n;
  auto len = rtt(getLengths()), res = rtt(getResult());
  if (failed(checkRank(op, "lengths", len, 1)) ||
      failed(checkRank(op, "result", res, 3)))
    return failure();
  int64_t heads = getNumHeads();
  if (heads <= 0)
    return emitOpError() << "expects num_heads > 0 but got " << heads;
  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError() << "expects a finite scale but got "
                         << getScale().convertToFloat();
  if (Value table = getPositionBias()) {
    if (!getMaxDistance())
      return emitOpError() << "expects max_distance with a position_bias";
    if (failed(checkPositionBiasTable(op, rtt(table), heads, *getMaxDistance())))
      return failure();
  } else if (getMaxDistance()) {
    return emitOpError() << "expects max_distance only with a position_bias";
  }
  if (getBf16Pv() && getBf16Amx())
    return emitOpError() << "expects one bf16 form: bf16_pv (everywhere) or bf16_amx (on AMX tiles), not both";
  if (getAlibi() && getPositionBias())
    return emitOpError() << "expects one position scheme: alibi or a position_bias, not both";
  if (IntegerAttr w = getWindowAttr(); w && w.getInt() < 0)
    return emitOpError() << "expects window >= 0 (keys |i - j| <= window) but got " << w.getInt();
  const int64_t kvHeads = this->kvHeads();
  if (kvHeads <= 0 || heads % kvHeads != 0)
    return emitOpError() << "expects num_kv_heads to divide num_heads (" << heads << ") but got " << kvHeads;
  if (kvHeads != heads && n != 3)
    return emitOpError() << "expects q, k and v (not one packed qkv) with num_kv_heads";
  auto first = rtt(getInputs()[0]);
  StringRef firstWhat = n == 1 ? "qkv" : "q";
  if (failed(checkRank(op, firstWhat, first, 3)))
    return failure();
  // Hidden size H: from the result, else from the inputs.
  int64_t h = res.getDimSize(2);
  if (n == 3) {
    if (failed(checkDim(op, "result dim 2", h, "q dim 2", first.getDimSize(2))))
      return failure();
    if (ShapedType::isDynamic(h))
      h = first.getDimSize(2);
    // k and v: q's shape with kvHeads heads of q's head dim.
    SmallVector<int64_t> kvShape(first.getShape());
    if (!ShapedType::isDynamic(h) && h % heads == 0)
      kvShape[2] = h / heads * kvHeads;
    auto kvType = RankedTensorType::get(kvShape, first.getElementType());
    const char *kvWhat = kvHeads == heads ? "q" : "q with num_kv_heads heads";
    static const char *names[] = {"q", "k", "v"};
    for (size_t i = 1; i < 3; ++i)
      if (failed(checkSameShape(op, names[i], rtt(getInputs()[i]), kvWhat, kvType)))
        return failure();
  } else {
    int64_t h3 = first.getDimSize(2);
    if (!ShapedType::isDynamic(h3) && h3 % 3 != 0)
      return emitOpError() << "expects qkv dim 2 to be divisible by 3 but got "
                           << h3;
    if (failed(checkDim(op, "result dim 2", h, "qkv dim 2 / 3",
                        ShapedType::isDynamic(h3) ? h3 : h3 / 3)))
      return failure();
    if (ShapedType::isDynamic(h) && !ShapedType::isDynamic(h3))
      h = h3 / 3;
  }
  if (!ShapedType::isDynamic(h) && h % heads != 0)
    return emitOpError() << "expects the hidden size (" << h
                         << ") to be divisible by num_heads (" << heads << ")";
  if (failed(checkDim(op, "lengths dim 0", len.getDimSize(0),
                      firstWhat + Twine(" dim 0"), first.getDimSize(0))) ||
      failed(checkDim(op, "result dim 0", res.getDimSize(0),
                      firstWhat + Twine(" dim 0"), first.getDimSize(0))) ||
      failed(checkDim(op, "result dim 1", res.getDimSize(1),
                      firstWhat + Twine(" dim 1"), first.getDimSize(1))))
    return failure();
  return checkPadding(op, getPadding());
}

LogicalResult SplitOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX());
  int64_t parts = getParts();
  if (parts <= 0)
    return emitOpError() << "expects parts > 0 but got " << parts;
  if (static_cast<int64_t>(getOutputs().size()) != parts)
    return emitOpError() << "expects " << parts << " results (parts) but got "
                         << getOutputs().size();
  if (failed(checkMinRank(op, "x", x, 1)))
    return failure();
  int64_t r = x.getRank(), last = x.getDimSize(r - 1);
  int64_t slice = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(last)) {
    if (last % parts != 0)
      return emitOpError() << "expects x dim " << r - 1
                           << " to be divisible by parts (" << parts
                           << ") but got " << last;
    slice = last / parts;
  }
  for (auto [i, out] : llvm::enumerate(getOutputs())) {
    auto t = rtt(out);
    std::string what = "result " + std::to_string(i);
    if (failed(checkRank(op, what, t, r)))
      return failure();
    for (int64_t d = 0; d + 1 < r; ++d)
      if (failed(checkDim(op, what + " dim " + std::to_string(d),
                          t.getDimSize(d), "x dim " + Twine(d),
                          x.getDimSize(d))))
        return failure();
    if (failed(checkDim(op, what + " dim " + std::to_string(r - 1),
                        t.getDimSize(r - 1),
                        "x dim " + Twine(r - 1) + " / parts", slice)))
      return failure();
  }
  return success();
}

LogicalResult AddLayerNormOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX());
  if (failed(checkSameShape(op, "residual", rtt(getResidual()), "x", x)))
    return failure();
  return checkLayerNormParams(op, x, rtt(getGamma()), rtt(getBeta()),
                              rtt(getResult()), getEpsilon().convertToFloat());
}

LogicalResult DivOp::verify() {
  float d = getDivisor().convertToFloat();
  if (d == 0.0f || !std::isfinite(d))
    return emitOpError() << "expects a finite nonzero divisor but got " << d;
  return success();
}

LogicalResult ConstantOp::verify() {
  auto dense = dyn_cast<DenseFPElementsAttr>(getValue());
  if (!dense || !dense.getElementType().isF32())
    return emitOpError() << "expects a dense f32 value but got " << getValue();
  if (dense.getNumElements() > 64)
    return emitOpError() << "expects at most 64 elements (larger constants are weights) but got "
                         << dense.getNumElements();
  return success();
}

FailureOr<SmallVector<int64_t>> mlir::enc::broadcastShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x == 1)
      out[i] = y;
    else if (y == 1)
      out[i] = x;
    else if (ShapedType::isDynamic(x))
      out[i] = y; // ? against N > 1 or ?: N, or ?
    else if (ShapedType::isDynamic(y) || x == y)
      out[i] = x;
    else
      return failure();
  }
  return out;
}

LogicalResult BinaryOp::verify() {
  auto l = rtt(getLhs()), r = rtt(getRhs()), res = rtt(getResult());
  auto shape = broadcastShape(l.getShape(), r.getShape());
  if (failed(shape))
    return emitOpError() << "expects operands that broadcast but got " << l << " and " << r;
  auto want = RankedTensorType::get(*shape, l.getElementType());
  return checkSameShape(getOperation(), "result", res, "the broadcast shape", want);
}

LogicalResult ReduceMeanOp::verify() {
  auto x = rtt(getX()), res = rtt(getResult());
  if (failed(checkMinRank(getOperation(), "x", x, 1)))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = 1;
  return checkSameShape(getOperation(), "result", res, "x with the last dim 1",
                        RankedTensorType::get(shape, x.getElementType()));
}

LogicalResult SoftmaxOp::verify() {
  return checkMinRank(getOperation(), "x", rtt(getX()), 1);
}

LogicalResult LayerNormOp::verify() {
  Operation *op = getOperation();
  return checkLayerNormParams(op, rtt(getX()), rtt(getGamma()), rtt(getBeta()),
                              rtt(getResult()), getEpsilon().convertToFloat());
}

LogicalResult RmsNormOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX()), gamma = rtt(getGamma());
  if (failed(checkMinRank(op, "x", x, 1)) || failed(checkRank(op, "gamma", gamma, 1)))
    return failure();
  const int64_t last = x.getDimSize(x.getRank() - 1), g = gamma.getDimSize(0);
  if (ShapedType::isDynamic(last) || ShapedType::isDynamic(g) || g < 1 || last % g != 0)
    return emitOpError("expects a static gamma size that divides x's static last dim, got gamma [")
           << (ShapedType::isDynamic(g) ? std::string("?") : std::to_string(g)) << "] for x's "
           << (ShapedType::isDynamic(last) ? std::string("?") : std::to_string(last));
  const float eps = getEpsilon().convertToFloat();
  if (!(eps >= 0.0f) || std::isinf(eps))
    return emitOpError("expects a finite epsilon >= 0 but got ") << eps;
  return success();
}

LogicalResult L2NormOp::verify() {
  return checkMinRank(getOperation(), "x", rtt(getX()), 1);
}

LogicalResult SplitHeadsOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX()), res = rtt(getResult());
  if (failed(checkRank(op, "x", x, 3)) ||
      failed(checkRank(op, "result", res, 4)))
    return failure();
  int64_t heads = getNumHeads();
  if (heads <= 0)
    return emitOpError() << "expects num_heads > 0 but got " << heads;
  int64_t h = x.getDimSize(2);
  int64_t d = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(h)) {
    if (h % heads != 0)
      return emitOpError() << "expects x dim 2 to be divisible by num_heads ("
                           << heads << ") but got " << h;
    d = h / heads;
  }
  if (failed(checkDim(op, "result dim 0", res.getDimSize(0), "x dim 0",
                      x.getDimSize(0))) ||
      failed(checkDim(op, "result dim 1", res.getDimSize(1), "num_heads",
                      heads)) ||
      failed(checkDim(op, "result dim 2", res.getDimSize(2), "x dim 1",
                      x.getDimSize(1))) ||
      failed(checkDim(op, "result dim 3", res.getDimSize(3),
                      "x dim 2 / num_heads", d)))
    return failure();
  return success();
}

LogicalResult MergeHeadsOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX()), res = rtt(getResult());
  if (failed(checkRank(op, "x", x, 4)) ||
      failed(checkRank(op, "result", res, 3)))
    return failure();
  int64_t heads = x.getDimSize(1), d = x.getDimSize(3);
  int64_t h = ShapedType::isDynamic(heads) || ShapedType::isDynamic(d)
                  ? ShapedType::kDynamic
                  : heads * d;
  if (failed(checkDim(op, "result dim 0", res.getDimSize(0), "x dim 0",
                      x.getDimSize(0))) ||
      failed(checkDim(op, "result dim 1", res.getDimSize(1), "x dim 2",
                      x.getDimSize(2))) ||
      failed(checkDim(op, "result dim 2", res.getDimSize(2),
                      "x dim 1 * x dim 3", h)))
    return failure();
  return success();
}

LogicalResult RotaryOp::verify() {
  auto x = rtt(getX());
  if (failed(checkRank(getOperation(), "x", x, 3)))
    return failure();
  const int64_t width = x.getDimSize(2), heads = static_cast<int64_t>(getNumHeads());
  if (ShapedType::isDynamic(width) || heads < 1 || width % heads != 0)
    return emitOpError("expects a static last dim divisible by num_heads (") << heads << ")";
  const int64_t d = width / heads, r = static_cast<int64_t>(getRotaryDim());
  if (r < 2 || r > d || r % 2 != 0)
    return emitOpError("rotary_dim ") << r << " must be even and in [2, head dim " << d << "]";
  const float theta = getTheta().convertToFloat();
  if (!(theta > 1.0f) || std::isinf(theta))
    return emitOpError("theta ") << theta << " must be a finite number above 1";
  return success();
}

LogicalResult GluOp::verify() {
  auto x = rtt(getX()), res = rtt(getResult());
  if (x.getRank() < 1 || res.getRank() != x.getRank())
    return emitOpError("expects x and result of the same rank >= 1");
  const int64_t r = x.getRank(), in = x.getDimSize(r - 1);
  if (ShapedType::isDynamic(in) || in % 2 != 0)
    return emitOpError("expects a static, even last dim of x (both halves), got ")
           << (ShapedType::isDynamic(in) ? std::string("?") : std::to_string(in));
  for (int64_t i = 0; i + 1 < r; ++i)
    if (failed(checkDim(getOperation(), ("result dim " + std::to_string(i)).c_str(), res.getDimSize(i),
                        ("x dim " + std::to_string(i)).c_str(), x.getDimSize(i))))
      return failure();
  if (res.getDimSize(r - 1) != in / 2)
    return emitOpError("result last dim ") << res.getDimSize(r - 1) << " is not half of x's " << in;
  return success();
}

LogicalResult PoolOp::verify() {
  Operation *op = getOperation();
  auto x = rtt(getX()), len = rtt(getLengths()), res = rtt(getResult());
  if (failed(checkRank(op, "x", x, 3)) ||
      failed(checkRank(op, "lengths", len, 1)) ||
      failed(checkRank(op, "result", res, 2)) ||
      failed(checkDim(op, "lengths dim 0", len.getDimSize(0), "x dim 0",
                      x.getDimSize(0))) ||
      failed(checkDim(op, "result dim 0", res.getDimSize(0), "x dim 0",
                      x.getDimSize(0))) ||
      failed(checkDim(op, "result dim 1", res.getDimSize(1), "x dim 2",
                      x.getDimSize(2))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Folders and canonicalization patterns
//===----------------------------------------------------------------------===//

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().convertToFloat() == 1.0f)
    return getX();
  return {};
}

OpFoldResult DivOp::fold(FoldAdaptor) {
  if (getDivisor().convertToFloat() == 1.0f)
    return getX();
  return {};
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult MergeHeadsOp::fold(FoldAdaptor) {
  auto split = getX().getDefiningOp<SplitHeadsOp>();
  if (split && split.getX().getType() == getType())
    return split.getX();
  return {};
}

OpFoldResult SplitHeadsOp::fold(FoldAdaptor) {
  auto merge = getX().getDefiningOp<MergeHeadsOp>();
  if (!merge || merge.getX().getType() != getType())
    return {};
  int64_t heads = rtt(merge.getX()).getDimSize(1);
  if (heads != static_cast<int64_t>(getNumHeads()))
    return {};
  return merge.getX();
}

namespace {

/// scale(scale(x, a), b) -> scale(x, a * b).
struct CombineScales : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<ScaleOp>();
    if (!inner)
      return failure();
    float f =
        inner.getFactor().convertToFloat() * op.getFactor().convertToFloat();
    rewriter.replaceOpWithNewOp<ScaleOp>(op, op.getType(), inner.getX(),
                                         rewriter.getF32FloatAttr(f));
    return success();
  }
};

/// div(x, d) -> scale(x, 1/d).
struct DivToScale : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op,
                                PatternRewriter &rewriter) const override {
    float f = 1.0f / op.getDivisor().convertToFloat();
    rewriter.replaceOpWithNewOp<ScaleOp>(op, op.getType(), op.getX(),
                                         rewriter.getF32FloatAttr(f));
    return success();
  }
};

/// matmul(scale(a, f), b) -> scale(matmul(a, b), f) (either operand).
struct HoistScaleOutOfMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto sa = op.getA().getDefiningOp<ScaleOp>();
    auto sb = op.getB().getDefiningOp<ScaleOp>();
    ScaleOp s = sa ? sa : sb;
    if (!s || !s->hasOneUse())
      return failure();
    auto mm = rewriter.create<MatmulOp>(op.getLoc(), op.getType(),
                                        sa ? sa.getX() : op.getA(),
                                        sa ? op.getB() : sb.getX(),
                                        op.getTransposeB());
    rewriter.replaceOpWithNewOp<ScaleOp>(op, op.getType(), mm,
                                         s.getFactorAttr());
    return success();
  }
};

} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<HoistScaleOutOfMatmul>(context);
}

void ScaleOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<CombineScales>(context);
}

void DivOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<DivToScale>(context);
}

#define GET_OP_CLASSES
#include "ir/EncOps.cpp.inc"
