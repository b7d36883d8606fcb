//===- ConfigFields.cpp - Typed access to config.json fields --------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/HFUtil.h"

#include <cstdio>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

/// `v` as %g prints it: "0", "1", "1e+09".
static std::string shortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

static const char *jsonTypeName(const json &j) {
  switch (j.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  case json::value_t::number_float:
    return "a float";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  default:
    return "an unknown type";
  }
}

llvm::Error ConfigFields::missing(const char *key, const char *expected) const {
  return hfError(path_ + ": field '" + key + "' is missing (expected " + expected + ")");
}

llvm::Error ConfigFields::wrongType(const char *key, const json &v, const char *expected) const {
  return hfError(path_ + ": field '" + key + "' is " + jsonTypeName(v) + ", expected " + expected);
}

llvm::Error ConfigFields::getInt(const char *key, int64_t &out, int64_t fallback, int64_t min) const {
  auto it = obj_.find(key);
  if (it == obj_.end() || (it->is_null() && fallback >= 0)) {
    if (fallback < 0)
      return missing(key, "an integer");
    out = fallback;
    return llvm::Error::success();
  }
  if (!it->is_number_integer())
    return wrongType(key, *it, "an integer");
  int64_t v = it->get<int64_t>();
  if (v < min || v > (int64_t(1) << 31))
    return hfError(path_ + ": field '" + key + "' is " + Twine(v) + ", expected an integer in [" + Twine(min) +
                   ", 2^31]");
  out = v;
  return llvm::Error::success();
}

llvm::Error ConfigFields::getDouble(const char *key, double &out, double fallback, double lo, double hi) const {
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) {
    out = fallback;
    return llvm::Error::success();
  }
  if (!it->is_number())
    return wrongType(key, *it, "a number");
  out = it->get<double>();
  if (!(out > lo && out < hi))
    return hfError(path_ + ": field '" + key + "' is " + std::to_string(out) + ", expected a number in (" +
                   shortNumber(lo) + ", " + shortNumber(hi) + ")");
  return llvm::Error::success();
}

llvm::Error ConfigFields::getStringList(const char *key, std::vector<std::string> &out, bool &present) const {
  out.clear();
  present = false;
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null())
    return llvm::Error::success();
  if (!it->is_array())
    return wrongType(key, *it, "an array of strings");
  for (const json &v : *it) {
    if (!v.is_string())
      return hfError(path_ + ": field '" + key + "' holds " + jsonTypeName(v) + ", expected an array of strings");
    out.push_back(v.get<std::string>());
  }
  present = true;
  return llvm::Error::success();
}

llvm::Expected<const json *> ConfigFields::getObject(const char *key) const {
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null())
    return nullptr;
  if (!it->is_object())
    return wrongType(key, *it, "an object");
  return &*it;
}

llvm::Error ConfigFields::getBool(const char *key, bool &out, bool fallback) const {
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) {
    out = fallback;
    return llvm::Error::success();
  }
  if (!it->is_boolean())
    return wrongType(key, *it, "a boolean");
  out = it->get<bool>();
  return llvm::Error::success();
}

llvm::Error ConfigFields::getString(const char *key, std::string &out, const char *fallback) const {
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) {
    if (!fallback)
      return missing(key, "a string");
    out = fallback;
    return llvm::Error::success();
  }
  if (!it->is_string())
    return wrongType(key, *it, "a string");
  out = it->get<std::string>();
  return llvm::Error::success();
}
