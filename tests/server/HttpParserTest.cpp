//===- HttpParserTest.cpp - encc-serve's HTTP/1.x request parser ----------===//
//
// Requests framed by Content-Length and by chunks give the same request
// whether their bytes come at once or one at a time; a pipelined request is
// left for the next; gzip and deflate bodies decode (and a small body that
// inflates past the limit is refused while it inflates); every refusal has
// its status: 400, 413, 415, 417, 431, 501, 505. The answer's bytes on the
// wire.
//
//===----------------------------------------------------------------------===//
#include "HttpParser.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>

using namespace encc::serve::http;

namespace {

ParseLimits limits(int64_t maxBody = 1 << 20) {
  ParseLimits l;
  l.maxBodyBytes = maxBody;
  l.maxHeadBytes = 4096;
  l.maxHeaders = 16;
  return l;
}

/// Feeds `bytes` in pieces of `step` bytes; returns how many were consumed.
size_t feedInSteps(RequestParser &p, const std::string &bytes, size_t step) {
  size_t used = 0;
  while (used < bytes.size() && (p.state() == RequestParser::State::Head || p.state() == RequestParser::State::Body)) {
    const size_t n = std::min(step, bytes.size() - used);
    const size_t took = p.feed(bytes.data() + used, n);
    used += took;
    if (took < n)
      break;
  }
  return used;
}

/// gzip (windowBits 31), zlib (15) or raw deflate (-15) of `data`.
std::string compressed(const std::string &data, int windowBits) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, uLong(data.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  z.avail_in = uInt(data.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Refusal {
  std::string bytes;
  int status;
  const char *fragment;
};

} // namespace

TEST(HttpParser, ALengthFramedRequestAtOnceOrByteByByteAndThePipelinedRestIsLeft) {
  const std::string first = "POST /embed?x=1 HTTP/1.1\r\nHost: a\r\ncontent-type:  application/json \r\n"
                            "Content-Length: 13\r\n\r\n{\"inputs\":\"a\"}";
  const std::string second = "GET /health HTTP/1.1\r\n\r\n";
  for (size_t step : {size_t(1), size_t(7), first.size() + second.size()}) {
    RequestParser p(limits());
    const size_t used = feedInSteps(p, "\r\n" + first + second, step); // an empty line before is ignored
    ASSERT_EQ(p.state(), RequestParser::State::Complete) << step;
    // Content-Length 13 takes 13 bytes: the 14th ('}') starts "the next request".
    EXPECT_EQ(used, 2 + first.size() - 1) << step;
    const Request &r = p.request();
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/embed?x=1");
    EXPECT_EQ(r.path, "/embed");
    EXPECT_EQ(r.minorVersion, 1);
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    EXPECT_EQ(r.body, "{\"inputs\":\"a\"");
    EXPECT_TRUE(p.keepAlive());
  }
  RequestParser p(limits());
  ASSERT_EQ(p.feed(second.data(), second.size()), second.size());
  ASSERT_EQ(p.state(), RequestParser::State::Complete);
  EXPECT_EQ(p.request().path, "/health");
  EXPECT_TRUE(p.request().body.empty());
  p.reset();
  EXPECT_EQ(p.state(), RequestParser::State::Head);
  EXPECT_FALSE(p.started());
  const std::string absolute = "GET http://example.com:8080/info HTTP/1.0\nConnection: keep-alive\n\n";
  ASSERT_EQ(p.feed(absolute.data(), absolute.size()), absolute.size());
  ASSERT_EQ(p.state(), RequestParser::State::Complete);
  EXPECT_EQ(p.request().path, "/info");
  EXPECT_EQ(p.request().minorVersion, 0);
  EXPECT_TRUE(p.keepAlive());
}

TEST(HttpParser, KeepAliveFollowsTheVersionAndConnection) {
  const struct {
    const char *head;
    bool keepAlive;
  } cases[] = {{"GET / HTTP/1.1\r\n\r\n", true},
               {"GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n", false},
               {"GET / HTTP/1.0\r\n\r\n", false},
               {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true}};
  for (const auto &k : cases) {
    RequestParser p(limits());
    p.feed(k.head, std::strlen(k.head));
    ASSERT_EQ(p.state(), RequestParser::State::Complete) << k.head;
    EXPECT_EQ(p.keepAlive(), k.keepAlive) << k.head;
  }
}

TEST(HttpParser, ChunkedBodiesWithExtensionsAndTrailersAtAnySplit) {
  const std::string bytes = "POST /embed HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"
                            "5;name=value\r\nhello\r\n1\r\n \r\nA \r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\nGET";
  for (size_t step : {size_t(1), size_t(3), bytes.size()}) {
    RequestParser p(limits());
    const size_t used = feedInSteps(p, bytes, step);
    ASSERT_EQ(p.state(), RequestParser::State::Complete) << step << ": " << p.errorMessage();
    EXPECT_EQ(used, bytes.size() - 3) << step;
    EXPECT_EQ(p.request().body, "hello 0123456789") << step;
  }
}

TEST(HttpParser, GzipAndDeflateBodiesDecodeAndABombStopsAtTheLimit) {
  const std::string json = "{\"inputs\": \"" + std::string(3000, 'a') + "\"}";
  for (int windowBits : {31, 15, -15}) {
    const std::string body = compressed(json, windowBits);
    const std::string bytes = std::string("POST /embed HTTP/1.1\r\nContent-Encoding: ") +
                              (windowBits == 31 ? "gzip" : "deflate") +
                              "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    RequestParser p(limits());
    ASSERT_EQ(p.feed(bytes.data(), bytes.size()), bytes.size());
    ASSERT_EQ(p.state(), RequestParser::State::Complete) << windowBits << ": " << p.errorMessage();
    EXPECT_EQ(p.request().body, json) << windowBits;
  }
  // 64 MiB of zeros is ~64 KB of gzip: refused once the decoded bytes pass the 1 MiB limit.
  const std::string bomb = compressed(std::string(64 << 20, '\0'), 31);
  ASSERT_LT(bomb.size(), size_t(1 << 20));
  const std::string bytes = "POST /embed HTTP/1.1\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
                            [&] {
                              char size[32];
                              std::snprintf(size, sizeof size, "%zx\r\n", bomb.size());
                              return std::string(size);
                            }() +
                            bomb + "\r\n0\r\n\r\n";
  RequestParser p(limits());
  p.feed(bytes.data(), bytes.size());
  ASSERT_EQ(p.state(), RequestParser::State::Failed);
  EXPECT_EQ(p.errorStatus(), 413);
  EXPECT_NE(p.errorMessage().find("once decompressed"), std::string::npos) << p.errorMessage();
  EXPECT_FALSE(p.keepAlive());
  // Damaged and truncated streams are 400.
  std::string damaged = compressed(json, 31);
  damaged.resize(damaged.size() / 2);
  const std::string cut = "POST / HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: " +
                          std::to_string(damaged.size()) + "\r\n\r\n" + damaged;
  RequestParser q(limits());
  q.feed(cut.data(), cut.size());
  ASSERT_EQ(q.state(), RequestParser::State::Failed);
  EXPECT_EQ(q.errorStatus(), 400);
  EXPECT_NE(q.errorMessage().find("could not be decoded"), std::string::npos) << q.errorMessage();
}

TEST(HttpParser, ExpectContinueIsSignalledAfterTheHead) {
  const std::string head = "POST /embed HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n";
  RequestParser p(limits());
  ASSERT_EQ(p.feed(head.data(), head.size()), head.size());
  EXPECT_EQ(p.state(), RequestParser::State::Body);
  EXPECT_TRUE(p.expectsContinue());
  p.feed("{}", 2);
  EXPECT_EQ(p.state(), RequestParser::State::Complete);
  EXPECT_FALSE(p.expectsContinue());
}

TEST(HttpParser, EachRefusalHasItsStatus) {
  std::string manyHeaders = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 17; ++i)
    manyHeaders += "X-" + std::to_string(i) + ": v\r\n";
  const std::vector<Refusal> cases = {
      {"GET /\r\n\r\n", 400, "malformed request line"},
      {"GET / HTTP/1.1 extra\r\n\r\n", 400, "malformed request line"},
      {"G(T / HTTP/1.1\r\n\r\n", 400, "malformed method"},
      {"GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0"},
      {"GET / FTP/1.0\r\n\r\n", 400, "malformed request line"},
      {"GET embed HTTP/1.1\r\n\r\n", 400, "must be a path"},
      {"GET /a\x01 HTTP/1.1\r\n\r\n", 400, "not visible ASCII"},
      {"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400, "obsolete line folding"},
      {"GET / HTTP/1.1\r\nBad Name: a\r\n\r\n", 400, "malformed header line"},
      {"GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400, "malformed header line"},
      {"GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n", 400, "control character"},
      {manyHeaders + "\r\n", 431, "more than 16 headers"},
      {"GET /" + std::string(5000, 'a') + " HTTP/1.1\r\n\r\n", 431, "over 4096 bytes"},
      {"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "framed twice"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "framed twice"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "chunked only"},
      {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "is not a length"},
      {"POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", 400, "is not a length"},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", 400, "differs"},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "is not a length"},
      {"POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n", 413, "over 1048576 bytes"},
      {"POST / HTTP/1.1\r\nContent-Encoding: br\r\n\r\n", 415, "gzip, deflate"},
      {"POST / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", 417, "100-continue"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "not a hexadecimal number"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400, "longer than its chunk size"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n", 413, "over 1048576 bytes"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1" + std::string(2000, ' ') + "\r\n", 400,
       "over 1024 bytes"},
  };
  for (const Refusal &k : cases) {
    for (size_t step : {size_t(1), k.bytes.size()}) {
      RequestParser p(limits());
      feedInSteps(p, k.bytes, step);
      ASSERT_EQ(p.state(), RequestParser::State::Failed) << k.bytes.substr(0, 60);
      EXPECT_EQ(p.errorStatus(), k.status) << k.bytes.substr(0, 60) << " -> " << p.errorMessage();
      EXPECT_NE(p.errorMessage().find(k.fragment), std::string::npos)
          << k.bytes.substr(0, 60) << " -> " << p.errorMessage() << "\nexpected: " << k.fragment;
      EXPECT_FALSE(p.keepAlive());
      EXPECT_EQ(p.feed("x", 1), 0u) << "a failed parser takes nothing more";
    }
  }
}

TEST(HttpMessage, TheAnswerOnTheWire) {
  Response r;
  r.status = 429;
  r.setHeader("Retry-After", "1");
  r.setHeader("retry-after", "2"); // replaced, not added
  r.setHeader("Connection", "close"); // the server writes Connection itself
  r.setContent("{}", "application/json");
  EXPECT_EQ(serializeResponse(r, false), "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\n"
                                         "Content-Type: application/json\r\nContent-Length: 2\r\n"
                                         "Connection: close\r\n\r\n{}");
  Response none;
  none.status = 204;
  none.body = "ignored";
  EXPECT_EQ(serializeResponse(none, true), "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
}
