//===- ProcessTempDir.h - A scratch folder per test process ---------------===//
//
// processTempDir("prefix") is <tmp>/prefix_<pid>, created on first use and
// removed with everything in it when the process exits, so tests run one
// process per case (gtest_discover_tests) leave nothing behind in /tmp.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_SUPPORT_PROCESSTEMPDIR_H
#define ENCC_TESTS_SUPPORT_PROCESSTEMPDIR_H

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

namespace encc::testing {

inline std::filesystem::path processTempDir(const std::string &prefix) {
  struct Removed {
    std::filesystem::path dir;
    ~Removed() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static std::map<std::string, Removed> dirs; // constructed in place: no temporary to destroy
  Removed &entry = dirs[prefix];
  if (entry.dir.empty()) {
    entry.dir = std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(entry.dir);
  }
  return entry.dir;
}

} // namespace encc::testing

#endif // ENCC_TESTS_SUPPORT_PROCESSTEMPDIR_H
