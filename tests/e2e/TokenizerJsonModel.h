//===- TokenizerJsonModel.h - A tiny model carrying a given tokenizer.json ===//
#ifndef ENCC_TESTS_E2E_TOKENIZERJSONMODEL_H
#define ENCC_TESTS_E2E_TOKENIZERJSONMODEL_H

#include "encrt/encrt.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace encc::testing {

/// Writes a tiny random model of `modelType` (make-tiny-model's families)
/// into `dir`/m with `tokenizerJson` as its tokenizer.json (no vocab.txt; the
/// vocabulary sized to the file's largest id) and, unless null,
/// `tokenizerConfig` as its tokenizer_config.json, compiles it with encc
/// (max_seq 512) and returns the artifact's path. Fails the test (and returns
/// "") when the compile fails.
std::string compileWithTokenizerJson(const std::string &dir, const nlohmann::json &tokenizerJson,
                                     const std::string &modelType,
                                     const nlohmann::json &tokenizerConfig = nullptr);

/// Each of `texts` through model.tokenize() against the recorded `ids` (the
/// `tokenizers` library's): the first differences are reported as failures,
/// the count printed under `name` and returned.
size_t expectRecordedIds(encrt::Model &model, const nlohmann::json &texts, const nlohmann::json &ids,
                         const std::string &name);

/// The JSON file at `path`; throws std::runtime_error when it cannot be read.
nlohmann::json readJsonFile(const std::string &path);

} // namespace encc::testing

#endif
