//===- LoadedModel.cpp - Everything a loaded artifact owns ----------------===//
#include "LoadedModel.h"

#include "Failure.h"
#include "TokenizerLoad.h"
#include "cuda/CudaHost.h"
#include "cuda/CudaModel.h"

#include <algorithm>
#include <limits>

namespace encrt::rt {

LoadedModel::~LoadedModel() = default;

void LoadedModel::loadBackend(const LoadOptions &options,
                              const cuda::DeviceChoice &choice) {
  using namespace cuda;
  const Artifact &a = *artifact_;
  const std::string &p = a.path();
  const bool hasCpu = a.hasCpuPlan();
  auto loadCpu = [&] {
    code_ = CodeModule::load(a, options.cpuTarget);
    pool_ = std::make_unique<ThreadPool>(options.numThreads);
    device_ = "cpu";
  };
  auto loadCuda = [&](int index) {
    cuda_ = CudaModel::load(a, index);
    device_ = cuda_->deviceName();
  };
  switch (choice.kind) {
  case DeviceKind::Cpu:
    if (!hasCpu)
      fail(ENCRT_UNSUPPORTED, p, ": the artifact has no CPU plan (compiled "
           "with --target=cuda only); load it on device \"cuda\" or recompile "
           "with --target=cuda,cpu");
    loadCpu();
    return;
  case DeviceKind::Cuda:
    loadCuda(choice.index);
    return;
  case DeviceKind::Auto:
    break;
  }
  // Auto: CUDA when the plan and a device are there, else the CPU.
  std::string why = "the artifact has no CUDA plan (compiled without --target=cuda)";
  if (a.model().cuda() && CudaModel::probe(0, why)) {
    try {
      loadCuda(0);
      return;
    } catch (const Failure &f) {
      if (!hasCpu)
        throw;
      why = f.what();
      cuda_.reset();
    }
  }
  if (!hasCpu)
    fail(ENCRT_UNSUPPORTED, "no CUDA device: ", why, "; and the artifact has "
         "no CPU plan (compiled with --target=cuda only) (loading ", p, ")");
  loadCpu();
}

std::shared_ptr<LoadedModel> LoadedModel::load(const std::string &path,
                                               const LoadOptions &options) {
  const cuda::DeviceChoice choice = cuda::parseDevice(options.device); // bad options before any I/O
  checkTrustPolicy(options.trust);
  std::shared_ptr<LoadedModel> m(new LoadedModel());
  m->maxTextBytes_ = options.maxTextBytes;
  if (options.maxSeqLength < 0)
    fail(ENCRT_INVALID_ARGUMENT, "max_seq_length is ", options.maxSeqLength, " (expected >= 0, 0 = the compiled maximum)");
  m->artifact_ = Artifact::open(path, options.trust);
  const int32_t compiled = m->metadata().max_seq();
  if (options.maxSeqLength > compiled)
    fail(ENCRT_INVALID_ARGUMENT, path, ": max_seq_length ", options.maxSeqLength, " is over the compiled maximum ",
         compiled, " (recompile with encc compile --max-seq N)");
  m->truncateTo_ = options.maxSeqLength > 0 ? options.maxSeqLength : compiled;
  // The tokenizer (data only) is built and checked before any code is loaded.
  m->tokenizer_ = loadTokenizer(m->model().tokenizer(), m->metadata().vocab_size(), path);
  if (m->tokenizer_)
    m->decoder_ = loadDecoder(*m->model().tokenizer(), *m->tokenizer_, path, m->noDecoder_);
  m->loadBackend(options, choice);

  const encm::Metadata &md = m->metadata();
  m->architecture_ = md.architecture() ? md.architecture()->str() : "";
  m->pooling_ = poolingName(md.pooling()); // checked by Artifact::verifySemantics
  m->scoreActivation_ = md.score_activation() ? md.score_activation()->str() : "";
  if (md.prompts()) // checked by Artifact::verifyPrompts
    for (const encm::Prompt *p : *md.prompts()) {
      m->prompts_.emplace_back(p->name()->str(), p->text()->str());
      if (md.default_prompt() && md.default_prompt()->string_view() == p->name()->string_view())
        m->defaultPromptText_ = p->text()->str();
    }
  if (const auto *heads = m->model().token_heads()) { // checked by Artifact::verifySemantics
    const uint32_t first = m->model().outputs()->size() - heads->size();
    for (uint32_t k = 0; k < heads->size(); ++k) {
      const encm::TokenHead &h = *heads->Get(k);
      const encm::Value &v = *m->model().values()->Get(m->model().outputs()->Get(first + k));
      TokenHeadInfo info{h.kind(), first + k, v.shape()->Get(v.shape()->size() - 1), h.skip_leading(), {}, {}};
      if (h.skip_ids())
        info.skipIds.assign(h.skip_ids()->begin(), h.skip_ids()->end());
      std::sort(info.skipIds.begin(), info.skipIds.end());
      if (h.roles())
        for (const encm::TokenRole *r : *h.roles()) {
          TokenRoleInfo role{r->name()->str(), r->marker_id(), r->max_length(), r->expansion_id(),
                             r->expansion_attended(), {}};
          if (r->skip_ids())
            role.skipIds.assign(r->skip_ids()->begin(), r->skip_ids()->end());
          std::sort(role.skipIds.begin(), role.skipIds.end());
          info.roles.push_back(std::move(role));
        }
      m->tokenHeads_.push_back(std::move(info));
    }
  }
  for (int32_t i = 0; i < md.num_labels(); ++i) // checked by Artifact::verifySemantics
    m->labels_.push_back(md.labels() ? md.labels()->Get(static_cast<flatbuffers::uoffset_t>(i))->str()
                                     : "LABEL_" + std::to_string(i)); // transformers' names when none are given
  if (md.passes())
    for (const flatbuffers::String *pass : *md.passes()) {
      if (pass->string_view() == "quantize-linear-int8")
        m->precision_ = "int8";
      else if (pass->string_view() == "convert-linear-bf16")
        m->precision_ = "bf16";
    }

  return m;
}

bool LoadedModel::hasPooledOutput() const {
  const auto *outputs = cuda_ ? model().cuda()->outputs() : model().outputs();
  return outputs && outputs->size() >= 2 + tokenHeads_.size() && !classifies();
}

const TokenHeadInfo *LoadedModel::tokenHead(encm::TokenHeadKind kind) const {
  for (const TokenHeadInfo &h : tokenHeads_)
    if (h.kind == kind)
      return &h;
  return nullptr;
}

bool LoadedModel::hasSparseOutput() const {
  return metadata().pooling() == encm::Pooling::Splade || tokenHead(encm::TokenHeadKind::LexicalWeights);
}

int64_t LoadedModel::multivectorDim() const {
  const TokenHeadInfo *h = tokenHead(encm::TokenHeadKind::MultiVector);
  return h ? h->width : 0;
}

const std::vector<TokenRoleInfo> &LoadedModel::roles() const {
  static const std::vector<TokenRoleInfo> kNone;
  const TokenHeadInfo *h = tokenHead(encm::TokenHeadKind::MultiVector);
  return h ? h->roles : kNone;
}

const TokenRoleInfo *LoadedModel::role(const char *name) const {
  const std::vector<TokenRoleInfo> &all = roles();
  std::string names;
  for (const TokenRoleInfo &r : all) {
    if (name && r.name == name)
      return &r;
    names += (names.empty() ? "'" : ", '") + r.name + "'";
  }
  if (all.empty() && !name)
    return nullptr;
  if (all.empty())
    fail(ENCRT_INVALID_ARGUMENT, artifact_->path(), ": the model has no roles (role '",
         std::string(name).substr(0, 200), "' asked for); pass none");
  if (!name)
    fail(ENCRT_INVALID_ARGUMENT, artifact_->path(), ": the model encodes a text as one of its roles (", names,
         "): name one (a ColBERT query and document are encoded differently)");
  fail(ENCRT_INVALID_ARGUMENT, artifact_->path(), ": no role named '", std::string(name).substr(0, 200),
       "' (the model's roles: ", names, ")");
}

RoleEncoding LoadedModel::encode(std::string_view text, int64_t index, std::string_view prompt,
                                 const TokenRoleInfo &role) const {
  // As PyLate: the tokenizer's ids cut one short of the length when a marker
  // follows, the marker after the first token, then the expansion.
  const bool marker = role.markerId >= 0;
  // At least [CLS] marker [SEP] (the artifact's max_length is, checked at load).
  const int32_t length = std::max(std::min(role.maxLength, truncateTo_), marker ? 3 : 2);
  RoleEncoding e;
  e.ids = encodeTo(text, index, prompt, length - (marker ? 1 : 0));
  if (marker)
    e.ids.insert(e.ids.begin() + std::min<size_t>(1, e.ids.size()), role.markerId);
  e.attended = static_cast<int32_t>(e.ids.size());
  if (role.expansionId >= 0) {
    e.ids.resize(static_cast<size_t>(length), role.expansionId);
    if (role.expansionAttended)
      e.attended = length;
  }
  return e;
}

const flatbuffers::Vector<flatbuffers::Offset<encm::Step>> *LoadedModel::runningSteps() const {
  return cuda_ ? model().cuda()->steps() : model().steps();
}

int32_t LoadedModel::numSteps() const {
  const auto *steps = runningSteps();
  return steps ? static_cast<int32_t>(steps->size()) : 0;
}

const encm::Step &LoadedModel::step(uint32_t index) const { return *runningSteps()->Get(index); }

void LoadedModel::checkText(std::string_view text, const std::string &name) const {
  if (!tokenizer_)
    fail(ENCRT_UNSUPPORTED, artifact_->path(),
         ": the artifact has no tokenizer (pass token ids instead)");
  if (static_cast<int64_t>(text.size()) > maxTextBytes_)
    fail(ENCRT_INVALID_ARGUMENT, name, " is ", text.size(), " bytes, more than max_text_bytes (",
         maxTextBytes_, "; raise it in encrt_model_options)");
}

std::vector<int32_t> LoadedModel::encode(std::string_view text, int64_t index, std::string_view prompt) const {
  return encodeTo(text, index, prompt, truncateTo_);
}

std::vector<int32_t> LoadedModel::encodeTo(std::string_view text, int64_t index, std::string_view prompt,
                                           int32_t maxLen) const {
  checkText(text, index < 0 ? std::string("text") : "texts[" + std::to_string(index) + "]");
  maxLen = std::max<int32_t>(maxLen, 2);
  if (prompt.empty())
    return tokenizer_->encode(text, maxLen);
  std::string prompted; // bounded: the prompt by the artifact's limit, the text by checkText
  prompted.reserve(prompt.size() + text.size());
  prompted.append(prompt).append(text);
  return tokenizer_->encode(prompted, maxLen);
}

std::string_view LoadedModel::promptText(const char *name) const {
  if (!name)
    return defaultPromptText_;
  if (!*name)
    return {};
  std::string names;
  for (const auto &[n, text] : prompts_) {
    if (n == name)
      return text;
    names += (names.empty() ? "" : ", ") + n;
  }
  fail(ENCRT_INVALID_ARGUMENT, artifact_->path(), ": no prompt named '", std::string(name).substr(0, 200), "' (",
       names.empty() ? std::string("the model has no prompts") : "the model's prompts: " + names, ")");
}

int64_t LoadedModel::countTokens(std::string_view text) const {
  checkText(text, "text");
  return static_cast<int64_t>(tokenizer_->encode(text, std::numeric_limits<int32_t>::max()).size());
}

std::vector<EncodedToken> LoadedModel::encodeTokens(std::string_view text, uint64_t maxTokens,
                                                   bool addSpecialTokens) const {
  checkText(text, "text");
  try {
    return tokenizer_->encodeTokens(text, static_cast<size_t>(std::min<uint64_t>(maxTokens, SIZE_MAX)),
                                    addSpecialTokens);
  } catch (const std::length_error &e) {
    fail(ENCRT_INVALID_ARGUMENT, e.what());
  } catch (const std::logic_error &e) {
    fail(ENCRT_UNSUPPORTED, artifact_->path(), ": ", e.what());
  }
}

std::string LoadedModel::decode(const int32_t *ids, size_t count, bool skipSpecialTokens) const {
  if (!tokenizer_)
    fail(ENCRT_UNSUPPORTED, artifact_->path(), ": the artifact has no tokenizer");
  if (!decoder_)
    fail(ENCRT_UNSUPPORTED, artifact_->path(), ": ", noDecoder_);
  try {
    return decoder_->decode(*tokenizer_, ids, count, skipSpecialTokens);
  } catch (const std::out_of_range &e) {
    fail(ENCRT_INVALID_ARGUMENT, e.what());
  }
}

PairEncoding LoadedModel::encodePair(std::string_view a, std::string_view b, PairTruncation strategy) const {
  checkText(a, "text a");
  checkText(b, "text b");
  try {
    return tokenizer_->encodePair(a, b, truncateTo_, strategy);
  } catch (const std::length_error &e) {
    fail(ENCRT_INVALID_ARGUMENT, e.what());
  } catch (const std::logic_error &e) {
    fail(ENCRT_UNSUPPORTED, artifact_->path(), ": ", e.what());
  }
}

} // namespace encrt::rt
