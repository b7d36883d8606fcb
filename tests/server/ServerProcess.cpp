//===- ServerProcess.cpp - encc-serve as a child process for the tests ----===//
#include "ServerProcess.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace encc::testing {

namespace {

/// Spawns encc-serve with stdout and stderr on one pipe; returns the pid and
/// the pipe's read end in *fd.
pid_t spawnServe(const std::vector<std::string> &args, int *fd) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0)
    return -1;
  std::vector<std::string> all = {ENCC_SERVE_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : all)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The server dies with the test process (a test that aborts, e.g. on a
    // sanitizer report, leaves no server behind).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(127);
    dup2(p[1], 1);
    dup2(p[1], 2);
    execv(ENCC_SERVE_BINARY, argv.data());
    _exit(127);
  }
  close(p[1]);
  *fd = p[0];
  if (pid < 0)
    close(p[0]);
  return pid;
}

int exitStatus(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

} // namespace

ServerProcess::ServerProcess(const std::vector<std::string> &args) {
  // 64 HTTP threads unless the test says otherwise: the default (--max-queue
  // + 64 = 1088) takes seconds to start under TSan, and connections made
  // meanwhile wait in the backlog, which a drain cannot see.
  std::vector<std::string> all = {"--http-threads", "64"};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--port");
  all.push_back("0");
  int fd = -1;
  pid_ = spawnServe(all, &fd);
  if (pid_ < 0) {
    output_ = "fork failed";
    return;
  }
  // Read until the listening line (or EOF / 60 s: a model load under a
  // sanitizer is slow).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const std::string marker = "listening on http://";
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 200) <= 0)
      continue;
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0)
      break;
    output_.append(buf, size_t(n));
    const size_t at = output_.find(marker);
    if (at != std::string::npos && output_.find('\n', at) != std::string::npos) {
      const size_t colon = output_.rfind(':', output_.find('\n', at));
      port_ = std::atoi(output_.c_str() + colon + 1);
      break;
    }
  }
  // The rest of its output goes to the test's stderr (shown with a failure),
  // read at once so a full pipe never blocks the server.
  std::thread([fd] {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
      if (write(2, buf, size_t(n)) < 0)
        break;
    close(fd);
  }).detach();
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0)
    stop(SIGKILL, 10000);
}

int ServerProcess::stop(int signal, int timeoutMs) {
  if (pid_ <= 0)
    return -1;
  kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_)
      break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return exitStatus(status);
}

int runServeToEnd(const std::vector<std::string> &args, std::string *output) {
  int fd = -1;
  const pid_t pid = spawnServe(args, &fd);
  if (pid < 0)
    return -1;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    output->append(buf, size_t(n));
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  return exitStatus(status);
}

} // namespace encc::testing
