//===- ConfigFields.h - Typed access to config.json fields ----------------===//
//
// What every model family reads config.json through: each getter returns one
// error line naming the file, the field and what was expected.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_CONFIGFIELDS_H
#define ENCC_FRONTENDS_HF_CONFIGFIELDS_H

#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace encc {

class ConfigFields {
public:
  ConfigFields(const nlohmann::json &obj, const std::string &path) : obj_(obj), path_(path) {}

  const std::string &path() const { return path_; }

  /// An integer in [min, 2^31]; `fallback` >= 0 makes the field optional
  /// (absent or null).
  llvm::Error getInt(const char *key, int64_t &out, int64_t fallback = -1, int64_t min = 1) const;
  /// A number in (lo, hi) (default (0, 1)); absent or null gives `fallback`.
  llvm::Error getDouble(const char *key, double &out, double fallback, double lo = 0, double hi = 1) const;
  /// An array of strings; absent or null leaves `out` empty and `present` false.
  llvm::Error getStringList(const char *key, std::vector<std::string> &out, bool &present) const;
  /// The JSON object under `key`, or null when absent or null; an error when
  /// it is something else. Read it with a ConfigFields of its own.
  llvm::Expected<const nlohmann::json *> getObject(const char *key) const;
  /// True when the field is present (null included).
  bool has(const char *key) const { return obj_.find(key) != obj_.end(); }
  /// True when the field is present and JSON null.
  bool isNull(const char *key) const {
    auto it = obj_.find(key);
    return it != obj_.end() && it->is_null();
  }
  /// A boolean; absent or null gives `fallback`.
  llvm::Error getBool(const char *key, bool &out, bool fallback) const;
  /// A string; a null `fallback` makes the field required.
  llvm::Error getString(const char *key, std::string &out, const char *fallback) const;

private:
  llvm::Error missing(const char *key, const char *expected) const;
  llvm::Error wrongType(const char *key, const nlohmann::json &v, const char *expected) const;

  const nlohmann::json &obj_;
  const std::string &path_;
};

} // namespace encc

#endif // ENCC_FRONTENDS_HF_CONFIGFIELDS_H
