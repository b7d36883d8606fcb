//===- HttpServer.cpp - encc-serve's HTTP/1.1 server: one epoll loop ------===//
#include "HttpServer.h"

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

namespace encc::serve::http {

namespace {

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string addressOf(const sockaddr_storage &a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(a).sin_addr, text, sizeof text);
  else if (a.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(a).sin6_addr, text, sizeof text);
  return text;
}

/// How long a refused or failed connection is read from (and its bytes
/// dropped) after the answer, before it is closed.
constexpr int kLingerMs = 2000;
/// How often the loop looks for connections past their time limits.
constexpr int kSweepMs = 100;

struct Task {
  int fd;
  uint64_t id;
  Request request;
  bool keepAlive;
};

struct Completion {
  int fd;
  uint64_t id;
  std::string bytes;
  bool keepAlive;
};

} // namespace

struct HttpServer::Impl {
  enum class Phase { Reading, Handling, Writing, Lingering };

  struct Connection {
    Connection(int fd, uint64_t id, std::string peer, const ParseLimits &limits, int64_t now)
        : fd(fd), id(id), peer(std::move(peer)), parser(limits), phaseStart(now), lastProgress(now) {}
    int fd;
    uint64_t id;
    std::string peer;
    RequestParser parser;
    std::string in;  ///< bytes read, not yet parsed (a pipelined request)
    std::string out; ///< the answer being written
    size_t outOffset = 0;
    Phase phase = Phase::Reading;
    bool closeAfterWrite = false, lingerAfterWrite = false, sentContinue = false, started = false;
    bool gone = false; ///< the peer hung up while its request was being handled
    int served = 0;
    int64_t phaseStart, lastProgress, requestStart = 0;
    uint32_t interest = 0;
  };

  Impl(const ServerLimits &l, Handler h, ErrorWriter e)
      : limits(l), handler(std::move(h)), errorWriter(std::move(e)) {}

  ServerLimits limits;
  Handler handler;
  ErrorWriter errorWriter;
  int listenFd = -1, epollFd = -1, wakeFd = -1;
  std::atomic<bool> stopping{false};
  uint64_t nextId = 1;
  std::unordered_map<int, std::unique_ptr<Connection>> connections;
  std::unordered_map<std::string, int> perClient;
  int64_t acceptPausedUntil = 0;

  std::mutex completionsMutex;
  std::vector<Completion> completions;

  // Handler threads, created while more tasks wait than threads are idle.
  std::mutex poolMutex;
  std::condition_variable poolReady;
  std::deque<Task> tasks;
  std::vector<std::thread> workers;
  size_t idleWorkers = 0;
  bool poolStopping = false;

  void wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wakeFd, &one, sizeof one);
  }

  void setInterest(Connection &c, uint32_t events) {
    if (c.interest == events)
      return;
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = c.fd;
    epoll_ctl(epollFd, EPOLL_CTL_MOD, c.fd, &ev);
    c.interest = events;
  }

  void closeConnection(int fd) {
    auto it = connections.find(fd);
    if (it == connections.end())
      return;
    if (auto pc = perClient.find(it->second->peer); pc != perClient.end() && --pc->second == 0)
      perClient.erase(pc);
    epoll_ctl(epollFd, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    connections.erase(it);
  }

  // --- handler threads ---------------------------------------------------

  void submit(Task task) {
    std::lock_guard<std::mutex> lock(poolMutex);
    tasks.push_back(std::move(task));
    if (tasks.size() > idleWorkers && workers.size() < size_t(std::max(1, limits.handlerThreads)))
      workers.emplace_back([this] { work(); });
    else
      poolReady.notify_one();
  }

  void work() {
    std::unique_lock<std::mutex> lock(poolMutex);
    for (;;) {
      ++idleWorkers;
      poolReady.wait(lock, [this] { return poolStopping || !tasks.empty(); });
      --idleWorkers;
      if (tasks.empty())
        return; // stopping
      Task task = std::move(tasks.front());
      tasks.pop_front();
      lock.unlock();
      Response res;
      try {
        handler(task.request, res);
      } catch (...) { // the handler answers its own errors; this is a last resort
        res = Response{};
        errorWriter(task.request, 500, "the request could not be answered", res);
      }
      const bool keep = task.keepAlive && !equalsIgnoringCase(res.header("Connection"), "close");
      Completion done{task.fd, task.id, serializeResponse(res, keep), keep};
      {
        std::lock_guard<std::mutex> c(completionsMutex);
        completions.push_back(std::move(done));
      }
      wake();
      lock.lock();
    }
  }

  void stopWorkers() {
    {
      std::lock_guard<std::mutex> lock(poolMutex);
      poolStopping = true;
    }
    poolReady.notify_all();
    for (std::thread &t : workers)
      t.join();
    workers.clear();
  }

  // --- the loop ------------------------------------------------------------

  void acceptAll(int64_t now) {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listenFd, reinterpret_cast<sockaddr *>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED)
          continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop polling the listener for a while (it would wake the loop without end).
          epoll_ctl(epollFd, EPOLL_CTL_DEL, listenFd, nullptr);
          acceptPausedUntil = now + kSweepMs;
        }
        return;
      }
      std::string peer = addressOf(addr);
      std::string refusal;
      if (connections.size() >= size_t(limits.maxConnections))
        refusal = "the server holds its most connections (" + std::to_string(limits.maxConnections) +
                  ", --max-connections); retry later";
      else if (limits.maxConnectionsPerClient > 0 && perClient[peer] >= limits.maxConnectionsPerClient)
        refusal = "this address holds its most connections (" + std::to_string(limits.maxConnectionsPerClient) +
                  ", --max-connections-per-client); reuse them or retry later";
      if (!refusal.empty()) {
        Request none;
        none.peer = peer;
        Response res;
        errorWriter(none, 503, refusal, res);
        const std::string bytes = serializeResponse(res, false);
        [[maybe_unused]] ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::shutdown(fd, SHUT_WR);
        ::close(fd);
        if (limits.maxConnectionsPerClient > 0 && perClient[peer] == 0)
          perClient.erase(peer);
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ++perClient[peer];
      auto c = std::make_unique<Connection>(fd, nextId++, std::move(peer), limits.parse, now);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      c->interest = ev.events;
      epoll_ctl(epollFd, EPOLL_CTL_ADD, fd, &ev);
      connections.emplace(fd, std::move(c));
    }
  }

  /// Reads what the socket has; false when the connection was closed.
  bool readSome(Connection &c, int64_t now) {
    const int fd = c.fd;
    const uint64_t id = c.id;
    char buffer[64 << 10];
    for (int reads = 0; reads < 16; ++reads) { // at most 1 MiB per wake: other connections get their turn
      const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
      if (n > 0) {
        if (c.phase == Phase::Lingering)
          continue; // dropped
        c.in.append(buffer, size_t(n));
        c.lastProgress = now;
        if (c.phase == Phase::Reading) {
          process(c, now);
          if (auto it = connections.find(fd); it == connections.end() || it->second->id != id)
            return false;
          if (c.phase != Phase::Reading && c.phase != Phase::Lingering)
            return true; // a pipelined next request stays in the socket until this one is answered
        }
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return true;
      if (n < 0 && errno == EINTR)
        continue;
      closeConnection(c.fd); // the peer closed (or reset) before a request was complete
      return false;
    }
    return true;
  }

  void process(Connection &c, int64_t now) {
    while (c.phase == Phase::Reading && !c.in.empty()) {
      const size_t used = c.parser.feed(c.in.data(), c.in.size());
      c.in.erase(0, used);
      if (c.parser.started() && !c.started) {
        c.started = true;
        c.requestStart = now;
      }
      switch (c.parser.state()) {
      case RequestParser::State::Failed:
        refuse(c, c.parser.errorStatus(), c.parser.errorMessage(), now);
        return;
      case RequestParser::State::Complete: dispatch(c, now); return;
      case RequestParser::State::Body:
        if (c.parser.expectsContinue() && !c.sentContinue) {
          c.sentContinue = true;
          static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
          [[maybe_unused]] ssize_t n = ::send(c.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL);
        }
        break;
      case RequestParser::State::Head: break;
      }
    }
  }

  void dispatch(Connection &c, int64_t now) {
    c.phase = Phase::Handling;
    c.phaseStart = now;
    setInterest(c, 0);
    Task task{c.fd, c.id, std::move(c.parser.request()), false};
    task.request.peer = c.peer;
    task.keepAlive = c.parser.keepAlive() && c.served + 1 < limits.keepAliveRequests && !stopping.load();
    submit(std::move(task));
  }

  /// Answers `status` with the error writer's body, then closes.
  void refuse(Connection &c, int status, const std::string &message, int64_t now) {
    Request partial = std::move(c.parser.request());
    partial.peer = c.peer;
    Response res;
    errorWriter(partial, status, message, res);
    startWriting(c, serializeResponse(res, false), false, /*linger=*/true, now);
  }

  /// Writes `bytes`; then the connection waits for its next request, is
  /// closed, or (linger) closed once the client stops sending. `c` may be
  /// gone on return.
  void startWriting(Connection &c, std::string bytes, bool keepAlive, bool linger, int64_t now) {
    c.out = std::move(bytes);
    c.outOffset = 0;
    c.phase = Phase::Writing;
    c.phaseStart = now;
    c.closeAfterWrite = !keepAlive;
    c.lingerAfterWrite = linger;
    writeSome(c, now);
  }

  void writeSome(Connection &c, int64_t now) {
    while (c.outOffset < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.outOffset, c.out.size() - c.outOffset, MSG_NOSIGNAL);
      if (n > 0) {
        c.outOffset += size_t(n);
        continue;
      }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        setInterest(c, EPOLLOUT);
        return;
      }
      closeConnection(c.fd);
      return;
    }
    c.out.clear();
    c.out.shrink_to_fit();
    if (c.closeAfterWrite) {
      if (!c.lingerAfterWrite) {
        closeConnection(c.fd);
        return;
      }
      ::shutdown(c.fd, SHUT_WR);
      c.phase = Phase::Lingering;
      c.phaseStart = now;
      c.in.clear();
      setInterest(c, EPOLLIN | EPOLLRDHUP);
      return;
    }
    ++c.served;
    c.parser.reset();
    c.phase = Phase::Reading;
    c.phaseStart = now;
    c.started = c.sentContinue = false;
    setInterest(c, EPOLLIN | EPOLLRDHUP);
    process(c, now); // a request pipelined behind the one answered
  }

  void takeCompletions(int64_t now) {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t n = ::read(wakeFd, &count, sizeof count);
    std::vector<Completion> done;
    {
      std::lock_guard<std::mutex> lock(completionsMutex);
      done.swap(completions);
    }
    for (Completion &d : done) {
      auto it = connections.find(d.fd);
      if (it == connections.end() || it->second->id != d.id)
        continue;
      Connection &c = *it->second;
      if (c.gone) {
        closeConnection(c.fd);
        continue;
      }
      startWriting(c, std::move(d.bytes), d.keepAlive && !stopping.load(), false, now);
    }
  }

  void sweep(int64_t now) {
    std::vector<std::pair<int, int>> expired; // fd, 408 or 0 (close silently)
    for (auto &[fd, cp] : connections) {
      Connection &c = *cp;
      switch (c.phase) {
      case Phase::Reading:
        if (!c.started) {
          const int limit = c.served == 0 ? limits.headerTimeoutMs : limits.idleTimeoutMs;
          if (now - c.phaseStart > limit || stopping.load())
            expired.emplace_back(fd, 0);
        } else if (c.parser.state() == RequestParser::State::Head) {
          if (now - c.requestStart > limits.headerTimeoutMs)
            expired.emplace_back(fd, 408);
        } else if (now - c.lastProgress > limits.bodyTimeoutMs) {
          expired.emplace_back(fd, 408);
        }
        break;
      case Phase::Writing:
        if (now - c.phaseStart > limits.writeTimeoutMs)
          expired.emplace_back(fd, 0);
        break;
      case Phase::Lingering:
        if (now - c.phaseStart > kLingerMs || stopping.load())
          expired.emplace_back(fd, 0);
        break;
      case Phase::Handling: break;
      }
    }
    for (const auto &[fd, status] : expired) {
      auto it = connections.find(fd);
      if (it == connections.end())
        continue;
      if (status == 0) {
        closeConnection(fd);
        continue;
      }
      Connection &c = *it->second;
      const bool head = c.parser.state() == RequestParser::State::Head;
      refuse(c, 408,
             head ? "the request's head did not arrive within " + std::to_string(limits.headerTimeoutMs) + " ms"
                  : "the body paused for more than " + std::to_string(limits.bodyTimeoutMs) + " ms",
             now);
    }
    if (acceptPausedUntil && now >= acceptPausedUntil && listenFd >= 0) {
      acceptPausedUntil = 0;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = listenFd;
      epoll_ctl(epollFd, EPOLL_CTL_ADD, listenFd, &ev);
    }
  }

  bool busy() const {
    for (const auto &[fd, c] : connections)
      if (c->phase == Phase::Handling || c->phase == Phase::Writing)
        return true;
    return false;
  }

  void run() {
    std::vector<epoll_event> events(512);
    int64_t lastSweep = nowMs();
    for (;;) {
      const int n = epoll_wait(epollFd, events.data(), int(events.size()), kSweepMs);
      const int64_t now = nowMs();
      for (int i = 0; i < n; ++i) {
        const int fd = events[size_t(i)].data.fd;
        const uint32_t ev = events[size_t(i)].events;
        if (fd == listenFd) {
          acceptAll(now);
          continue;
        }
        if (fd == wakeFd) {
          takeCompletions(now);
          continue;
        }
        auto it = connections.find(fd);
        if (it == connections.end())
          continue;
        Connection &c = *it->second;
        if (c.phase == Phase::Handling) { // interest 0: only a hang-up or an error reaches here
          c.gone = true;
          epoll_ctl(epollFd, EPOLL_CTL_DEL, fd, nullptr);
          c.interest = ~0u;
          continue;
        }
        if (ev & EPOLLOUT) {
          writeSome(c, now);
          continue;
        }
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
          readSome(c, now);
      }
      if (now - lastSweep >= kSweepMs) {
        lastSweep = now;
        sweep(now);
      }
      if (stopping.load()) {
        if (listenFd >= 0) {
          epoll_ctl(epollFd, EPOLL_CTL_DEL, listenFd, nullptr);
          ::close(listenFd);
          listenFd = -1;
          sweep(now); // closes the idle ones
        }
        if (!busy())
          break;
      }
    }
    while (!connections.empty())
      closeConnection(connections.begin()->first);
    stopWorkers();
  }
};

HttpServer::HttpServer(const ServerLimits &limits, Handler handler, ErrorWriter errorWriter)
    : impl_(std::make_unique<Impl>(limits, std::move(handler), std::move(errorWriter))) {
  impl_->epollFd = epoll_create1(EPOLL_CLOEXEC);
  impl_->wakeFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = impl_->wakeFd;
  epoll_ctl(impl_->epollFd, EPOLL_CTL_ADD, impl_->wakeFd, &ev);
}

HttpServer::~HttpServer() {
  impl_->stopWorkers();
  if (impl_->listenFd >= 0)
    ::close(impl_->listenFd);
  for (auto &[fd, c] : impl_->connections)
    ::close(fd);
  ::close(impl_->wakeFd);
  ::close(impl_->epollFd);
}

int HttpServer::bind(const std::string &host, int port, std::string *error) {
  // Room for every connection, the listener and the runtime's own files.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    const rlim_t want = rlim_t(impl_->limits.maxConnections) + 256;
    if (nofile.rlim_cur < want) {
      nofile.rlim_cur = std::min(want, nofile.rlim_max);
      setrlimit(RLIMIT_NOFILE, &nofile);
      getrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (nofile.rlim_cur < want)
      impl_->limits.maxConnections = int(std::max<rlim_t>(16, nofile.rlim_cur - 256));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    *error = "cannot resolve '" + host + "' (" + gai_strerror(rc) + ")";
    return -1;
  }
  int fd = -1;
  std::string why = "no address";
  for (addrinfo *a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0)
      continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    *error = "cannot listen on " + host + ":" + service + " (" + why + ")";
    return -1;
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &len);
  impl_->listenFd = fd;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  epoll_ctl(impl_->epollFd, EPOLL_CTL_ADD, fd, &ev);
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6 &>(bound).sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in &>(bound).sin_port);
}

int HttpServer::maxConnections() const { return impl_->limits.maxConnections; }

void HttpServer::run() { impl_->run(); }

void HttpServer::stop() {
  impl_->stopping.store(true);
  impl_->wake();
}

} // namespace encc::serve::http
