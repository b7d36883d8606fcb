//===- NvccBuild.cpp - Generated .cu -> fatbin with nvcc ------------------===//
//
// Finds nvcc, parses --cuda-arch lists and runs
//   nvcc -fatbin -O3 -std=c++17 --threads 2 -Werror all-warnings
//        -gencode arch=compute_XY,code=sm_XY ... (compute_XY: code=compute_XY)
// in a work directory holding the embedded kernel headers.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/cuda/CudaCodegen.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <set>
#include <sstream>

using namespace encc;
using encc::codegen::makeError;

namespace {

bool isExecutable(const std::string &path) {
  return llvm::sys::fs::exists(path) && llvm::sys::fs::can_execute(path) &&
         !llvm::sys::fs::is_directory(path);
}

} // namespace

llvm::Expected<std::string> encc::findNvcc() {
  if (const char *env = std::getenv("NVCC"); env && *env) {
    std::string p = env;
    if (p.find('/') == std::string::npos) {
      auto found = llvm::sys::findProgramByName(p);
      if (!found)
        return makeError("NVCC=" + p + " is not found in PATH");
      return *found;
    }
    if (!isExecutable(p))
      return makeError("NVCC=" + p + " is not an executable file");
    return p;
  }
  if (auto found = llvm::sys::findProgramByName("nvcc"))
    return *found;
  const std::string fallback = "/usr/local/cuda/bin/nvcc";
  if (isExecutable(fallback))
    return fallback;
  return makeError("cannot find nvcc (needed for --target=cuda): set NVCC, put nvcc on PATH "
                   "or install the CUDA toolkit in /usr/local/cuda");
}

const std::vector<std::string> &encc::defaultCudaArchs() {
  static const std::vector<std::string> archs = {"sm_80", "sm_86", "sm_89", "sm_90",
                                                 "compute_90"};
  return archs;
}

llvm::Expected<std::vector<std::string>> encc::parseCudaArchs(llvm::StringRef commaList) {
  llvm::SmallVector<llvm::StringRef> parts;
  commaList.split(parts, ',', -1, /*KeepEmpty=*/true);
  std::vector<std::string> archs;
  std::set<std::string> seen;
  for (llvm::StringRef raw : parts) {
    llvm::StringRef a = raw.trim();
    if (a.empty())
      return makeError("--cuda-arch: empty entry in '" + commaList +
                       "' (expected a comma list such as sm_80,sm_90,compute_90)");
    llvm::StringRef digits = a;
    if (!digits.consume_front("sm_") && !digits.consume_front("compute_"))
      return makeError("--cuda-arch: '" + a + "' is not sm_XY or compute_XY");
    llvm::StringRef suffix = digits.drop_while([](char c) { return llvm::isDigit(c); });
    llvm::StringRef number = digits.drop_back(suffix.size());
    unsigned cc = 0;
    if (number.empty() || number.getAsInteger(10, cc) || !(suffix.empty() || suffix == "a" ||
                                                           suffix == "f"))
      return makeError("--cuda-arch: '" + a + "' is not sm_XY or compute_XY");
    if (cc < 80)
      return makeError("--cuda-arch: '" + a + "' is not supported (encc needs sm_80 or newer)");
    if (!seen.insert(a.str()).second)
      return makeError("--cuda-arch: '" + a + "' is listed twice");
    archs.push_back(a.str());
  }
  return archs;
}

llvm::Expected<CodeObject> encc::buildCudaFatbin(const std::string &source,
                                                 const std::vector<std::string> &archs,
                                                 const std::string &workDir) {
  if (archs.empty())
    return makeError("buildCudaFatbin: no CUDA architecture given");
  auto nvcc = findNvcc();
  if (!nvcc)
    return nvcc.takeError();
  const std::string src = workDir + "/model_kernels.cu";
  const std::string fatbin = workDir + "/model_kernels.fatbin";
  if (auto e = codegen::writeWorkDir(workDir, embeddedCudaKernelFiles(), src, source))
    return std::move(e);

  std::vector<std::string> argv = {*nvcc,         "-fatbin", "-O3",     "-std=c++17",
                                   "--threads",   "2",       "-Werror", "all-warnings"};
  for (const std::string &a : archs) {
    llvm::StringRef s(a);
    const bool ptx = s.starts_with("compute_");
    const std::string num = ptx ? a.substr(8) : a.substr(3);
    argv.push_back("-gencode");
    argv.push_back("arch=compute_" + num + ",code=" + (ptx ? "compute_" : "sm_") + num);
  }
  if (const char *extra = std::getenv("ENCC_NVCC_FLAGS")) {
    std::istringstream in(extra);
    for (std::string w; in >> w;)
      argv.push_back(w);
  }
  argv.push_back("-I" + workDir);
  argv.push_back(src);
  argv.push_back("-o");
  argv.push_back(fatbin);

  if (auto e = codegen::runCapturing(*nvcc, argv, workDir + "/nvcc.out",
                                     workDir + "/nvcc.log", "nvcc"))
    return std::move(e);

  auto buf = llvm::MemoryBuffer::getFile(fatbin, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeError("cannot read the fatbin " + fatbin);
  CodeObject object;
  object.target = "cuda";
  object.features = archs;
  object.bytes.assign((*buf)->getBufferStart(), (*buf)->getBufferEnd());
  static const uint8_t kMagic[4] = {0x50, 0xed, 0x55, 0xba}; // 0xBA55ED50, little-endian
  if (object.bytes.size() < 16 || !std::equal(kMagic, kMagic + 4, object.bytes.begin()))
    return makeError(fatbin + ": nvcc output does not start with the fatbin magic 0xBA55ED50");
  return object;
}
