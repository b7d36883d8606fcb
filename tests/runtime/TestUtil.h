//===- TestUtil.h - Shared helpers of the runtime tests -------------------===//
#ifndef ENCRT_TESTS_TESTUTIL_H
#define ENCRT_TESTS_TESTUTIL_H

#include "ArtifactBuilder.h"
#include "encrt/encrt.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace encrt::test {

/// A fresh temporary directory per test, removed afterwards.
class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/encrt-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const auto &f : files_)
      ::unlink(f.c_str());
    ::rmdir(dir_.c_str());
  }

  static const std::vector<uint8_t> &kernels() {
    static const std::vector<uint8_t> k = readFile(ENCRT_TEST_KERNELS);
    return k;
  }
  static const std::vector<uint8_t> &badAbiKernels() {
    static const std::vector<uint8_t> k = readFile(ENCRT_TEST_KERNELS_BAD_ABI);
    return k;
  }

  /// Writes `bytes` as <dir>/<name> and returns the path.
  std::string write(const std::vector<uint8_t> &bytes,
                    const std::string &name = "model.encm") {
    std::string path = dir_ + "/" + name;
    writeFile(path, bytes);
    files_.push_back(path);
    return path;
  }

  /// Loads `bytes`; expects failure with `code` and a message containing
  /// `fragment`.
  void expectLoadError(const std::vector<uint8_t> &bytes,
                       encrt_status_code code, const std::string &fragment,
                       const encrt_model_options *options = nullptr) {
    std::string path = write(bytes);
    encrt_model *model = nullptr;
    encrt_status *st = encrt_model_load(path.c_str(), options, &model);
    ASSERT_NE(st, nullptr) << "loaded although it should fail: " << fragment;
    EXPECT_EQ(model, nullptr);
    EXPECT_EQ(encrt_status_get_code(st), code) << encrt_status_message(st);
    std::string msg = encrt_status_message(st);
    EXPECT_NE(msg.find(fragment), std::string::npos)
        << "message: " << msg << "\nexpected fragment: " << fragment;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    encrt_status_free(st);
  }

  encrt_model *load(const std::vector<uint8_t> &bytes, int threads = 2,
                    const char *target = nullptr) {
    std::string path = write(bytes);
    encrt_model_options o;
    encrt_model_options_initialize(&o);
    o.num_threads = threads;
    o.cpu_target = target;
    encrt_model *model = nullptr;
    encrt_status *st = encrt_model_load(path.c_str(), &o, &model);
    EXPECT_EQ(st, nullptr) << encrt_status_message(st);
    encrt_status_free(st);
    return model;
  }

  std::string dir_;
  std::vector<std::string> files_;
};

/// Expects `st` to be an error with `code` whose message contains `fragment`;
/// frees it.
inline void expectError(encrt_status *st, encrt_status_code code,
                        const std::string &fragment) {
  ASSERT_NE(st, nullptr) << "succeeded although it should fail: " << fragment;
  EXPECT_EQ(encrt_status_get_code(st), code) << encrt_status_message(st);
  std::string msg = encrt_status_message(st);
  EXPECT_NE(msg.find(fragment), std::string::npos)
      << "message: " << msg << "\nexpected fragment: " << fragment;
  encrt_status_free(st);
}

/// The ids `text` tokenizes to (ids the test expects to succeed).
inline std::vector<int32_t> tokenize(const encrt_model *m, const char *text) {
  int64_t n = 0;
  encrt_status *st = encrt_model_tokenize(m, text, nullptr, 0, &n);
  EXPECT_EQ(st, nullptr) << encrt_status_message(st);
  encrt_status_free(st);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  st = encrt_model_tokenize(m, text, ids.data(), n, &n);
  EXPECT_EQ(st, nullptr) << encrt_status_message(st);
  encrt_status_free(st);
  return ids;
}

} // namespace encrt::test

#endif // ENCRT_TESTS_TESTUTIL_H
