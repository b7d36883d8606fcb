//===- HttpServer.h - encc-serve's HTTP/1.1 server: one epoll loop --------===//
//
// One thread owns every socket: it accepts, reads and parses requests
// (HttpParser), writes answers and enforces the time limits, so an idle or
// slow connection costs a few hundred bytes, not a thread. A complete request
// goes to a pool of handler threads (created as needed, at most
// `handlerThreads`): handlers block (on the batcher) without holding up I/O.
// Their answers come back to the loop through an eventfd.
//
// Limits: the head must arrive within headerTimeoutMs of its first byte, the
// body may pause at most bodyTimeoutMs (408 and close otherwise); a connection
// with no request in progress is closed after headerTimeoutMs when new and
// idleTimeoutMs between requests; an answer must be taken by the client
// within writeTimeoutMs. At most maxConnections connections, and
// maxConnectionsPerClient from one address (0: no such limit); more are
// answered 503 and closed at once. Errors the server answers itself (a
// malformed or too-large request, a timeout, a refused connection) get their
// body from the ErrorWriter, then the connection is closed after the client
// stops sending (a lingering close: an unread body would turn the close into
// a reset that loses the answer).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_SERVER_HTTPSERVER_H
#define ENCC_SERVER_HTTPSERVER_H

#include "HttpMessage.h"
#include "HttpParser.h"

#include <functional>
#include <memory>
#include <string>

namespace encc::serve::http {

struct ServerLimits {
  ParseLimits parse;
  int headerTimeoutMs = 10000;
  int bodyTimeoutMs = 10000;
  int idleTimeoutMs = 5000;
  int writeTimeoutMs = 30000;
  int maxConnections = 10000;
  int maxConnectionsPerClient = 0;
  int keepAliveRequests = 1000; ///< requests a connection carries before it is closed
  int handlerThreads = 64;
};

class HttpServer {
public:
  /// Answers a complete request (on a handler thread).
  using Handler = std::function<void(const Request &, Response &)>;
  /// Fills the answer to a request the server refuses itself: `status` and
  /// `message` say why; the request holds what was parsed of it (perhaps
  /// nothing).
  using ErrorWriter = std::function<void(const Request &, int status, const std::string &message, Response &)>;

  HttpServer(const ServerLimits &limits, Handler handler, ErrorWriter errorWriter);
  ~HttpServer();
  HttpServer(const HttpServer &) = delete;
  HttpServer &operator=(const HttpServer &) = delete;

  /// Binds and listens on host:port (0: a free port). Returns the port, or
  /// -1 with *error set. Raises the open-file limit to fit maxConnections
  /// (lowering maxConnections to what the hard limit allows).
  int bind(const std::string &host, int port, std::string *error);
  /// The connection limit in force: maxConnections, or less where bind()
  /// could not raise the open-file limit that far.
  int maxConnections() const;
  /// Serves until stop(); returns once every request being handled has been
  /// answered (or its write timed out).
  void run();
  /// Stops accepting and closes connections between requests; safe from any
  /// thread and before run().
  void stop();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace encc::serve::http

#endif
