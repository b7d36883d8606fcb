//===- HttpParser.h - an incremental, bounded HTTP/1.x request parser -----===//
//
// Fed the bytes of a connection as they arrive, it yields one request at a
// time: the head (request line and headers, at most maxHeadBytes and
// maxHeaders), then the body framed by Content-Length or chunked
// Transfer-Encoding, then decoded (Content-Encoding gzip / deflate) with
// maxBodyBytes applied to the bytes on the wire and again to the decoded ones,
// as they are inflated: a small compressed body cannot grow past the limit in
// memory. Anything it cannot frame safely is refused with a status and a
// message: 400 (malformed, both Content-Length and Transfer-Encoding, differing
// lengths), 413 (a body over the limit, from its Content-Length before any of
// it is read), 415 (another Content-Encoding), 417 (another Expect), 431 (a
// head over the limits), 501 (another Transfer-Encoding), 505 (not HTTP/1.x).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_SERVER_HTTPPARSER_H
#define ENCC_SERVER_HTTPPARSER_H

#include "HttpMessage.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace encc::serve::http {

struct ParseLimits {
  size_t maxHeadBytes = 64 << 10;
  size_t maxHeaders = 128;
  int64_t maxBodyBytes = 4 << 20;
};

class RequestParser {
public:
  enum class State { Head, Body, Complete, Failed };

  explicit RequestParser(const ParseLimits &limits) : limits_(limits) {}

  /// Consumes bytes up to the end of one request (the rest, a pipelined next
  /// request, is left to the caller for after reset()); returns how many.
  size_t feed(const char *data, size_t size);
  State state() const { return state_; }
  /// Whether any byte of this request has arrived.
  bool started() const { return started_; }
  /// The head is parsed and the client waits for "100 Continue" before it
  /// sends a body (Expect: 100-continue, a body still to come).
  bool expectsContinue() const { return state_ == State::Body && expectContinue_; }
  /// The request (its body once Complete; method, path and headers as far as
  /// they were parsed when Failed).
  Request &request() { return request_; }
  /// Whether the connection may carry another request after this one's
  /// answer: HTTP/1.1 unless "Connection: close", HTTP/1.0 with
  /// "Connection: keep-alive".
  bool keepAlive() const { return keepAlive_; }
  /// Failed: the status to answer and why.
  int errorStatus() const { return errorStatus_; }
  const std::string &errorMessage() const { return errorMessage_; }
  /// Ready for the next request on the connection.
  void reset();

private:
  enum class BodyFraming { Length, ChunkSize, ChunkData, ChunkDataEnd, Trailer };

  size_t fail(int status, std::string message, size_t consumed);
  /// Parses head_ (complete); false when it failed.
  bool parseHead();
  /// Appends wire bytes of the body (framing removed); false when over the limit.
  bool appendBody(const char *data, size_t size);
  /// The body is complete: decodes it; Failed when it cannot.
  void finish();

  ParseLimits limits_;
  State state_ = State::Head;
  bool started_ = false;
  Request request_;
  std::string head_;
  BodyFraming framing_ = BodyFraming::Length;
  uint64_t remaining_ = 0; ///< bytes left of the Content-Length body or of the chunk
  std::string line_;       ///< a chunk-size or trailer line being read
  std::string encoding_;   ///< Content-Encoding: "" (identity), "gzip" or "deflate"
  bool keepAlive_ = true;
  bool expectContinue_ = false;
  int errorStatus_ = 0;
  std::string errorMessage_;
};

/// Inflates a gzip or zlib ("deflate") stream into *out, at most `limit`
/// bytes; "" or why it could not ("over": the decoded bytes exceed the limit).
std::string inflateBody(const std::string &encoded, const std::string &encoding, int64_t limit, std::string *out);

} // namespace encc::serve::http

#endif
