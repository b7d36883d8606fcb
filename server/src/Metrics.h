//===- Metrics.h - encc-serve's Prometheus metrics ------------------------===//
//
// Counters, gauges and histograms the server updates from its HTTP threads and
// its batcher, written in the Prometheus text exposition format (version 0.0.4).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_SERVER_METRICS_H
#define ENCC_SERVER_METRICS_H

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace encc::serve {

/// A cumulative histogram with fixed upper bounds (le), as Prometheus has it.
class Histogram {
public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  /// `name`_bucket{labels,le=...}, `name`_sum and `name`_count lines.
  void write(std::string &out, const std::string &name, const std::string &labels) const;

private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_; ///< per bucket, not cumulative; last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
public:
  Metrics();
  /// One answered request: its route ("/embed"), HTTP status and wall time.
  void request(const std::string &route, int status, double seconds);
  /// One forward pass: its texts, tokens and wall time.
  void batch(int64_t texts, int64_t tokens, double seconds);
  void setQueueDepth(int64_t texts);
  /// The whole exposition text.
  std::string render() const;

private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  Histogram batchTexts_, batchTokens_, batchSeconds_;
  uint64_t texts_ = 0, tokens_ = 0;
  int64_t queueDepth_ = 0;
  /// (end time, tokens) of the passes of the last kRateWindow, for the rate.
  std::deque<std::pair<std::chrono::steady_clock::time_point, int64_t>> recent_;
};

} // namespace encc::serve

#endif
