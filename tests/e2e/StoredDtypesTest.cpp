//===- StoredDtypesTest.cpp - Checkpoints compile from their stored dtype ---===//
//
// Weights stay in the dtype the checkpoint stores (mapped, not converted at
// import) until a pass gives them their final form. So a BF16 or F16
// checkpoint must give exactly what an F32 checkpoint holding the same values
// gives, at every precision: fp32 (widened as the artifact is written), bf16
// (a bf16 tensor used as it is) and int8 (quantised from the stored values).
// Qwen3 (gate and up concatenated from two stored tensors, fused Q/K/V) and
// Gemma 3 (norm weights + 1 computed at import, Dense modules).
//
//===----------------------------------------------------------------------===//
#include "tests/e2e/E2ETest.h"
#include "tests/support/RecordedReference.h"
#include "tests/support/Safetensors.h"

#include <cstring>
#include <filesystem>

namespace {

using encc::testing::TempDir;

/// `from` copied to `to` with model.safetensors rewritten: every value rounded
/// to `roundTo`, stored as `storeAs`.
void writeVariant(const std::string &from, const std::string &to, const std::string &roundTo,
                  const std::string &storeAs) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  encc::testing::SafetensorsF64 f = encc::testing::loadSafetensorsF64(from + "/model.safetensors");
  for (auto &[name, values] : f.weights)
    for (double &v : values)
      v = encc::testing::roundToDtype(v, roundTo);
  encc::testing::writeSafetensors(to + "/model.safetensors", f.weights, f.shapes, storeAs);
}

class StoredDtypes : public ::testing::TestWithParam<const char *> {};

TEST_P(StoredDtypes, Bf16AndF16CheckpointsRunAsTheirValuesInF32) {
  const std::string model = encc::testing::referenceDataDir() + "/" + GetParam();
  TempDir tmp;
  const std::vector<int32_t> lengths = {19, 7, 12};
  const int64_t seq = 19;
  std::vector<int32_t> ids(lengths.size() * seq, 0);
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int32_t s = 0; s < lengths[b]; ++s)
      ids[b * seq + s] = int32_t((b * 31 + s * 7 + 3) % 300);
  for (const char *dtype : {"BF16", "F16"}) {
    const std::string asF32 = tmp.path() + "/" + dtype + "-values-as-f32", stored = tmp.path() + "/" + dtype;
    writeVariant(model, asF32, dtype, "F32");
    writeVariant(model, stored, dtype, dtype);
    for (const char *quantize : {"none", "bf16", "int8"}) {
      SCOPED_TRACE(std::string(dtype) + " checkpoint, --quantize " + quantize);
      auto run = [&](const std::string &dir) {
        encc::CompileOptions o;
        o.modelDir = dir;
        o.output = dir + "-" + quantize + ".encm";
        o.quantize = quantize;
        EXPECT_EQ(encc::testing::compile(o), "");
        encrt::Model m(o.output);
        return encrt::Session(m).run(ids, lengths, seq);
      };
      const encrt::RunResult want = run(asF32), got = run(stored);
      ASSERT_EQ(got.hidden.size(), want.hidden.size());
      ASSERT_EQ(got.pooled.size(), want.pooled.size());
      ASSERT_FALSE(want.pooled.empty());
      EXPECT_EQ(std::memcmp(got.hidden.data(), want.hidden.data(), want.hidden.size() * sizeof(float)), 0)
          << "hidden states differ";
      EXPECT_EQ(std::memcmp(got.pooled.data(), want.pooled.data(), want.pooled.size() * sizeof(float)), 0)
          << "pooled embeddings differ";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, StoredDtypes,
                         ::testing::Values("qwen3/models/gqa_last", "gemma3/models/bidirectional_mean"),
                         [](const ::testing::TestParamInfo<const char *> &info) {
                           return std::string(info.param).substr(0, std::string(info.param).find('/'));
                         });

} // namespace
