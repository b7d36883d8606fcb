//===- ServeTest.cpp - encc-serve over HTTP, against the C API ------------===//
//
// The server runs as a child process (ServerProcess) on a free local port and
// is called with cpp-httplib's client.
//
// Tiny model (tests/runtime/ArtifactBuilder's, runs in every build including
// the sanitizer ones): /embed and /v1/embeddings return, bit for bit, what
// the C API gives each text alone (float text and base64 alike); token-id
// input equals text input; 16 concurrent clients with mixed lengths are each
// answered once with their own rows while passes hold several texts; every
// error status (400, 401, 404, 413, 422, 429, 503) with a JSON body naming the
// field; /embed_all's token states (also of a model without pooling); the
// metrics exposition; SIGTERM drains (health 503, requests still answered)
// and exits 0;
// the command line's errors.
//
// all-MiniLM-L6-v2 ($ENCC_MINILM_DIR, compiled with the encc CLI where the
// compiler is built): the 64 reference sentences through both APIs from 8
// concurrent clients in random groupings, bit-identical to each sentence
// embedded alone through the C API, and within 1e-6 cosine of
// sentence-transformers' recorded embeddings.
//
//===----------------------------------------------------------------------===//
#include "ServerProcess.h"

#include "tests/runtime/TestUtil.h"

#include "encrt/encrt.hpp"
#include "encrt/schema_version.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <optional>
#include <sstream>
#include <random>
#include <regex>
#include <thread>

using encc::testing::ServerProcess;
using nlohmann::json;

namespace {

/// The floats of a JSON array, as the server wrote them.
std::vector<float> floatsOf(const json &array) {
  std::vector<float> v;
  for (const json &x : array)
    v.push_back(x.get<float>());
  return v;
}

std::vector<float> fromBase64(const std::string &s) {
  std::vector<uint8_t> bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '+'             ? 62
            : c == '/'             ? 63
                                   : -1;
    if (v < 0)
      continue; // '='
    acc = acc << 6 | uint32_t(v);
    if ((bits += 6) >= 8) {
      bits -= 8;
      bytes.push_back(uint8_t(acc >> bits));
    }
  }
  std::vector<float> f(bytes.size() / 4);
  std::memcpy(f.data(), bytes.data(), f.size() * 4);
  return f;
}

/// Equal bits, element by element.
void expectSameBits(const std::vector<float> &got, const float *want, size_t n, const std::string &what) {
  ASSERT_EQ(got.size(), n) << what;
  for (size_t k = 0; k < n; ++k)
    ASSERT_EQ(std::memcmp(&got[k], &want[k], 4), 0) << what << " dim " << k << ": " << got[k] << " vs " << want[k];
}

httplib::Result post(httplib::Client &c, const std::string &path, const json &body,
                     const httplib::Headers &headers = {}) {
  return c.Post(path.c_str(), headers, body.dump(), "application/json");
}

/// A client socket speaking raw HTTP/1.1 to the server on 127.0.0.1.
class RawConnection {
public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  RawConnection(const RawConnection &) = delete;
  RawConnection &operator=(const RawConnection &) = delete;
  bool ok() const { return fd_ >= 0; }
  bool send(const std::string &bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size());
  }
  /// One answer (head and Content-Length body), or what came before the
  /// connection closed or `timeoutMs` passed ("" for nothing).
  std::string readAnswer(int timeoutMs = 5000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (;;) {
      const size_t headEnd = buffer_.find("\r\n\r\n");
      if (headEnd != std::string::npos) {
        size_t length = 0;
        std::smatch m;
        const std::string head = buffer_.substr(0, headEnd);
        if (std::regex_search(head, m, std::regex("Content-Length: (\\d+)")))
          length = std::stoul(m[1]);
        if (buffer_.size() >= headEnd + 4 + length) {
          std::string answer = buffer_.substr(0, headEnd + 4 + length);
          buffer_.erase(0, answer.size());
          return answer;
        }
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        break;
      timeval tv{left.count() / 1000, (left.count() % 1000) * 1000};
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0)
        break;
      buffer_.append(chunk, size_t(n));
    }
    std::string rest;
    rest.swap(buffer_);
    return rest;
  }
  /// Whether the server closed the connection within `timeoutMs`.
  bool closedWithin(int timeoutMs) {
    timeval tv{timeoutMs / 1000, (timeoutMs % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        return true;
      if (n < 0)
        return false;
    }
  }

private:
  int fd_ = -1;
  std::string buffer_;
};

class Serve : public encrt::test::RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    artifact_ = write(encrt::test::writeArtifact(encrt::test::TestModel::spec(kernels())));
    model_ = std::make_unique<encrt::Model>(artifact_);
    session_ = std::make_unique<encrt::Session>(*model_);
  }
  void TearDown() override {
    session_.reset();
    model_.reset();
    RuntimeTest::TearDown();
  }
  /// The C API's embedding of `text` alone.
  std::vector<float> alone(const std::string &text) { return session_->embed({text}); }

  std::string artifact_;
  std::unique_ptr<encrt::Model> model_;
  std::unique_ptr<encrt::Session> session_;
  static constexpr int H = encrt::test::TestModel::kHidden;
};

const std::vector<std::string> kTexts = {"hello", "hello world", "the world , a hello", "worlds the a , hello world",
                                         "", "a a a a a a a a a a a a a hello", "world"};

TEST_F(Serve, EmbedAndOpenAiMatchTheCApiBitForBit) {
  ServerProcess server({artifact_, "--threads", "1", "--allow-token-ids"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());

  // TEI, one string and a list; normalize false: the model's own output.
  auto r = post(c, "/embed", {{"inputs", kTexts[1]}, {"normalize", false}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  ASSERT_EQ(j.size(), 1u);
  expectSameBits(floatsOf(j[0]), alone(kTexts[1]).data(), H, "/embed one string");
  // TEI's compute headers: the text's characters and ids, the times in ms.
  EXPECT_EQ(r->get_header_value("x-compute-type"), "cpu");
  EXPECT_EQ(r->get_header_value("x-compute-characters"), std::to_string(kTexts[1].size())); // ASCII
  EXPECT_EQ(r->get_header_value("x-compute-tokens"), std::to_string(model_->tokenize(kTexts[1]).size()));
  for (const char *h : {"x-compute-time", "x-total-time", "x-tokenization-time", "x-queue-time", "x-inference-time"})
    EXPECT_GE(std::stoll(r->get_header_value(h, 0).empty() ? "-1" : r->get_header_value(h, 0)), 0) << h;

  r = post(c, "/embed", {{"inputs", kTexts}, {"normalize", false}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  j = json::parse(r->body);
  ASSERT_EQ(j.size(), kTexts.size());
  for (size_t i = 0; i < kTexts.size(); ++i)
    expectSameBits(floatsOf(j[i]), alone(kTexts[i]).data(), H, "/embed text " + std::to_string(i));

  // normalize (TEI's default) on a model that does not: unit rows along the
  // model's direction.
  r = post(c, "/embed", {{"inputs", kTexts}});
  ASSERT_TRUE(r && r->status == 200);
  j = json::parse(r->body);
  for (size_t i = 0; i < kTexts.size(); ++i) {
    std::vector<float> got = floatsOf(j[i]), raw = alone(kTexts[i]);
    double norm = 0, rawNorm = 0;
    for (int k = 0; k < H; ++k)
      norm += double(got[k]) * got[k], rawNorm += double(raw[k]) * raw[k];
    EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-6) << i;
    for (int k = 0; k < H; ++k)
      EXPECT_NEAR(got[k], raw[k] / std::sqrt(rawNorm), 1e-6) << i << " dim " << k;
  }

  // OpenAI: float and base64 the same bits; token ids (from /tokenize) the
  // same as their text; indices, usage and model name.
  r = post(c, "/v1/embeddings", {{"input", kTexts}, {"model", "anything"}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  json f = json::parse(r->body);
  r = post(c, "/v1/embeddings", {{"input", kTexts}, {"encoding_format", "base64"}});
  ASSERT_TRUE(r && r->status == 200);
  json b = json::parse(r->body);
  // TEI's /tokenize: token objects with the byte offsets of the C API, the
  // template's tokens special with null offsets and their own text.
  r = post(c, "/tokenize", {{"inputs", kTexts}});
  ASSERT_TRUE(r && r->status == 200) << r->body;
  const json tokenized = json::parse(r->body);
  json ids = json::array();
  ASSERT_EQ(tokenized.size(), kTexts.size());
  for (size_t i = 0; i < kTexts.size(); ++i) {
    const std::vector<encrt_token> want = model_->tokenizeOffsets(kTexts[i]);
    ASSERT_EQ(tokenized[i].size(), want.size()) << i;
    ids.push_back(json::array());
    for (size_t k = 0; k < want.size(); ++k) {
      const json &t = tokenized[i][k];
      ids[i].push_back(t["id"]);
      EXPECT_EQ(t["id"], want[k].id);
      EXPECT_EQ(t["special"], want[k].special == 1);
      if (want[k].special) {
        EXPECT_TRUE(t["start"].is_null() && t["stop"].is_null()) << t;
        EXPECT_EQ(t["text"], model_->token(want[k].id));
      } else {
        EXPECT_EQ(t["start"], want[k].start);
        EXPECT_EQ(t["stop"], want[k].stop);
        EXPECT_EQ(t["text"], kTexts[i].substr(size_t(want[k].start), size_t(want[k].stop - want[k].start)));
      }
    }
  }
  EXPECT_EQ(tokenized[2][1], json({{"id", 8}, {"text", "the"}, {"special", false}, {"start", 0}, {"stop", 3}}));
  EXPECT_EQ(tokenized[2][0], json({{"id", 2}, {"text", "[CLS]"}, {"special", true}, {"start", nullptr},
                                   {"stop", nullptr}}));
  // add_special_tokens false: the pieces alone; a text longer than the
  // model's maximum is not cut (as TEI's), unless "truncate" asks.
  std::string many;
  for (int i = 0; i < encrt::test::TestModel::kMaxSeq; ++i)
    many += "world ";
  r = post(c, "/tokenize", {{"inputs", {"hello world", many}}, {"add_special_tokens", false}});
  ASSERT_TRUE(r && r->status == 200) << r->body;
  json plain = json::parse(r->body);
  EXPECT_EQ(plain[0], json::parse(R"([{"id":4,"text":"hello","special":false,"start":0,"stop":5},)"
                                  R"({"id":5,"text":"world","special":false,"start":6,"stop":11}])"));
  EXPECT_EQ(plain[1].size(), size_t(encrt::test::TestModel::kMaxSeq));
  r = post(c, "/tokenize", {{"inputs", many}, {"truncate", true}});
  ASSERT_TRUE(r && r->status == 200) << r->body;
  EXPECT_EQ(json::parse(r->body)[0].size(), size_t(encrt::test::TestModel::kMaxSeq));
  // TEI's /decode: the ids back to text, as the C API decodes them; the
  // special tokens skipped by default.
  r = post(c, "/decode", {{"ids", ids}});
  ASSERT_TRUE(r && r->status == 200) << r->body;
  const json decoded = json::parse(r->body);
  ASSERT_EQ(decoded.size(), kTexts.size());
  for (size_t i = 0; i < kTexts.size(); ++i)
    EXPECT_EQ(decoded[i], model_->decode(ids[i].get<std::vector<int32_t>>())) << i;
  EXPECT_EQ(decoded[2], "the world, a hello"); // WordPiece's clean-up joins " ,"
  r = post(c, "/decode", {{"ids", {2, 4, 5, 6, 3}}, {"skip_special_tokens", false}});
  ASSERT_TRUE(r && r->status == 200) << r->body;
  EXPECT_EQ(json::parse(r->body), json::array({"[CLS] hello worlds [SEP]"}));
  r = post(c, "/v1/embeddings", {{"input", ids}});
  ASSERT_TRUE(r && r->status == 200) << r->body;
  json fromIds = json::parse(r->body);
  int64_t tokens = 0;
  for (size_t i = 0; i < kTexts.size(); ++i) {
    EXPECT_EQ(ids[i].get<std::vector<int32_t>>(), model_->tokenize(kTexts[i]));
    tokens += int64_t(ids[i].size());
    EXPECT_EQ(f["data"][i]["index"], i);
    EXPECT_EQ(f["data"][i]["object"], "embedding");
    std::vector<float> asFloat = floatsOf(f["data"][i]["embedding"]);
    expectSameBits(fromBase64(b["data"][i]["embedding"].get<std::string>()), asFloat.data(), H, "base64");
    expectSameBits(floatsOf(fromIds["data"][i]["embedding"]), asFloat.data(), H, "token ids");
    std::vector<float> tei = floatsOf(j[i]); // /embed normalised: the same normalisation
    expectSameBits(asFloat, tei.data(), H, "OpenAI vs TEI");
  }
  EXPECT_EQ(f["object"], "list");
  EXPECT_EQ(f["usage"]["prompt_tokens"], tokens);
  EXPECT_EQ(f["usage"]["total_tokens"], tokens);
  EXPECT_EQ(f["model"], "model.encm");

  r = c.Get("/info");
  ASSERT_TRUE(r && r->status == 200);
  json info = json::parse(r->body);
  EXPECT_EQ(info["hidden_size"], H);
  EXPECT_EQ(info["max_input_length"], encrt::test::TestModel::kMaxSeq);
  EXPECT_EQ(info["model_type"]["embedding"]["pooling"], "mean");
  r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

TEST_F(Serve, ConcurrentClientsWithMixedLengthsGetTheirOwnRows) {
  // A long wait makes passes of several texts from different clients.
  ServerProcess server({artifact_, "--threads", "2", "--max-wait-ms", "20", "--max-batch-requests", "16"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  std::vector<std::vector<float>> expected;
  for (const std::string &t : kTexts)
    expected.push_back(alone(t));
  constexpr int kClients = 16, kRequests = 12;
  std::atomic<int> ok{0}, texts{0};
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int ci = 0; ci < kClients; ++ci)
    clients.emplace_back([&, ci] {
      httplib::Client c("127.0.0.1", server.port());
      std::mt19937 rng(ci);
      for (int r = 0; r < kRequests; ++r) {
        std::vector<size_t> pick(1 + rng() % 4);
        std::vector<std::string> inputs;
        for (size_t &p : pick) {
          p = rng() % kTexts.size();
          inputs.push_back(kTexts[p]);
        }
        const bool openai = rng() % 2;
        auto res = openai ? post(c, "/v1/embeddings", {{"input", inputs}, {"encoding_format", "base64"}})
                          : post(c, "/embed", {{"inputs", inputs}, {"normalize", false}});
        if (!res || res->status != 200) {
          failures[ci] = res ? res->body : "no answer";
          return;
        }
        json j = json::parse(res->body);
        for (size_t i = 0; i < pick.size(); ++i) {
          std::vector<float> want = expected[pick[i]];
          if (openai) { // the server's normalisation, recomputed
            double sq = 0;
            for (float x : want)
              sq += double(x) * x;
            for (float &x : want)
              x = float(double(x) * (1.0 / std::sqrt(sq)));
          }
          std::vector<float> got =
              openai ? fromBase64(j["data"][i]["embedding"].get<std::string>()) : floatsOf(j[i]);
          if (got.size() != want.size() || std::memcmp(got.data(), want.data(), got.size() * 4) != 0) {
            failures[ci] = "request " + std::to_string(r) + " text " + std::to_string(i) + ": another row";
            return;
          }
        }
        ++ok;
        texts += int(pick.size());
      }
    });
  for (auto &t : clients)
    t.join();
  for (int ci = 0; ci < kClients; ++ci)
    EXPECT_EQ(failures[ci], "") << "client " << ci;
  EXPECT_EQ(ok.load(), kClients * kRequests);

  httplib::Client c("127.0.0.1", server.port());
  std::string m;
  auto metric = [&](const std::string &name) {
    std::smatch match;
    std::regex re("\n" + std::regex_replace(name, std::regex(R"([{}"/+])"), R"(\$&)") + " ([0-9.e+]+)\n");
    return std::regex_search(m, match, re) ? std::stod(match[1]) : 0.0;
  };
  auto answered = [&] {
    return metric(R"(encc_requests_total{route="/embed",status="200"})") +
           metric(R"(encc_requests_total{route="/v1/embeddings",status="200"})");
  };
  // A request is counted after its answer is sent: wait until all are.
  for (int i = 0; i < 200 && (i == 0 || answered() < kClients * kRequests); ++i) {
    if (i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto res = c.Get("/metrics");
    ASSERT_TRUE(res && res->status == 200);
    m = res->body;
  }
  EXPECT_EQ(answered(), kClients * kRequests);
  EXPECT_EQ(metric("encc_embedded_texts_total"), texts.load());
  const double passes = metric("encc_batch_texts_count");
  std::printf("[ measured ] %d texts in %.0f passes\n", texts.load(), passes);
  EXPECT_LT(passes, texts.load()) << "no pass held more than one text";
  EXPECT_EQ(metric("encc_queue_texts"), 0);
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

TEST_F(Serve, ErrorsGetTheirStatusAndAJsonBodyNamingTheField) {
  ServerProcess server({artifact_, "--max-input-texts", "4", "--max-body-bytes", "4096", "--allow-token-ids"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  std::string longText;
  for (int i = 0; i < encrt::test::TestModel::kMaxSeq; ++i)
    longText += "hello ";
  struct Case {
    const char *path;
    std::string body;
    int status;
    const char *fragment;
  };
  const std::vector<Case> cases = {
      {"/embed", "{\"inputs\": ", 400, "not valid JSON"},
      {"/embed", "[1, 2]", 422, "must be a JSON object"},
      {"/embed", std::string(20, '[') + std::string(20, ']'), 400, "nested deeper"},
      {"/embed", "{}", 422, "inputs: missing"},
      {"/embed", "{\"inputs\": []}", 422, "inputs: is an empty list"},
      {"/embed", "{\"inputs\": 7}", 422, "inputs: must be a string or a list of strings"},
      {"/embed", "{\"inputs\": [\"a\", 7]}", 422, "inputs[1]: must be a string"},
      {"/embed", "{\"inputs\": \"a\", \"normalize\": \"yes\"}", 422, "normalize: must be true or false"},
      {"/embed", "{\"inputs\": [\"a\",\"a\",\"a\",\"a\",\"a\"]}", 413, "inputs: has 5 texts, more than 4"},
      {"/embed", json({{"inputs", {"a", longText}}}).dump(), 413, "inputs[1]: has 66 tokens"},
      {"/embed", "{\"inputs\": \"" + std::string(5000, 'a') + "\"}", 413, "over 4096 bytes"},
      {"/tokenize", "{\"inputs\": \"a\", \"add_special_tokens\": 0}", 422, "add_special_tokens: must be true or false"},
      {"/decode", "{\"ids\": []}", 400, "`input_ids` cannot be empty"},
      {"/decode", "{\"ids\": [[1], []]}", 400, "ids[1]: `input_ids` cannot be empty"},
      {"/decode", "{\"ids\": [1, -2]}", 422, "ids: token ids must be integers >= 0"},
      {"/decode", "{\"ids\": [1, 99]}", 422, "ids[1] = 99 is not in the vocabulary"},
      {"/decode", "{\"ids\": \"hello\"}", 422, "ids: must be a list of token ids"},
      {"/decode", "{\"ids\": [[1],[1],[1],[1],[1]]}", 413, "ids: has 5 texts, more than 4"},
      {"/embed", "{\"inputs\": \"a\", \"dimensions\": 0}", 422, "`dimensions` should be positive"},
      {"/embed", "{\"inputs\": \"a\", \"dimensions\": 33}", 422,
       "`dimensions` should be smaller than the maximum embedding dimension (32)"},
      {"/embed", "{\"inputs\": \"a\", \"dimensions\": 2.5}", 422, "dimensions: must be a positive integer"},
      {"/embed", "{\"inputs\": \"a\", \"dimensions\": \"8\"}", 422, "dimensions: must be a positive integer"},
      {"/v1/embeddings", "{}", 400, "\"param\":\"input\""},
      {"/v1/embeddings", "{\"input\": [[1, 2], \"a\"]}", 400, "\"param\":\"input[1]\""},
      {"/v1/embeddings", "{\"input\": [1, 99999]}", 400, "token ids must be integers in [0, 50)"},
      {"/v1/embeddings", "{\"input\": [[]]}", 400, "empty list of token ids"},
      {"/v1/embeddings", "{\"input\": \"a\", \"encoding_format\": \"hex\"}", 400, "\"param\":\"encoding_format\""},
      {"/v1/embeddings", "{\"input\": \"a\", \"dimensions\": 0}", 400, "must be an integer in [1, 32]"},
      {"/v1/embeddings", "{\"input\": \"a\", \"dimensions\": 33}", 400, "must be an integer in [1, 32]"},
      {"/v1/embeddings", json({{"input", longText}}).dump(), 413, "more than the model's 64"},
      {"/nowhere", "{}", 404, "no route POST /nowhere"},
  };
  for (const Case &k : cases) {
    auto r = c.Post(k.path, k.body, "application/json");
    ASSERT_TRUE(r) << k.path << " " << k.body.substr(0, 80);
    EXPECT_EQ(r->status, k.status) << k.path << " " << k.body.substr(0, 80) << " -> " << r->body;
    EXPECT_NE(r->body.find(k.fragment), std::string::npos)
        << k.path << " " << k.body.substr(0, 80) << " -> " << r->body << "\nexpected: " << k.fragment;
    json j = json::parse(r->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r->body;
    EXPECT_TRUE(j.contains("error")) << r->body;
  }
  // A gzip body (Content-Encoding: gzip) is held to --max-body-bytes once decompressed (issue 38: a
  // 199 KB body inflated to 200 MiB); a small one is served.
  {
    httplib::Client gz("127.0.0.1", server.port());
    gz.set_compress(true);
    auto bomb = gz.Post("/embed", json({{"inputs", std::string(1 << 20, 'a')}}).dump(), "application/json");
    ASSERT_TRUE(bomb);
    EXPECT_EQ(bomb->status, 413) << bomb->body;
    EXPECT_NE(bomb->body.find("bytes once decompressed (--max-body-bytes)"), std::string::npos) << bomb->body;
    auto small = gz.Post("/embed", json({{"inputs", "hello"}}).dump(), "application/json");
    ASSERT_TRUE(small);
    EXPECT_EQ(small->status, 200) << small->body;
  }
  // Expect: 100-continue with a Content-Length over the limit: 413 at once, not 100 and a wait for a body
  // (issue 38: the answer came 10 s later).
  {
    RawConnection raw(server.port());
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(raw.send("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Content-Length: 10485760\r\nExpect: 100-continue\r\n\r\n"));
    const auto t0 = std::chrono::steady_clock::now();
    const std::string answer = raw.readAnswer(3000);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(answer.empty()) << "no answer within 3 s";
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
    EXPECT_LT(seconds, 2.0);
  }
  // What a too-long text becomes with "truncate": the C API's truncation.
  auto r = post(c, "/embed", {{"inputs", longText}, {"truncate", true}, {"normalize", false}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  expectSameBits(floatsOf(json::parse(r->body)[0]), alone(longText).data(), H, "truncated");
  // The server still serves after every error.
  r = post(c, "/embed", {{"inputs", "hello"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

// Issue 38: the routes real clients call (huggingface_hub's InferenceClient
// posts TEI's embed to /, SageMaker to /invocations and /ping, TEI's OpenAI
// alias /embeddings) give the routes' own answers; a body declared as
// anything but JSON gets TEI's 415; token ids (another model's tokenizer's,
// as LangChain sends tiktoken's) are refused unless --allow-token-ids.
TEST_F(Serve, TeiAliasesContentTypeAndTokenIdsByDefault) {
  ServerProcess server({artifact_, "--threads", "1"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  auto r = post(c, "/embed", {{"inputs", "hello world"}, {"normalize", false}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  expectSameBits(floatsOf(json::parse(r->body)[0]), alone("hello world").data(), H, "/embed");
  const std::vector<float> tei = floatsOf(json::parse(post(c, "/embed", {{"inputs", "hello world"}})->body)[0]);
  for (const char *path : {"/", "/invocations"}) {
    r = post(c, path, {{"inputs", "hello world"}});
    ASSERT_TRUE(r && r->status == 200) << path << " " << (r ? r->body : "no answer");
    expectSameBits(floatsOf(json::parse(r->body)[0]), tei.data(), H, path);
  }
  const std::vector<float> openAi =
      floatsOf(json::parse(post(c, "/v1/embeddings", {{"input", {"hello world"}}})->body)["data"][0]["embedding"]);
  r = post(c, "/embeddings", {{"input", {"hello world"}}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  expectSameBits(floatsOf(json::parse(r->body)["data"][0]["embedding"]), openAi.data(), H, "/embeddings");
  auto ping = c.Get("/ping");
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->status, 200);
  // TEI's /similarity: the cosine of the source sentence's embedding with each other's (the C API's rows).
  const std::vector<std::string> others = {kTexts[2], kTexts[4], kTexts[1]};
  r = post(c, "/similarity", {{"inputs", {{"source_sentence", kTexts[1]}, {"sentences", others}}}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  const json sims = json::parse(r->body);
  ASSERT_EQ(sims.size(), others.size());
  const std::vector<float> src = alone(kTexts[1]);
  for (size_t i = 0; i < others.size(); ++i) {
    const std::vector<float> v = alone(others[i]);
    double dot = 0, ns = 0, nv = 0;
    for (int k = 0; k < H; ++k) {
      dot += double(src[k]) * v[k];
      ns += double(src[k]) * src[k];
      nv += double(v[k]) * v[k];
    }
    EXPECT_NEAR(sims[i].get<double>(), dot / std::sqrt(ns * nv), 1e-6) << others[i];
  }
  r = post(c, "/similarity", {{"inputs", {{"source_sentence", "a"}, {"sentences", {"b", 5}}}}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(r->body.find("inputs.sentences[1]: must be a string"), std::string::npos) << r->body;

  // A classifier's routes, and a SPLADE model's, on an embedding model: TEI's 424.
  r = post(c, "/embed_sparse", {{"inputs", "hello"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 424) << r->body;
  EXPECT_NE(r->body.find("Model is not an embedding model with SPLADE pooling"), std::string::npos) << r->body;
  for (const auto &[path, body] : {std::pair<const char *, json>{"/predict", {{"inputs", "hello"}}},
                                   {"/rerank", {{"query", "hello"}, {"texts", {"world"}}}}}) {
    r = post(c, path, body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 424) << path;
    EXPECT_NE(r->body.find(std::string(path) == "/predict" ? "Model is not a classifier model"
                                                           : "model is not a re-ranker model"),
              std::string::npos)
        << r->body;
  }

  // OpenAI's dimensions (Matryoshka shortening): the first N, renormalised.
  r = post(c, "/v1/embeddings", {{"input", {"hello world"}}, {"dimensions", 8}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  const std::vector<float> shortened = floatsOf(json::parse(r->body)["data"][0]["embedding"]);
  ASSERT_EQ(shortened.size(), 8u);
  const std::vector<float> full = alone("hello world");
  double sq = 0;
  for (int k = 0; k < 8; ++k)
    sq += double(full[k]) * double(full[k]);
  for (int k = 0; k < 8; ++k)
    EXPECT_NEAR(shortened[k], full[k] / std::sqrt(sq), 1e-6) << "dimension " << k;

  // TEI's dimensions on /embed (and at /): the first N, then normalised as
  // "normalize" says (TEI's order); normalize false: the first N as they are.
  for (const char *path : {"/embed", "/"}) {
    r = post(c, path, {{"inputs", {"hello world"}}, {"dimensions", 8}});
    ASSERT_TRUE(r && r->status == 200) << path << " " << (r ? r->body : "no answer");
    const std::vector<float> tei = floatsOf(json::parse(r->body)[0]);
    ASSERT_EQ(tei.size(), 8u) << path;
    for (int k = 0; k < 8; ++k)
      EXPECT_NEAR(tei[k], full[k] / std::sqrt(sq), 1e-6) << path << " dimension " << k;
  }
  r = post(c, "/embed", {{"inputs", "hello world"}, {"dimensions", 8}, {"normalize", false}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  expectSameBits(floatsOf(json::parse(r->body)[0]), full.data(), 8, "/embed dimensions 8, normalize false");
  r = post(c, "/embed", {{"inputs", "hello world"}, {"dimensions", H}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  EXPECT_EQ(json::parse(r->body)[0].size(), size_t(H));

  for (const char *type : {"text/plain", "application/x-www-form-urlencoded"}) {
    r = c.Post("/embed", "{\"inputs\": \"hello\"}", type);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 415) << type << " -> " << r->body;
    EXPECT_NE(r->body.find("Expected request with `Content-Type: application/json`"), std::string::npos) << r->body;
  }
  r = c.Post("/embed", "{\"inputs\": \"hello\"}", "application/json; charset=utf-8");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;

  for (const json &input : {json::array({1, 2, 3}), json::array({json::array({1, 2})})}) {
    r = post(c, "/v1/embeddings", {{"input", input}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_NE(r->body.find("token ids are refused"), std::string::npos) << r->body;
    EXPECT_NE(r->body.find("--allow-token-ids"), std::string::npos) << r->body;
  }
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

// CORS (issue 38: OPTIONS was 404): with --cors-allow-origin, a browser's
// preflight from a listed origin gets 204 and the Access-Control-* headers
// (before the API key, which a preflight does not carry), answers to it carry
// Access-Control-Allow-Origin; another origin gets none of that.
TEST_F(Serve, CorsForTheListedOriginsOnly) {
  ServerProcess server({artifact_, "--cors-allow-origin", "https://app.example, http://localhost:3000",
                        "--api-key", "k"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  auto pre = c.Options("/embed", {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"},
                                  {"Access-Control-Request-Headers", "content-type, authorization"}});
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204) << pre->body;
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_NE(pre->get_header_value("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  EXPECT_NE(pre->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  auto other = c.Options("/embed", {{"Origin", "https://evil.example"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
  EXPECT_FALSE(other->has_header("Access-Control-Allow-Origin"));
  auto r = post(c, "/embed", {{"inputs", "hello"}},
                {{"Origin", "http://localhost:3000"}, {"Authorization", "Bearer k"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
  r = post(c, "/embed", {{"inputs", "hello"}}, {{"Authorization", "Bearer k"}});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

// Issue 38: connections wait in one event loop, not a thread each: 1 200
// slow-header connections (more than the HTTP threads) locked normal requests
// out for 8-20 s. Here 1 500 connections send half a head and wait, with 4
// handler threads: a normal request is still answered at once, and each slow
// one gets 408 once its head has taken --header-timeout-ms.
TEST_F(Serve, SlowConnectionsHoldNoThreadAndTimeOut) {
  rlimit nofile{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &nofile), 0);
  nofile.rlim_cur = std::min<rlim_t>(nofile.rlim_max, 8192);
  setrlimit(RLIMIT_NOFILE, &nofile);
  getrlimit(RLIMIT_NOFILE, &nofile);
  const int slowCount = std::min(1500, int(nofile.rlim_cur) - 200);
  ServerProcess server({artifact_, "--http-threads", "4", "--header-timeout-ms", "4000"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < slowCount; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(slow.back()->ok()) << "connection " << i;
    ASSERT_TRUE(slow.back()->send("POST /embed HTTP/1.1\r\nHost: x\r\n"));
  }
  httplib::Client c("127.0.0.1", server.port());
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = post(c, "/embed", {{"inputs", "hello"}, {"normalize", false}});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(r) << "request " << i;
    ASSERT_EQ(r->status, 200) << r->body;
    expectSameBits(floatsOf(json::parse(r->body)[0]), alone("hello").data(), H, "beside slow connections");
    EXPECT_LT(seconds, 3.0) << "request " << i << " waited behind the slow connections";
  }
  for (size_t i : {size_t(0), slow.size() / 2, slow.size() - 1}) {
    const std::string answer = slow[i]->readAnswer(8000);
    EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u) << "connection " << i << ": " << answer;
    EXPECT_NE(answer.find("did not arrive within 4000 ms"), std::string::npos) << answer;
    EXPECT_TRUE(slow[i]->closedWithin(3000)) << "connection " << i;
  }
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

// The HTTP layer's own behaviour: keep-alive and pipelined requests answered
// in order, a chunked body, 405 for a route's other method, the keep-alive
// request count, the idle timeout, and the per-address connection limit.
TEST_F(Serve, KeepAlivePipeliningChunksAndConnectionLimits) {
  ServerProcess server({artifact_, "--keep-alive-requests", "3", "--idle-timeout-ms", "300",
                        "--max-connections-per-client", "3"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  {
    RawConnection raw(server.port());
    ASSERT_TRUE(raw.ok());
    const std::string body = "{\"inputs\": \"hello\", \"normalize\": false}";
    // Two requests in one write: a GET, then a chunked POST.
    ASSERT_TRUE(raw.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                         "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n" +
                         [&] {
                           char size[16];
                           std::snprintf(size, sizeof size, "%zx", body.size() - 5);
                           return std::string(size);
                         }() +
                         "\r\n" + body.substr(0, body.size() - 5) + "\r\n5\r\n" + body.substr(body.size() - 5) +
                         "\r\n0\r\n\r\n"));
    const std::string health = raw.readAnswer();
    EXPECT_EQ(health.rfind("HTTP/1.1 200", 0), 0u) << health;
    EXPECT_NE(health.find("Connection: keep-alive"), std::string::npos) << health;
    EXPECT_NE(health.find("{\"status\":\"ok\"}"), std::string::npos) << health;
    const std::string embed = raw.readAnswer();
    ASSERT_EQ(embed.rfind("HTTP/1.1 200", 0), 0u) << embed;
    expectSameBits(floatsOf(json::parse(embed.substr(embed.find("\r\n\r\n") + 4))[0]), alone("hello").data(), H,
                   "chunked");
    // The third request is the last this connection carries (--keep-alive-requests 3).
    ASSERT_TRUE(raw.send("GET /embed HTTP/1.1\r\nHost: x\r\n\r\n"));
    const std::string wrongMethod = raw.readAnswer();
    EXPECT_EQ(wrongMethod.rfind("HTTP/1.1 405", 0), 0u) << wrongMethod;
    EXPECT_NE(wrongMethod.find("Allow: POST"), std::string::npos) << wrongMethod;
    EXPECT_NE(wrongMethod.find("Connection: close"), std::string::npos) << wrongMethod;
    EXPECT_TRUE(raw.closedWithin(2000));
  }
  {
    RawConnection raw(server.port());
    ASSERT_TRUE(raw.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(raw.readAnswer().rfind("HTTP/1.1 200", 0), 0u);
    EXPECT_TRUE(raw.closedWithin(2000)) << "idle past --idle-timeout-ms 300";
  }
  {
    std::vector<std::unique_ptr<RawConnection>> held;
    for (int i = 0; i < 3; ++i) {
      held.push_back(std::make_unique<RawConnection>(server.port()));
      ASSERT_TRUE(held.back()->send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
      EXPECT_EQ(held.back()->readAnswer().rfind("HTTP/1.1 200", 0), 0u) << i;
    }
    RawConnection fourth(server.port());
    ASSERT_TRUE(fourth.ok());
    const std::string refused = fourth.readAnswer();
    EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
    EXPECT_NE(refused.find("--max-connections-per-client"), std::string::npos) << refused;
    held.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    RawConnection again(server.port());
    ASSERT_TRUE(again.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(again.readAnswer().rfind("HTTP/1.1 200", 0), 0u) << "room again once the others closed";
  }
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

// TEI's prompt_name: the model's prompt before each text, as the C API puts
// it (bit for bit); absent or null: the default prompt; an unknown name or
// a wrong type is 422 naming the field.
TEST_F(Serve, PromptNamesPutTheModelsPromptBeforeEachText) {
  auto spec = encrt::test::TestModel::spec(kernels());
  spec.prompts = {{"query", "hello "}, {"document", ""}};
  spec.defaultPrompt = "query";
  spec.requiredFeatures = {ENCM_FEATURE_DEFAULT_PROMPT};
  const std::string artifact = write(encrt::test::writeArtifact(spec), "prompts.encm");
  encrt::Model model(artifact);
  encrt::Session session(model);
  ServerProcess server({artifact, "--threads", "1"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  const std::vector<std::string> texts = {"world", "a world"};
  for (const json &name : {json("query"), json("document"), json(nullptr)}) {
    auto r = post(c, "/embed", {{"inputs", texts}, {"normalize", false}, {"prompt_name", name}});
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    const json j = json::parse(r->body);
    const std::vector<float> want = session.embed(texts, name.is_null() ? "query" : name.get<std::string>());
    for (size_t i = 0; i < texts.size(); ++i)
      expectSameBits(floatsOf(j[i]), want.data() + i * H, H, "prompt " + name.dump() + " text " + std::to_string(i));
  }
  auto r = post(c, "/tokenize", {{"inputs", "world"}, {"prompt_name", "query"}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  // The offsets are into the prompted text, as TEI's.
  const json prompted = json::parse(r->body)[0];
  ASSERT_EQ(prompted.size(), model.tokenize("hello world").size());
  for (size_t k = 0; k < prompted.size(); ++k)
    EXPECT_EQ(prompted[k]["id"], model.tokenize("hello world")[k]);
  EXPECT_EQ(prompted[2], json({{"id", 5}, {"text", "world"}, {"special", false}, {"start", 6}, {"stop", 11}}));
  r = post(c, "/embed", {{"inputs", "world"}, {"prompt_name", "passage"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(r->body.find("'passage' is not one of the model's prompts (query, document)"), std::string::npos)
      << r->body;
  r = post(c, "/embed", {{"inputs", "world"}, {"prompt_name", 3}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(r->body.find("must be a string or null"), std::string::npos) << r->body;
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

TEST_F(Serve, AutoTruncateCutsLongTextsByDefault) {
  ServerProcess server({artifact_, "--auto-truncate"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  std::string longText;
  for (int i = 0; i < 100; ++i)
    longText += "world ";
  auto r = post(c, "/v1/embeddings", {{"input", longText}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = post(c, "/embed", {{"inputs", longText}, {"truncate", false}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << "a request's truncate: false overrides --auto-truncate";
}

TEST_F(Serve, ApiKeyGuardsEveryRouteButHealth) {
  ServerProcess server({artifact_, "--api-key", "s3cret"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  auto r = post(c, "/embed", {{"inputs", "hello"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("missing API key"), std::string::npos) << r->body;
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  r = post(c, "/v1/embeddings", {{"input", "hello"}}, {{"Authorization", "Bearer s3cre"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("authentication_error"), std::string::npos) << r->body;
  r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = post(c, "/embed", {{"inputs", "hello"}}, {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

/// "hello" posted to /embed, then 100 ms later "world" from another client;
/// the two answers in that order.
std::pair<httplib::Result, httplib::Result> twoRequestsApart(const ServerProcess &server) {
  std::optional<httplib::Result> first;
  std::thread t([&] {
    httplib::Client c("127.0.0.1", server.port());
    first.emplace(post(c, "/embed", {{"inputs", "hello"}}));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  httplib::Client c("127.0.0.1", server.port());
  httplib::Result second = post(c, "/embed", {{"inputs", "world"}});
  t.join();
  return {std::move(*first), std::move(second)};
}

TEST_F(Serve, FullQueueWaitsForRoomAndTimeoutGets503) {
  // The first request's text waits 300 ms for company (--max-wait-ms), so the
  // queue (one text) is full while it waits: the second request waits for
  // room (issue 38: backpressure instead of refusal; 64 clients x 64 texts got
  // mostly 429 at the defaults) and both are served.
  {
    ServerProcess server({artifact_, "--max-queue", "1", "--max-input-texts", "1", "--max-wait-ms", "300"});
    ASSERT_GT(server.port(), 0) << server.startupOutput();
    auto [first, r] = twoRequestsApart(server);
    ASSERT_TRUE(first && r);
    EXPECT_EQ(first->status, 200) << first->body;
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(server.stop(SIGTERM), 0);
  }
  {
    // No room within --timeout-ms: 429. The first text waits 1 s for company
    // and its request times out (503) at 300 ms, but its row holds the queue
    // until that pass; the second request waits 300 ms for room, in vain.
    ServerProcess server({artifact_, "--max-queue", "1", "--max-input-texts", "1", "--max-wait-ms", "1000",
                          "--timeout-ms", "300"});
    ASSERT_GT(server.port(), 0) << server.startupOutput();
    auto [first, r] = twoRequestsApart(server);
    ASSERT_TRUE(first && r);
    EXPECT_EQ(first->status, 503) << first->body;
    EXPECT_EQ(r->status, 429) << r->body;
    EXPECT_EQ(r->get_header_value("Retry-After"), "1");
    EXPECT_NE(r->body.find("the queue stayed full (1 texts, --max-queue) for 300 ms"), std::string::npos) << r->body;
    EXPECT_EQ(server.stop(SIGTERM), 0);
  }
  {
    ServerProcess server({artifact_, "--max-wait-ms", "400", "--timeout-ms", "50"});
    ASSERT_GT(server.port(), 0) << server.startupOutput();
    httplib::Client c("127.0.0.1", server.port());
    auto r = post(c, "/v1/embeddings", {{"input", "hello"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503) << r->body;
    EXPECT_NE(r->body.find("not answered within 50 ms"), std::string::npos) << r->body;
    // The abandoned text is skipped, and the server goes on.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    r = post(c, "/embed", {{"inputs", "hello"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503) << "the next one waits 400 ms too";
    EXPECT_EQ(server.stop(SIGTERM), 0);
  }
}

TEST_F(Serve, SigtermDrainsThenExitsZero) {
  ServerProcess server({artifact_, "--max-wait-ms", "200"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  // Eight requests sit in the queue for 200 ms; SIGTERM arrives meanwhile.
  std::vector<std::optional<httplib::Result>> results(8);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < results.size(); ++i)
    clients.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", server.port());
      results[i] = post(c, "/embed", {{"inputs", kTexts[i % kTexts.size()]}, {"normalize", false}});
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  // Draining: /health says so at once, requests are still served.
  httplib::Client c("127.0.0.1", server.port());
  int health = 0;
  std::string healthError;
  for (int i = 0; i < 100 && health != 503; ++i) {
    auto h = c.Get("/health");
    health = h ? h->status : -1;
    healthError = h ? "" : httplib::to_string(h.error());
    if (health != 503)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(health, 503) << "/health while draining " << healthError;
  auto late = post(c, "/embed", {{"inputs", "hello"}});
  ASSERT_TRUE(late) << "a request during the drain got no answer";
  EXPECT_EQ(late->status, 200) << late->body;
  EXPECT_EQ(server.stop(0), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto &t : clients)
    t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i] && *results[i])
        << "request " << i << " got no answer: " << (results[i] ? httplib::to_string(results[i]->error()) : "");
    const httplib::Response &res = **results[i];
    ASSERT_EQ(res.status, 200) << res.body;
    expectSameBits(floatsOf(json::parse(res.body)[0]), alone(kTexts[i % kTexts.size()]).data(), H,
                   "drained request");
  }
  EXPECT_GE(seconds, 0.5) << "stopped before 0.5 s without requests";
  EXPECT_LT(seconds, 10) << "draining took too long";
  httplib::Client after("127.0.0.1", server.port());
  EXPECT_FALSE(after.Get("/health")) << "still accepting after exit";
}

TEST_F(Serve, CommandLineErrors) {
  std::string out;
  EXPECT_EQ(encc::testing::runServeToEnd({"--help"}, &out), 0);
  EXPECT_NE(out.find("usage: encc-serve MODEL.encm"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(encc::testing::runServeToEnd({}, &out), 2);
  EXPECT_NE(out.find("no model given"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(encc::testing::runServeToEnd({artifact_, "--port", "70000"}, &out), 2);
  EXPECT_NE(out.find("--port expects an integer in [0, 65535], got '70000'"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(encc::testing::runServeToEnd({artifact_, "--bogus"}, &out), 2);
  EXPECT_NE(out.find("unknown option '--bogus'"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(encc::testing::runServeToEnd({artifact_, "--max-queue", "2", "--max-input-texts", "3"}, &out), 2);
  EXPECT_NE(out.find("could never be queued"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(encc::testing::runServeToEnd({dir_ + "/missing.encm"}, &out), 1);
  EXPECT_NE(out.find("encc-serve: error: "), std::string::npos) << out;
}

/// Each text's last hidden state through the C API, alone.
std::vector<float> statesAlone(const encrt::Model &model, encrt::Session &session, const std::string &text) {
  const std::vector<int32_t> ids = model.tokenize(text);
  return session.run(ids, {int32_t(ids.size())}, int64_t(ids.size()), true, false).hidden;
}

// TEI's /embed_all: every token's last hidden state, bit for bit what the C
// API gives the text alone, on a pooled model and on one compiled with
// --pooling none (which encc-serve refused at start; its /embed is now 424
// naming /embed_all); over --max-batch-tokens tokens in one request is 413.
// TEI's normalize: false on a model that normalises in its graph cannot be
// honoured (the raw vector is gone): 422 saying how to get raw embeddings,
// never unit vectors passed off as raw (issue 38); true is served.
TEST_F(Serve, NormalizeFalseOnANormalisingModelIsRefused) {
  auto spec = encrt::test::TestModel::spec(kernels());
  spec.normalize = true;
  const std::string normalising = write(encrt::test::writeArtifact(spec), "normalising.encm");
  ServerProcess server({normalising, "--threads", "1"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  auto r = post(c, "/embed", {{"inputs", "hello"}, {"normalize", false}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(r->body.find("normalize: false is not available"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("--no-normalize"), std::string::npos) << r->body;
  r = post(c, "/embed", {{"inputs", "hello"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

TEST_F(Serve, EmbedAllGivesEveryTokensHiddenStateAsTheCApi) {
  const std::string unpooled =
      write(encrt::test::writeArtifact(encrt::test::TestModel::spec(kernels(), false)), "unpooled.encm");
  for (const std::string &artifact : {artifact_, unpooled}) {
    SCOPED_TRACE(artifact);
    encrt::Model model(artifact);
    encrt::Session session(model);
    ServerProcess server({artifact, "--threads", "1", "--max-batch-tokens", "40"});
    ASSERT_GT(server.port(), 0) << server.startupOutput();
    httplib::Client c("127.0.0.1", server.port());
    const std::vector<std::string> texts = {kTexts[0], kTexts[3], kTexts[4], kTexts[1]};
    auto r = post(c, "/embed_all", {{"inputs", texts}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json j = json::parse(r->body);
    ASSERT_EQ(j.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::vector<float> want = statesAlone(model, session, texts[i]);
      ASSERT_EQ(j[i].size() * H, want.size()) << texts[i];
      for (size_t t = 0; t < j[i].size(); ++t)
        expectSameBits(floatsOf(j[i][t]), want.data() + t * H, H, texts[i] + " token " + std::to_string(t));
    }
    r = post(c, "/embed_all", {{"inputs", std::vector<std::string>(8, kTexts[5])}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
    EXPECT_NE(r->body.find("tokens in all, more than --max-batch-tokens (40)"), std::string::npos) << r->body;
    r = post(c, "/embed", {{"inputs", "hello"}});
    ASSERT_TRUE(r);
    if (artifact == unpooled) {
      EXPECT_EQ(r->status, 424);
      EXPECT_NE(r->body.find("POST /embed_all"), std::string::npos) << r->body;
    } else {
      EXPECT_EQ(r->status, 200) << r->body;
    }
    EXPECT_EQ(server.stop(SIGTERM), 0);
  }
}

TEST_F(Serve, MetricsAreWellFormedPrometheusText) {
  ServerProcess server({artifact_});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client c("127.0.0.1", server.port());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(post(c, "/embed", {{"inputs", {"hello", "world"}}}));
  ASSERT_TRUE(post(c, "/embed", {{"inputs", 1}}));
  ASSERT_TRUE(c.Get("/made/up/path"));
  // A request is counted after its answer is sent: wait until all five are.
  httplib::Result r = c.Get("/metrics");
  for (int i = 0; i < 200 && r && (r->body.find(R"(status="422"} 1)") == std::string::npos ||
                                   r->body.find(R"(status="404"} 1)") == std::string::npos ||
                                   r->body.find(R"(route="/embed",status="200"} 3)") == std::string::npos);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    r = c.Get("/metrics");
  }
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4");
  std::istringstream lines(r->body);
  std::string line;
  const std::regex sample(R"(^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [-+0-9.eInf]+$)");
  std::map<std::string, double> values;
  while (std::getline(lines, line)) {
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0)
      continue;
    ASSERT_TRUE(std::regex_match(line, sample)) << "not a sample line: " << line;
    values[line.substr(0, line.rfind(' '))] = std::stod(line.substr(line.rfind(' ') + 1));
  }
  EXPECT_EQ(values[R"(encc_requests_total{route="/embed",status="200"})"], 3);
  EXPECT_EQ(values[R"(encc_requests_total{route="/embed",status="422"})"], 1);
  EXPECT_EQ(values[R"(encc_requests_total{route="other",status="404"})"], 1) << "made-up paths share one label";
  EXPECT_EQ(values[R"(encc_request_duration_seconds_count{route="/embed"})"], 4);
  EXPECT_EQ(values[R"(encc_request_duration_seconds_bucket{route="/embed",le="+Inf"})"], 4);
  EXPECT_EQ(values["encc_embedded_texts_total"], 6);
  EXPECT_GT(values["encc_embedded_tokens_total"], 6 * 2);
  EXPECT_EQ(values["encc_batch_tokens_sum"], values["encc_embedded_tokens_total"]);
  EXPECT_EQ(values.count("encc_queue_texts"), 1u);
  EXPECT_EQ(values.count("encc_tokens_per_second"), 1u);
  // Cumulative buckets never decrease.
  double last = -1;
  for (const auto &[name, v] : values)
    if (name.rfind("encc_batch_texts_bucket", 0) == 0)
      last = std::max(last, v);
  EXPECT_EQ(last, values["encc_batch_texts_count"]);
}

#if defined(ENCC_CLI)
/// all-MiniLM-L6-v2 compiled once for the suite (removed at exit), "" without
/// $ENCC_MINILM_DIR.
const std::string &minilmArtifact() {
  struct RemoveAtExit {
    std::string dir;
    ~RemoveAtExit() {
      if (!dir.empty())
        std::filesystem::remove_all(dir);
    }
  };
  static RemoveAtExit tempDir;
  static const std::string path = [] {
    const char *dir = std::getenv("ENCC_MINILM_DIR");
    if (!dir || !*dir)
      return std::string();
    char tmpl[] = "/tmp/encc-serve-minilm-XXXXXX";
    if (!mkdtemp(tmpl))
      return std::string();
    tempDir.dir = tmpl;
    const std::string out = std::string(tmpl) + "/minilm.encm";
    const std::string cmd = std::string(ENCC_CLI) + " compile " + dir + " -o " + out + " --quiet";
    if (std::system(cmd.c_str()) != 0)
      return std::string();
    return out;
  }();
  return path;
}

TEST(ServeMiniLM, BothApisGiveEachSentenceItsBitsAloneUnderConcurrency) {
  const std::string artifact = minilmArtifact();
  if (artifact.empty())
    GTEST_SKIP() << "ENCC_MINILM_DIR not set";
  json ref;
  std::ifstream(ENCC_SOURCE_DIR "/tests/reference/minilm_embeddings.json") >> ref;
  std::vector<std::string> texts;
  for (const json &s : ref["sentences"])
    texts.push_back(s["text"]);
  encrt::Model model(artifact);
  encrt::Session session(model);
  const int H = model.info().hidden_size;
  std::vector<std::vector<float>> alone;
  for (const std::string &t : texts)
    alone.push_back(session.embed({t}));
  for (size_t i = 0; i < texts.size(); ++i) {
    double dot = 0;
    for (int k = 0; k < H; ++k)
      dot += double(alone[i][size_t(k)]) * ref["sentences"][i]["embedding"][size_t(k)].get<double>();
    EXPECT_GT(dot, 1 - 1e-6) << texts[i];
  }

  ServerProcess server({artifact, "--threads", "2", "--max-wait-ms", "5"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  constexpr int kClients = 8;
  std::vector<std::string> failures(kClients);
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int ci = 0; ci < kClients; ++ci)
    clients.emplace_back([&, ci] {
      httplib::Client c("127.0.0.1", server.port());
      std::mt19937 rng(100 + ci);
      std::vector<size_t> order(texts.size());
      for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t at = 0; at < order.size();) {
        const size_t n = std::min<size_t>(1 + rng() % 6, order.size() - at);
        std::vector<std::string> inputs;
        for (size_t i = 0; i < n; ++i)
          inputs.push_back(texts[order[at + i]]);
        const bool openai = ci % 2;
        auto r = openai ? post(c, "/v1/embeddings", {{"input", inputs}})
                        : post(c, "/embed", {{"inputs", inputs}});
        if (!r || r->status != 200) {
          failures[ci] = r ? r->body : "no answer";
          return;
        }
        json j = json::parse(r->body);
        for (size_t i = 0; i < n; ++i) {
          std::vector<float> got = floatsOf(openai ? j["data"][i]["embedding"] : j[i]);
          const std::vector<float> &want = alone[order[at + i]];
          if (got.size() != want.size() || std::memcmp(got.data(), want.data(), got.size() * 4) != 0) {
            failures[ci] = "sentence " + std::to_string(order[at + i]) + " differs from the C API alone";
            return;
          }
        }
        answered += 1;
        at += n;
      }
    });
  for (auto &t : clients)
    t.join();
  for (int ci = 0; ci < kClients; ++ci)
    EXPECT_EQ(failures[ci], "") << "client " << ci;
  httplib::Client c("127.0.0.1", server.port());
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(m->body, match, std::regex("\nencc_batch_texts_count ([0-9]+)\n")));
  std::printf("[ measured ] %d requests, %zu texts, %s passes\n", answered.load(), kClients * texts.size(),
              match[1].str().c_str());
  EXPECT_EQ(server.stop(SIGTERM), 0);
}
#endif

#if defined(ENCC_CLI) && defined(ENCC_MAKE_TINY_MODEL)
/// A case of tests/reference/cross_encoder.json (sentence-transformers'
/// CrossEncoder on tiny BERT cross-encoders) written by make-tiny-model into
/// `dir`, its id2label renamed to `labels` when given, and compiled at the
/// case's max_length; "" when a step failed.
std::string crossEncoderArtifact(const std::string &dir, const json &c, const std::vector<std::string> &labels) {
  std::string cmd = std::string(ENCC_MAKE_TINY_MODEL) + " " + dir + "/m";
  for (const json &f : c["flags"])
    cmd += " '" + f.get<std::string>() + "'";
  if (std::system((cmd + " > /dev/null").c_str()) != 0)
    return "";
  if (!labels.empty()) {
    json cfg;
    std::ifstream(dir + "/m/config.json") >> cfg;
    cfg["id2label"] = json::object();
    cfg["label2id"] = json::object();
    for (size_t i = 0; i < labels.size(); ++i) {
      cfg["id2label"][std::to_string(i)] = labels[i];
      cfg["label2id"][labels[i]] = i;
    }
    std::ofstream(dir + "/m/config.json") << cfg.dump(1);
  }
  const std::string out = dir + "/m.encm";
  if (std::system((std::string(ENCC_CLI) + " compile " + dir + "/m -o " + out + " --max-seq " +
                   std::to_string(c["max_length"].get<int>()) + " --quiet")
                      .c_str()) != 0)
    return "";
  return out;
}

// TEI's /predict and /rerank on cross-encoder artifacts: each input's scores
// equal sentence-transformers' CrossEncoder.predict (recorded, float32
// PyTorch) within 1e-4, as the C API's do (tests/e2e/CrossEncoderTest.cpp):
// one label through the sigmoid (raw_scores: the logit), three labels as
// logits under raw_scores and their softmax otherwise, each named by the
// config's id2label and listed by descending score; /rerank orders the texts
// by the score encrt_session_score_pairs gives (query, text) within 1e-6.
// TEI's errors: the other kind of model's routes are 424, a pair over
// max_seq without truncate 413, no texts 400.
TEST(ServeCrossEncoder, PredictAndRerankMatchCrossEncoderAndTheCApi) {
  json ref;
  std::ifstream(ENCC_SOURCE_DIR "/tests/reference/cross_encoder.json") >> ref;
  ASSERT_EQ(ref["cases"].size(), 2u);
  char tmpl[] = "/tmp/encc-serve-ce-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  for (const json &c : ref["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const int labels = c["scores"][0].size();
    const std::vector<std::string> names =
        labels == 1 ? std::vector<std::string>{} : std::vector<std::string>{"contradiction", "entailment", "neutral"};
    std::filesystem::create_directories(root + "/" + name);
    const std::string artifact = crossEncoderArtifact(root + "/" + name, c, names);
    ASSERT_NE(artifact, "") << "make-tiny-model or encc compile failed";
    ServerProcess server({artifact, "--threads", "1", "--max-wait-ms", "5"});
    ASSERT_GT(server.port(), 0) << server.startupOutput();
    httplib::Client http("127.0.0.1", server.port());
    const auto pairs = c["pairs"].get<std::vector<std::vector<std::string>>>();

    // /predict: a batch of pairs, cut as CrossEncoder cut them.
    for (const bool raw : {false, true}) {
      auto r = post(http, "/predict", {{"inputs", pairs}, {"truncate", true}, {"raw_scores", raw}});
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      const json got = json::parse(r->body);
      ASSERT_EQ(got.size(), pairs.size());
      double worst = 0;
      for (size_t i = 0; i < pairs.size(); ++i) {
        std::vector<double> want = c["scores"][i].get<std::vector<double>>(); // CrossEncoder: sigmoid / logits
        if (labels == 1 && raw)
          want[0] = std::log(want[0] / (1 - want[0]));
        if (labels > 1 && !raw) {
          double sum = 0;
          for (double w : want)
            sum += std::exp(w);
          for (double &w : want)
            w = std::exp(w) / sum;
        }
        ASSERT_EQ(got[i].size(), size_t(labels));
        for (int k = 0; k < labels; ++k) {
          const std::string label = got[i][k]["label"];
          const size_t id = labels == 1 ? 0 : std::find(names.begin(), names.end(), label) - names.begin();
          ASSERT_LT(id, size_t(labels)) << label;
          if (labels == 1) {
            EXPECT_EQ(label, "LABEL_0");
          }
          if (k > 0) {
            EXPECT_GE(got[i][k - 1]["score"].get<double>(), got[i][k]["score"].get<double>()) << "not sorted";
          }
          worst = std::max(worst, std::fabs(got[i][k]["score"].get<double>() - want[id]));
        }
      }
      std::printf("[ measured ] %s /predict%s: max |encc-serve - CrossEncoder| = %.2e\n", name.c_str(),
                  raw ? " raw_scores" : "", worst);
      EXPECT_LE(worst, 1e-4);
    }
    // One pair: one list of predictions; one text: scored alone.
    auto one = post(http, "/predict", {{"inputs", pairs[0]}});
    ASSERT_TRUE(one);
    ASSERT_EQ(one->status, 200) << one->body;
    EXPECT_TRUE(json::parse(one->body)[0].is_object()) << one->body;
    auto single = post(http, "/predict", {{"inputs", "how old is the cat"}});
    ASSERT_TRUE(single);
    EXPECT_EQ(single->status, 200) << single->body;
    // Too long without truncate: 413 naming the input.
    auto longPair = post(http, "/predict", {{"inputs", pairs}});
    ASSERT_TRUE(longPair);
    EXPECT_EQ(longPair->status, 413);
    EXPECT_NE(longPair->body.find("inputs[5]: has "), std::string::npos) << longPair->body;

    auto info = http.Get("/info");
    ASSERT_TRUE(info);
    const json modelType = json::parse(info->body)["model_type"];
    EXPECT_EQ(modelType.begin().key(), labels == 1 ? "reranker" : "classifier") << modelType;
    EXPECT_EQ(modelType.begin().value()["id2label"]["0"], labels == 1 ? "LABEL_0" : "contradiction") << modelType;
    auto embed = post(http, "/embed", {{"inputs", "hello"}});
    ASSERT_TRUE(embed);
    EXPECT_EQ(embed->status, 424);
    EXPECT_NE(embed->body.find("Model is not an embedding model"), std::string::npos) << embed->body;

    if (labels != 1) {
      auto rr = post(http, "/rerank", {{"query", "q"}, {"texts", {"a"}}});
      ASSERT_TRUE(rr);
      EXPECT_EQ(rr->status, 424);
      EXPECT_NE(rr->body.find("model is not a re-ranker model"), std::string::npos) << rr->body;
      EXPECT_EQ(server.stop(SIGTERM), 0);
      continue;
    }
    // /rerank: one query against every document (also at /, as TEI routes a reranker).
    const std::string query = pairs[0][0];
    std::vector<std::string> docs;
    for (const auto &p : pairs)
      docs.push_back(p[1]);
    encrt::Model model(artifact);
    encrt::Session session(model);
    std::vector<encrt_text> qs, ds;
    for (const std::string &d : docs) {
      qs.push_back({query.data(), int64_t(query.size())});
      ds.push_back({d.data(), int64_t(d.size())});
    }
    std::vector<float> want(docs.size());
    encrt_status *st = encrt_session_score_pairs(session.get(), qs.data(), ds.data(), int64_t(docs.size()),
                                                 ENCRT_TRUNCATE_LONGEST_FIRST, want.data());
    ASSERT_EQ(st, nullptr) << encrt_status_message(st);
    for (const char *path : {"/rerank", "/"}) {
      auto r = post(http, path, {{"query", query}, {"texts", docs}, {"truncate", true}, {"return_text", true}});
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      const json got = json::parse(r->body);
      ASSERT_EQ(got.size(), docs.size());
      std::vector<bool> seen(docs.size());
      for (size_t k = 0; k < got.size(); ++k) {
        const size_t i = got[k]["index"];
        ASSERT_LT(i, docs.size());
        EXPECT_FALSE(seen[i]);
        seen[i] = true;
        EXPECT_EQ(got[k]["text"], docs[i]);
        EXPECT_NEAR(got[k]["score"].get<double>(), want[i], 1e-6) << "text " << i;
        if (k > 0) {
          EXPECT_GE(got[k - 1]["score"].get<double>(), got[k]["score"].get<double>()) << "not sorted";
        }
      }
    }
    auto noText = post(http, "/rerank", {{"query", query}, {"texts", {docs[0]}}});
    ASSERT_TRUE(noText);
    EXPECT_FALSE(json::parse(noText->body)[0].contains("text")) << noText->body;
    auto empty = post(http, "/rerank", {{"query", query}, {"texts", json::array()}});
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->status, 400);
    EXPECT_EQ(json::parse(empty->body)["error_type"], "empty") << empty->body;
    auto badText = post(http, "/rerank", {{"query", query}, {"texts", {"a", 5}}});
    ASSERT_TRUE(badText);
    EXPECT_EQ(badText->status, 422);
    EXPECT_NE(badText->body.find("texts[1]: must be a string"), std::string::npos) << badText->body;
    EXPECT_EQ(server.stop(SIGTERM), 0);
  }
  std::filesystem::remove_all(root);
}
#endif

} // namespace

#if defined(ENCC_CLI) // the compiler builds the artifact (not in the runtime-only TSan build)
// TEI's /embed_sparse on a SPLADE artifact (tests/reference/splade: a
// SparseEncoder folder): each text's non-zero weights by token id, equal to
// the C API's vector bit for bit and within 1e-5 of sentence-transformers'
// SparseEncoder; / routes there as TEI routes a splade model; /embed needs
// normalize false (TEI's 424 otherwise); an embedding model's /embed_sparse
// is TEI's 424.
TEST(ServeSplade, EmbedSparseMatchesSparseEncoderAndTheCApi) {
  json ref;
  std::ifstream(ENCC_SOURCE_DIR "/tests/reference/splade/splade.json") >> ref;
  const json &c = ref["cases"][0];
  char tmpl[] = "/tmp/encc-serve-splade-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string artifact = std::string(tmpl) + "/splade.encm";
  ASSERT_EQ(std::system((std::string(ENCC_CLI) + " compile " ENCC_SOURCE_DIR "/tests/reference/splade/" +
                         c["dir"].get<std::string>() + " -o " + artifact + " --quiet")
                            .c_str()),
            0);
  const std::vector<std::string> texts = c["texts"].get<std::vector<std::string>>();
  encrt::Model model(artifact);
  const size_t V = size_t(model.info().embedding_dim);
  const std::vector<float> want = encrt::Session(model).embed(texts);
  ServerProcess server({artifact, "--threads", "1"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client http("127.0.0.1", server.port());
  for (const char *path : {"/embed_sparse", "/"}) {
    auto r = post(http, path, {{"inputs", texts}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << path << " " << r->body;
    const json got = json::parse(r->body);
    ASSERT_EQ(got.size(), texts.size()) << path;
    double worst = 0, scale = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<float> dense(V, 0.0f);
      int64_t last = -1;
      for (const json &e : got[i]) {
        const int64_t k = e["index"].get<int64_t>();
        ASSERT_TRUE(k > last && k < int64_t(V)) << path << " text " << i << " index " << k;
        last = k;
        dense[size_t(k)] = e["value"].get<float>();
        EXPECT_NE(dense[size_t(k)], 0.0f);
      }
      expectSameBits(dense, want.data() + i * V, int(V), std::string(path) + " text " + std::to_string(i));
      ASSERT_EQ(got[i].size(), c["sparse"][i].size()) << path << " text " << i;
      for (size_t j = 0; j < got[i].size(); ++j) {
        EXPECT_EQ(got[i][j]["index"], c["sparse"][i][j][0]) << path << " text " << i;
        worst = std::max(worst, std::fabs(got[i][j]["value"].get<double>() - c["sparse"][i][j][1].get<double>()));
        scale = std::max(scale, std::fabs(c["sparse"][i][j][1].get<double>()));
      }
    }
    EXPECT_LE(worst / scale, 1e-5) << path;
  }
  auto r = post(http, "/embed", {{"inputs", texts[0]}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 424) << r->body;
  EXPECT_NE(r->body.find("`normalize` is not available for SPLADE models"), std::string::npos) << r->body;
  r = post(http, "/embed", {{"inputs", texts[0]}, {"normalize", false}});
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
  expectSameBits(floatsOf(json::parse(r->body)[0]), want.data(), int(V), "/embed normalize false");
  r = http.Get("/info");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(json::parse(r->body)["model_type"]["embedding"]["pooling"], "splade") << r->body;
  EXPECT_EQ(server.stop(SIGTERM), 0);
  std::filesystem::remove_all(tmpl);
}

// bge-m3's heads through the server: /embed_sparse (the lexical weights, by id) and
// /embed_multi_vector (the token vectors) bit for bit the C API's encode, /embed its
// dense rows; several requests at once share passes. The numbers against FlagEmbedding:
// e2e BgeM3.*.
TEST(ServeBgeM3, SparseAndMultiVectorRoutesEqualTheCApi) {
  json ref;
  std::ifstream(ENCC_SOURCE_DIR "/tests/reference/bge_m3/bge_m3.json") >> ref;
  std::vector<std::string> texts;
  for (const json &e : ref["cases"][0]["texts"])
    texts.push_back(e["text"].get<std::string>());
  char tmpl[] = "/tmp/encc-serve-m3-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string artifact = std::string(tmpl) + "/m3.encm";
  ASSERT_EQ(std::system((std::string(ENCC_CLI) + " compile " ENCC_SOURCE_DIR
                         "/tests/reference/bge_m3/models/xlmr_m3 -o " + artifact + " --quiet")
                            .c_str()),
            0);
  encrt::Model model(artifact);
  const int32_t vocab = model.info().vocab_size;
  const encrt::Session::Encoded want = encrt::Session(model).encode(texts, true, vocab, true);
  const size_t dim = size_t(model.info().embedding_dim), cdim = size_t(model.info().multivector_dim);
  ServerProcess server({artifact, "--threads", "1", "--max-wait-ms", "5"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  auto check = [&](const std::vector<std::string> &subset, size_t first) {
    httplib::Client http("127.0.0.1", server.port());
    auto r = post(http, "/embed_sparse", {{"inputs", subset}, {"truncate", true}});
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    json got = json::parse(r->body);
    ASSERT_EQ(got.size(), subset.size());
    for (size_t i = 0; i < subset.size(); ++i) {
      std::vector<std::pair<int32_t, float>> entries;
      for (size_t k = 0; k < want.sparse[first + i].ids.size(); ++k)
        entries.emplace_back(want.sparse[first + i].ids[k], want.sparse[first + i].weights[k]);
      std::sort(entries.begin(), entries.end());
      ASSERT_EQ(got[i].size(), entries.size()) << subset[i];
      for (size_t k = 0; k < entries.size(); ++k) {
        EXPECT_EQ(got[i][k]["index"].get<int32_t>(), entries[k].first) << subset[i];
        EXPECT_EQ(got[i][k]["value"].get<float>(), entries[k].second) << subset[i];
      }
    }
    r = post(http, "/embed_multi_vector", {{"inputs", subset}, {"truncate", true}});
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    got = json::parse(r->body);
    ASSERT_EQ(got.size(), subset.size());
    for (size_t i = 0; i < subset.size(); ++i) {
      ASSERT_EQ(got[i].size() * cdim, want.vectors[first + i].size()) << subset[i];
      for (size_t row = 0; row < got[i].size(); ++row)
        expectSameBits(floatsOf(got[i][row]), want.vectors[first + i].data() + row * cdim, int(cdim),
                       "/embed_multi_vector " + subset[i]);
    }
    r = post(http, "/embed", {{"inputs", subset}, {"truncate", true}});
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    got = json::parse(r->body);
    for (size_t i = 0; i < subset.size(); ++i)
      expectSameBits(floatsOf(got[i]), want.dense.data() + (first + i) * dim, int(dim), "/embed " + subset[i]);
  };
  std::vector<std::thread> clients;
  for (size_t first = 0; first < texts.size(); first += 2)
    clients.emplace_back([&, first] {
      check(std::vector<std::string>(texts.begin() + first, texts.begin() + std::min(first + 2, texts.size())), first);
    });
  for (std::thread &t : clients)
    t.join();
  EXPECT_EQ(server.stop(SIGTERM), 0);
  std::filesystem::remove_all(tmpl);
}

// A model without heads: the routes say so.
// A ColBERT checkpoint's /embed_multi_vector: each role's vectors equal the C
// API's, the texts of concurrent clients (queries and documents mixed) batched
// by role; a role is required, and /embed points there.
TEST(ServeColbert, RolesOfMultiVectorRouteEqualTheCApi) {
  json ref;
  std::ifstream(ENCC_SOURCE_DIR "/tests/reference/colbert/colbert.json") >> ref;
  const std::vector<std::string> texts = ref["cases"][0]["texts"].get<std::vector<std::string>>();
  char tmpl[] = "/tmp/encc-serve-colbert-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string artifact = std::string(tmpl) + "/cb.encm";
  ASSERT_EQ(std::system((std::string(ENCC_CLI) + " compile " ENCC_SOURCE_DIR
                         "/tests/reference/colbert/models/bert_colbert -o " + artifact + " --quiet")
                            .c_str()),
            0);
  encrt::Model model(artifact);
  const size_t cdim = size_t(model.info().multivector_dim);
  std::map<std::string, encrt::Session::Encoded> want;
  for (const char *role : {"query", "document"})
    want[role] = encrt::Session(model).encode(texts, false, 0, true, 0.0f, nullptr, role);
  ServerProcess server({artifact, "--threads", "1", "--max-wait-ms", "5"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  auto check = [&](const std::string &role, size_t first) {
    httplib::Client http("127.0.0.1", server.port());
    const std::vector<std::string> subset(texts.begin() + first, texts.begin() + std::min(first + 2, texts.size()));
    auto r = post(http, "/embed_multi_vector", {{"inputs", subset}, {"role", role}});
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    const json got = json::parse(r->body);
    ASSERT_EQ(got.size(), subset.size());
    for (size_t i = 0; i < subset.size(); ++i) {
      ASSERT_EQ(got[i].size() * cdim, want[role].vectors[first + i].size()) << role << ": " << subset[i];
      for (size_t row = 0; row < got[i].size(); ++row)
        expectSameBits(floatsOf(got[i][row]), want[role].vectors[first + i].data() + row * cdim, int(cdim),
                       "/embed_multi_vector " + role + ": " + subset[i]);
    }
  };
  std::vector<std::thread> clients;
  for (const char *role : {"query", "document"})
    for (size_t first = 0; first < texts.size(); first += 2)
      clients.emplace_back([&, role, first] { check(role, first); });
  for (std::thread &t : clients)
    t.join();
  httplib::Client http("127.0.0.1", server.port());
  auto r = post(http, "/embed_multi_vector", {{"inputs", "a"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find(R"(is required: a ColBERT model encodes a text as one of \"query\", \"document\")"),
            std::string::npos)
      << r->body;
  r = post(http, "/embed_multi_vector", {{"inputs", "a"}, {"role", "passage"}});
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("no role named 'passage'"), std::string::npos) << r->body;
  r = post(http, "/embed", {{"inputs", "a"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 424) << r->body;
  EXPECT_NE(r->body.find(R"(POST /embed_multi_vector with a \"role\")"), std::string::npos) << r->body;
  auto info = http.Get("/info");
  ASSERT_TRUE(info && info->status == 200);
  const json i = json::parse(info->body);
  EXPECT_EQ(i["multivector_dim"], 16);
  EXPECT_EQ(i["roles"], json::array({"query", "document"}));
  EXPECT_EQ(server.stop(SIGTERM), 0);
  std::filesystem::remove_all(tmpl);
}

TEST(ServeBgeM3, RoutesOfHeadsTheModelLacks) {
  if (minilmArtifact().empty())
    GTEST_SKIP() << "ENCC_MINILM_DIR not set";
  ServerProcess server({minilmArtifact(), "--threads", "1"});
  ASSERT_GT(server.port(), 0) << server.startupOutput();
  httplib::Client http("127.0.0.1", server.port());
  auto r = post(http, "/embed_multi_vector", {{"inputs", "a"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 424) << r->body;
  EXPECT_NE(r->body.find("Model has no multi-vector output"), std::string::npos) << r->body;
  r = post(http, "/embed_sparse", {{"inputs", "a"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 424) << r->body;
  EXPECT_EQ(server.stop(SIGTERM), 0);
}
#endif
