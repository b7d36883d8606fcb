//===- HttpParser.cpp - an incremental, bounded HTTP/1.x request parser ---===//
#include "HttpParser.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>

namespace encc::serve::http {

namespace {

bool isTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
    return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool isToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), isTokenChar); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

/// A client's bytes in a refusal: at most 64 printable characters.
std::string printable(std::string_view s) { return http::printable(s, 64); }

/// Each line of a (complete) head, without its CR LF.
std::vector<std::string_view> linesOf(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos)
      break;
    head.remove_prefix(nl + 1);
  }
  while (!lines.empty() && lines.back().empty())
    lines.pop_back();
  return lines;
}

constexpr size_t kMaxChunkLine = 1024;

} // namespace

void RequestParser::reset() {
  state_ = State::Head;
  started_ = false;
  request_ = Request{};
  head_.clear();
  framing_ = BodyFraming::Length;
  remaining_ = 0;
  line_.clear();
  encoding_.clear();
  keepAlive_ = true;
  expectContinue_ = false;
  errorStatus_ = 0;
  errorMessage_.clear();
}

size_t RequestParser::fail(int status, std::string message, size_t consumed) {
  state_ = State::Failed;
  errorStatus_ = status;
  errorMessage_ = std::move(message);
  keepAlive_ = false;
  return consumed;
}

size_t RequestParser::feed(const char *data, size_t size) {
  size_t used = 0;
  while (used < size && state_ == State::Head) {
    const char c = data[used++];
    if (head_.empty() && (c == '\r' || c == '\n'))
      continue; // empty lines before a request line are ignored (RFC 9112 2.2)
    started_ = true;
    head_ += c;
    if (head_.size() > limits_.maxHeadBytes)
      return fail(431, "the request line and headers are over " + std::to_string(limits_.maxHeadBytes) + " bytes",
                  used);
    if (c == '\n' && (head_.size() >= 2 && (head_.compare(head_.size() - 2, 2, "\n\n") == 0 ||
                                            (head_.size() >= 3 && head_.compare(head_.size() - 3, 3, "\n\r\n") == 0)))) {
      if (!parseHead())
        return used;
    }
  }
  while (used < size && state_ == State::Body) {
    const char *p = data + used;
    const size_t avail = size - used;
    switch (framing_) {
    case BodyFraming::Length:
    case BodyFraming::ChunkData: {
      const size_t take = size_t(std::min<uint64_t>(remaining_, avail));
      if (!appendBody(p, take))
        return used + take;
      used += take;
      remaining_ -= take;
      if (remaining_ == 0) {
        if (framing_ == BodyFraming::Length)
          finish();
        else
          framing_ = BodyFraming::ChunkDataEnd;
      }
      break;
    }
    case BodyFraming::ChunkSize:
    case BodyFraming::ChunkDataEnd:
    case BodyFraming::Trailer: {
      const char c = *p;
      ++used;
      if (c != '\n') {
        line_ += c;
        if (line_.size() > kMaxChunkLine)
          return fail(400, "a chunk-size or trailer line is over " + std::to_string(kMaxChunkLine) + " bytes", used);
        break;
      }
      std::string_view line = line_;
      if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
      if (framing_ == BodyFraming::ChunkDataEnd) {
        if (!line.empty())
          return fail(400, "chunk data is longer than its chunk size", used);
        framing_ = BodyFraming::ChunkSize;
      } else if (framing_ == BodyFraming::Trailer) {
        if (line.empty())
          finish();
      } else {
        const std::string_view hex = trim(line.substr(0, line.find(';')));
        uint64_t n = 0;
        const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), n, 16);
        if (hex.empty() || hex.size() > 15 || ec != std::errc() || end != hex.data() + hex.size())
          return fail(400, "a chunk size is not a hexadecimal number ('" + printable(line) + "')", used);
        if (request_.body.size() + n > uint64_t(limits_.maxBodyBytes))
          return fail(413, "the body is over " + std::to_string(limits_.maxBodyBytes) + " bytes (--max-body-bytes)",
                      used);
        remaining_ = n;
        framing_ = n == 0 ? BodyFraming::Trailer : BodyFraming::ChunkData;
      }
      line_.clear();
      break;
    }
    }
  }
  return used;
}

bool RequestParser::parseHead() {
  const std::vector<std::string_view> lines = linesOf(head_);
  if (lines.empty())
    return fail(400, "no request line", 0), false;
  // Request line: METHOD SP target SP HTTP/1.x
  const std::string_view requestLine = lines[0];
  const size_t sp1 = requestLine.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : requestLine.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || requestLine.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "malformed request line ('" + printable(requestLine) + "')", 0), false;
  const std::string_view method = requestLine.substr(0, sp1);
  std::string_view target = requestLine.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = requestLine.substr(sp2 + 1);
  if (!isToken(method))
    return fail(400, "malformed method ('" + printable(method) + "')", 0), false;
  request_.method = std::string(method);
  if (version == "HTTP/1.1" || version == "HTTP/1.0")
    request_.minorVersion = version.back() - '0';
  else if (version.rfind("HTTP/", 0) == 0)
    return fail(505, "HTTP version '" + printable(version) + "' is not supported (HTTP/1.0, HTTP/1.1)", 0), false;
  else
    return fail(400, "malformed request line ('" + printable(requestLine) + "')", 0), false;
  for (char c : target)
    if (c <= 0x20 || c >= 0x7f)
      return fail(400, "the request target has a byte that is not visible ASCII", 0), false;
  if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0) { // absolute form: its path
    const size_t slash = target.find('/', target.find("//") + 2);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.empty() || (target[0] != '/' && target != "*"))
    return fail(400, "the request target must be a path ('" + printable(target) + "')", 0), false;
  request_.target = std::string(target);
  request_.path = std::string(target.substr(0, target.find_first_of("?#")));

  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line[0] == ' ' || line[0] == '\t')
      return fail(400, "a header line starts with white space (obsolete line folding)", 0), false;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !isToken(line.substr(0, colon)))
      return fail(400, "malformed header line ('" + printable(line) + "')", 0), false;
    const std::string_view value = trim(line.substr(colon + 1));
    for (char c : value)
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        return fail(400, "header " + printable(line.substr(0, colon)) + " has a control character", 0), false;
    if (request_.headers.size() >= limits_.maxHeaders)
      return fail(431, "more than " + std::to_string(limits_.maxHeaders) + " headers", 0), false;
    request_.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  head_.clear();
  head_.shrink_to_fit();

  // Framing (RFC 9112 6): Transfer-Encoding chunked, else Content-Length, else no body.
  int transferEncodings = 0, lengths = 0;
  uint64_t length = 0;
  for (const auto &[name, value] : request_.headers) {
    if (equalsIgnoringCase(name, "Transfer-Encoding")) {
      ++transferEncodings;
      if (!equalsIgnoringCase(value, "chunked"))
        return fail(501, "Transfer-Encoding '" + printable(value) + "' is not supported (chunked only)", 0), false;
    } else if (equalsIgnoringCase(name, "Content-Length")) {
      uint64_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || value.size() > 19 || ec != std::errc() || end != value.data() + value.size() ||
          (lengths > 0 && n != length))
        return fail(400, "Content-Length '" + printable(value) + "' is not a length (or differs from another)", 0),
               false;
      length = n;
      ++lengths;
    } else if (equalsIgnoringCase(name, "Content-Encoding")) {
      const std::string enc = lower(value);
      if (enc == "gzip" || enc == "x-gzip")
        encoding_ = "gzip";
      else if (enc == "deflate")
        encoding_ = "deflate";
      else if (enc != "identity")
        return fail(415, "Content-Encoding '" + printable(value) + "' is not supported (gzip, deflate)", 0), false;
    } else if (equalsIgnoringCase(name, "Expect")) {
      if (!equalsIgnoringCase(value, "100-continue"))
        return fail(417, "Expect '" + printable(value) + "' is not supported (100-continue)", 0), false;
      expectContinue_ = true;
    }
  }
  if (transferEncodings > 1 || (transferEncodings && lengths))
    return fail(400, "the body is framed twice (Transfer-Encoding with Content-Length, or chunked twice)", 0), false;
  keepAlive_ = request_.minorVersion == 1;
  for (const auto &[name, value] : request_.headers) {
    if (!equalsIgnoringCase(name, "Connection"))
      continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view option = trim(rest.substr(0, comma));
      if (equalsIgnoringCase(option, "close"))
        keepAlive_ = false;
      else if (equalsIgnoringCase(option, "keep-alive") && request_.minorVersion == 0)
        keepAlive_ = true;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  if (length > uint64_t(limits_.maxBodyBytes))
    return fail(413, "the body is over " + std::to_string(limits_.maxBodyBytes) + " bytes (--max-body-bytes)", 0),
           false;
  state_ = State::Body;
  if (transferEncodings) {
    framing_ = BodyFraming::ChunkSize;
  } else {
    framing_ = BodyFraming::Length;
    remaining_ = length;
    request_.body.reserve(size_t(length));
    if (length == 0)
      finish();
  }
  return state_ != State::Failed;
}

bool RequestParser::appendBody(const char *data, size_t size) {
  if (request_.body.size() + size > uint64_t(limits_.maxBodyBytes))
    return fail(413, "the body is over " + std::to_string(limits_.maxBodyBytes) + " bytes (--max-body-bytes)", 0),
           false;
  request_.body.append(data, size);
  return true;
}

void RequestParser::finish() {
  if (!encoding_.empty()) {
    std::string decoded;
    const std::string err = inflateBody(request_.body, encoding_, limits_.maxBodyBytes, &decoded);
    if (err == "over") {
      fail(413, "the body is over " + std::to_string(limits_.maxBodyBytes) +
                    " bytes once decompressed (--max-body-bytes)", 0);
      return;
    }
    if (!err.empty()) {
      fail(400, "the " + encoding_ + " body could not be decoded (" + err + ")", 0);
      return;
    }
    request_.body = std::move(decoded);
  }
  state_ = State::Complete;
}

std::string inflateBody(const std::string &encoded, const std::string &encoding, int64_t limit, std::string *out) {
  out->clear();
  if (encoded.empty())
    return "an empty stream";
  const auto *bytes = reinterpret_cast<const unsigned char *>(encoded.data());
  // "deflate" is a zlib stream (RFC 9110 8.4.1.2); some clients send raw deflate: told apart by zlib's header.
  const bool zlibHeader = encoded.size() >= 2 && (bytes[0] & 0x0f) == 8 && (bytes[0] * 256 + bytes[1]) % 31 == 0;
  const int windowBits = encoding == "gzip" ? 15 + 16 : zlibHeader ? 15 : -15;
  z_stream z{};
  if (inflateInit2(&z, windowBits) != Z_OK)
    return "zlib could not start";
  z.next_in = const_cast<Bytef *>(bytes);
  z.avail_in = uInt(encoded.size());
  std::string err;
  unsigned char buffer[64 << 10];
  for (;;) {
    z.next_out = buffer;
    z.avail_out = sizeof buffer;
    const int rc = inflate(&z, Z_NO_FLUSH);
    const size_t produced = sizeof buffer - z.avail_out;
    if (int64_t(out->size() + produced) > limit) {
      err = "over";
      break;
    }
    out->append(reinterpret_cast<char *>(buffer), produced);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0)
        break;
      if (encoding != "gzip" || inflateReset(&z) != Z_OK) { // gzip members may follow each other
        err = "bytes after the end of the stream";
        break;
      }
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0) {
      err = "the stream ends early";
      break;
    }
    if (rc != Z_OK) {
      err = z.msg ? z.msg : "zlib error " + std::to_string(rc);
      break;
    }
  }
  inflateEnd(&z);
  return err;
}

} // namespace encc::serve::http
