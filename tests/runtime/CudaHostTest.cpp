//===- CudaHostTest.cpp - The CUDA backend's host-side pieces -------------===//
//
// White-box, no GPU needed: the device option, launch shapes from launch
// headers, packed-row offsets, the scatter to the padded layout, error
// messages, and the CudaPlan verifier on good and damaged plans.
//
//===----------------------------------------------------------------------===//
#include "CudaTestPlan.h"
#include "Failure.h"
#include "cuda/CublasLtApi.h"
#include "cuda/CudaApi.h"
#include "cuda/CudaHost.h"
#include "cuda/CudaPlanVerify.h"
#include "encrt/schema_version.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>

using namespace encrt::rt;
using namespace encrt::rt::cuda;
using namespace encrt::test;

namespace {

/// Runs `body`, expecting a Failure with `code` whose message contains `fragment`.
void expectFailure(const std::function<void()> &body, encrt_status_code code,
                   const std::string &fragment) {
  try {
    body();
    ADD_FAILURE() << "no Failure; expected: " << fragment;
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), code) << f.what();
    EXPECT_NE(std::string(f.what()).find(fragment), std::string::npos)
        << "message: " << f.what() << "\nexpected fragment: " << fragment;
  }
}

} // namespace

TEST(CudaDevice, ParsesTheValidForms) {
  EXPECT_EQ(parseDevice(nullptr).kind, DeviceKind::Auto);
  EXPECT_EQ(parseDevice("auto").kind, DeviceKind::Auto);
  EXPECT_EQ(parseDevice("cpu").kind, DeviceKind::Cpu);
  DeviceChoice c = parseDevice("cuda");
  EXPECT_EQ(c.kind, DeviceKind::Cuda);
  EXPECT_EQ(c.index, 0);
  c = parseDevice("cuda:3");
  EXPECT_EQ(c.kind, DeviceKind::Cuda);
  EXPECT_EQ(c.index, 3);
  EXPECT_EQ(parseDevice("cuda:12").index, 12);
}

TEST(CudaDevice, RejectsOtherStringsListingTheValidForms) {
  for (const char *bad : {"gpu", "CUDA", "cuda:", "cuda:-1", "cuda:1x", "cuda0",
                          "cpu ", "cuda:99999", "rocm"})
    expectFailure([&] { parseDevice(bad); }, ENCRT_INVALID_ARGUMENT,
                  "is not one of \"auto\" (or NULL), \"cpu\", \"cuda\", \"cuda:N\"");
}

TEST(CudaLaunch, RowsGrid) {
  int64_t h[] = {ENC_CUDA_GRID_ROWS, 256, 1024, 4, 0};
  LaunchShape s = launchShape(h, 3, 50, 101);
  EXPECT_EQ(s.grid[0], 26u); // ceil(101 / 4)
  EXPECT_EQ(s.grid[1], 1u);
  EXPECT_EQ(s.grid[2], 1u);
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.sharedBytes, 1024u);
  EXPECT_EQ(launchShape(h, 3, 50, 100).grid[0], 25u);
  EXPECT_EQ(launchShape(h, 1, 1, 1).grid[0], 1u);
}

TEST(CudaLaunch, SeqHeadTileGrid) {
  int64_t h[] = {ENC_CUDA_GRID_SEQ_HEAD_TILE, 128, 0, 64, 12};
  LaunchShape s = launchShape(h, 8, 129, 700);
  EXPECT_EQ(s.grid[0], 3u); // ceil(129 / 64)
  EXPECT_EQ(s.grid[1], 12u);
  EXPECT_EQ(s.grid[2], 8u);
  EXPECT_EQ(launchShape(h, 8, 128, 700).grid[0], 2u);
}

TEST(CudaLaunch, BatchGrid) {
  int64_t h[] = {ENC_CUDA_GRID_BATCH, 32, 0, 4, 0};
  EXPECT_EQ(launchShape(h, 9, 10, 20).grid[0], 3u);
  EXPECT_EQ(launchShape(h, 8, 10, 20).grid[0], 2u);
}

TEST(CudaLaunch, ElementsGrid) {
  int64_t h[] = {ENC_CUDA_GRID_ELEMENTS, 256, 0, 1024, 384};
  EXPECT_EQ(launchShape(h, 2, 10, 11).grid[0], 5u); // ceil(11 * 384 / 1024)
  EXPECT_EQ(launchShape(h, 2, 10, 8).grid[0], 3u);
}

TEST(CudaLaunch, RejectsBadHeaders) {
  auto bad = [](std::initializer_list<int64_t> v, const std::string &fragment) {
    std::vector<int64_t> h(v);
    expectFailure([&] { launchShape(h.data(), 2, 8, 10); },
                  ENCRT_INVALID_ARTIFACT, fragment);
  };
  bad({ENC_CUDA_GRID_GEMM, 1, 0, 1, 1}, "is not a kernel launch");
  bad({9, 128, 0, 1, 1}, "is unknown");
  bad({ENC_CUDA_GRID_ROWS, 0, 0, 1, 1}, "threads per block");
  bad({ENC_CUDA_GRID_ROWS, 2048, 0, 1, 1}, "threads per block");
  bad({ENC_CUDA_GRID_ROWS, 128, -1, 1, 1}, "shared memory");
  bad({ENC_CUDA_GRID_ROWS, 128, 0, 0, 1}, "p0 is 0");
  bad({ENC_CUDA_GRID_SEQ_HEAD_TILE, 128, 0, 16, 0}, "p1 is 0");
  bad({ENC_CUDA_GRID_ELEMENTS, 128, 0, 16, -2}, "p1 is -2");
  // 70000 heads exceed gridDim.y.
  bad({ENC_CUDA_GRID_SEQ_HEAD_TILE, 128, 0, 16, 70000}, "grid dim 1 = 70000");
}

TEST(CudaPacking, OffsetsArePrefixSums) {
  const int32_t lengths[] = {3, 1, 5, 2};
  int32_t offsets[5] = {-1, -1, -1, -1, -1};
  EXPECT_EQ(computeOffsets(lengths, 4, offsets), 11);
  const int32_t expected[] = {0, 3, 4, 9, 11};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(offsets[i], expected[i]) << i;
  EXPECT_EQ(computeOffsets(lengths, 1, offsets), 3);
  EXPECT_EQ(offsets[1], 3);
}

TEST(CudaPacking, UnpackScattersRowsAndZeroesPadding) {
  const int64_t batch = 3, seq = 4, hidden = 5;
  const int32_t lengths[] = {2, 4, 1};
  int32_t offsets[4];
  const int64_t tokens = computeOffsets(lengths, batch, offsets);
  std::vector<float> packed(static_cast<size_t>(tokens * hidden));
  for (size_t i = 0; i < packed.size(); ++i)
    packed[i] = 1.0f + static_cast<float>(i);
  std::vector<float> padded(static_cast<size_t>(batch * seq * hidden), -7.0f);
  unpackRows(packed.data(), lengths, offsets, batch, seq, hidden, padded.data());
  // Independent reference: walk the packed rows in order.
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      bool valid = s < lengths[b];
      for (int64_t h = 0; h < hidden; ++h) {
        float want = valid ? packed[static_cast<size_t>(row * hidden + h)] : 0.0f;
        EXPECT_EQ(padded[static_cast<size_t>((b * seq + s) * hidden + h)], want)
            << "b " << b << " s " << s << " h " << h;
      }
      if (valid)
        ++row;
    }
  EXPECT_EQ(row, tokens);
}

TEST(CudaPacking, ResolvesSymbolicDims) {
  EXPECT_EQ(resolveDim(-1, 2, 3, 5), 2);
  EXPECT_EQ(resolveDim(-2, 2, 3, 5), 3);
  EXPECT_EQ(resolveDim(-3, 2, 3, 5), 5);
  EXPECT_EQ(resolveDim(384, 2, 3, 5), 384);
}

TEST(CudaErrors, MessagesNameTheCallAndTheError) {
  EXPECT_EQ(formatCudaError("cuMemAlloc_v2", "123456 bytes",
                            "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"),
            "cuMemAlloc_v2(123456 bytes): CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  EXPECT_EQ(formatCudaError("cuInit", "", "CUDA_ERROR_NO_DEVICE", nullptr),
            "cuInit(): CUDA_ERROR_NO_DEVICE");
  EXPECT_STREQ(cublasStatusName(kCublasStatusNotSupported),
               "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_STREQ(cublasStatusName(static_cast<cublasStatus_t>(99)),
               "CUBLAS_STATUS_UNKNOWN");
}

//--- verifyCudaPlan ---------------------------------------------------------//

namespace {

ArtifactSpec cudaSpec() {
  ArtifactSpec s = TestModel::spec({1, 2, 3, 4}); // code bytes never loaded here
  addCudaPlan(s);
  return s;
}

void verify(const ArtifactSpec &s) {
  std::vector<uint8_t> file = writeArtifact(s);
  verifyCudaPlan(*encm::GetModel(file.data()), "m.encm", file.size());
}

void expectBad(const std::function<void(ArtifactSpec &)> &damage,
               const std::string &fragment) {
  ArtifactSpec s = cudaSpec();
  damage(s);
  expectFailure([&] { verify(s); }, ENCRT_INVALID_ARTIFACT, fragment);
}

/// A GEMM step Y[T,8] = X[T,4] W[8,4]^T + b into the plan (X = a new activation).
void addGemm(ArtifactSpec &s, encm::DType xType, int64_t epilogue) {
  using K = encm::ValueKind;
  using D = encm::DType;
  SpecCudaPlan &c = *s.cuda;
  bool int8 = xType == D::I8;
  uint32_t x = static_cast<uint32_t>(c.values.size());
  c.values.push_back({"x", K::Activation, xType, {-3, 4}, 0, 0, 2, 2});
  c.values.push_back({"w", K::Weight, xType, {8, 4}, 0, int8 ? 32u : 64u});
  c.values.push_back({"b", K::Weight, xType, {8}, 0, int8 ? 8u : 16u});
  c.values.push_back({"y", K::Activation, int8 ? D::I32 : xType, {-3, 8}, 0, 0, 2, -1});
  // A producer of x so its live range starts at a step.
  c.steps.push_back({"test_cuda_fill", "enc.fill", {0, x}, 1,
                     {ENC_CUDA_GRID_ROWS, 32, 0, 1, 0}, {}});
  std::vector<uint32_t> ops = {x, x + 1};
  if (epilogue >= 1)
    ops.push_back(x + 2);
  ops.push_back(x + 3);
  c.steps.push_back({ENC_CUDA_GEMM_KERNEL, "enc.linear", ops, 1,
                     {ENC_CUDA_GRID_GEMM, 0, 0, 0, 0, 8, 4, epilogue}, {}});
  c.values[x].firstStep = 2;
  c.values[x].lastStep = 3;
  c.values[x + 3].firstStep = 3;
}

} // namespace

TEST(CudaPlanVerify, AcceptsGoodPlans) {
  EXPECT_NO_THROW(verify(cudaSpec()));
  ArtifactSpec s = cudaSpec();
  addGemm(s, encm::DType::F16, 2);
  EXPECT_NO_THROW(verify(s));
  s = cudaSpec();
  addGemm(s, encm::DType::I8, 0);
  EXPECT_NO_THROW(verify(s));
  // No CUDA plan: nothing to check.
  ArtifactSpec cpuOnly = TestModel::spec({1});
  EXPECT_NO_THROW(verify(cpuOnly));
}

TEST(CudaPlanVerify, RejectsDamagedPlans) {
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].iattrs[0] = 7; },
            "unknown grid kind 7");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].iattrs.resize(3); },
            "has 3 iattrs");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].iattrs.resize(14, 0); },
            "has 14 iattrs");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].fattrs.assign(5, 0.f); },
            "has 5 fattrs");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].iattrs[1] = 0; },
            "bad launch header");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].operands.assign(ENC_CUDA_MAX_BUFFERS + 1, 0); },
            "has " + std::to_string(ENC_CUDA_MAX_BUFFERS + 1) + " operands");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].iattrs[0] = ENC_CUDA_GRID_GEMM; },
            "grid kind 4 needs kernel \"cublaslt\"");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[1].operands[0] = 42; },
            "refers to value 42");
  expectBad([](ArtifactSpec &s) { s.cuda->steps[0].operands[1] = 5; },
            "outside its live range");
  expectBad([](ArtifactSpec &s) { s.cuda->values[4].shape = {-4, 32}; },
            "dim 0 is -4");
  expectBad([](ArtifactSpec &s) { s.cuda->values[4].shape = {-1, 32}; },
            "must be an F32 Output of shape [-3,H] or [-1,-2,H]");
  expectBad([](ArtifactSpec &s) { s.cuda->values[2].weightOffset = 1 << 20; },
            "lies outside the weights region");
  expectBad([](ArtifactSpec &s) { s.cuda->inputs = {0}; }, "expected 2 inputs (ids, lengths), found 1");
  expectBad([](ArtifactSpec &s) { s.cuda->codeObject = 0; },
            "(expected \"cuda\")");
  expectBad([](ArtifactSpec &s) { s.cuda->codeObject = 5; }, "is out of range");
}

TEST(CudaPlanVerify, RejectsBadGemmSteps) {
  auto gemm = [](encm::DType t, int64_t epi, std::function<void(SpecCudaPlan &)> f,
                 const std::string &fragment) {
    expectBad([&](ArtifactSpec &s) {
      addGemm(s, t, epi);
      f(*s.cuda);
    }, fragment);
  };
  const encm::DType f16 = encm::DType::F16, i8 = encm::DType::I8;
  gemm(f16, 1, [](SpecCudaPlan &c) { c.steps.back().iattrs[6] = 5; },
       "W must be a Weight of shape [8,5]");
  gemm(f16, 1, [](SpecCudaPlan &c) { c.steps.back().iattrs[7] = 3; }, "epilogue 3");
  gemm(f16, 1, [](SpecCudaPlan &c) { c.steps.back().iattrs.pop_back(); },
       "expected the header plus [N, K, epilogue]");
  gemm(f16, 1, [](SpecCudaPlan &c) { c.steps.back().operands.erase(c.steps.back().operands.begin() + 2); },
       "has 3 operands and 1 results (expected 4 and 1)");
  gemm(f16, 0, [](SpecCudaPlan &c) { c.values.back().dtype = encm::DType::F32; },
       "operand dtypes");
  gemm(i8, 0, [](SpecCudaPlan &c) { c.steps.back().iattrs[7] = 1; },
       "epilogue 1 (expected K a multiple of 4, epilogue 0)");
  gemm(i8, 0, [](SpecCudaPlan &c) { c.values.back().dtype = encm::DType::F16; },
       "operand dtypes");
  gemm(f16, 0, [](SpecCudaPlan &c) { c.values[c.values.size() - 1].shape = {-1, 8}; },
       "do not match [T,4] and [T,8]");
}
