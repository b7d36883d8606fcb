//===- LoadedModel.h - Everything a loaded artifact owns ------------------===//
//
// The verified mapping, the loaded code, the thread pool and the tokenizer:
// immutable after load and shared (shared_ptr) by the C handle and every
// session, so sessions outlive a released model handle safely.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_LOADEDMODEL_H
#define ENCRT_LOADEDMODEL_H

#include "Artifact.h"
#include "CodeModule.h"
#include "ThreadPool.h"
#include "tokenizer.h"

#include <memory>
#include <string>

namespace encrt::rt {

struct LoadOptions {
  int numThreads = 0;            ///< 0: all cores
  const char *cpuTarget = nullptr; ///< null: best supported
};

class LoadedModel {
public:
  /// Throws Failure.
  static std::shared_ptr<LoadedModel> load(const std::string &path,
                                           const LoadOptions &options);

  const Artifact &artifact() const { return *artifact_; }
  const encm::Model &model() const { return artifact_->model(); }
  const encm::Metadata &metadata() const { return *model().metadata(); }
  const CodeModule &code() const { return *code_; }
  ThreadPool &pool() const { return *pool_; }
  /// Null when the artifact carries no tokenizer.
  const WordPieceTokenizer *tokenizer() const { return tokenizer_.get(); }
  bool hasPooledOutput() const { return model().outputs()->size() >= 2; }

  /// Stable strings for encrt_model_info.
  const std::string &architecture() const { return architecture_; }
  const std::string &pooling() const { return pooling_; }

  /// [CLS] ids [SEP] truncated to max_seq; throws Failure without a tokenizer.
  std::vector<int32_t> encode(std::string_view text) const;

private:
  LoadedModel() = default;

  std::unique_ptr<Artifact> artifact_;
  std::unique_ptr<CodeModule> code_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<WordPieceTokenizer> tokenizer_;
  std::string architecture_, pooling_;
};

} // namespace encrt::rt

#endif // ENCRT_LOADEDMODEL_H
