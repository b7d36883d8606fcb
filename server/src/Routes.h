//===- Routes.h - encc-serve's HTTP API: TEI, OpenAI, health, metrics -----===//
#ifndef ENCC_SERVER_ROUTES_H
#define ENCC_SERVER_ROUTES_H

#include "Batcher.h"
#include "HttpMessage.h"
#include "Metrics.h"
#include "Requests.h"
#include "ServeOptions.h"

#include "encrt/encrt.h"

#include <atomic>
#include <functional>
#include <map>
#include <string>

namespace encc::serve {

class Routes {
public:
  Routes(encrt_model *model, const ServeOptions &options, Batcher &batcher, Metrics &metrics);
  /// Answers a request (on an HTTP handler thread): the content type and API
  /// key checks, CORS, the route, errors as JSON bodies; counted in the
  /// metrics.
  void handle(const http::Request &req, http::Response &res);
  /// The answer to a request the HTTP layer refuses itself (malformed, over
  /// a limit, timed out, too many connections): `status` with the API's
  /// error body for the path; counted in the metrics.
  void refuse(const http::Request &req, int status, const std::string &message, http::Response &res);
  /// SIGTERM received: /health answers 503 from now on (a load balancer
  /// stops sending), requests are still served.
  void startDraining() { draining_.store(true); }
  /// Requests between routing and their answer.
  int64_t inFlight() const { return inFlight_.load(); }

private:
  using Handler = std::function<void(const http::Request &, http::Response &)>;
  /// Fills post_ and get_.
  void install();
  /// handle() without the error bodies and the metrics: throws ApiError.
  void route(const http::Request &req, http::Response &res);

  /// Token ids of `text` (called `field` in errors): cut to max_seq when
  /// `truncate`, else 413 when longer.
  std::vector<int32_t> tokenize(std::string_view text, bool truncate, const std::string &field) const;
  /// `text` as a ColBERT model's `role` tokenises it (cut to the role's
  /// length); `attended` its attention keys. Throws ApiError naming `field`.
  std::vector<int32_t> tokenizeRole(const std::string &role, std::string_view text, const std::string &field,
                                    int32_t &attended) const;
  /// TEI's /tokenize answer for `text` appended to `out`: a list of {id,
  /// text, special, start, stop} (start and stop byte offsets, null for the
  /// template's tokens, whose text is the token's string), inside the
  /// model's template with addSpecialTokens, cut to max_seq when `truncate`.
  void appendTokens(std::string &out, std::string_view text, bool addSpecialTokens, bool truncate,
                    const std::string &field) const;
  /// A classifier's job for `r`: each input tokenised alone or in the pair
  /// template (with token types where the model has two), cut or refused as
  /// tokenize() does.
  std::shared_ptr<Job> classifierJob(const PredictRequest &r) const;
  /// Input i's num_labels scores: the logits, or (unless raw) their sigmoid
  /// for one label and softmax for more, as TEI computes them; 500 on NaN.
  std::vector<float> scores(const Job &job, size_t i, bool raw) const;
  /// The text of the model prompt `name` (unset: the default prompt, "" if
  /// none); 422 naming the model's prompts for a name it lacks.
  std::string promptText(const std::optional<std::string> &name) const;
  /// Queues `job`, waits for it; throws ApiError on overload, timeout,
  /// shutdown or a failed pass.
  void run(const std::shared_ptr<Job> &job, std::chrono::steady_clock::time_point deadline) const;
  /// Row i of the job's embeddings, L2-normalised when asked and the model
  /// does not already.
  const float *row(Job &job, size_t i, bool normalize, int dims) const;

  encrt_model *model_;
  encrt_model_info info_;
  std::vector<std::string> labels_; ///< a classifier's label names
  /// Special tokens the tokenizer adds to one text and to a pair (-1: it has
  /// no pair template): a pair's untruncated length is
  /// count(a) + count(b) - 2 * singleSpecials_ + pairSpecials_.
  int64_t singleSpecials_ = 0, pairSpecials_ = -1;
  const ServeOptions &options_;
  Batcher &batcher_;
  Metrics &metrics_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> inFlight_{0};
  std::map<std::string, Handler> post_, get_; ///< by path
};

} // namespace encc::serve

#endif
