//===- Metrics.cpp - encc-serve's Prometheus metrics ----------------------===//
#include "Metrics.h"

#include <cmath>
#include <cstdio>

namespace encc::serve {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kRateWindow{10};

std::string num(double v) {
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

const std::vector<double> kLatencyBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25,  0.5,    1,     2.5,  5,     10,   30};

std::vector<double> powersOfTwo(double from, double to) {
  std::vector<double> b;
  for (double v = from; v <= to; v *= 2)
    b.push_back(v);
  return b;
}

} // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i])
    ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void Histogram::write(std::string &out, const std::string &name, const std::string &labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const double le = i < bounds_.size() ? bounds_[i] : INFINITY;
    out += name + "_bucket{" + labels + sep + "le=\"" + num(le) + "\"} " + std::to_string(cumulative) + "\n";
  }
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + num(sum_) + "\n";
  out += name + "_count" + braces + " " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : batchTexts_(powersOfTwo(1, 1024)), batchTokens_(powersOfTwo(16, 65536)),
      batchSeconds_(kLatencyBounds) {}

void Metrics::request(const std::string &route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, status}];
  latency_.try_emplace(route, kLatencyBounds).first->second.observe(seconds);
}

void Metrics::batch(int64_t texts, int64_t tokens, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  batchTexts_.observe(double(texts));
  batchTokens_.observe(double(tokens));
  batchSeconds_.observe(seconds);
  texts_ += uint64_t(texts);
  tokens_ += uint64_t(tokens);
  const Clock::time_point now = Clock::now();
  recent_.emplace_back(now, tokens);
  while (!recent_.empty() && recent_.front().first < now - kRateWindow)
    recent_.pop_front();
}

void Metrics::setQueueDepth(int64_t texts) {
  std::lock_guard<std::mutex> lock(mu_);
  queueDepth_ = texts;
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out += "# HELP encc_requests_total HTTP requests answered, by route and status.\n"
         "# TYPE encc_requests_total counter\n";
  for (const auto &[key, count] : requests_)
    out += "encc_requests_total{route=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(count) + "\n";
  out += "# HELP encc_request_duration_seconds Time from a request's arrival to its answer.\n"
         "# TYPE encc_request_duration_seconds histogram\n";
  for (const auto &[route, h] : latency_)
    h.write(out, "encc_request_duration_seconds", "route=\"" + route + "\"");
  out += "# HELP encc_batch_texts Texts per forward pass.\n# TYPE encc_batch_texts histogram\n";
  batchTexts_.write(out, "encc_batch_texts", "");
  out += "# HELP encc_batch_tokens Tokens per forward pass.\n# TYPE encc_batch_tokens histogram\n";
  batchTokens_.write(out, "encc_batch_tokens", "");
  out += "# HELP encc_batch_duration_seconds Wall time of one forward pass.\n"
         "# TYPE encc_batch_duration_seconds histogram\n";
  batchSeconds_.write(out, "encc_batch_duration_seconds", "");
  out += "# HELP encc_queue_texts Texts waiting for a forward pass.\n# TYPE encc_queue_texts gauge\n";
  out += "encc_queue_texts " + std::to_string(queueDepth_) + "\n";
  out += "# HELP encc_embedded_texts_total Texts embedded.\n# TYPE encc_embedded_texts_total counter\n";
  out += "encc_embedded_texts_total " + std::to_string(texts_) + "\n";
  out += "# HELP encc_embedded_tokens_total Tokens embedded.\n# TYPE encc_embedded_tokens_total counter\n";
  out += "encc_embedded_tokens_total " + std::to_string(tokens_) + "\n";
  int64_t windowTokens = 0;
  const Clock::time_point now = Clock::now();
  for (const auto &[t, n] : recent_)
    if (t >= now - kRateWindow)
      windowTokens += n;
  out += "# HELP encc_tokens_per_second Tokens embedded per second over the last 10 s.\n"
         "# TYPE encc_tokens_per_second gauge\n";
  out += "encc_tokens_per_second " + num(double(windowTokens) / double(kRateWindow.count())) + "\n";
  return out;
}

} // namespace encc::serve
