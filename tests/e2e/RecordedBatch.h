//===- RecordedBatch.h - A model folder against a recorded batch ----------===//
#ifndef ENCC_TESTS_E2E_RECORDEDBATCH_H
#define ENCC_TESTS_E2E_RECORDEDBATCH_H

#include "encrt/encrt.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace encc::testing {

/// Case `name` of the recording `file` (under tests/reference: "qwen3/qwen3.json"),
/// read once per file; throws std::runtime_error when it has no such case.
const nlohmann::json &recordedCase(const std::string &file, const std::string &name);

/// Compiles `modelDir` with the packed and with the padded plan and runs the
/// recorded batch `c` (ids [B][S] right-padded, lengths [B]) through both:
/// the valid hidden rows (c["hidden"][b][s < lengths[b]]) and, where the
/// case has them, the pooled outputs (c["pooled"]) must be within
/// `tolerance` (max |err| / max |ref|).
/// Prints the measured errors under `name`.
void expectMatchesRecordedBatch(const nlohmann::json &c, const std::string &modelDir, double tolerance,
                                const std::string &name);

/// The recorded texts `t` (t["texts"], the `tokenizers` library's t["ids"],
/// the reference embeddings t["pooled"]) through `model`: each text's ids
/// must equal the recorded ones, and the embeddings (Session::embed, the
/// model's default prompt, if any) be within `tolerance` (max |err| / max
/// |ref|). Returns the texts; prints the error under `name`.
std::vector<std::string> expectRecordedTexts(encrt::Model &model, const nlohmann::json &t, double tolerance,
                                             const std::string &name);

} // namespace encc::testing

#endif
