//===- TokenHeads.cpp - bge-m3's sparse and ColBERT heads ----------------===//
//
// FlagEmbedding's BGE-M3 model keeps two heads beside the XLM-R checkpoint:
// sparse_linear (hidden -> 1, relu: a weight per token) and colbert_linear
// (hidden -> D, then L2 normalisation: a vector per token but [CLS]). The
// released folder holds them as torch pickles (.pt), which encc does not
// read; as safetensors files (an nn.Linear's "weight" and "bias") they are
// compiled into the same pass as the dense [CLS] embedding.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/SafeTensors.h"

#include "encrt/schema_version.h"

using namespace encc;
using llvm::Twine;

namespace {

/// The out_features of the nn.Linear in `path` (its "weight" [out, hidden]
/// and "bias" [out]), checked against the model's hidden size.
llvm::Expected<int64_t> linearOutFeatures(const std::string &path, int64_t hidden) {
  auto file = SafeTensorsFile::open(path);
  if (!file)
    return file.takeError();
  const SafeTensorInfo *w = file->find("weight"), *b = file->find("bias");
  if (!w || !b)
    return hfError(path + ": expected an nn.Linear's tensors 'weight' and 'bias'");
  if (w->shape.size() != 2 || w->shape[1] != hidden || w->shape[0] < 1 || w->shape[0] > ENCM_MAX_EMBEDDING_DIM)
    return hfError(path + ": tensor 'weight' has shape " + shapeStr(w->shape) + ", expected [out, " + Twine(hidden) +
                   "] with 1 <= out <= " + Twine(ENCM_MAX_EMBEDDING_DIM));
  if (b->shape != std::vector<int64_t>{w->shape[0]})
    return hfError(path + ": tensor 'bias' has shape " + shapeStr(b->shape) + ", expected [" + Twine(w->shape[0]) +
                   "]");
  return w->shape[0];
}

} // namespace

llvm::Error encc::readTokenHeads(const std::string &dir, ModelConfig &c) {
  for (const char *head : {"sparse_linear", "colbert_linear"}) {
    const std::string st = dir + "/" + head + ".safetensors", pt = dir + "/" + head + ".pt";
    if (fileExists(st)) {
      auto out = linearOutFeatures(st, c.hidden);
      if (!out)
        return out.takeError();
      if (head == std::string("sparse_linear")) {
        if (*out != 1)
          return hfError(st + ": the sparse head gives one weight per token; its 'weight' has " + Twine(*out) +
                         " rows, expected 1");
        c.sparseHead = true;
      } else {
        c.colbertDim = *out;
      }
    } else if (fileExists(pt)) {
      return hfError(pt + ": a torch pickle, which encc does not read; convert it beside itself with\n"
                          "  python -c \"import torch, safetensors.torch as s; s.save_file({k: v.contiguous() for k, v "
                          "in torch.load('" + pt + "', map_location='cpu').items()}, '" + st + "')\"\n"
                          "or pass --no-token-heads to compile the dense output only");
    }
  }
  if ((c.sparseHead || c.colbertDim) && (c.pooling != Pooling::Cls || c.classifies() || !c.dense.empty() || c.colbert))
    return hfError(dir + ": bge-m3's heads (" + (c.sparseHead ? "sparse_linear" : "colbert_linear") +
                   ") go with a [CLS] embedding and no Dense modules; this folder's pooling is " +
                   poolingName(c.pooling) + (c.dense.empty() ? "" : " with Dense modules") +
                   (c.colbert ? ", a ColBERT checkpoint" : ""));
  return llvm::Error::success();
}
