//===- CompileErrorsTest.cpp - Bad model folders and damaged artifacts ----===//
//
// Every user mistake gets one clear error naming the file and what was
// expected; nothing crashes.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/Safetensors.h"
#include "tests/support/TinyModel.h"

#include <gmock/gmock.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace encc::testing;
using ::testing::HasSubstr;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const std::string &path, const std::string &data) {
  std::ofstream(path, std::ios::binary) << data;
}

void replaceInFile(const std::string &path, const std::string &from, const std::string &to) {
  std::string s = readFile(path);
  size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  writeFile(path, s.replace(at, from.size(), to));
}

TinyModelSpec small() {
  TinyModelSpec s;
  s.hidden = 32;
  s.heads = 2;
  s.layers = 1;
  s.intermediate = 40;
  return s;
}

constexpr const char *kQuery = "encoder.layer.0.attention.self.query.weight";

TEST(CompileErrors, MissingTensor) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  m.weights.erase(kQuery);
  m.shapes.erase(kQuery);
  writeSafetensors(m.dir + "/model.safetensors", m.weights, m.shapes, "F32");
  std::string err = compile(m.dir, dir.path() + "/out.encm");
  EXPECT_THAT(err, HasSubstr("model.safetensors"));
  EXPECT_THAT(err, HasSubstr(kQuery));
  EXPECT_THAT(err, HasSubstr("missing"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out.encm"));
}

TEST(CompileErrors, WrongShape) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  m.shapes[kQuery] = {32, 31};
  m.weights[kQuery].resize(32 * 31);
  writeSafetensors(m.dir + "/model.safetensors", m.weights, m.shapes, "F32");
  std::string err = compile(m.dir, dir.path() + "/out.encm");
  EXPECT_THAT(err, HasSubstr(kQuery));
  EXPECT_THAT(err, HasSubstr("[32, 31]"));
  EXPECT_THAT(err, HasSubstr("expected [32, 32]"));
}

TEST(CompileErrors, UnknownModelType) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  replaceInFile(m.dir + "/config.json", "\"bert\"", "\"gpt2\"");
  std::string err = compile(m.dir, dir.path() + "/out.encm");
  EXPECT_THAT(err, HasSubstr("config.json"));
  EXPECT_THAT(err, HasSubstr("gpt2"));
  EXPECT_THAT(err, HasSubstr("bert")); // lists what is supported
}

TEST(CompileErrors, UnknownActivation) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  replaceInFile(m.dir + "/config.json", "\"gelu\"", "\"swish\"");
  std::string err = compile(m.dir, dir.path() + "/out.encm");
  EXPECT_THAT(err, HasSubstr("hidden_act"));
  EXPECT_THAT(err, HasSubstr("swish"));
}

TEST(CompileErrors, MissingFolderAndConfig) {
  TempDir dir;
  EXPECT_THAT(compile(dir.path() + "/nope", dir.path() + "/out.encm"), HasSubstr("nope"));
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  std::filesystem::remove(m.dir + "/config.json");
  EXPECT_THAT(compile(m.dir, dir.path() + "/out.encm"), HasSubstr("config.json"));
}

TEST(CompileErrors, TruncatedSafetensors) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  std::string data = readFile(m.dir + "/model.safetensors");
  writeFile(m.dir + "/model.safetensors", data.substr(0, data.size() - 100));
  EXPECT_THAT(compile(m.dir, dir.path() + "/out.encm"), HasSubstr("model.safetensors"));
}

TEST(CompileErrors, NonFiniteWeightsNeedAllowNonFinite) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  m.weights[kQuery][5] = std::nan("");
  writeSafetensors(m.dir + "/model.safetensors", m.weights, m.shapes, "F32");
  encc::CompileOptions o;
  o.modelDir = m.dir;
  o.output = dir.path() + "/out.encm";
  std::string err = compile(o);
  EXPECT_THAT(err, HasSubstr(std::string("tensor '") + kQuery + "' has a non-finite value (NaN) at index 5"));
  EXPECT_THAT(err, HasSubstr("--allow-nonfinite"));
  EXPECT_FALSE(std::filesystem::exists(o.output));
  o.allowNonFinite = true;
  EXPECT_EQ(compile(o), "");
  EXPECT_TRUE(std::filesystem::exists(o.output));
}

TEST(CompileErrors, CheckpointWithMoreLayersThanTheConfig) {
  TempDir dir;
  TinyModelSpec two = small();
  two.layers = 2;
  TinyModel m = writeTinyModel(dir.path() + "/m", two);
  replaceInFile(m.dir + "/config.json", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1");
  std::string err = compile(m.dir, dir.path() + "/out.encm");
  EXPECT_THAT(err, HasSubstr("encoder.layer.1.attention.self.query.weight' of layer 1"));
  EXPECT_THAT(err, HasSubstr("the model has 1 layers"));
}

TEST(CompileErrors, NullActivationAndEmptyVocabulary) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  replaceInFile(m.dir + "/config.json", "\"gelu\"", "null");
  EXPECT_THAT(compile(m.dir, dir.path() + "/out.encm"),
              HasSubstr("field 'hidden_act' is null, expected a string"));
  TinyModel v = writeTinyModel(dir.path() + "/v", small());
  writeFile(v.dir + "/vocab.txt", "");
  EXPECT_THAT(compile(v.dir, dir.path() + "/out.encm"), HasSubstr("vocab.txt: empty"));
}

/// The artifact is written through a fresh temporary: a symlink planted at
/// the old fixed temporary name is never followed, and nothing is left over.
TEST(CompileErrors, OutputNeverFollowsAPlantedSymlink) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  const std::string out = dir.path() + "/out.encm", victim = dir.path() + "/victim";
  writeFile(victim, "precious");
  std::filesystem::create_symlink(victim, out + ".partial");
  EXPECT_EQ(compile(m.dir, out), "");
  EXPECT_EQ(readFile(victim), "precious");
  EXPECT_TRUE(std::filesystem::is_regular_file(out));
  int leftovers = 0;
  for (const auto &e : std::filesystem::directory_iterator(dir.path()))
    leftovers += e.path().filename().string().find("out.encm.partial-") == 0;
  EXPECT_EQ(leftovers, 0);
  // A directory that does not exist: one error, no crash.
  EXPECT_THAT(compile(m.dir, dir.path() + "/no/such/dir/out.encm"),
              HasSubstr("cannot create a temporary file beside it"));
}

TEST(ArtifactErrors, DamagedRealArtifactIsRejected) {
  TempDir dir;
  TinyModel m = writeTinyModel(dir.path() + "/m", small());
  std::string path = dir.path() + "/m.encm";
  ASSERT_EQ(compile(m.dir, path), "");
  std::string good = readFile(path);
  { encrt::Model ok(path); } // loads intact

  auto expectLoadError = [&](const std::string &bytes, const auto &matcher) {
    writeFile(path, bytes);
    try {
      encrt::Model bad(path);
      ADD_FAILURE() << "damaged artifact loaded";
    } catch (const encrt::Error &e) {
      EXPECT_THAT(std::string(e.what()), matcher);
    }
  };
  for (size_t cut : {size_t(0), size_t(7), size_t(100), good.size() / 2, good.size() - 17, good.size() - 1})
    expectLoadError(good.substr(0, cut), HasSubstr("m.encm"));
  // The table is verified before the checksum is read (it bounds what the
  // checksum reads), so a flip there may be either one's finding.
  for (size_t at : {size_t(12), good.size() / 3, good.size() / 2, good.size() - 40}) {
    std::string bad = good;
    bad[at] ^= 0x5a;
    if (at < 64)
      expectLoadError(bad, testing::AnyOf(HasSubstr("checksum"), HasSubstr("fails the FlatBuffers verifier")));
    else
      expectLoadError(bad, HasSubstr("checksum"));
  }
}

} // namespace
