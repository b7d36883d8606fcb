//===- CudaModel.cpp - What a model loaded on a CUDA device owns ----------===//
#include "cuda/CudaModel.h"

#include "Artifact.h"
#include "Failure.h"
#include "encrt/cuda_kernel_abi.h"

#include <algorithm>
#include <map>

namespace encrt::rt::cuda {

namespace {

constexpr uint64_t kWeightAlign = 256;
constexpr int64_t kDefaultSharedLimit = 48 * 1024;

uint64_t alignUp(uint64_t x) { return (x + kWeightAlign - 1) / kWeightAlign * kWeightAlign; }

} // namespace

bool CudaModel::probe(int deviceIndex, std::string &why) {
  const CudaDriver *d = CudaDriver::get(why);
  if (!d)
    return false;
  if (deviceIndex >= d->deviceCount) {
    why = "cuda:" + std::to_string(deviceIndex) + " requested, the driver reports " +
          std::to_string(d->deviceCount) + " device(s)";
    return false;
  }
  return true;
}

void CudaModel::makeCurrent() const {
  driver_->check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

std::unique_ptr<CudaModel> CudaModel::load(const Artifact &artifact,
                                           int deviceIndex) {
  const std::string &path = artifact.path();
  const encm::Model &model = artifact.model();
  if (!model.cuda())
    fail(ENCRT_UNSUPPORTED, "no CUDA device: the artifact has no CUDA plan "
         "(compiled without --target=cuda) (loading ", path, ")");
  std::string why;
  if (!probe(deviceIndex, why))
    fail(ENCRT_UNSUPPORTED, "no CUDA device: ", why, " (loading ", path, ")");

  std::unique_ptr<CudaModel> m(new CudaModel());
  const CudaDriver &d = *CudaDriver::get(why);
  m->driver_ = &d;
  m->plan_ = model.cuda();
  const std::string devName = "cuda:" + std::to_string(deviceIndex);
  d.check(d.cuDeviceGet(&m->device_, deviceIndex), "cuDeviceGet", devName);
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof(name) - 1, m->device_), "cuDeviceGetName", devName);
  int major = 0, minor = 0;
  d.check(d.cuDeviceGetAttribute(&major, kCuAttrComputeCapabilityMajor, m->device_),
          "cuDeviceGetAttribute", "compute capability major");
  d.check(d.cuDeviceGetAttribute(&minor, kCuAttrComputeCapabilityMinor, m->device_),
          "cuDeviceGetAttribute", "compute capability minor");
  m->deviceName_ = devName + " " + name;
  d.check(d.cuDevicePrimaryCtxRetain(&m->context_, m->device_),
          "cuDevicePrimaryCtxRetain", devName);
  m->retained_ = true;
  m->makeCurrent();

  // The fatbin.
  const encm::CudaPlan &plan = *m->plan_;
  const encm::CodeObject &co = *model.code_objects()->Get(plan.code_object());
  // A private copy, checked against its recorded SHA-256, is what the driver
  // parses (the file could change under its mapping).
  const std::vector<uint8_t> fatbin = artifact.codeObjectCopy(co, path + ": CUDA code object");
  CUresult r = d.cuModuleLoadData(&m->module_, fatbin.data());
  if (r == kCuErrorNoBinaryForGpu) {
    std::string archs;
    if (co.isa_features())
      for (const auto *f : *co.isa_features())
        archs += (archs.empty() ? "" : ", ") + f->str();
    fail(ENCRT_UNSUPPORTED, path, ": the CUDA code object has no code for ",
         devName, " (", name, ", sm_", major, minor, "); it holds ",
         archs.empty() ? "no listed archs" : archs,
         " (recompile with a matching --cuda-arch)");
  }
  d.check(r, "cuModuleLoadData", "fatbin of " + std::to_string(co.size()) + " bytes");

  // Every kernel step's function.
  const auto &steps = *plan.steps();
  m->functions_.assign(steps.size(), nullptr);
  std::map<CUfunction, int64_t> sharedNeeded;
  for (uint32_t s = 0; s < steps.size(); ++s) {
    const encm::Step &step = *steps.Get(s);
    if (step.kernel()->string_view() == ENC_CUDA_GEMM_KERNEL)
      continue;
    CUfunction f = nullptr;
    r = d.cuModuleGetFunction(&f, m->module_, step.kernel()->c_str());
    if (r == kCuErrorNotFound)
      fail(ENCRT_INVALID_ARTIFACT, path, ": cuda plan step ", s, " kernel \"",
           step.kernel()->str(), "\" is not in the CUDA code object");
    d.check(r, "cuModuleGetFunction", step.kernel()->str());
    m->functions_[s] = f;
    int64_t shared = step.iattrs()->Get(2);
    auto &need = sharedNeeded[f];
    need = std::max(need, shared);
  }
  for (const auto &[f, bytes] : sharedNeeded)
    if (bytes > kDefaultSharedLimit)
      d.check(d.cuFuncSetAttribute(f, kCuFuncAttrMaxDynamicSharedSizeBytes,
                                   static_cast<int>(bytes)),
              "cuFuncSetAttribute",
              "max dynamic shared memory " + std::to_string(bytes) + " bytes");

  // Weights: every distinct region once, packed into one allocation.
  const auto &values = *plan.values();
  std::map<uint64_t, std::pair<uint64_t, const encm::Value *>> regions; // offset -> (bytes, value)
  for (const encm::Value *v : values)
    if (v->kind() == encm::ValueKind::Weight) {
      auto &reg = regions[v->weight_offset()];
      if (!reg.second || v->weight_bytes() > reg.first)
        reg = {v->weight_bytes(), v};
    }
  std::map<uint64_t, uint64_t> deviceOffset;
  uint64_t total = 0;
  for (const auto &[offset, reg] : regions) {
    deviceOffset[offset] = total;
    total = alignUp(total + std::max<uint64_t>(reg.first, 1));
  }
  if (total > 0) {
    d.check(d.cuMemAlloc_v2(&m->weightBase_, total), "cuMemAlloc_v2",
            std::to_string(total) + " bytes of weights");
    for (const auto &[offset, reg] : regions)
      if (reg.first > 0)
        d.check(d.cuMemcpyHtoD_v2(m->weightBase_ + deviceOffset[offset],
                                  artifact.weightData(*reg.second), reg.first),
                "cuMemcpyHtoD_v2", std::to_string(reg.first) + " bytes of weight " +
                                       (reg.second->name() ? reg.second->name()->str() : ""));
  }
  m->weights_.assign(values.size(), 0);
  for (uint32_t i = 0; i < values.size(); ++i)
    if (values.Get(i)->kind() == encm::ValueKind::Weight)
      m->weights_[i] = m->weightBase_ + deviceOffset[values.Get(i)->weight_offset()];

  // cuBLASLt, when some step needs it.
  bool hasGemm = std::any_of(steps.begin(), steps.end(), [](const encm::Step *s) {
    return s->kernel()->string_view() == ENC_CUDA_GEMM_KERNEL;
  });
  if (hasGemm) {
    m->lt_ = CublasLt::get(why);
    if (!m->lt_)
      fail(ENCRT_UNSUPPORTED, path, ": the CUDA plan needs cuBLASLt: ", why);
    m->lt_->check(m->lt_->cublasLtCreate(&m->ltHandle_), "cublasLtCreate");
  }
  return m;
}

CudaModel::~CudaModel() {
  if (!driver_ || !retained_)
    return;
  const CudaDriver &d = *driver_;
  // Errors while tearing down are ignored: nothing useful can be done.
  d.cuCtxSetCurrent(context_);
  if (ltHandle_)
    lt_->cublasLtDestroy(ltHandle_);
  if (module_)
    d.cuModuleUnload(module_);
  if (weightBase_)
    d.cuMemFree_v2(weightBase_);
  d.cuDevicePrimaryCtxRelease_v2(device_);
}

} // namespace encrt::rt::cuda
