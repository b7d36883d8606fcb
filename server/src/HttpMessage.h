//===- HttpMessage.h - an HTTP/1.1 request as parsed, a response to write -===//
#ifndef ENCC_SERVER_HTTPMESSAGE_H
#define ENCC_SERVER_HTTPMESSAGE_H

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace encc::serve::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// A client's bytes as they may appear in a message: printable ASCII (other
/// bytes as '?'), at most `max` characters.
std::string printable(std::string_view s, size_t max);

/// ASCII case-insensitive equality (header names, tokens).
bool equalsIgnoringCase(std::string_view a, std::string_view b);

/// The value of the first header called `name` (any case); "" when absent.
std::string_view headerValue(const Headers &headers, std::string_view name);
bool hasHeader(const Headers &headers, std::string_view name);

struct Request {
  std::string method;
  std::string target; ///< as sent: path and query
  std::string path;   ///< the target up to '?'
  int minorVersion = 1; ///< HTTP/1.0 or HTTP/1.1
  Headers headers;
  std::string body; ///< decoded: chunked framing and Content-Encoding removed
  std::string peer; ///< the client's address (no port)

  std::string_view header(std::string_view name) const { return headerValue(headers, name); }
  bool has(std::string_view name) const { return hasHeader(headers, name); }
};

struct Response {
  int status = 200;
  Headers headers; ///< besides Content-Type, Content-Length and Connection, which the server writes
  std::string contentType;
  std::string body;

  /// Replaces a header of that name, or adds it.
  void setHeader(std::string name, std::string value);
  std::string_view header(std::string_view name) const { return headerValue(headers, name); }
  void setContent(std::string b, std::string type) {
    body = std::move(b);
    contentType = std::move(type);
  }
};

/// The reason phrase of a status ("Unknown" for one this server never sends).
const char *reasonPhrase(int status);

/// The bytes on the wire: status line, headers, Content-Length, Connection
/// (close or keep-alive) and the body.
std::string serializeResponse(const Response &res, bool keepAlive);

} // namespace encc::serve::http

#endif
