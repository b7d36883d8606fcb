//===- InspectCommand.cpp - encc inspect ----------------------------------===//
//
// Reads the artifact's table itself (after libencrt has loaded and checked
// the whole file): the schema's closed sets by name, through exhaustive
// switches; "unknown" for a value the runtime refuses.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/CommandOutput.h"
#include "compiler/driver/JsonOutput.h"
#include "compiler/driver/RunCommands.h"
#include "compiler/driver/TokenizerText.h"

#include "encrt/artifact_generated.h"
#include "encrt/checksum.h"
#include "encrt/encrt.h"
#include "frontends/RegularFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace encc;

namespace {

// inspect reads the table itself: the schema's closed sets by name, with
// exhaustive switches; "unknown" / null for a value the runtime refuses.
/// Token head `k` of a verified model: its kind's name, its width and what
/// `encc inspect` says of it.
struct TokenHeadFacts {
  const char *kind;
  int64_t width;
  std::string summary;
};

TokenHeadFacts tokenHeadFacts(const encm::Model &m, uint32_t k) {
  const encm::TokenHead &h = *m.token_heads()->Get(k);
  const uint32_t output = m.outputs()->size() - m.token_heads()->size() + k;
  const auto *shape = m.values()->Get(m.outputs()->Get(output))->shape();
  const int64_t width = shape->Get(shape->size() - 1);
  switch (h.kind()) {
  case encm::TokenHeadKind::LexicalWeights:
    return {"lexical-weights", width,
            "a weight per token, " + std::to_string(h.skip_ids() ? h.skip_ids()->size() : 0) + " special ids left out"};
  case encm::TokenHeadKind::MultiVector: {
    std::string summary = std::to_string(width) + " dims per token, the first " + std::to_string(h.skip_leading()) +
                          " dropped";
    if (h.roles())
      for (const encm::TokenRole *r : *h.roles()) {
        summary += "; " + r->name()->str() + ": at most " + std::to_string(r->max_length()) + " tokens";
        if (r->marker_id() >= 0)
          summary += ", marker " + std::to_string(r->marker_id());
        if (r->expansion_id() >= 0)
          summary += std::string(", expanded with id ") + std::to_string(r->expansion_id()) +
                     (r->expansion_attended() ? " (attended)" : " (not attended)");
        if (r->skip_ids() && r->skip_ids()->size())
          summary += ", " + std::to_string(r->skip_ids()->size()) + " ids skipped";
      }
    return {"multi-vector", width, summary};
  }
  }
  return {"?", width, ""}; // unreachable: verified at load (-Werror=switch)
}

const char *poolingText(encm::Pooling pooling) {
  switch (pooling) {
  case encm::Pooling::None: return "none";
  case encm::Pooling::Cls: return "cls";
  case encm::Pooling::Mean: return "mean";
  case encm::Pooling::Last: return "last";
  case encm::Pooling::Splade: return "splade";
  }
  return "unknown";
}

const char *similarityText(encm::Similarity similarity) {
  switch (similarity) {
  case encm::Similarity::Cosine: return "cosine";
  case encm::Similarity::Dot: return "dot";
  case encm::Similarity::Euclidean: return "euclidean";
  case encm::Similarity::Manhattan: return "manhattan";
  }
  return "unknown";
}

const char *dtypeName(encm::DType t) { return encm::EnumNameDType(t); }

std::string shapeString(const flatbuffers::Vector<int64_t> *shape) {
  std::string s = "[";
  for (flatbuffers::uoffset_t i = 0; shape && i < shape->size(); ++i) {
    int64_t d = shape->Get(i);
    s += (i ? ", " : "") + (d == -1   ? std::string("batch")
                            : d == -2 ? std::string("seq")
                            : d == -3 ? std::string("tokens")
                                      : std::to_string(d));
  }
  return s + "]";
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

/// What `encc inspect --format=json` prints of the checked artifact `m`.
Json inspectJson(const std::string &path, size_t size, const encm::Model *m) {
  const encm::Metadata *md = m->metadata();
  const encm::WeightsFill *fill = m->weights_fill();
  auto strings = [&](const auto *list) {
    Json a = Json::array();
    if (list)
      for (auto *x : *list)
        a.push_back(x->str());
    return a;
  };
  Json j;
  j["file"] = path;
  j["file_bytes"] = static_cast<int64_t>(size);
  j["schema_version"] = static_cast<int64_t>(m->schema_version());
  j["schema_minor"] = static_cast<int64_t>(m->schema_minor());
  j["required_features"] = strings(m->required_features());
  Json &meta = j["metadata"];
  meta["architecture"] = str(md->architecture());
  meta["hidden_size"] = md->hidden_size();
  meta["num_layers"] = md->num_layers();
  meta["num_heads"] = md->num_heads();
  meta["intermediate_size"] = md->intermediate_size();
  meta["vocab_size"] = md->vocab_size();
  meta["max_seq"] = md->max_seq();
  meta["hidden_act"] = str(md->hidden_act());
  meta["pooling"] = poolingText(md->pooling());
  meta["normalize"] = md->normalize();
  meta["embedding_dim"] = md->embedding_dim() ? md->embedding_dim() : md->hidden_size();
  meta["similarity"] = similarityText(md->similarity());
  meta["prompts"] = Json::array();
  if (md->prompts())
    for (const encm::Prompt *p : *md->prompts())
      meta["prompts"].push_back(Json{{"name", str(p->name())}, {"text", str(p->text())},
                                     {"default", md->default_prompt() && md->default_prompt()->str() == str(p->name())}});
  meta["type_vocab_size"] = md->type_vocab_size();
  j["token_heads"] = Json::array();
  if (m->token_heads())
    for (uint32_t k = 0; k < m->token_heads()->size(); ++k) {
      const encm::TokenHead &h = *m->token_heads()->Get(k);
      const TokenHeadFacts facts = tokenHeadFacts(*m, k);
      Json skip = Json::array();
      if (h.skip_ids())
        for (int32_t id : *h.skip_ids())
          skip.push_back(id);
      Json roles = Json::array();
      if (h.roles())
        for (const encm::TokenRole *r : *h.roles()) {
          std::vector<int32_t> ids;
          if (r->skip_ids())
            ids.assign(r->skip_ids()->begin(), r->skip_ids()->end());
          roles.push_back(Json{{"name", str(r->name())}, {"marker_id", r->marker_id()}, {"max_length", r->max_length()},
                               {"expansion_id", r->expansion_id()}, {"expansion_attended", r->expansion_attended()},
                               {"skip_ids", ids}});
        }
      j["token_heads"].push_back(Json{{"kind", facts.kind}, {"width", facts.width}, {"skip_leading", h.skip_leading()},
                                      {"skip_ids", std::move(skip)}, {"roles", std::move(roles)}});
    }
  meta["num_labels"] = md->num_labels();
  meta["score_activation"] = str(md->score_activation());
  meta["labels"] = strings(md->labels());
  meta["compiler_version"] = str(md->compiler_version());
  meta["source"] = str(md->source());
  meta["passes"] = strings(md->passes());
  Json &targets = j["targets"] = Json::array();
  if (m->code_objects())
    for (const encm::CodeObject *c : *m->code_objects()) {
      Json &t = targets.emplace_back();
      t["target"] = str(c->target());
      t["bytes"] = static_cast<int64_t>(c->size());
      t["features"] = strings(c->isa_features());
    }
  j["weights_bytes"] = static_cast<int64_t>(m->weights_size());
  j["random_weights"] = fill != nullptr;
  if (fill)
    j["random_weights_seed"] = static_cast<int64_t>(fill->seed());
  const TokenizerText tokenizer = describeTokenizer(m->tokenizer());
  j["vocab_size"] = static_cast<int64_t>(tokenizer.vocabTokens);
  j["tokenizer"] = tokenizer.kind;
  if (tokenizer.components)
    j["tokenizer_components"] = {{"normalizers", tokenizer.normalizers},
                                 {"pre_tokenizers", tokenizer.preTokenizers}};
  Json &tensors = j["tensors"] = Json::array();
  for (const encm::Value *v : *m->values())
    if (v->kind() == encm::ValueKind::Weight) {
      Json &t = tensors.emplace_back();
      t["name"] = str(v->name());
      t["dtype"] = dtypeName(v->dtype());
      t["shape"] = shapeString(v->shape());
      t["bytes"] = static_cast<int64_t>(v->weight_bytes());
    }
  auto steps = [&](const auto *list, bool withOperands) {
    Json a = Json::array();
    for (const encm::Step *s : *list) {
      Json &step = a.emplace_back();
      step["op"] = str(s->op());
      step["kernel"] = str(s->kernel());
      if (withOperands)
        step["operands"] = s->operands() ? std::vector<uint32_t>(s->operands()->begin(), s->operands()->end())
                                         : std::vector<uint32_t>{};
    }
    return a;
  };
  j["steps"] = steps(m->steps(), true);
  if (const encm::CudaPlan *cp = m->cuda(); cp && cp->steps())
    j["cuda_steps"] = steps(cp->steps(), false);
return j;
}

} // namespace

int encc::inspectCommand(const Args &args) {
  if (args.positionals.size() != 1)
    return fail("'encc inspect' takes one artifact: encc inspect model.encm [--format=json]");
  const std::string &path = args.positionals[0];
  auto bufOr = readRegularFile(path, kMaxArtifactFileBytes, "artifact");
  if (!bufOr)
    return fail(llvm::toString(bufOr.takeError()));
  const auto *data = reinterpret_cast<const uint8_t *>((*bufOr)->getBufferStart());
  size_t size = (*bufOr)->getBufferSize();
  if (size < 64 || std::memcmp(data + size - ENCM_TRAILER_SIZE, ENCM_TRAILER_MAGIC, 8) != 0)
    return fail(path + ": not an .encm artifact or truncated (no checksum trailer)");
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i)
    stored |= uint64_t(data[size - 8 + i]) << (8 * i);
  if (encm_checksum64(data, size - ENCM_TRAILER_SIZE) != stored)
    return fail(path + ": checksum mismatch (file damaged or truncated)");
  flatbuffers::Verifier verifier(data, size - ENCM_TRAILER_SIZE);
  if (!encm::ModelBufferHasIdentifier(data) || !encm::VerifyModelBuffer(verifier))
    return fail(path + ": not a valid .encm FlatBuffer");
  const encm::Model *m = encm::GetModel(data);
  const encm::Metadata *md = m->metadata();
  const encm::WeightsFill *fill = m->weights_fill();
  if (!md || !m->values() || !m->steps())
    return fail(path + ": artifact lacks metadata, values or steps");

  // The plans the artifact carries: the CPU plan (empty when compiled for CUDA
  // only) and the CUDA plan.
  struct PlanView {
    const char *name;
    const flatbuffers::Vector<flatbuffers::Offset<encm::Value>> *values;
    const flatbuffers::Vector<flatbuffers::Offset<encm::Step>> *steps;
    const flatbuffers::Vector<uint32_t> *outputs;
  };
  std::vector<PlanView> plans;
  if (m->steps()->size() != 0)
    plans.push_back({"cpu", m->values(), m->steps(), m->outputs()});
  if (const encm::CudaPlan *cp = m->cuda(); cp && cp->values() && cp->steps())
    plans.push_back({cp->dtype() == encm::DType::BF16 ? "cuda (bf16)" : "cuda (f16)", cp->values(), cp->steps(),
                     cp->outputs()});
  std::set<uint64_t> weightOffsets; // a tensor both plans use is stored once
  for (const PlanView &pv : plans)
    for (const encm::Value *v : *pv.values)
      if (v->kind() == encm::ValueKind::Weight)
        weightOffsets.insert(v->weight_offset());
  const uint64_t weightCount = weightOffsets.size();
  const uint32_t heads = m->token_heads() ? m->token_heads()->size() : 0;
  const bool pooled = !plans.empty() && plans[0].outputs && plans[0].outputs->size() > 1 + heads;

  if (args.get("format") == "json") {
    printJson(llvm::outs(), inspectJson(path, size, m), 2);
    return 0;
  }

  auto &os = llvm::outs();
  std::string features;
  if (m->required_features())
    for (const flatbuffers::String *f : *m->required_features())
      features += (features.empty() ? " (requires " : ", ") + (f ? f->str() : std::string());
  os << path << ": " << num(size / 1e6, 1) << " MB, schema " << m->schema_version() << "." << m->schema_minor()
     << (features.empty() ? "" : features + ")") << ", compiled by encc " << str(md->compiler_version()) << " from "
     << str(md->source()) << "\n";
  os << "model:   " << str(md->architecture()) << ", " << md->num_layers() << " layers, hidden " << md->hidden_size()
     << ", " << md->num_heads() << " heads, intermediate " << md->intermediate_size() << ", vocab "
     << md->vocab_size() << ", " << str(md->hidden_act()) << "\n";
  os << "input:   ids + lengths" << (md->type_vocab_size() >= 2 ? " + token type ids (" + std::to_string(md->type_vocab_size()) + " types)" : "")
     << ", up to " << md->max_seq() << " tokens per sequence\n";
  os << "output:  last hidden state"
     << (md->num_labels() > 0 ? ", scores (" + std::to_string(md->num_labels()) + (md->num_labels() == 1 ? " label, " : " labels, ") +
                                    str(md->score_activation()) + "; a cross-encoder: encc rerank)"
         : pooled ? ", pooled (" + std::string(poolingText(md->pooling())) +
                        (md->pooling() == encm::Pooling::Splade
                             ? ": one weight per vocabulary entry, " + std::to_string(md->embedding_dim())
                             : md->embedding_dim() ? ", Dense to " + std::to_string(md->embedding_dim()) + " dims"
                                                   : "") +
                        (md->normalize() ? ", L2-normalised)" : ")")
                  : std::string());
  if (m->token_heads())
    for (uint32_t k = 0; k < m->token_heads()->size(); ++k) {
      const TokenHeadFacts facts = tokenHeadFacts(*m, k);
      os << ", " << facts.kind << " (" << facts.summary << ")";
    }
  os << "\n";
  if (pooled && md->similarity() != encm::Similarity::Cosine)
    os << "similarity: " << similarityText(md->similarity()) << " (sentence-transformers' similarity_fn_name)\n";
  bool namedLabels = false; // other than transformers' defaults LABEL_0, LABEL_1, ...
  if (md->labels())
    for (flatbuffers::uoffset_t i = 0; i < md->labels()->size(); ++i)
      namedLabels |= str(md->labels()->Get(i)) != "LABEL_" + std::to_string(i);
  if (namedLabels) {
    os << "labels:  ";
    constexpr flatbuffers::uoffset_t kShown = 16;
    for (flatbuffers::uoffset_t i = 0; i < std::min(md->labels()->size(), kShown); ++i)
      os << (i ? ", " : "") << str(md->labels()->Get(i));
    if (md->labels()->size() > kShown)
      os << ", ... (" << md->labels()->size() << " in all)";
    os << "\n";
  }
  if (md->prompts() && md->prompts()->size() > 0) {
    os << "prompts: ";
    for (flatbuffers::uoffset_t i = 0; i < md->prompts()->size(); ++i) {
      const encm::Prompt *p = md->prompts()->Get(i);
      const bool isDefault = md->default_prompt() && md->default_prompt()->str() == str(p->name());
      os << (i ? ", " : "") << str(p->name()) << (isDefault ? " (default)" : "");
    }
    os << " (encc embed --prompt-name)\n";
  }
  os << "passes:  ";
  if (md->passes())
    for (flatbuffers::uoffset_t i = 0; i < md->passes()->size(); ++i)
      os << (i ? ", " : "") << md->passes()->Get(i)->str();
  os << "\ntargets:";
  if (m->code_objects())
    for (const encm::CodeObject *c : *m->code_objects()) {
      os << " " << str(c->target()) << " (" << num(c->size() / 1e3, 0) << " KB; needs";
      if (c->isa_features())
        for (auto *f : *c->isa_features())
          os << " " << f->str();
      os << ")";
    }
  os << "\nweights: " << weightCount << " tensors, " << num(m->weights_size() / 1e6, 1) << " MB"
     << (fill ? " (generated at load, not stored)" : "") << "\n";
  if (fill)
    os << randomWeightsLine(fill->seed()) << "\n";
  const TokenizerText tokenizer = describeTokenizer(m->tokenizer());
  if (tokenizer.vocabTokens == 0) {
    os << "tokenizer: none (the model runs on token ids only)\n";
  } else {
    os << "tokenizer: " << tokenizer.summary << "\n";
    auto list = [](const std::vector<std::string> &names) {
      return names.empty() ? std::string("none") : llvm::join(names, ", ");
    };
    if (tokenizer.components)
      os << "  normalizers:    " << list(tokenizer.normalizers) << "\n"
         << "  pre-tokenizers: " << list(tokenizer.preTokenizers) << "\n";
  }
  for (const PlanView &pv : plans) {
    std::map<std::string, int> opCounts;
    for (const encm::Step *s : *pv.steps)
      opCounts[str(s->op())]++;
    os << "plan:    " << pv.name << ", " << pv.steps->size() << " steps, " << pv.values->size() << " values\n";
    for (auto &kv : opCounts)
      os << "  " << llvm::left_justify(kv.first, 18) << " x" << kv.second << "\n";
  }
  if (args.has("verbose")) {
    for (const PlanView &pv : plans) {
      os << "steps (" << pv.name << "):\n";
      for (flatbuffers::uoffset_t i = 0; i < pv.steps->size(); ++i) {
        const encm::Step *s = pv.steps->Get(i);
        os << "  " << llvm::right_justify(std::to_string(i), 4) << "  " << llvm::left_justify(str(s->op()), 16) << " "
           << str(s->kernel()) << "\n";
      }
    }
    os << "tensors:\n";
    std::set<uint64_t> listed;
    for (const PlanView &pv : plans)
      for (const encm::Value *v : *pv.values)
        if (v->kind() == encm::ValueKind::Weight && listed.insert(v->weight_offset()).second)
          os << "  " << llvm::left_justify(str(v->name()), 60) << " " << dtypeName(v->dtype()) << " "
             << shapeString(v->shape()) << "\n";
  }
  return 0;
}
