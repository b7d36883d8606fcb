//===- ServeOptions.h - encc-serve's command line -------------------------===//
#ifndef ENCC_SERVER_SERVEOPTIONS_H
#define ENCC_SERVER_SERVEOPTIONS_H

#include <cstdint>
#include <string>

namespace encc::serve {

struct ServeOptions {
  std::string artifact;
  std::string host = "127.0.0.1";
  int port = 8080;              ///< 0: any free port (printed at start)
  int threads = 0;              ///< the model's compute threads; 0 = all cores
  int64_t maxBatchTokens = 8192; ///< tokens of one forward pass
  int maxBatchRequests = 64;    ///< texts of one forward pass
  int maxQueue = 1024;          ///< texts waiting; beyond it a request gets 429
  int maxInputTexts = 256;      ///< texts of one request
  int timeoutMs = 30000;        ///< a request's whole time in the server
  int maxWaitMs = 0;            ///< how long a short queue waits for more texts
  int httpThreads = 0;          ///< requests handled at once; 0 = min(maxQueue + 64, 4096)
  int64_t maxBodyBytes = 4 << 20;
  int keepAliveRequests = 1000; ///< requests per connection before it is closed
  int maxConnections = 10000;   ///< connections open at once
  int maxConnectionsPerClient = 0; ///< from one address; 0 = no limit
  int headerTimeoutMs = 10000;  ///< a request's head, from its first byte; a new connection's first request
  int idleTimeoutMs = 5000;     ///< an open connection between requests
  bool autoTruncate = false;    ///< default of `truncate`; OpenAI requests too
  bool allowTokenIds = false;   ///< token ids as /v1/embeddings input (else 400)
  std::string apiKey;           ///< "" = no authentication
  std::string corsAllowOrigin;  ///< comma-separated origins browsers may call from ("*": any); "" = no CORS
  std::string modelId;          ///< reported in /info and OpenAI responses
  std::string cpuTarget;        ///< "" = the best this CPU runs
  std::string requireSha256, trustedKey, signaturePath;
};

extern const char *const kServeUsage;

/// Parses argv (argv[0] is the program). Returns "" or a one-line error;
/// sets *help for -h/--help.
std::string parseServeOptions(int argc, const char *const *argv, ServeOptions &out, bool *help);

} // namespace encc::serve

#endif
