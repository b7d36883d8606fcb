//===- HttpRequestFuzzer.cpp - encc-serve's HTTP request parser under libFuzzer ===//
//
// The input is what a client sends on a connection. Fed at once and in pieces
// cut where the input's first byte says, the parser must reach the same end:
// the same state, bytes consumed, status and request. A request it completes
// has a method and a path starting with '/' (or "*"), a body within the
// limit, and bytes consumed within what it was given; a refusal is a 4xx or
// 5xx with a message and never keeps the connection alive. Requests that
// follow (pipelined) are parsed after reset() until the bytes run out.
//
//===----------------------------------------------------------------------===//
#include "HttpParser.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace encc::serve::http;

namespace {

void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

struct Outcome {
  RequestParser::State state;
  size_t used;
  int status;
  std::string method, path, body;
  bool keepAlive;
};

Outcome parse(const std::string &bytes, size_t step, const ParseLimits &limits) {
  RequestParser p(limits);
  size_t used = 0;
  while (used < bytes.size() &&
         (p.state() == RequestParser::State::Head || p.state() == RequestParser::State::Body)) {
    const size_t n = std::min(step, bytes.size() - used);
    const size_t took = p.feed(bytes.data() + used, n);
    check(took <= n, "consumes at most what it is given");
    used += took;
    if (took < n) {
      check(p.state() == RequestParser::State::Complete || p.state() == RequestParser::State::Failed,
            "stops early only at the end of a request");
      break;
    }
  }
  return {p.state(), used, p.errorStatus(), p.request().method, p.request().path, p.request().body, p.keepAlive()};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const size_t step = 1 + data[0] % 17;
  std::string bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  ParseLimits limits;
  limits.maxHeadBytes = 2048;
  limits.maxHeaders = 16;
  limits.maxBodyBytes = 4096;
  for (int request = 0; request < 8 && !bytes.empty(); ++request) {
    const Outcome whole = parse(bytes, bytes.size(), limits);
    const Outcome pieces = parse(bytes, step, limits);
    check(whole.state == pieces.state, "the same state at once and in pieces");
    check(whole.status == pieces.status, "the same status at once and in pieces");
    if (whole.state == RequestParser::State::Failed) {
      check(whole.status >= 400 && whole.status < 600, "a refusal is 4xx or 5xx");
      check(!whole.keepAlive, "a refused request closes the connection");
      return 0;
    }
    if (whole.state != RequestParser::State::Complete)
      return 0; // waits for more bytes
    check(whole.used == pieces.used && whole.body == pieces.body && whole.method == pieces.method &&
              whole.path == pieces.path && whole.keepAlive == pieces.keepAlive,
          "the same request at once and in pieces");
    check(!whole.method.empty(), "a method");
    check(whole.path == "*" || (!whole.path.empty() && whole.path[0] == '/'), "a path");
    check(whole.body.size() <= size_t(limits.maxBodyBytes), "the body within the limit");
    check(whole.used > 0 && whole.used <= bytes.size(), "consumed within the input");
    bytes.erase(0, whole.used);
  }
  return 0;
}
