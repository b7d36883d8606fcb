/*===- encrt.h - The libencrt C API ---------------------------------------===*
 *
 * Load a compiled .encm artifact, create sessions on it and run them on token
 * ids (or on texts, through the artifact's tokenizer). Plain C with a stable
 * ABI: opaque handles, `encrt_<object>_<verb>`, outputs last with an `out_`
 * prefix. Every fallible call returns an `encrt_status *`: NULL on success,
 * otherwise an error the caller owns and frees with encrt_status_free.
 *
 * Thread safety:
 *   encrt_status   - owned by one caller; not shared.
 *   encrt_model    - immutable after load: every function taking a
 *                    `const encrt_model *` and encrt_session_create may be
 *                    called from any number of threads at once. Release it
 *                    once; sessions keep what they need alive.
 *   encrt_session  - NOT thread-safe: use one session per thread. Sessions of
 *                    one model share its thread pool (their steps interleave).
 *                    A run or embed on a session that another thread is
 *                    running returns ENCRT_INVALID_ARGUMENT ("the session is
 *                    in use by another thread"), never corrupted results.
 *
 * Evolving without breaking callers (API version 1, soname libencrt.so.1):
 *   - Structs the caller passes in (encrt_model_options,
 *     encrt_session_options) start with `struct_size`, which their
 *     *_initialize function sets to the size the caller was compiled with.
 *     The library reads only the fields inside struct_size and defaults the
 *     rest, so fields are only ever appended; a struct_size that was never
 *     initialised is an ENCRT_INVALID_ARGUMENT error, not a guess.
 *   - Structs the library fills (encrt_model_info, encrt_step_profile) are
 *     passed with their size (`sizeof`); the library writes at most that
 *     many bytes, so an older caller's smaller struct stays intact.
 *   - Texts are encrt_text (pointer + byte length): an embedded NUL is part
 *     of the text. The NUL-terminated forms remain for convenience.
 *   - encrt_api_version() says which of these rules and entry points the
 *     loaded library has (ENCRT_API_VERSION of the header it was built with).
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_ENCRT_H
#define ENCRT_ENCRT_H

#include <stddef.h>
#include <stdint.h>

#include "encrt/schema_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define ENCRT_API
#else
#define ENCRT_API __attribute__((visibility("default")))
#endif

/* Version 0: libencrt.so.0 (no struct sizes, NUL-terminated texts only).
   Version 1: struct_size / size arguments, encrt_text, encrt_api_version.
   Version 5: prompts (encrt_model_prompt_count, encrt_model_get_prompt,
   encrt_session_embed_prompted).
   Version 6: encrt_model_options.max_seq_length, encrt_model_info.similarity.
   Version 7: label names (encrt_model_get_label), encrt_model_info.embedding_dim.
   Version 8: sparse embeddings (encrt_session_embed_sparse), token strings
   (encrt_model_get_token).
   Version 9: tokens with their offsets (encrt_model_tokenize_offsets), ids
   back to text (encrt_model_decode).
   Version 10: several outputs of one pass (encrt_session_encode: bge-m3's
   dense, sparse and multi-vector outputs), encrt_model_info.sparse and
   .multivector_dim.
   Version 11: roles (ColBERT's query and document encodings:
   encrt_encode_outputs.role, encrt_model_role_count, encrt_model_get_role);
   a multi-vector model without a pooled output. */
#define ENCRT_API_VERSION 11

/*--- Status ---------------------------------------------------------------*/

typedef struct encrt_status encrt_status; /* NULL means success */

typedef enum encrt_status_code {
  ENCRT_OK = 0,
  ENCRT_INVALID_ARGUMENT = 1,
  ENCRT_IO_ERROR = 2,
  ENCRT_INVALID_ARTIFACT = 3,
  ENCRT_UNSUPPORTED = 4,
  ENCRT_OUT_OF_MEMORY = 5,
  ENCRT_INTERNAL = 6
} encrt_status_code;

/* ENCRT_OK for NULL. */
ENCRT_API encrt_status_code encrt_status_get_code(const encrt_status *status);
/* One line, e.g. "model.encm: checksum mismatch (file damaged or truncated)";
   "" for NULL. Valid until the status is freed. */
ENCRT_API const char *encrt_status_message(const encrt_status *status);
/* NULL is fine. */
ENCRT_API void encrt_status_free(encrt_status *status);

/*--- Model ----------------------------------------------------------------*/

typedef struct encrt_model encrt_model;
typedef struct encrt_session encrt_session;

/* A UTF-8 text of `size` bytes (not NUL-terminated; may contain NUL). `data`
   may be NULL only when size is 0. */
typedef struct encrt_text {
  const char *data;
  int64_t size;
} encrt_text;

typedef struct encrt_model_options {
  uint32_t struct_size;   /* sizeof(encrt_model_options); set by _initialize */
  int32_t num_threads;    /* threads of the model's pool; 0 = all cores;
                             at most 8 x the cores (at least 64 allowed).
                             The calling thread is one of them. On a
                             shared machine the pool may move its own
                             workers between the CPUs they may use (never
                             the calling thread, never outside the CPUs
                             the worker was allowed). */
  const char *cpu_target; /* e.g. "cpu-x86-64-v2"; NULL = best this CPU runs */
  /* "cpu", "cuda" (device 0), "cuda:N", or NULL / "auto": CUDA when the
     artifact has a CUDA plan and a CUDA device is present, else CPU.
     Asking for CUDA without a device (or a CUDA plan) is an ENCRT_UNSUPPORTED
     error ("no CUDA device: ..."), never a silent fallback. */
  const char *device;
  /* Texts longer than this many bytes are refused (ENCRT_INVALID_ARGUMENT)
     before tokenising; 0 = the default, 1 MiB. */
  int64_t max_text_bytes;
  /* Trust (docs/security.md): an artifact carries native code. When set,
     these are checked before any byte of the artifact is interpreted, and a
     failure is ENCRT_INVALID_ARTIFACT.
     require_sha256: 64 hex digits; the file's SHA-256 (what sha256sum
     prints) must equal it. trusted_public_key: 64 hex digits (the contents of
     `encc keygen`'s NAME.pub); the artifact must carry a valid signature by
     that key (`encc sign`) in signature_path (NULL: the artifact's path +
     ".sig"). NULL: not required; "" is an ENCRT_INVALID_ARGUMENT error.
     With neither require_sha256 nor trusted_public_key, the environment's
     ENCRT_TRUSTED_KEYS (comma-separated keys: 64 hex digits or NAME.pub
     files), when set, requires a signature by one of its keys
     (docs/security.md); set but malformed is ENCRT_INVALID_ARGUMENT. */
  const char *require_sha256;
  const char *trusted_public_key;
  const char *signature_path;
  /* API version 6: texts are cut to this many tokens (special tokens
     included; sentence-transformers' max_seq_length) instead of the compiled
     maximum, which it may not exceed (ENCRT_INVALID_ARGUMENT); 0 = the
     compiled maximum. Token ids passed in are not cut. */
  int32_t max_seq_length;
} encrt_model_options;

ENCRT_API void encrt_model_options_initialize(encrt_model_options *options);

/* Maps, verifies (checksum, FlatBuffers verifier, schema version, every id,
   offset and size) and loads the artifact's code. `options` may be NULL. */
ENCRT_API encrt_status *encrt_model_load(const char *path,
                                         const encrt_model_options *options,
                                         encrt_model **out_model);
/* NULL is fine. Sessions created from the model stay valid. */
ENCRT_API void encrt_model_release(encrt_model *model);

typedef struct encrt_model_info {
  const char *architecture; /* config.json model_type, e.g. "bert" */
  int32_t hidden_size, num_layers, num_heads, max_seq, vocab_size;
  const char *pooling; /* "none", "cls", "mean", "last", "splade" (SPLADE: embedding_dim = the vocabulary
                          size, one non-negative weight per token id, mostly zero) */
  int32_t normalize;
  int32_t has_pooled_output;
  const char *cpu_target; /* chosen CPU code object; "" on CUDA */
  int32_t num_steps;      /* of the plan that runs */
  uint64_t weight_bytes;
  const char *device;     /* "cpu" or "cuda:N <GPU name>" */
  int32_t random_weights; /* 1: weights generated at load (benchmarking only;
                             outputs are meaningless) */
  /* API version 2: */
  int32_t type_vocab_size; /* token types the model tells apart (BERT: 2;
                              1 for RoBERTa-likes) */
  int32_t num_labels;      /* > 0: a sequence-classification model (a
                              cross-encoder / reranker): encrt_session_score_pairs
                              scores text pairs; 0: an embedding model */
  const char *score_activation; /* with num_labels: "sigmoid" or "identity"
                                   (what score_pairs applies); else "" */
  /* API version 3: */
  const char *precision; /* what the CPU plan's Linears compute in: "fp32",
                            "bf16" (encc --quantize=bf16) or "int8"
                            (--quantize=int8); a CUDA plan uses its own
                            --cuda-dtype */
  /* API version 6: */
  const char *similarity; /* how the model's embeddings are compared
                             (sentence-transformers' similarity_fn_name):
                             "cosine" (also when the model names none), "dot",
                             "euclidean" or "manhattan"; the runtime computes
                             no similarity itself */
  /* API version 7: */
  int32_t embedding_dim; /* floats per pooled embedding (what embed writes per
                            text): hidden_size, or the width
                            sentence-transformers' Dense modules project to;
                            0 without a pooled output (classifiers included) */
  /* API version 10: */
  int32_t sparse;          /* 1: encrt_session_encode gives sparse outputs (a
                              SPLADE model, or a lexical-weights head: bge-m3) */
  int32_t multivector_dim; /* floats per token vector of encrt_session_encode's
                              multi-vector output (bge-m3's ColBERT head, a
                              ColBERT checkpoint's only output); 0: none */
} encrt_model_info;

/* Fills the first `info_size` bytes of *out_info (pass sizeof *out_info);
   zeroes for a NULL model. Strings stay valid while the model is alive. */
ENCRT_API void encrt_model_get_info(const encrt_model *model,
                                    encrt_model_info *out_info,
                                    size_t info_size);

/* [CLS] ids... [SEP] of `text` (UTF-8), truncated to max_seq ids: exactly the
   ids encrt_session_run expects for one sequence. *out_count is always set to
   the number of ids; with out_ids == NULL and capacity == 0 nothing is
   written (a size query); otherwise a capacity below the count is an error. */
ENCRT_API encrt_status *encrt_model_tokenize(const encrt_model *model,
                                             const char *text, int32_t *out_ids,
                                             int64_t capacity,
                                             int64_t *out_count);
/* The same for a text with an explicit byte length. */
ENCRT_API encrt_status *encrt_model_tokenize_text(const encrt_model *model,
                                                  encrt_text text,
                                                  int32_t *out_ids,
                                                  int64_t capacity,
                                                  int64_t *out_count);

/* API version 5: the model's prompts (sentence-transformers'
   config_sentence_transformers.json: a name such as "query" and the text put
   before a text when it is chosen), in the artifact's order; 0 for NULL. */
ENCRT_API int64_t encrt_model_prompt_count(const encrt_model *model);
/* Prompt `index` (< encrt_model_prompt_count): its name and text, NUL-
   terminated and valid while the model is alive; *out_is_default is 1 for
   the prompt embedding applies unless told otherwise. Out pointers may be
   NULL; an index out of range is ENCRT_INVALID_ARGUMENT. */
ENCRT_API encrt_status *encrt_model_get_prompt(const encrt_model *model,
                                               int64_t index,
                                               const char **out_name,
                                               const char **out_text,
                                               int32_t *out_is_default);

/* API version 7: the name of label `index` (< num_labels) of a sequence-
   classification model: config.json's id2label, or "LABEL_<index>" where the
   artifact names none (transformers' default). NUL-terminated UTF-8, valid
   while the model is alive; an index out of range (any index of an
   embedding model) is ENCRT_INVALID_ARGUMENT. */
ENCRT_API encrt_status *encrt_model_get_label(const encrt_model *model,
                                              int32_t index,
                                              const char **out_name);

/* API version 4: the number of ids `text` gives before truncation (special
   tokens included): more than max_seq means encrt_model_tokenize_text cuts
   it (a server answering "input too long" needs to know; the cost is one
   tokenisation). */
ENCRT_API encrt_status *encrt_model_count_tokens(const encrt_model *model,
                                                 encrt_text text,
                                                 int64_t *out_count);

/* How a text pair longer than max_seq is cut (the `tokenizers` library's
   truncation strategies): the longer text first, or only the first / second
   (an ENCRT_INVALID_ARGUMENT error when that text is too short). */
typedef enum encrt_pair_truncation {
  ENCRT_TRUNCATE_LONGEST_FIRST = 0,
  ENCRT_TRUNCATE_ONLY_FIRST = 1,
  ENCRT_TRUNCATE_ONLY_SECOND = 2
} encrt_pair_truncation;

/* A text pair (query and document, two sentences) in the tokenizer's pair
   template: [CLS] a [SEP] b [SEP] (token types 0 then 1), <s> a </s></s> b
   </s> (all 0), or what the artifact's tokenizer.json said, truncated to
   max_seq ids. truncation: an encrt_pair_truncation value (an int, so that
   any value can be passed and refused). out_ids and out_type_ids get
   *out_count entries each; the size query and capacity rules are
   encrt_model_tokenize's. ENCRT_UNSUPPORTED when the tokenizer has no pair
   template. */
ENCRT_API encrt_status *encrt_model_tokenize_pair(const encrt_model *model,
                                                  encrt_text a, encrt_text b,
                                                  int32_t truncation,
                                                  int32_t *out_ids,
                                                  int32_t *out_type_ids,
                                                  int64_t capacity,
                                                  int64_t *out_count);

/*--- Session --------------------------------------------------------------*/

typedef struct encrt_session_options {
  uint32_t struct_size;     /* sizeof(encrt_session_options); set by _initialize */
  int32_t enable_profiling; /* accumulate wall time per step */
} encrt_session_options;

ENCRT_API void encrt_session_options_initialize(encrt_session_options *options);

/* `options` may be NULL. */
ENCRT_API encrt_status *encrt_session_create(encrt_model *model,
                                             const encrt_session_options *options,
                                             encrt_session **out_session);
/* NULL is fine. */
ENCRT_API void encrt_session_release(encrt_session *session);

/* ids: [batch*seq] row-major, right-padded (ids past lengths[b] are ignored);
   lengths: [batch], 1 <= lengths[b] <= seq <= max_seq.
   out_hidden: batch*seq*hidden floats or NULL (rows past lengths[b]: 0 for
   packed plans, whose hidden output is [DIM_TOKENS, H] (every fused build);
   for padded plans what the model computes for padding: do not rely on them);
   out_pooled: batch*embedding_dim floats or NULL (error if requested and the model
   has no pooled output); for a sequence-classification model (num_labels >
   0) batch*num_labels raw logits (no activation) or NULL. */
ENCRT_API encrt_status *encrt_session_run(encrt_session *session,
                                          const int32_t *ids,
                                          const int32_t *lengths, int64_t batch,
                                          int64_t seq, float *out_hidden,
                                          float *out_pooled);

/* Scores `count` text pairs (query and document) with a sequence-
   classification model (num_labels > 0 in encrt_model_info): each pair is
   tokenized in the pair template (encrt_model_tokenize_pair, `truncation` an
   encrt_pair_truncation), run with its token types, and its num_labels
   logits go through the model's score_activation, as sentence-transformers'
   CrossEncoder.predict does. out_scores: count*num_labels floats. An
   embedding model is ENCRT_UNSUPPORTED. */
ENCRT_API encrt_status *encrt_session_score_pairs(encrt_session *session,
                                                  const encrt_text *first,
                                                  const encrt_text *second,
                                                  int64_t count,
                                                  int32_t truncation,
                                                  float *out_scores);

/* encrt_session_run with token types: type_ids [batch*seq] like ids (the
   segment of each token: 0 for the first text of a pair, 1 for the second,
   as encrt_model_tokenize_pair writes them); NULL = all 0, which is what
   encrt_session_run passes. Types at valid positions must be in
   [0, type_vocab_size) (encrt_model_info; a model with one type takes 0). */
ENCRT_API encrt_status *encrt_session_run_typed(encrt_session *session,
                                                const int32_t *ids,
                                                const int32_t *type_ids,
                                                const int32_t *lengths,
                                                int64_t batch, int64_t seq,
                                                float *out_hidden,
                                                float *out_pooled);

/* Tokenizes `count` UTF-8 texts, runs them and writes the pooled (and, if the
   model normalises, L2-normalised) embeddings: count*embedding_dim floats. A model
   with a default prompt (config_sentence_transformers.json's
   default_prompt_name) tokenises each text after it, as
   sentence-transformers' encode() does. */
ENCRT_API encrt_status *encrt_session_embed(encrt_session *session,
                                            const char *const *texts,
                                            int64_t count,
                                            float *out_embeddings);
/* The same for texts with explicit byte lengths. */
ENCRT_API encrt_status *encrt_session_embed_texts(encrt_session *session,
                                                  const encrt_text *texts,
                                                  int64_t count,
                                                  float *out_embeddings);

/* API version 5: encrt_session_embed_texts with prompt `prompt_name`'s text
   before each text (sentence-transformers' encode(prompt_name=...)): NULL is
   the model's default prompt (none if it has none), "" no prompt; a name the
   model lacks is ENCRT_INVALID_ARGUMENT (the message lists its prompts). */
ENCRT_API encrt_status *encrt_session_embed_prompted(encrt_session *session,
                                                     const char *prompt_name,
                                                     const encrt_text *texts,
                                                     int64_t count,
                                                     float *out_embeddings);

/* API version 8: token `id`'s string as the tokenizers library's id_to_token
   gives it (an added token's content, else its vocabulary entry, in the
   tokenizer's own spelling: "##ing", "\u0120world" for byte-level BPE,
   "\u2581the" for SentencePiece), valid while the model lives; *out_size its
   bytes (out_size may be NULL). An id nothing maps to is
   ENCRT_INVALID_ARGUMENT; a model without a tokenizer ENCRT_UNSUPPORTED. */
ENCRT_API encrt_status *encrt_model_get_token(const encrt_model *model,
                                              int32_t id,
                                              const char **out_text,
                                              int64_t *out_size);

/* API version 8: sparse embeddings of a SPLADE model (encrt_model_info.pooling
   "splade": one weight per token id, mostly zero). For each text, its weights
   above `threshold` (>= 0; 0 keeps every non-zero one), heaviest first (equal
   weights: the lower token id first), at most `top_k` of them (1 to
   embedding_dim; sentence-transformers' max_active_dims). Text i's entries go
   to out_ids / out_weights [i * top_k, i * top_k + out_counts[i]); its other
   slots are left as they are. prompt_name as encrt_session_embed_prompted.
   A model with another pooling is ENCRT_INVALID_ARGUMENT. The vocabulary-wide
   vectors are made in chunks of texts, not for all `count` at once. */
ENCRT_API encrt_status *encrt_session_embed_sparse(encrt_session *session,
                                                   const char *prompt_name,
                                                   const encrt_text *texts,
                                                   int64_t count, int32_t top_k,
                                                   float threshold,
                                                   int32_t *out_counts,
                                                   int32_t *out_ids,
                                                   float *out_weights);

/* API version 10: what encrt_session_encode writes. Initialise with
   encrt_encode_outputs_initialize, then point the outputs wanted at buffers;
   a NULL output is not written. The pass runs once whatever is asked. */
typedef struct encrt_encode_outputs {
  uint32_t struct_size;     /* sizeof(encrt_encode_outputs); set by _initialize */
  /* count x embedding_dim floats: the pooled embedding (encrt_session_embed's). */
  float *dense;
  /* Sparse (encrt_model_info.sparse): each text's entries above
     sparse_threshold (>= 0), heaviest first (equal weights: the lower id
     first), at most sparse_top_k (1 to vocab_size) of them, as
     encrt_session_embed_sparse writes them: text i's to sparse_ids /
     sparse_weights [i * sparse_top_k, + sparse_counts[i]). A SPLADE model's
     are its vocabulary-wide weights; a lexical-weights head's (bge-m3) are,
     per token id, the largest positive weight of the text's tokens, special
     tokens left out (FlagEmbedding's lexical weights). Asked for when
     sparse_top_k or any of the three pointers is set. */
  int32_t sparse_top_k;
  float sparse_threshold;
  int32_t *sparse_counts;   /* count */
  int32_t *sparse_ids;      /* count x sparse_top_k */
  float *sparse_weights;    /* count x sparse_top_k */
  /* Multi-vector (encrt_model_info.multivector_dim > 0): each text's token
     vectors (bge-m3: every token's but [CLS]'s, L2-normalised; a ColBERT
     checkpoint: as its role says, below), rows of
     multivector_dim floats, text after text. vector_counts[i] is text i's
     rows; it is filled whenever it is not NULL, before anything runs, so a
     caller can size `vectors` (a capacity below the total is
     ENCRT_INVALID_ARGUMENT, with vector_counts filled). */
  float *vectors;
  int64_t vectors_capacity; /* rows `vectors` holds */
  int64_t *vector_counts;   /* count */
  /* API version 11: the role the texts are encoded as (encrt_model_get_role;
     NULL: none). A model with roles (a ColBERT checkpoint: "query",
     "document") needs one, a model without refuses one. A role may put a
     marker token after [CLS], cut the text to its own length, pad it with
     expansion tokens ([MASK]: every query then has that many vectors) and
     leave some tokens' vectors out (a document's punctuation). */
  const char *role;
  /* API version 11, encrt_session_encode_ids only: per text, how many of its
     lengths[i] tokens are attention keys (1 .. lengths[i]); the rest attend
     to the text but are not attended to (a ColBERT query's expansion,
     encrt_model_tokenize_role's out_attended). NULL: every token. Needs a
     padded plan where any is shorter than its length. */
  const int32_t *attended_lengths;
} encrt_encode_outputs;

ENCRT_API void encrt_encode_outputs_initialize(encrt_encode_outputs *outputs);

/* API version 11: `text` as `role` encodes it (encrt_encode_outputs.role):
   the ids encrt_session_encode_ids takes for it, and in *out_attended how
   many of them are attention keys (its attended_lengths entry). Sizes as
   encrt_model_tokenize_text (out_ids NULL and capacity 0: a size query). */
ENCRT_API encrt_status *encrt_model_tokenize_role(const encrt_model *model, const char *role, encrt_text text,
                                                  int32_t *out_ids, int64_t capacity, int64_t *out_count,
                                                  int32_t *out_attended);

/* API version 11: the roles of a multi-vector model (0 without); *out_name
   the name of role `index` (0 .. count - 1; others ENCRT_INVALID_ARGUMENT),
   valid while the model lives. */
ENCRT_API int64_t encrt_model_role_count(const encrt_model *model);
ENCRT_API encrt_status *encrt_model_get_role(const encrt_model *model, int64_t index, const char **out_name);

/* API version 10: embeds `count` texts (each after prompt `prompt_name`'s
   text, as encrt_session_embed_prompted) in one pass of the model per chunk
   of texts and writes the outputs *outputs asks for. An output the model
   does not have is ENCRT_INVALID_ARGUMENT, as are a dense output of a SPLADE
   model (its sparse output is that) and sparse settings out of range. */
ENCRT_API encrt_status *encrt_session_encode(encrt_session *session,
                                             const char *prompt_name,
                                             const encrt_text *texts,
                                             int64_t count,
                                             const encrt_encode_outputs *outputs);

/* API version 10: encrt_session_encode's outputs of token ids (a server's
   batch): ids [batch * seq] and lengths [batch] as encrt_session_run takes
   them, in one pass; vector_counts[i] is lengths[i] less the skipped rows.
   The ids are taken as they are (a role's marker and expansion included,
   as encrt_model_tokenize_role gives them); a role's skipped ids apply, and
   a role whose expansion tokens are not attended to needs
   attended_lengths. */
ENCRT_API encrt_status *encrt_session_encode_ids(encrt_session *session,
                                                 const int32_t *ids,
                                                 const int32_t *lengths,
                                                 int64_t batch, int64_t seq,
                                                 const encrt_encode_outputs *outputs);

/* API version 9: one token of encrt_model_tokenize_offsets (a fixed layout:
   it is an array element, with no struct_size). */
typedef struct encrt_token {
  int32_t id;
  int32_t special; /* 1: the model's template added it ([CLS], </s>; start =
                      stop = 0); 0: a piece of the text, a special token
                      written in the text included (the tokenizers library's
                      special_tokens_mask) */
  int64_t start;   /* the bytes [start, stop) of the text the token covers: */
  int64_t stop;    /* the library's offsets, in bytes, quirks included (a
                      piece of a character covers the whole character;
                      RobertaProcessing / ByteLevel trim_offsets leave out a
                      piece's spaces; Metaspace's "\u2581" covers the
                      character after it) */
} encrt_token;

/* API version 9: the tokens of `text` (UTF-8) with their offsets, as the
   tokenizers library's Encoding holds them (ids, offsets, special tokens
   mask): add_special_tokens 1 puts them in the model's template (the ids of
   encrt_model_tokenize), 0 gives the text's pieces alone. max_tokens 0 keeps
   every piece; > 0 cuts the pieces so that at most max_tokens tokens remain
   (never fewer than the template's own). *out_count is always set; with
   out_tokens == NULL and capacity == 0 nothing is written (a size query);
   otherwise a capacity below the count is an error. An invalid UTF-8 byte is
   inside no token's offsets. A BPE or Unigram tokenizer in an artifact
   compiled before schema 9.6 is ENCRT_UNSUPPORTED (it did not record how the
   post-processor trims offsets: compile the model again). */
ENCRT_API encrt_status *encrt_model_tokenize_offsets(const encrt_model *model,
                                                     encrt_text text,
                                                     int32_t add_special_tokens,
                                                     int64_t max_tokens,
                                                     encrt_token *out_tokens,
                                                     int64_t capacity,
                                                     int64_t *out_count);

/* API version 9: the text of `count` token ids as the tokenizers library's
   decode gives it: each id's string (encrt_model_get_token), the special
   added tokens ([CLS], <s>, ...) left out with skip_special_tokens 1 (0
   keeps them), through the tokenizer.json decoder (WordPiece's "##" joins and
   clean-up, byte-level BPE's bytes back to UTF-8 with U+FFFD for invalid
   sequences, Metaspace's "\u2581" as spaces, byte fallback, ...). Writes at
   most `capacity` bytes to out_text (no NUL added) and sets *out_size to
   the text's size; out_text == NULL with capacity 0 is a size query, a
   smaller capacity an error. An id without a string is
   ENCRT_INVALID_ARGUMENT (the library drops it silently); a decoder encrt
   does not implement, or an artifact compiled before schema 9.6,
   ENCRT_UNSUPPORTED. */
ENCRT_API encrt_status *encrt_model_decode(const encrt_model *model,
                                           const int32_t *ids, int64_t count,
                                           int32_t skip_special_tokens,
                                           char *out_text, int64_t capacity,
                                           int64_t *out_size);

typedef struct encrt_step_profile {
  const char *kernel; /* valid while the session is alive */
  const char *op;
  int64_t calls;
  double total_ms;
} encrt_step_profile;

/* Number of plan steps when profiling is enabled, else 0. */
ENCRT_API int64_t encrt_session_profile_count(const encrt_session *session);
/* Accumulated over every run of the session, into the first `out_size`
   bytes of *out (pass sizeof *out); zeroes if out of range. */
ENCRT_API void encrt_session_profile_get(const encrt_session *session,
                                         int64_t index,
                                         encrt_step_profile *out,
                                         size_t out_size);

/* Bytes of the session's activation arena: the most any run so far needed
   (it grows to the largest (batch, seq) seen and is reused). */
ENCRT_API uint64_t encrt_session_arena_bytes(const encrt_session *session);

/*--- Misc -----------------------------------------------------------------*/

/* "0.1.0" */
ENCRT_API const char *encrt_version(void);
/* ENCRT_API_VERSION of the library (compare with the header's to detect a
   library older than the header a program was built with). */
ENCRT_API int32_t encrt_api_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_ENCRT_H */
