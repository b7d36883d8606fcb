//===- SafeTensorsTest.cpp - The frontend's safetensors reader ------------===//
//
// Files are written byte by byte here; every malformed one must give a clear
// one-line error (and never crash), and values decode exactly.
//
//===----------------------------------------------------------------------===//
#include "encrt/float16.h"
#include "frontends/hf/SafeTensors.h"
#include "tests/support/ProcessTempDir.h"
#include "tests/support/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace encc;

namespace {

std::string tempPath(const std::string &name) {
  return (encc::testing::processTempDir("encc_frontend_st") / name).string();
}

/// Writes: 8-byte LE `headerLen` (default: the real length), header, data.
std::string writeFile(const std::string &name, const std::string &header,
                      const std::vector<uint8_t> &data, int64_t headerLen = -1) {
  std::string path = tempPath(name);
  std::ofstream out(path, std::ios::binary);
  uint64_t n = headerLen < 0 ? header.size() : uint64_t(headerLen);
  for (int i = 0; i < 8; ++i)
    out.put(char((n >> (8 * i)) & 0xff));
  out << header;
  out.write(reinterpret_cast<const char *>(data.data()), data.size());
  return path;
}

std::string writeRawBytes(const std::string &name, const std::string &bytes) {
  std::string path = tempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::vector<uint8_t> f32Bytes(std::vector<float> v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<uint8_t> u16Bytes(std::vector<uint16_t> v) {
  std::vector<uint8_t> b;
  for (uint16_t x : v) {
    b.push_back(uint8_t(x & 0xff));
    b.push_back(uint8_t(x >> 8));
  }
  return b;
}

/// Tensor `name` of `f` widened to f32 (the view in the stored dtype, then
/// converted), as the importer's consumers read it.
llvm::Expected<mlir::enc::WeightTensor> readF32(const SafeTensorsFile &f, const std::string &name) {
  auto t = f.read(name);
  if (!t)
    return t.takeError();
  return t->widenedToF32().read();
}

std::string openError(const std::string &path) {
  auto f = SafeTensorsFile::open(path);
  if (f)
    return "<no error>";
  return llvm::toString(f.takeError());
}

TEST(SafeTensors, ReadsF32) {
  std::vector<float> v = {1.5f, -2.0f, 0.25f, 3e-5f, 7.0f, -0.0f};
  std::string path = writeFile(
      "f32.safetensors",
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})",
      f32Bytes(v));
  auto f = SafeTensorsFile::open(path);
  ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
  ASSERT_EQ(f->tensors().size(), 1u);
  auto t = readF32(*f, "a");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(t->numElements(), 6);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(t->f32()[i], v[i]) << i;
}

TEST(SafeTensors, ReadsF16AndBF16WithOffsets) {
  // F16: 1, -2, 1/3 (rounded), smallest subnormal, 65504 (max), -inf.
  std::vector<uint16_t> h = {0x3C00, 0xC000, 0x3555, 0x0001, 0x7BFF, 0xFC00};
  // BF16: 1, -3, 0.333984375, 2^-126 (smallest normal).
  std::vector<uint16_t> b = {0x3F80, 0xC040, 0x3EAB, 0x0080};
  std::vector<uint8_t> data = u16Bytes(b);
  std::vector<uint8_t> hb = u16Bytes(h);
  data.insert(data.end(), hb.begin(), hb.end()); // bf16 first, then f16 at 8
  std::string path = writeFile("half.safetensors",
                               R"({"h":{"dtype":"F16","shape":[6],"data_offsets":[8,20]},)"
                               R"("b":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}})",
                               data);
  auto f = SafeTensorsFile::open(path);
  ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
  auto th = readF32(*f, "h");
  ASSERT_TRUE(bool(th)) << llvm::toString(th.takeError());
  std::vector<float> wantH = {1.0f,     -2.0f,    0.333251953125f, std::ldexp(1.0f, -24),
                              65504.0f, -INFINITY};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(th->f32()[i], wantH[i]) << i;
  auto tb = readF32(*f, "b");
  ASSERT_TRUE(bool(tb)) << llvm::toString(tb.takeError());
  std::vector<float> wantB = {1.0f, -3.0f, 0.333984375f, std::ldexp(1.0f, -126)};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(tb->f32()[i], wantB[i]) << i;
}

TEST(SafeTensors, HalfConversionMatchesIndependentDecoderOnAllBitPatterns) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float got = encm_f16_to_f32(uint16_t(bits)), want = encc::testing::halfBitsToFloat(uint16_t(bits));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(got, want) << std::hex << bits;
    float gotB = encm_bf16_to_f32(uint16_t(bits)),
          wantB = encc::testing::bf16BitsToFloat(uint16_t(bits));
    if (!std::isnan(wantB))
      ASSERT_EQ(gotB, wantB) << std::hex << bits;
  }
}

TEST(SafeTensors, ErrorShorterThanLengthField) {
  std::string msg = openError(writeRawBytes("short.safetensors", "abc"));
  EXPECT_NE(msg.find("short.safetensors: not a safetensors file: 3 bytes"), std::string::npos)
      << msg;
}

TEST(SafeTensors, ErrorHeaderLengthLargerThanFile) {
  std::string msg = openError(writeFile("big.safetensors", R"({"a":1})", {}, 1000));
  EXPECT_NE(msg.find("header length 1000 exceeds the file size 15"), std::string::npos) << msg;
  // A huge length must not overflow the check.
  msg = openError(writeFile("huge.safetensors", "{}", {}, INT64_MAX));
  EXPECT_NE(msg.find("exceeds the file size"), std::string::npos) << msg;
}

TEST(SafeTensors, ErrorTruncatedHeader) {
  std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  // The file ends in the middle of the JSON the length field promises.
  std::string path =
      writeFile("trunc.safetensors", header.substr(0, 20), {}, int64_t(header.size()));
  std::string msg = openError(path);
  EXPECT_NE(msg.find("exceeds the file size"), std::string::npos) << msg;
  // Length consistent with the file but the JSON itself cut short.
  msg = openError(writeFile("trunc2.safetensors", header.substr(0, 20), {}));
  EXPECT_NE(msg.find("header is not valid JSON"), std::string::npos) << msg;
}

TEST(SafeTensors, ErrorNotJson) {
  std::string msg = openError(writeFile("notjson.safetensors", "hello world", {}));
  EXPECT_NE(msg.find("notjson.safetensors: header is not valid JSON"), std::string::npos) << msg;
  msg = openError(writeFile("array.safetensors", "[1,2]", {}));
  EXPECT_NE(msg.find("header must be a JSON object"), std::string::npos) << msg;
}

TEST(SafeTensors, ErrorOffsetsOutOfRange) {
  std::string msg = openError(
      writeFile("range.safetensors", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                f32Bytes({1, 2, 3, 4})));
  EXPECT_NE(msg.find("tensor 'w': data_offsets [8, 24] out of range of the 16-byte data section"),
            std::string::npos)
      << msg;
  msg = openError(writeFile("neg.safetensors",
                            R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})",
                            f32Bytes({1})));
  EXPECT_NE(msg.find("tensor 'w': 'data_offsets' must be"), std::string::npos) << msg;
  msg = openError(writeFile("rev.safetensors",
                            R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})",
                            f32Bytes({1})));
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
}

TEST(SafeTensors, ErrorOverlappingTensorsAndDuplicateNames) {
  // b starts inside a: the two would alias the same bytes.
  std::string msg = openError(writeFile(
      "overlap.safetensors",
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      f32Bytes({1, 2, 3})));
  EXPECT_NE(msg.find("tensors 'a' [0, 8) and 'b' [4, 12) overlap in the data section"), std::string::npos) << msg;
  // Adjacent and empty tensors are fine.
  auto ok = SafeTensorsFile::open(writeFile(
      "adjacent.safetensors",
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"e":{"dtype":"F32","shape":[0],"data_offsets":[2,2]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      f32Bytes({1, 2})));
  EXPECT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  // JSON keeps the last of two equal keys; the reader must not.
  msg = openError(writeFile(
      "dup.safetensors",
      R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      f32Bytes({1, 2})));
  EXPECT_NE(msg.find("tensor 'w' is listed twice in the header"), std::string::npos) << msg;
}

TEST(SafeTensors, ErrorShapeSizeMismatch) {
  std::string msg = openError(writeFile(
      "mismatch.safetensors", R"({"w":{"dtype":"F16","shape":[2,3],"data_offsets":[0,16]}})",
      f32Bytes({1, 2, 3, 4})));
  EXPECT_NE(msg.find("tensor 'w': data_offsets cover 16 bytes, but shape and dtype F16 need 12"),
            std::string::npos)
      << msg;
  // Shape products that overflow 64 bits are rejected, not wrapped.
  msg = openError(writeFile(
      "overflow.safetensors",
      R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}})", {}));
  EXPECT_NE(msg.find("tensor 'w': shape is too large"), std::string::npos) << msg;
}

TEST(SafeTensors, ErrorUnknownAndUnsupportedDType) {
  std::string msg = openError(writeFile(
      "dtype.safetensors", R"({"odd":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})", {0}));
  EXPECT_NE(msg.find("tensor 'odd': unknown dtype 'Q7'"), std::string::npos) << msg;

  // I64 is a valid safetensors dtype (MiniLM's position_ids) but not a weight type.
  std::string path =
      writeFile("i64.safetensors", R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})",
                std::vector<uint8_t>(16, 0));
  auto f = SafeTensorsFile::open(path);
  ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
  auto t = readF32(*f, "ids");
  ASSERT_FALSE(bool(t));
  msg = llvm::toString(t.takeError());
  EXPECT_NE(msg.find("tensor 'ids' has dtype I64; supported: F32, F16, BF16"), std::string::npos)
      << msg;
  auto missing = readF32(*f, "nope");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("tensor 'nope' is missing"),
            std::string::npos);
}

TEST(SafeTensors, ErrorBadEntryFields) {
  std::string msg = openError(writeFile(
      "noshape.safetensors", R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", f32Bytes({1})));
  EXPECT_NE(msg.find("tensor 'w': missing or non-array 'shape'"), std::string::npos) << msg;
  msg = openError(writeFile("fshape.safetensors",
                            R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
                            f32Bytes({1})));
  EXPECT_NE(msg.find("shape entries must be non-negative integers"), std::string::npos) << msg;
  msg = openError(writeFile("nofile.safetensors", "{}", {}) + ".absent");
  EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;
}

} // namespace
