//===- ServerProcess.h - encc-serve as a child process for the tests ------===//
#ifndef ENCC_TESTS_SERVER_SERVERPROCESS_H
#define ENCC_TESTS_SERVER_SERVERPROCESS_H

#include <string>
#include <vector>

#include <sys/types.h>

namespace encc::testing {

/// Starts `encc-serve ARGS --port 0` and reads the port from its
/// "listening on http://HOST:PORT" line; the destructor sends SIGTERM and
/// reaps it.
class ServerProcess {
public:
  explicit ServerProcess(const std::vector<std::string> &args);
  ~ServerProcess();
  ServerProcess(const ServerProcess &) = delete;
  ServerProcess &operator=(const ServerProcess &) = delete;

  /// 0 when the server did not come up (see startupOutput()).
  int port() const { return port_; }
  /// What it printed before the listening line, or why it did not start.
  const std::string &startupOutput() const { return output_; }
  /// Sends `signal` and waits at most `timeoutMs` for the exit; returns the
  /// exit status (128 + signal when killed, -1 on timeout, after which it is
  /// killed).
  int stop(int signal, int timeoutMs = 60000);
  pid_t pid() const { return pid_; }

private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string output_;
};

/// Runs encc-serve with `args` to its end (it must exit by itself: --help, a
/// bad option, a model it refuses); returns the exit status, its stdout and
/// stderr together in *output.
int runServeToEnd(const std::vector<std::string> &args, std::string *output);

} // namespace encc::testing

#endif
