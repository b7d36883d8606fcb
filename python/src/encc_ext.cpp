//===- encc_ext.cpp - The `encc._encc` extension over libencrt's C API ----===//
//
// A thin layer: argument checks the C API would also make are left to it (its
// one-line message reaches Python unchanged, as the exception class the status
// code maps to, set by encc/__init__.py). The GIL is released while the
// runtime works; each calling thread gets its own session of the model, so
// threads sharing one Model run concurrently and safely. Outputs are written
// straight into the NumPy arrays returned.
//
//===----------------------------------------------------------------------===//
#include <encrt/encrt.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nb = nanobind;

namespace {

/// A runtime status turned into a C++ exception (translated to Python below).
struct StatusError {
  int code;
  std::string message;
};

/// Python exception classes by status code, registered by encc/__init__.py.
nb::dict &errorClasses() {
  static nb::dict *classes = new nb::dict();
  return *classes;
}

void check(encrt_status *status) {
  if (!status)
    return;
  StatusError e{static_cast<int>(encrt_status_get_code(status)), encrt_status_message(status)};
  encrt_status_free(status);
  throw e;
}

using FloatArray = nb::ndarray<nb::numpy, float>;
using IdMatrix = nb::ndarray<const int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using IdVector = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// A NumPy array of `shape` owning fresh memory.
template <typename T>
nb::ndarray<nb::numpy, T> newArrayOf(std::initializer_list<size_t> shape, T *&data) {
  size_t n = 1;
  for (size_t d : shape)
    n *= d;
  data = new T[n > 0 ? n : 1];
  nb::capsule owner(data, [](void *p) noexcept { delete[] static_cast<T *>(p); });
  return nb::ndarray<nb::numpy, T>(data, shape.size(), shape.begin(), owner);
}

FloatArray newArray(std::initializer_list<size_t> shape, float *&data) { return newArrayOf<float>(shape, data); }

std::vector<encrt_text> textsOf(const std::vector<nb::bytes> &texts) {
  std::vector<encrt_text> out;
  out.reserve(texts.size());
  for (const nb::bytes &t : texts)
    out.push_back({t.c_str(), static_cast<int64_t>(t.size())});
  return out;
}

class Model {
public:
  Model(const std::string &path, int threads, const std::optional<std::string> &device,
        const std::optional<std::string> &cpuTarget, const std::optional<std::string> &requireSha256,
        const std::optional<std::string> &trustedPublicKey, const std::optional<std::string> &signaturePath,
        int64_t maxTextBytes, int32_t maxSeqLength) {
    encrt_model_options o;
    encrt_model_options_initialize(&o);
    o.num_threads = threads;
    o.max_text_bytes = maxTextBytes;
    o.max_seq_length = maxSeqLength;
    auto cstr = [](const std::optional<std::string> &s) { return s ? s->c_str() : nullptr; };
    o.device = cstr(device);
    o.cpu_target = cstr(cpuTarget);
    o.require_sha256 = cstr(requireSha256);
    o.trusted_public_key = cstr(trustedPublicKey);
    o.signature_path = cstr(signaturePath);
    encrt_status *status;
    {
      nb::gil_scoped_release unlocked;
      status = encrt_model_load(path.c_str(), &o, &model_);
    }
    check(status);
    encrt_model_get_info(model_, &info_, sizeof info_);
  }
  ~Model() { close(); }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &[id, s] : sessions_)
      encrt_session_release(s);
    sessions_.clear();
    encrt_model_release(model_);
    model_ = nullptr;
  }

  bool closed() const { return model_ == nullptr; }

  nb::dict info() const {
    live();
    nb::dict d;
    d["architecture"] = info_.architecture ? info_.architecture : "";
    d["hidden_size"] = info_.hidden_size;
    d["embedding_dim"] = info_.embedding_dim;
    d["num_layers"] = info_.num_layers;
    d["num_heads"] = info_.num_heads;
    d["max_seq"] = info_.max_seq;
    d["vocab_size"] = info_.vocab_size;
    d["pooling"] = info_.pooling ? info_.pooling : "";
    d["normalize"] = bool(info_.normalize);
    d["has_pooled_output"] = bool(info_.has_pooled_output);
    d["cpu_target"] = info_.cpu_target ? info_.cpu_target : "";
    d["device"] = info_.device ? info_.device : "";
    d["num_steps"] = info_.num_steps;
    d["weight_bytes"] = info_.weight_bytes;
    d["random_weights"] = bool(info_.random_weights);
    d["type_vocab_size"] = info_.type_vocab_size;
    d["num_labels"] = info_.num_labels;
    d["score_activation"] = info_.score_activation ? info_.score_activation : "";
    d["precision"] = info_.precision ? info_.precision : "";
    d["similarity"] = info_.similarity ? info_.similarity : ""; // set for every loaded model (checked at load)
    d["sparse"] = bool(info_.sparse);
    d["multivector_dim"] = info_.multivector_dim;
    return d;
  }

  /// The ids of each text (special tokens included, truncated to max_seq).
  std::vector<std::vector<int32_t>> tokenize(const std::vector<nb::bytes> &texts) const {
    live();
    std::vector<encrt_text> t = textsOf(texts);
    std::vector<std::vector<int32_t>> out(t.size());
    encrt_status *status = nullptr;
    {
      nb::gil_scoped_release unlocked;
      std::vector<int32_t> ids(static_cast<size_t>(info_.max_seq) + 8);
      for (size_t i = 0; i < t.size() && !status; ++i) {
        int64_t count = 0;
        status = encrt_model_tokenize_text(model_, t[i], ids.data(), int64_t(ids.size()), &count);
        if (!status)
          out[i].assign(ids.begin(), ids.begin() + count);
      }
    }
    check(status);
    return out;
  }

  /// Each (a, b) pair in the tokenizer's pair template: (ids, type ids) per
  /// pair; truncation is an encrt_pair_truncation.
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>
  tokenizePairs(const std::vector<nb::bytes> &a, const std::vector<nb::bytes> &b, int truncation) const {
    live();
    if (a.size() != b.size())
      throw nb::value_error("as many first texts as second texts are needed");
    std::vector<encrt_text> ta = textsOf(a), tb = textsOf(b);
    std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> out(ta.size());
    encrt_status *status = nullptr;
    {
      nb::gil_scoped_release unlocked;
      const size_t cap = static_cast<size_t>(info_.max_seq) + 8;
      for (size_t i = 0; i < ta.size() && !status; ++i) {
        std::vector<int32_t> ids(cap), types(cap);
        int64_t count = 0;
        status = encrt_model_tokenize_pair(model_, ta[i], tb[i], truncation,
                                           ids.data(), types.data(), int64_t(cap), &count);
        if (!status) {
          ids.resize(size_t(count)), types.resize(size_t(count));
          out[i] = {std::move(ids), std::move(types)};
        }
      }
    }
    check(status);
    return out;
  }

  /// Runs right-padded ids [B, S] (and type ids [B, S], or None: all 0)
  /// with lengths [B]: (hidden [B, S, H] or None, pooled [B, H] (a
  /// classifier: logits [B, num_labels]) or None).
  nb::tuple run(IdMatrix ids, std::optional<IdMatrix> typeIds, IdVector lengths, bool hidden, bool pooled) {
    live();
    const size_t batch = ids.shape(0), seq = ids.shape(1), h = static_cast<size_t>(info_.hidden_size);
    if (lengths.shape(0) != batch)
      throw nb::value_error(("lengths has " + std::to_string(lengths.shape(0)) + " entries for a batch of " +
                             std::to_string(batch))
                                .c_str());
    if (typeIds && (typeIds->shape(0) != batch || typeIds->shape(1) != seq))
      throw nb::value_error("type_ids must have the shape of ids");
    const size_t width = info_.num_labels > 0 ? static_cast<size_t>(info_.num_labels) : h;
    float *hiddenData = nullptr, *pooledData = nullptr;
    nb::object hiddenOut = nb::none(), pooledOut = nb::none();
    if (hidden)
      hiddenOut = nb::cast(newArray({batch, seq, h}, hiddenData));
    if (pooled)
      pooledOut = nb::cast(newArray({batch, width}, pooledData));
    encrt_session *s = session();
    const int32_t *types = typeIds ? typeIds->data() : nullptr;
    encrt_status *status;
    {
      nb::gil_scoped_release unlocked;
      status = encrt_session_run_typed(s, ids.data(), types, lengths.data(), int64_t(batch), int64_t(seq),
                                       hiddenData, pooledData);
    }
    check(status);
    return nb::make_tuple(hiddenOut, pooledOut);
  }

  /// Token `id`'s string as the tokenizers library's id_to_token gives it.
  std::string token(int32_t id) const {
    live();
    const char *text = nullptr;
    int64_t size = 0;
    check(encrt_model_get_token(model_, id, &text, &size));
    return std::string(text, static_cast<size_t>(size));
  }

  /// The text of token ids, as the tokenizers library's decode gives it.
  std::string decode(const std::vector<int32_t> &ids, bool skipSpecialTokens) const {
    live();
    int64_t size = 0;
    const int64_t n = static_cast<int64_t>(ids.size());
    check(encrt_model_decode(model_, ids.data(), n, skipSpecialTokens ? 1 : 0, nullptr, 0, &size));
    std::string text(static_cast<size_t>(size), '\0');
    check(encrt_model_decode(model_, ids.data(), n, skipSpecialTokens ? 1 : 0, text.data(), size, &size));
    return text;
  }

  /// The model's prompts: (name, text, is the default), in the artifact's order.
  std::vector<std::tuple<std::string, std::string, bool>> prompts() const {
    live();
    std::vector<std::tuple<std::string, std::string, bool>> out;
    for (int64_t i = 0, n = encrt_model_prompt_count(model_); i < n; ++i) {
      const char *name = nullptr, *text = nullptr;
      int32_t isDefault = 0;
      check(encrt_model_get_prompt(model_, i, &name, &text, &isDefault));
      out.emplace_back(name, text, isDefault != 0);
    }
    return out;
  }

  /// A multi-vector model's roles (ColBERT's "query", "document"), in order.
  std::vector<std::string> roles() const {
    live();
    std::vector<std::string> out;
    for (int64_t i = 0, n = encrt_model_role_count(model_); i < n; ++i) {
      const char *name = nullptr;
      check(encrt_model_get_role(model_, i, &name));
      out.emplace_back(name);
    }
    return out;
  }

  /// Pooled (and, when the model normalises, L2-normalised) embeddings [N, D]
  /// of the texts as they are (the package puts prompts before them itself).
  FloatArray embed(const std::vector<nb::bytes> &texts) {
    live();
    std::vector<encrt_text> t = textsOf(texts);
    float *data = nullptr;
    FloatArray out = newArray({t.size(), static_cast<size_t>(info_.embedding_dim)}, data);
    encrt_session *s = session();
    encrt_status *status = nullptr;
    if (!t.empty()) {
      nb::gil_scoped_release unlocked;
      status = encrt_session_embed_prompted(s, "", t.data(), int64_t(t.size()), data);
    }
    check(status);
    return out;
  }

  /// A SPLADE model's sparse embeddings of the texts as they are
  /// (encrt_session_embed_sparse): counts [N], ids [N, top_k], weights
  /// [N, top_k]; text i's entries are the first counts[i] of its rows.
  nb::tuple embedSparse(const std::vector<nb::bytes> &texts, int32_t topK, float threshold) {
    live();
    std::vector<encrt_text> t = textsOf(texts);
    const size_t n = t.size(), k = topK > 0 ? static_cast<size_t>(topK) : 0;
    int32_t *counts = nullptr, *ids = nullptr;
    float *weights = nullptr;
    auto countsOut = newArrayOf<int32_t>({n}, counts);
    auto idsOut = newArrayOf<int32_t>({n, k}, ids);
    auto weightsOut = newArrayOf<float>({n, k}, weights);
    encrt_session *s = session();
    encrt_status *status = nullptr;
    {
      nb::gil_scoped_release unlocked;
      status = encrt_session_embed_sparse(s, "", t.data(), int64_t(n), topK, threshold, counts, ids, weights);
    }
    check(status);
    return nb::make_tuple(countsOut, idsOut, weightsOut);
  }

  /// The outputs of one pass over the texts as they are (encrt_session_encode):
  /// (dense [N, embedding_dim] or None, sparse counts [N], ids [N, top_k],
  /// weights [N, top_k] or three None (top_k 0), vector counts [N] int64 and
  /// vectors [rows, multivector_dim] or two None), the texts encoded as
  /// `role` (None: none).
  nb::tuple encodeOutputs(const std::vector<nb::bytes> &texts, bool dense, int32_t topK, float threshold,
                          bool vectors, const std::optional<std::string> &role) {
    live();
    std::vector<encrt_text> t = textsOf(texts);
    const size_t n = t.size(), k = topK > 0 ? static_cast<size_t>(topK) : 0;
    encrt_encode_outputs o;
    encrt_encode_outputs_initialize(&o);
    o.role = role ? role->c_str() : nullptr;
    nb::object denseOut = nb::none(), countsOut = nb::none(), idsOut = nb::none(), weightsOut = nb::none(),
               rowsOut = nb::none(), vectorsOut = nb::none();
    encrt_session *s = session();
    auto encode = [&] {
      encrt_status *status = nullptr;
      if (n) {
        nb::gil_scoped_release unlocked;
        status = encrt_session_encode(s, "", t.data(), int64_t(n), &o);
      }
      check(status);
    };
    int64_t *rows = nullptr;
    int64_t total = 0;
    if (vectors) { // each text's rows first (tokenising only), then the buffer
      rowsOut = nb::cast(newArrayOf<int64_t>({n}, rows));
      o.vector_counts = rows;
      encode();
      for (size_t i = 0; i < n; ++i)
        total += rows[i];
    }
    if (dense)
      denseOut = nb::cast(newArray({n, static_cast<size_t>(info_.embedding_dim)}, o.dense));
    if (topK != 0) {
      o.sparse_top_k = topK, o.sparse_threshold = threshold;
      countsOut = nb::cast(newArrayOf<int32_t>({n}, o.sparse_counts));
      idsOut = nb::cast(newArrayOf<int32_t>({n, k}, o.sparse_ids));
      weightsOut = nb::cast(newArrayOf<float>({n, k}, o.sparse_weights));
    }
    if (vectors) {
      vectorsOut = nb::cast(newArray({static_cast<size_t>(total), static_cast<size_t>(info_.multivector_dim)}, o.vectors));
      o.vectors_capacity = total;
    }
    encode();
    return nb::make_tuple(denseOut, countsOut, idsOut, weightsOut, rowsOut, vectorsOut);
  }

  /// A cross-encoder's scores of the pairs (a[i], b[i]) [N, num_labels]
  /// (activated as the model says); truncation is an encrt_pair_truncation.
  FloatArray scorePairs(const std::vector<nb::bytes> &a, const std::vector<nb::bytes> &b, int truncation) {
    live();
    if (a.size() != b.size())
      throw nb::value_error("as many first texts as second texts are needed");
    std::vector<encrt_text> ta = textsOf(a), tb = textsOf(b);
    float *data = nullptr;
    FloatArray out = newArray({ta.size(), static_cast<size_t>(std::max(info_.num_labels, 1))}, data);
    encrt_session *s = session();
    encrt_status *status = nullptr;
    {
      nb::gil_scoped_release unlocked;
      status = encrt_session_score_pairs(s, ta.data(), tb.data(), int64_t(ta.size()), truncation, data);
    }
    check(status);
    return out;
  }

private:
  void live() const {
    if (!model_)
      throw StatusError{ENCRT_INVALID_ARGUMENT, "the model is closed"};
  }

  /// This thread's session (created on first use).
  encrt_session *session() {
    std::lock_guard<std::mutex> lock(mutex_);
    live();
    encrt_session *&s = sessions_[std::this_thread::get_id()];
    if (!s)
      check(encrt_session_create(model_, nullptr, &s));
    return s;
  }

  encrt_model *model_ = nullptr;
  encrt_model_info info_{};
  mutable std::mutex mutex_;
  std::map<std::thread::id, encrt_session *> sessions_;
};

} // namespace

NB_MODULE(_encc, m) {
  m.doc() = "libencrt's C API for the encc package (use encc.Model)";
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError &e) {
      nb::object cls = errorClasses().contains(e.code) ? nb::object(errorClasses()[nb::int_(e.code)])
                                                       : nb::borrow(PyExc_RuntimeError);
      PyErr_SetObject(cls.ptr(), nb::str(e.message.c_str()).ptr());
    }
  });
  m.def("_set_error_classes", [](nb::dict classes) { errorClasses() = classes; });
  m.def("runtime_version", [] { return std::string(encrt_version()); });
  nb::class_<Model>(m, "_Model")
      .def(nb::init<const std::string &, int, const std::optional<std::string> &,
                    const std::optional<std::string> &, const std::optional<std::string> &,
                    const std::optional<std::string> &, const std::optional<std::string> &, int64_t, int32_t>(),
           nb::arg("path"), nb::arg("threads"), nb::arg("device").none(), nb::arg("cpu_target").none(),
           nb::arg("require_sha256").none(), nb::arg("trusted_public_key").none(),
           nb::arg("signature_path").none(), nb::arg("max_text_bytes"), nb::arg("max_seq_length"))
      .def("close", &Model::close)
      .def_prop_ro("closed", &Model::closed)
      .def("info", &Model::info)
      .def("tokenize", &Model::tokenize)
      .def("tokenize_pairs", &Model::tokenizePairs)
      .def("run", &Model::run, nb::arg("ids"), nb::arg("type_ids").none(), nb::arg("lengths"), nb::arg("hidden"),
           nb::arg("pooled"))
      .def("score_pairs", &Model::scorePairs)
      .def("prompts", &Model::prompts)
      .def("token", &Model::token)
      .def("decode", &Model::decode)
      .def("embed", &Model::embed)
      .def("embed_sparse", &Model::embedSparse)
      .def("roles", &Model::roles)
      .def("encode_outputs", &Model::encodeOutputs, nb::arg("texts"), nb::arg("dense"), nb::arg("top_k"),
           nb::arg("threshold"), nb::arg("vectors"), nb::arg("role").none());
}
