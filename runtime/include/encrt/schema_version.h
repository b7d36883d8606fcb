/*===- schema_version.h - The .encm schema version ------------------------===*
 *
 * Model.schema_version (major) and Model.schema_minor of
 * runtime/schema/artifact.fbs. encc writes ENCM_SCHEMA_VERSION and
 * ENCM_SCHEMA_MINOR; the runtime reads the majors from
 * ENCM_OLDEST_SCHEMA_VERSION to ENCM_SCHEMA_VERSION and refuses an artifact
 * that requires a feature it does not know. Bump the major on an
 * incompatible change to the layout or the meaning of a field (a runtime of
 * the old major then refuses the artifact); add a field instead where the
 * old meaning stays: bump the minor, name a feature below, and have encc list
 * it in Model.required_features only in artifacts that use it, so those
 * artifacts are refused by runtimes that would ignore the field while others
 * still load everywhere.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_SCHEMA_VERSION_H
#define ENCRT_SCHEMA_VERSION_H

#define ENCM_SCHEMA_VERSION 9
#define ENCM_SCHEMA_MINOR 9
/* Schema 8 artifacts (the release before versions had minors) are 9.0. */
#define ENCM_OLDEST_SCHEMA_VERSION 8

/* The features an artifact may require (Model.required_features), with the
   minor that added them. */
#define ENCM_FEATURE_BPE_SPLIT "bpe-split" /* 9.1: Tokenizer.bpe_split other than Gpt2 */
#define ENCM_FEATURE_DEFAULT_PROMPT "default-prompt" /* 9.1: Metadata.default_prompt set */
#define ENCM_FEATURE_BPE_CHARS "bpe-chars" /* 9.2: Tokenizer.bpe_alphabet Chars (SentencePiece BPE) */
#define ENCM_FEATURE_EMBEDDING_DIM "embedding-dim" /* 9.4: Metadata.embedding_dim set (pooled width != hidden) */
#define ENCM_FEATURE_SPLADE "splade" /* 9.5: Metadata.pooling Splade (SPLADE's vocabulary-wide weights) */
#define ENCM_FEATURE_TOKEN_HEADS "token-heads" /* 9.7: Model.token_heads (bge-m3's sparse and ColBERT outputs) */
#define ENCM_FEATURE_TOKEN_ROLES "token-roles" /* 9.8: TokenHead.roles (ColBERT's query / document encodings) */
#define ENCM_FEATURE_TOKENIZER_COMPONENTS "tokenizer-components" /* 9.9: Tokenizer.pipeline (normalizers, pre-tokenizers, a model, a post-processor) */

/* Model.token_heads (9.7): at most ENCM_MAX_TOKEN_HEADS, a MultiVector's
   width at most ENCM_MAX_EMBEDDING_DIM and skip_leading at most
   ENCM_MAX_SKIP_LEADING, at most ENCM_MAX_SKIP_IDS skip_ids; a head at most
   ENCM_MAX_TOKEN_ROLES roles (9.8), each at most ENCM_MAX_SKIP_IDS skip_ids. */
#define ENCM_MAX_TOKEN_HEADS 4
#define ENCM_MAX_SKIP_LEADING 8
#define ENCM_MAX_SKIP_IDS 256
#define ENCM_MAX_TOKEN_ROLES 4

/* Metadata.embedding_dim: at most ENCM_MAX_EMBEDDING_DIM (Dense modules' out_features are read up to it). */
#define ENCM_MAX_EMBEDDING_DIM 65536

/* Metadata.prompts (9.1): at most ENCM_MAX_PROMPTS, names of 1 to
   ENCM_MAX_PROMPT_NAME_BYTES bytes (unique), texts of at most
   ENCM_MAX_PROMPT_BYTES. */
#define ENCM_MAX_PROMPTS 64
#define ENCM_MAX_PROMPT_NAME_BYTES 128
#define ENCM_MAX_PROMPT_BYTES 16384

/* Metadata.labels (9.3, no feature: a runtime that ignores them names labels
   LABEL_i): num_labels names of 1 to ENCM_MAX_LABEL_BYTES bytes of UTF-8. */
#define ENCM_MAX_LABEL_BYTES 256

/* Tokenizer.pipeline (9.9): at most ENCM_MAX_TOKENIZER_STEPS normalizers and
   as many pre-tokenizers. */
#define ENCM_MAX_TOKENIZER_STEPS 16

/* The longest added token (Tokenizer.added_tokens content, bytes) the runtime
   accepts; encc refuses a tokenizer.json with a longer one. */
#define ENCM_MAX_ADDED_TOKEN_BYTES 256

#endif /* ENCRT_SCHEMA_VERSION_H */
