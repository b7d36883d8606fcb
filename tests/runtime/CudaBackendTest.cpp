//===- CudaBackendTest.cpp - Device selection through the C API -----------===//
//
// An artifact with a CudaPlan (ArtifactBuilder, CudaTestPlan.h) on a machine
// without a CUDA driver: "cuda" is ENCRT_UNSUPPORTED "no CUDA device: ...",
// "auto" and "cpu" run on the CPU, bad device strings are rejected, a
// CUDA-only artifact cannot run on the CPU. The no-device cases are skipped
// where libcuda.so.1 loads (a GPU machine runs bench/gpu/check.sh instead).
//
//===----------------------------------------------------------------------===//
#include "CudaTestPlan.h"
#include "TestUtil.h"
#include "encrt/encrt.hpp"

#include <dlfcn.h>

using namespace encrt::test;

namespace {

bool driverPresent() {
  static const bool present = [] {
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h)
      dlclose(h);
    return h != nullptr;
  }();
  return present;
}

class CudaBackend : public RuntimeTest {
protected:
  encrt_model_options options(const char *device) {
    encrt_model_options o;
    encrt_model_options_initialize(&o);
    o.num_threads = 1;
    o.device = device;
    return o;
  }
  std::vector<uint8_t> cudaArtifact(bool cpuPlan = true) {
    ArtifactSpec s = TestModel::spec(kernels());
    addCudaPlan(s);
    if (!cpuPlan)
      dropCpuPlan(s);
    return writeArtifact(s);
  }
  /// Loads with `device`, runs one batch on the CPU plan and checks it.
  void expectRunsOnCpu(const std::vector<uint8_t> &bytes, const char *device) {
    std::string path = write(bytes, "cpu.encm");
    encrt_model_options o = options(device);
    encrt_model *model = nullptr;
    encrt_status *st = encrt_model_load(path.c_str(), &o, &model);
    ASSERT_EQ(st, nullptr) << encrt_status_message(st);
    encrt_model_info info;
    encrt_model_get_info(model, &info, sizeof info);
    EXPECT_STREQ(info.device, "cpu");
    EXPECT_STREQ(info.cpu_target, "cpu-x86-64-v2");
    EXPECT_EQ(info.num_steps, 4); // the CPU plan's
    EXPECT_EQ(info.random_weights, 0);
    encrt_session *session = nullptr;
    ASSERT_EQ(encrt_session_create(model, nullptr, &session), nullptr);
    const int32_t ids[] = {4, 5, 6, 7, 0, 0};
    const int32_t lengths[] = {4};
    std::vector<float> hidden(6 * TestModel::kHidden);
    st = encrt_session_run(session, ids, lengths, 1, 6, hidden.data(), nullptr);
    ASSERT_EQ(st, nullptr) << encrt_status_message(st);
    for (int32_t h = 0; h < TestModel::kHidden; ++h)
      EXPECT_NEAR(hidden[2 * TestModel::kHidden + h], TestModel::expected(6, h), 1e-5f);
    encrt_session_release(session);
    encrt_model_release(model);
  }
};

} // namespace

TEST_F(CudaBackend, CudaWithoutADriverIsUnsupported) {
  if (driverPresent())
    GTEST_SKIP() << "libcuda.so.1 is present";
  encrt_model_options o = options("cuda");
  expectLoadError(cudaArtifact(), ENCRT_UNSUPPORTED,
                  "no CUDA device: libcuda.so.1 not found", &o);
  o = options("cuda:1");
  expectLoadError(cudaArtifact(), ENCRT_UNSUPPORTED, "no CUDA device: ", &o);
  // The message starts with it.
  std::string path = write(cudaArtifact(), "c.encm");
  encrt_model *model = nullptr;
  o = options("cuda");
  encrt_status *st = encrt_model_load(path.c_str(), &o, &model);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(std::string(encrt_status_message(st)).rfind("no CUDA device: ", 0), 0u)
      << encrt_status_message(st);
  encrt_status_free(st);
}

TEST_F(CudaBackend, CppWrapperPassesTheDevice) {
  std::string path = write(cudaArtifact(), "wrapper.encm");
  encrt::ModelOptions cpu;
  cpu.device = "cpu";
  EXPECT_NO_THROW(encrt::Model(path, cpu));
  if (driverPresent())
    GTEST_SKIP() << "libcuda.so.1 is present";
  encrt::ModelOptions cuda;
  cuda.device = "cuda";
  try {
    encrt::Model model(path, cuda);
    ADD_FAILURE() << "device \"cuda\" loaded without a CUDA driver";
  } catch (const encrt::Error &e) {
    EXPECT_EQ(e.code(), ENCRT_UNSUPPORTED);
    EXPECT_EQ(std::string(e.what()).rfind("no CUDA device: ", 0), 0u) << e.what();
  }
}

TEST_F(CudaBackend, CudaWithoutACudaPlanIsUnsupported) {
  encrt_model_options o = options("cuda");
  expectLoadError(writeArtifact(TestModel::spec(kernels())), ENCRT_UNSUPPORTED,
                  "no CUDA device: the artifact has no CUDA plan (compiled "
                  "without --target=cuda)",
                  &o);
}

TEST_F(CudaBackend, AutoFallsBackToTheCpu) {
  if (driverPresent())
    GTEST_SKIP() << "libcuda.so.1 is present";
  expectRunsOnCpu(cudaArtifact(), nullptr);
  expectRunsOnCpu(cudaArtifact(), "auto");
}

TEST_F(CudaBackend, CpuRunsTheCpuPlan) {
  expectRunsOnCpu(cudaArtifact(), "cpu");
  expectRunsOnCpu(writeArtifact(TestModel::spec(kernels())), "cpu");
}

TEST_F(CudaBackend, BadDeviceStringsAreInvalidArguments) {
  for (const char *bad : {"gpu", "cuda:x", "CPU", "cuda:-1", ""}) {
    if (!*bad)
      continue; // "" means auto
    encrt_model_options o = options(bad);
    expectLoadError(cudaArtifact(), ENCRT_INVALID_ARGUMENT,
                    "\"auto\" (or NULL), \"cpu\", \"cuda\", \"cuda:N\"", &o);
  }
}

TEST_F(CudaBackend, CudaOnlyArtifactsDoNotRunOnTheCpu) {
  encrt_model_options o = options("cpu");
  expectLoadError(cudaArtifact(false), ENCRT_UNSUPPORTED,
                  "the artifact has no CPU plan", &o);
  if (driverPresent())
    return;
  o = options("auto");
  expectLoadError(cudaArtifact(false), ENCRT_UNSUPPORTED,
                  "no CUDA device: libcuda.so.1 not found", &o);
  expectLoadError(cudaArtifact(false), ENCRT_UNSUPPORTED,
                  "the artifact has no CPU plan", &o);
}

TEST_F(CudaBackend, DamagedCudaPlansAreRejectedAtLoad) {
  ArtifactSpec s = TestModel::spec(kernels());
  addCudaPlan(s);
  s.cuda->steps[0].iattrs[0] = 9;
  encrt_model_options o = options("cpu");
  expectLoadError(writeArtifact(s), ENCRT_INVALID_ARTIFACT,
                  "cuda plan step 0 has unknown grid kind 9", &o);
}
