//===- main.cpp - encc-serve: an embedding server over libencrt -----------===//
//
// Loads one artifact, binds (127.0.0.1 unless told otherwise), prints
// "encc-serve: listening on http://HOST:PORT" on stdout once it accepts
// connections, and serves until SIGTERM / SIGINT: then it drains (health 503,
// requests still served until the server has been idle for kQuietMs) and exits 0.
//
//===----------------------------------------------------------------------===//
#include "Batcher.h"
#include "Metrics.h"
#include "Routes.h"
#include "ServeOptions.h"

#include "encrt/encrt.hpp"

#include <httplib.h>

#include <atomic>
#include <csignal>
#include <memory>
#include <cstdio>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

using namespace encc::serve;

namespace {

/// Debian's libcpp-httplib 0.11 listens with a backlog of 5 (compiled into
/// the library): a burst of more connections drops SYNs, and each dropped
/// client retries only after a second (seen as 1 s latencies and, at
/// shutdown, refused clients). listen() again on the bound socket raises it;
/// the socket is found as the listening one on our port.
void raiseListenBacklog(int port) {
  for (int fd = 0; fd < 1024; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
      continue;
    sockaddr_storage addr{};
    socklen_t alen = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &alen) != 0)
      continue;
    const int bound = addr.ss_family == AF_INET    ? ntohs(reinterpret_cast<sockaddr_in *>(&addr)->sin_port)
                      : addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port)
                                                   : -1;
    if (bound == port)
      ::listen(fd, SOMAXCONN);
  }
}

/// How long the server must have had no request in flight before a drain
/// closes the listener.
constexpr int kQuietMs = 500;

int fail(const std::string &message) {
  std::fprintf(stderr, "encc-serve: error: %s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  ServeOptions options;
  bool help = false;
  if (std::string err = parseServeOptions(argc, argv, options, &help); !err.empty()) {
    std::fprintf(stderr, "encc-serve: error: %s\n\n%s", err.c_str(), kServeUsage);
    return 2;
  }
  if (help) {
    std::fputs(kServeUsage, stdout);
    return 0;
  }

  // Every thread started from here on inherits the mask: the signals reach
  // only sigwait below, never a compute or HTTP thread.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  encrt::ModelOptions mo;
  mo.numThreads = options.threads;
  mo.cpuTarget = options.cpuTarget;
  mo.requireSha256 = options.requireSha256;
  mo.trustedPublicKey = options.trustedKey;
  mo.signaturePath = options.signaturePath;
  std::unique_ptr<encrt::Model> loaded;
  try {
    loaded = std::make_unique<encrt::Model>(options.artifact, mo);
  } catch (const encrt::Error &e) {
    return fail(e.what());
  }
  encrt_model *model = loaded->get();
  encrt_model_info info;
  encrt_model_get_info(model, &info, sizeof info);
  int64_t count = 0;
  if (encrt_status *st = encrt_model_tokenize_text(model, encrt_text{"", 0}, nullptr, 0, &count)) {
    std::string msg = encrt_status_message(st);
    encrt_status_free(st);
    return fail(msg);
  }

  Metrics metrics;
  BatcherOptions bo;
  bo.maxBatchTokens = options.maxBatchTokens;
  bo.maxBatchTexts = options.maxBatchRequests;
  bo.maxQueue = options.maxQueue;
  bo.maxWait = std::chrono::milliseconds(options.maxWaitMs);
  // A model compiled with --pooling none has no pooled rows: it serves /embed_all only.
  Batcher batcher(model, info.num_labels > 0 ? info.num_labels : info.embedding_dim, bo, metrics);
  Routes routes(model, options, batcher, metrics);

  httplib::Server server;
  const size_t httpThreads = size_t(options.httpThreads);
  server.new_task_queue = [httpThreads] { return new httplib::ThreadPool(httpThreads); };
  server.set_payload_max_length(size_t(options.maxBodyBytes));
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(size_t(options.keepAliveRequests));
  // A keep-alive connection holds its thread while idle: let idle ones go
  // after a second, and slow senders after 10 s.
  server.set_keep_alive_timeout(1);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(30, 0);
  routes.install(server);

  const int port = options.port == 0 ? server.bind_to_any_port(options.host)
                                     : (server.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port <= 0)
    return fail("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                " (address in use, or not an address of this machine?)");

  raiseListenBacklog(port);

  std::atomic<bool> listenReturned{false};
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stopSignals, &sig);
    if (listenReturned.load())
      return;
    std::fprintf(stderr, "encc-serve: %s: draining (/health answers 503; stopping once no request has been in "
                         "flight for %d ms, or after %d ms)\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", kQuietMs, options.timeoutMs);
    routes.startDraining();
    // Requests keep being served until the server has been idle for a
    // while: a request already sent but not yet read when the listener
    // closes would be dropped (the library closes such a connection).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.timeoutMs);
    auto quietSince = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < deadline) {
      const auto now = std::chrono::steady_clock::now();
      if (routes.inFlight() > 0)
        quietSince = now;
      else if (now - quietSince >= std::chrono::milliseconds(kQuietMs))
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // stop() before listen_after_bind has started its loop is lost: repeat.
    while (!listenReturned.load()) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  std::printf("encc-serve: %s (%s, %s, hidden %d, max_seq %d, %s) listening on http://%s:%d\n",
              options.modelId.c_str(), info.architecture, info.precision, info.hidden_size, info.max_seq,
              info.cpu_target, options.host.c_str(), port);
  std::fflush(stdout);
  const bool ok = server.listen_after_bind(); // returns once stopped and every connection is answered
  listenReturned.store(true);
  pthread_kill(signals.native_handle(), SIGTERM); // wakes sigwait if no signal came
  signals.join();
  batcher.drainAndStop();
  if (!ok)
    return fail("the HTTP server stopped unexpectedly");
  std::fprintf(stderr, "encc-serve: stopped\n");
  return 0;
}
