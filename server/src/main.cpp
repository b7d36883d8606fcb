//===- main.cpp - encc-serve: an embedding server over libencrt -----------===//
//
// Loads one artifact, binds (127.0.0.1 unless told otherwise), prints
// "encc-serve: listening on http://HOST:PORT" on stdout once it accepts
// connections, and serves until SIGTERM / SIGINT: then it drains (health 503,
// requests still served until the server has been idle for kQuietMs) and exits 0.
//
//===----------------------------------------------------------------------===//
#include "Batcher.h"
#include "HttpServer.h"
#include "Metrics.h"
#include "Routes.h"
#include "ServeOptions.h"

#include "encrt/encrt.hpp"

#include <atomic>
#include <csignal>
#include <memory>
#include <cstdio>
#include <thread>

#include <pthread.h>

using namespace encc::serve;

namespace {

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

  http::ServerLimits limits;
  limits.parse.maxBodyBytes = options.maxBodyBytes;
  limits.headerTimeoutMs = options.headerTimeoutMs;
  limits.bodyTimeoutMs = options.headerTimeoutMs;
  limits.idleTimeoutMs = options.idleTimeoutMs;
  limits.maxConnections = options.maxConnections;
  limits.maxConnectionsPerClient = options.maxConnectionsPerClient;
  limits.keepAliveRequests = options.keepAliveRequests;
  limits.handlerThreads = options.httpThreads;
  http::HttpServer server(
      limits, [&routes](const http::Request &req, http::Response &res) { routes.handle(req, res); },
      [&routes](const http::Request &req, int status, const std::string &message, http::Response &res) {
        routes.refuse(req, status, message, res);
      });
  std::string bindError;
  const int port = server.bind(options.host, options.port, &bindError);
  if (port <= 0)
    return fail(bindError);
  if (server.maxConnections() < options.maxConnections)
    std::fprintf(stderr,
                 "encc-serve: note: at most %d connections (--max-connections %d is more than the open-file limit "
                 "allows; raise it with ulimit -n)\n",
                 server.maxConnections(), options.maxConnections);

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
    server.stop();
  });

  std::printf("encc-serve: %s (%s, %s, hidden %d, max_seq %d, %s) listening on http://%s:%d\n",
              options.modelId.c_str(), info.architecture, info.precision, info.hidden_size, info.max_seq,
              info.cpu_target, options.host.c_str(), port);
  std::fflush(stdout);
  server.run(); // returns once stopped and every request in progress is answered
  listenReturned.store(true);
  pthread_kill(signals.native_handle(), SIGTERM); // wakes sigwait if no signal came
  signals.join();
  batcher.drainAndStop();
  std::fprintf(stderr, "encc-serve: stopped\n");
  return 0;
}
