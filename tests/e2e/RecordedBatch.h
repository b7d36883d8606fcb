//===- RecordedBatch.h - A model folder against a recorded batch ----------===//
#ifndef ENCC_TESTS_E2E_RECORDEDBATCH_H
#define ENCC_TESTS_E2E_RECORDEDBATCH_H

#include <nlohmann/json.hpp>

#include <string>

namespace encc::testing {

/// Case `name` of the recording `file` (under tests/reference: "qwen3/qwen3.json"),
/// read once per file; throws std::runtime_error when it has no such case.
const nlohmann::json &recordedCase(const std::string &file, const std::string &name);

/// Compiles `modelDir` with the packed and with the padded plan and runs the
/// recorded batch `c` (ids [B][S] right-padded, lengths [B]) through both:
/// the valid hidden rows (c["hidden"][b][s < lengths[b]]) and the pooled
/// outputs (c["pooled"]) must be within `tolerance` (max |err| / max |ref|).
/// Prints the measured errors under `name`.
void expectMatchesRecordedBatch(const nlohmann::json &c, const std::string &modelDir, double tolerance,
                                const std::string &name);

} // namespace encc::testing

#endif
