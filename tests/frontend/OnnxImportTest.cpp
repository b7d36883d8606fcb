//===- OnnxImportTest.cpp - The ONNX reader and lowering: files and errors ===//
//
// The reader on a real torch.onnx.export file (tests/reference/onnx), and every
// way a file can be wrong giving one clear line (never a crash): truncated or
// flipped bytes, a missing initialiser, an unsupported operator (plain, com.microsoft,
// another domain), fixed input shapes, external data outside the model's folder or past
// its file's end, and an attention mask used in a way the runtime cannot honour.
// Hand-made models are written with a small protobuf encoder below.
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/OnnxImport.h"
#include "frontends/onnx/OnnxModel.h"
#include "tests/support/ProcessTempDir.h"

#include "ir/EncOps.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>
#include <string>
#include <vector>

using namespace encc;

namespace {

const std::string kOpset14 = std::string(ENCC_SOURCE_DIR) + "/tests/reference/onnx/bert_gelu_opset14.onnx";

//===----------------------------------------------------------------------===//
// A protobuf encoder for hand-made ONNX models
//===----------------------------------------------------------------------===//

std::string varint(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7F;
    v >>= 7;
    s.push_back(char(b | (v ? 0x80 : 0)));
  } while (v);
  return s;
}
std::string fieldVarint(int f, uint64_t v) { return varint(uint64_t(f) << 3) + varint(v); }
std::string fieldBytes(int f, const std::string &b) { return varint((uint64_t(f) << 3) | 2) + varint(b.size()) + b; }

std::string floatTensor(const std::string &name, std::vector<int64_t> dims, const std::vector<float> &v,
                        const std::string &externalLocation = "", int64_t externalOffset = 0) {
  std::string t;
  for (int64_t d : dims)
    t += fieldVarint(1, uint64_t(d));
  t += fieldVarint(2, 1); // FLOAT
  t += fieldBytes(8, name);
  if (externalLocation.empty()) {
    t += fieldBytes(9, std::string(reinterpret_cast<const char *>(v.data()), v.size() * 4));
  } else {
    t += fieldBytes(13, fieldBytes(1, "location") + fieldBytes(2, externalLocation));
    t += fieldBytes(13, fieldBytes(1, "offset") + fieldBytes(2, std::to_string(externalOffset)));
    t += fieldVarint(14, 1);
  }
  return t;
}

std::string intTensor(const std::string &name, std::vector<int64_t> dims, const std::vector<int64_t> &v) {
  std::string t;
  for (int64_t d : dims)
    t += fieldVarint(1, uint64_t(d));
  t += fieldVarint(2, 7); // INT64
  t += fieldBytes(8, name);
  t += fieldBytes(9, std::string(reinterpret_cast<const char *>(v.data()), v.size() * 8));
  return t;
}

std::string node(const std::string &op, std::vector<std::string> in, std::vector<std::string> out,
                 const std::string &domain = "") {
  std::string n;
  for (auto &i : in)
    n += fieldBytes(1, i);
  for (auto &o : out)
    n += fieldBytes(2, o);
  n += fieldBytes(3, "/" + op);
  n += fieldBytes(4, op);
  if (!domain.empty())
    n += fieldBytes(7, domain);
  return n;
}

/// `n` with the INT attribute name = v.
std::string withAttr(std::string n, const std::string &name, int64_t v) {
  return n + fieldBytes(5, fieldBytes(1, name) + fieldVarint(3, uint64_t(v)) + fieldVarint(20, 2));
}

/// `n` with the FLOAT attribute name = v.
std::string withAttr(std::string n, const std::string &name, float v) {
  std::string bits(reinterpret_cast<const char *>(&v), 4);
  return n + fieldBytes(5, fieldBytes(1, name) + varint((2u << 3) | 5) + bits + fieldVarint(20, 1));
}

/// [batch, sequence] INT64 (or fixed dims).
std::string idsInput(const std::string &name, int64_t fixed = -1) {
  std::string dim = fixed >= 0 ? fieldVarint(1, uint64_t(fixed)) : fieldBytes(2, "batch");
  std::string shape = fieldBytes(1, dim) + fieldBytes(1, fieldBytes(2, "sequence"));
  std::string tensorType = fieldVarint(1, 7) + fieldBytes(2, shape);
  return fieldBytes(1, name) + fieldBytes(2, fieldBytes(1, tensorType));
}

struct GraphParts {
  std::vector<std::string> nodes, initializers, inputs;
  std::string output = "last_hidden_state";
};

std::string model(const GraphParts &g) {
  std::string graph;
  for (auto &n : g.nodes)
    graph += fieldBytes(1, n);
  graph += fieldBytes(2, "g");
  for (auto &t : g.initializers)
    graph += fieldBytes(5, t);
  for (auto &i : g.inputs)
    graph += fieldBytes(11, i);
  graph += fieldBytes(12, fieldBytes(1, g.output));
  return fieldVarint(1, 8) + fieldBytes(7, graph) + fieldBytes(8, fieldBytes(1, "") + fieldVarint(2, 14));
}

/// word[input_ids] -> x · W (W named "w", [4, 4]) -> the output.
GraphParts linearGraph() {
  GraphParts g;
  g.inputs = {idsInput("input_ids"), idsInput("attention_mask")};
  g.initializers = {floatTensor("word", {10, 4}, std::vector<float>(40, 0.5f)),
                    floatTensor("w", {4, 4}, std::vector<float>(16, 0.25f))};
  g.nodes = {node("Gather", {"word", "input_ids"}, {"e"}), node("MatMul", {"e", "w"}, {"last_hidden_state"})};
  return g;
}

/// word[input_ids] + pos[0..S-1] (as torch slices its position_ids buffer), then x · W -> "x".
GraphParts embeddingGraph() {
  GraphParts g;
  g.inputs = {idsInput("input_ids"), idsInput("attention_mask")};
  std::vector<int64_t> arange(8);
  for (int64_t i = 0; i < 8; ++i)
    arange[size_t(i)] = i;
  g.initializers = {floatTensor("word", {10, 4}, std::vector<float>(40, 0.5f)),
                    floatTensor("pos", {8, 4}, std::vector<float>(32, 0.125f)),
                    floatTensor("w", {4, 4}, std::vector<float>(16, 0.25f)),
                    intTensor("position_ids", {1, 8}, arange),
                    intTensor("one", {}, {1}),
                    intTensor("zeros1", {1}, {0}),
                    intTensor("ones1", {1}, {1})};
  g.nodes = {node("Shape", {"input_ids"}, {"shape"}),
             node("Gather", {"shape", "one"}, {"seq"}),
             node("Unsqueeze", {"seq", "zeros1"}, {"seq1"}),
             node("Slice", {"position_ids", "zeros1", "seq1", "ones1"}, {"positions"}),
             node("Gather", {"word", "input_ids"}, {"we"}),
             node("Gather", {"pos", "positions"}, {"pe"}),
             node("Add", {"we", "pe"}, {"e"}),
             node("MatMul", {"e", "w"}, {"x"})};
  return g;
}

std::string writeFile(const std::string &name, const std::string &bytes) {
  auto dir = encc::testing::processTempDir("onnx_import_test");
  std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

/// The import's error ("" when it succeeds).
std::string importError(const std::string &path) {
  mlir::MLIRContext ctx;
  auto m = importOnnxModel(ctx, path, {});
  if (m)
    return "";
  return llvm::toString(m.takeError());
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

//===----------------------------------------------------------------------===//

TEST(OnnxModel, ReadsATorchExport) {
  auto m = onnx::readOnnxModel(kOpset14);
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->opset(""), 14);
  EXPECT_EQ(m->producerName, "pytorch");
  ASSERT_EQ(m->graph.inputs.size(), 3u);
  EXPECT_EQ(m->graph.inputs[0].name, "input_ids");
  ASSERT_EQ(m->graph.inputs[0].dims.size(), 2u);
  EXPECT_EQ(m->graph.inputs[0].dims[1].param, "sequence");
  const onnx::Tensor *word = nullptr;
  for (const auto &t : m->graph.initializers)
    if (t.name == "embeddings.word_embeddings.weight")
      word = &t;
  ASSERT_NE(word, nullptr);
  EXPECT_EQ(word->dims, (std::vector<int64_t>{120, 32}));
  auto f = onnx::tensorFloats(*word);
  ASSERT_TRUE(bool(f));
  EXPECT_EQ(f->size(), 120u * 32u);
}

TEST(OnnxModel, DecodesEveryStorageOfNumbers) {
  // raw_data, float_data (packed and one per field), int64_data, int32_data carrying f16 bits.
  onnx::Tensor t;
  t.name = "t";
  t.dataType = onnx::kFloat;
  t.dims = {2};
  t.floatData = {1.5f, -2.0f};
  EXPECT_EQ(*onnx::tensorFloats(t), (std::vector<float>{1.5f, -2.0f}));
  t.floatData.clear();
  t.dataType = onnx::kFloat16;
  t.int32Data = {0x3C00, 0xC000}; // 1.0, -2.0
  EXPECT_EQ(*onnx::tensorFloats(t), (std::vector<float>{1.0f, -2.0f}));
  t.int32Data.clear();
  t.dataType = onnx::kInt64;
  t.raw = std::string("\x05\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff", 16);
  EXPECT_EQ(*onnx::tensorInts(t), (std::vector<int64_t>{5, -1}));
  t.raw.resize(12); // one and a half values
  auto bad = onnx::tensorInts(t);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("tensor 't' (INT64, 2 values) holds 1 values"), std::string::npos);
}

TEST(OnnxModel, DamagedFilesGiveOneLineErrors) {
  const std::string bytes = readAll(kOpset14);
  ASSERT_GT(bytes.size(), 1000u);
  // Cut at 16 points through the file: each is an error, never a crash.
  for (size_t i = 1; i <= 16; ++i) {
    const size_t cut = bytes.size() * i / 17;
    const std::string err = importError(writeFile("cut.onnx", bytes.substr(0, cut)));
    EXPECT_NE(err, "") << "cut at " << cut;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  EXPECT_NE(importError(writeFile("empty.onnx", "")).find("not an ONNX model (no graph)"), std::string::npos);
  EXPECT_NE(importError(writeFile("text.onnx", "{\"not\": \"protobuf\"}")).find("not an ONNX model"),
            std::string::npos);
  // Flipped bytes: an error or a model that imports; never a crash.
  for (size_t i = 0; i < 24; ++i) {
    std::string damaged = bytes;
    damaged[(i * 7919 + 13) % damaged.size()] ^= char(0x5A);
    (void)importError(writeFile("flipped.onnx", damaged));
  }
  EXPECT_NE(importError(writeFile("none.onnx", "")), "");
  EXPECT_NE(importError("/nonexistent/model.onnx").find("cannot read"), std::string::npos);
}

TEST(OnnxImport, HandMadeGraphErrorsNameTheNode) {
  // The hand-made graph itself imports (a Linear on the embedding needs the
  // position table too: it is refused for that, by name).
  GraphParts g = linearGraph();
  EXPECT_NE(importError(writeFile("linear.onnx", model(g))).find("without a position table Gather"),
            std::string::npos);

  g = linearGraph();
  g.initializers.pop_back(); // "w" missing
  EXPECT_NE(importError(writeFile("missing.onnx", model(g)))
                .find("node '/MatMul' (MatMul): input 'w' is neither a graph input, an initializer nor an earlier "
                      "node's output"),
            std::string::npos);

  g = linearGraph();
  g.nodes[1] = node("Celu", {"e"}, {"last_hidden_state"});
  EXPECT_NE(importError(writeFile("op.onnx", model(g))).find("node '/Celu' (Celu): is not supported by the ONNX frontend"),
            std::string::npos);

  g = linearGraph();
  g.nodes[1] = node("QOrderedAttention", {"e"}, {"last_hidden_state"}, "com.microsoft");
  EXPECT_NE(importError(writeFile("ms.onnx", model(g)))
                .find("node '/QOrderedAttention' (QOrderedAttention): this com.microsoft operator is not supported"),
            std::string::npos);

  g = linearGraph();
  g.nodes[1] = node("LinearRegressor", {"e"}, {"last_hidden_state"}, "ai.onnx.ml");
  EXPECT_NE(importError(writeFile("ml.onnx", model(g))).find("operators of domain 'ai.onnx.ml' are not supported"),
            std::string::npos);

  g = linearGraph();
  g.inputs[0] = idsInput("input_ids", 1);
  EXPECT_NE(importError(writeFile("fixed.onnx", model(g))).find("graph input 'input_ids' has a fixed dimension of 1"),
            std::string::npos);

  g = linearGraph();
  g.inputs.push_back(idsInput("pixel_values"));
  g.nodes[1] = node("MatMul", {"e", "w"}, {"x"});
  g.nodes.push_back(node("Add", {"x", "pixel_values"}, {"last_hidden_state"}));
  EXPECT_NE(importError(writeFile("input.onnx", model(g)))
                .find("graph input 'pixel_values' is not one of input_ids, attention_mask, token_type_ids"),
            std::string::npos);

  // A graph the frontend lowers, as long as it reads the mask.
  g = embeddingGraph();
  g.output = "x";
  EXPECT_NE(importError(writeFile("nomask.onnx", model(g))).find("the output does not depend on a graph input named attention_mask"),
            std::string::npos);

  // A shape known only at run time (here: the ids themselves) cannot be folded.
  g = embeddingGraph();
  g.nodes.push_back(node("Reshape", {"x", "input_ids"}, {"last_hidden_state"}));
  EXPECT_NE(importError(writeFile("dynshape.onnx", model(g)))
                .find("node '/Reshape' (Reshape): shape 'input_ids' is not a constant (shapes must be known at "
                      "compile time)"),
            std::string::npos);

  // The mask added to something that is not 4-D scores.
  g = embeddingGraph();
  g.nodes.push_back(node("Add", {"x", "attention_mask"}, {"last_hidden_state"}));
  EXPECT_NE(importError(writeFile("mask.onnx", model(g))).find("node '/Add' (Add): uses the attention mask in a way"),
            std::string::npos);
}

TEST(OnnxImport, ClassificationHeadsOutsideTheSupportedFormAreRefused) {
  // hidden[:, 0] then Gemm: what torch exports for a classification head.
  auto head = [](const std::string &gemm) {
    GraphParts g = embeddingGraph();
    g.initializers.push_back(intTensor("zero", {}, {0}));
    g.initializers.push_back(floatTensor("cls.weight", {3, 4}, std::vector<float>(12, 0.5f)));
    g.nodes.push_back(withAttr(node("Gather", {"x", "zero"}, {"cls"}), "axis", int64_t(1)));
    g.nodes.push_back(gemm);
    g.output = "logits";
    return g;
  };
  const std::string gemm = node("Gemm", {"cls", "cls.weight"}, {"logits"});
  EXPECT_NE(importError(writeFile("transa.onnx", model(head(withAttr(gemm, "transA", int64_t(1))))))
                .find("node '/Gemm' (Gemm): only alpha = beta = 1 without transA is supported"),
            std::string::npos);
  EXPECT_NE(importError(writeFile("alpha.onnx", model(head(withAttr(gemm, "alpha", 0.5f)))))
                .find("node '/Gemm' (Gemm): only alpha = beta = 1 without transA is supported"),
            std::string::npos);
  // Without transB the [3, 4] matrix does not multiply the [batch, 4] rows.
  EXPECT_NE(importError(writeFile("shape.onnx", model(head(gemm))))
                .find("node '/Gemm' (Gemm): multiplies [batch, 4] by [3, 4]"),
            std::string::npos);
  // The [CLS] row of a position other than 0 is not a classification head's.
  GraphParts g = head(withAttr(gemm, "transB", int64_t(1)));
  g.initializers.push_back(intTensor("two", {}, {2}));
  g.nodes[g.nodes.size() - 2] = withAttr(node("Gather", {"x", "two"}, {"cls"}), "axis", int64_t(1));
  EXPECT_NE(importError(writeFile("row2.onnx", model(g))).find("node '/Gather' (Gather): only embedding-table lookups"),
            std::string::npos);
}

TEST(OnnxImport, NamesFromTheFileArePrintedSafely) {
  // A node named with a newline, an escape and invalid UTF-8: the error stays one printable line.
  GraphParts g = linearGraph();
  std::string bad = fieldBytes(1, "e") + fieldBytes(2, "last_hidden_state") +
                    fieldBytes(3, std::string("evil\n\x1b[2J\xff\xfe")) + fieldBytes(4, "Celu");
  g.nodes[1] = bad;
  const std::string err = importError(writeFile("names.onnx", model(g)));
  EXPECT_NE(err.find("node 'evil??[2J"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
  EXPECT_EQ(err.find('\x1b'), std::string::npos);
  EXPECT_EQ(err.find("\xff"), std::string::npos);
}

TEST(OnnxImport, ExternalDataStaysInTheModelsFolderAndFile) {
  GraphParts g = linearGraph();
  g.initializers[1] = floatTensor("w", {4, 4}, {}, "../secret.bin");
  EXPECT_NE(importError(writeFile("escape.onnx", model(g))).find("must be a path inside the model's folder"),
            std::string::npos);
  g.initializers[1] = floatTensor("w", {4, 4}, {}, "/etc/passwd");
  EXPECT_NE(importError(writeFile("absolute.onnx", model(g))).find("must be a path inside the model's folder"),
            std::string::npos);
  writeFile("weights.bin", std::string(40, '\0')); // 10 floats, the tensor needs 16
  g.initializers[1] = floatTensor("w", {4, 4}, {}, "weights.bin");
  EXPECT_NE(importError(writeFile("short.onnx", model(g))).find("does not hold 16 values in 'weights.bin' of 40 bytes"),
            std::string::npos);
  g.initializers[1] = floatTensor("w", {4, 4}, {}, "weights.bin", 1ll << 40);
  EXPECT_NE(importError(writeFile("offset.onnx", model(g))).find("does not hold 16 values"), std::string::npos);
  // A symlink inside the folder to a file outside it (issue 45, item 8).
  const std::string outside = encc::testing::processTempDir("onnx_import_test_outside").string() + "/secret.bin";
  std::ofstream(outside, std::ios::binary) << std::string(64, '\0');
  const std::string link = (encc::testing::processTempDir("onnx_import_test") / "link.bin").string();
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(outside.c_str(), link.c_str()), 0);
  g.initializers[1] = floatTensor("w", {4, 4}, {}, "link.bin");
  EXPECT_NE(importError(writeFile("link.onnx", model(g))).find("resolves to " + outside + ", outside the model's folder"),
            std::string::npos)
      << importError(writeFile("link.onnx", model(g)));
  // In bounds: read (the import then stops at the missing position table).
  writeFile("weights64.bin", std::string(64, '\0'));
  g.initializers[1] = floatTensor("w", {4, 4}, {}, "weights64.bin");
  EXPECT_NE(importError(writeFile("ok.onnx", model(g))).find("without a position table Gather"), std::string::npos);
}

TEST(OnnxImport, TorchExportLowersToTheFusedOps) {
  mlir::MLIRContext ctx;
  auto m = importOnnxModel(ctx, kOpset14, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->description.hidden, 32);
  EXPECT_EQ(m->description.layers, 2);
  EXPECT_EQ(m->description.heads, 2);
  EXPECT_EQ(m->description.intermediate, 64);
  EXPECT_EQ(m->description.vocab, 120);
  EXPECT_EQ(m->description.maxSeq, 32);
  EXPECT_EQ(m->description.typeVocab, 2);
  EXPECT_EQ(m->description.activation, Activation::Gelu);
  EXPECT_NEAR(m->description.layerNormEps, 1e-12, 1e-18);
  EXPECT_EQ(m->description.pooling, Pooling::Mean);
  EXPECT_TRUE(m->description.normalize);
  EXPECT_NE(m->tokenizer.note.find("no config.json beside the model"), std::string::npos);
  int binary = 0, layernorm = 0, gelu = 0, linearWithBias = 0;
  m->module->walk([&](mlir::Operation *op) {
    binary += mlir::isa<mlir::enc::BinaryOp, mlir::enc::UnaryOp, mlir::enc::ReduceMeanOp>(op);
    layernorm += mlir::isa<mlir::enc::LayerNormOp>(op);
    gelu += mlir::isa<mlir::enc::GeluOp>(op);
    if (auto l = mlir::dyn_cast<mlir::enc::LinearOp>(op))
      linearWithBias += l.getBias() != nullptr;
  });
  EXPECT_EQ(binary, 0);
  EXPECT_EQ(layernorm, 5);
  EXPECT_EQ(gelu, 2);
  EXPECT_EQ(linearWithBias, 12);
  // The transposed MatMul weights are named after their module, as in the HF folder.
  EXPECT_NE(m->weights.find("encoder.layer.1.attention.self.query.weight"), nullptr);
  EXPECT_EQ(m->weights.find("encoder.layer.1.attention.self.query.weight")->shape, (std::vector<int64_t>{32, 32}));
}



//===----------------------------------------------------------------------===//
// Mutated graphs: a structure-aware robustness check of the lowering
//===----------------------------------------------------------------------===//

/// The lowering's outcome on `m`: "" when it lowers, else its error. A module
/// that does not verify is a lowering bug (it built IR from operands it had
/// not checked) and comes back as an "internal error".
std::string lowerError(const onnx::Model &m) {
  mlir::MLIRContext ctx;
  auto im = lowerOnnxGraph(ctx, m, "mutated.onnx", {});
  if (im)
    return "";
  return llvm::toString(im.takeError());
}

/// Every recorded export, mutated node by node: the node dropped, each of
/// its inputs rewired to another value of the graph (a graph input, a
/// constant, the previous node's output), each integer attribute set to
/// out-of-range values. Each lowering either succeeds or gives a one-line
/// error naming the file; none crashes or builds IR that does not verify.
TEST(OnnxImport, MutatedGraphsGiveErrorsNotCrashes) {
  const char *const files[] = {"bert_gelu_opset14", "bert_gelu_opset17_ortopt", "roberta_opset14_ortopt",
                               "distilbert_opset14", "bert_cross_encoder_opset14", "bert_gelu_dynamo_opset18"};
  size_t tried = 0, refused = 0;
  for (const char *f : files) {
    SCOPED_TRACE(f);
    auto base = onnx::readOnnxModel(std::string(ENCC_SOURCE_DIR) + "/tests/reference/onnx/" + f + ".onnx");
    ASSERT_TRUE(bool(base)) << llvm::toString(base.takeError());
    ASSERT_EQ(lowerError(*base), "");
    const onnx::Graph &g = base->graph;
    auto check = [&](const onnx::Model &m, const std::string &what) {
      const std::string e = lowerError(m);
      ++tried;
      if (e.empty())
        return;
      ++refused;
      EXPECT_EQ(e.find("internal error"), std::string::npos) << what << ": " << e;
      EXPECT_EQ(e.find('\n'), std::string::npos) << what << ": " << e;
      EXPECT_EQ(e.rfind("mutated.onnx: ", 0), 0u) << what << ": " << e;
    };
    // Every third node keeps the test inside a few seconds; the others
    // repeat the same op types layer after layer.
    for (size_t k = 0; k < g.nodes.size(); k += 3) {
      const onnx::Node &n = g.nodes[k];
      const std::string at = "node " + std::to_string(k) + " (" + n.opType + ")";
      onnx::Model m = *base;
      m.graph.nodes.erase(m.graph.nodes.begin() + std::ptrdiff_t(k));
      check(m, at + " dropped");
      std::vector<std::string> others = {"input_ids", "attention_mask", g.initializers.front().name};
      if (k > 0 && !g.nodes[k - 1].outputs.empty())
        others.push_back(g.nodes[k - 1].outputs[0]);
      for (size_t j = 0; j < n.inputs.size(); ++j)
        for (const std::string &other : others) {
          if (other == n.inputs[j])
            continue;
          m = *base;
          m.graph.nodes[k].inputs[j] = other;
          check(m, at + " input " + std::to_string(j) + " <- " + other);
        }
      for (size_t a = 0; a < n.attributes.size(); ++a) {
        if (n.attributes[a].type != onnx::Attribute::kInt && n.attributes[a].type != onnx::Attribute::kInts)
          continue;
        for (int64_t v : {int64_t(-7), int64_t(0), int64_t(3), int64_t(1) << 40}) {
          m = *base;
          onnx::Attribute &attr = m.graph.nodes[k].attributes[a];
          attr.i = v;
          for (int64_t &x : attr.ints)
            x = v;
          check(m, at + " attribute " + attr.name + " = " + std::to_string(v));
        }
      }
    }
  }
  // The mutations must reach the lowering's checks, not only succeed.
  EXPECT_GT(refused, tried / 4);
  std::printf("%zu mutated graphs lowered, %zu refused\n", tried, refused);
}

} // namespace
