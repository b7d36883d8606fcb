//===- HttpMessage.cpp - an HTTP/1.1 request as parsed, a response to write ===//
#include "HttpMessage.h"

namespace encc::serve::http {

std::string printable(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max))
    out += c >= 0x20 && c < 0x7f ? c : '?';
  return out;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (fold(a[i]) != fold(b[i]))
      return false;
  }
  return true;
}

std::string_view headerValue(const Headers &headers, std::string_view name) {
  for (const auto &[n, v] : headers)
    if (equalsIgnoringCase(n, name))
      return v;
  return {};
}

bool hasHeader(const Headers &headers, std::string_view name) {
  for (const auto &h : headers)
    if (equalsIgnoringCase(h.first, name))
      return true;
  return false;
}

void Response::setHeader(std::string name, std::string value) {
  for (auto &[n, v] : headers)
    if (equalsIgnoringCase(n, name)) {
      v = std::move(value);
      return;
    }
  headers.emplace_back(std::move(name), std::move(value));
}

const char *reasonPhrase(int status) {
  switch (status) {
  case 100: return "Continue";
  case 200: return "OK";
  case 204: return "No Content";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 413: return "Content Too Large";
  case 415: return "Unsupported Media Type";
  case 417: return "Expectation Failed";
  case 422: return "Unprocessable Content";
  case 424: return "Failed Dependency";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 501: return "Not Implemented";
  case 503: return "Service Unavailable";
  case 505: return "HTTP Version Not Supported";
  default: return "Unknown";
  }
}

std::string serializeResponse(const Response &res, bool keepAlive) {
  std::string out;
  out.reserve(res.body.size() + 256);
  out += "HTTP/1.1 " + std::to_string(res.status) + " " + reasonPhrase(res.status) + "\r\n";
  for (const auto &[name, value] : res.headers) {
    if (equalsIgnoringCase(name, "Content-Length") || equalsIgnoringCase(name, "Connection") ||
        equalsIgnoringCase(name, "Content-Type"))
      continue;
    out += name + ": " + value + "\r\n";
  }
  if (!res.contentType.empty())
    out += "Content-Type: " + res.contentType + "\r\n";
  // 204 has no body and no Content-Length (RFC 9110 8.6).
  if (res.status != 204)
    out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  out += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (res.status != 204)
    out += res.body;
  return out;
}

} // namespace encc::serve::http
