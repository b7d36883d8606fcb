/*===- schema_version.h - The .encm schema version ------------------------===*
 *
 * Model.schema_version of runtime/schema/artifact.fbs. encc writes it; the
 * runtime refuses any other version. Bump it on any incompatible change to
 * the schema or to the meaning of its fields.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_SCHEMA_VERSION_H
#define ENCRT_SCHEMA_VERSION_H

#define ENCM_SCHEMA_VERSION 8

/* The longest added token (Tokenizer.added_tokens content, bytes) the runtime
   accepts; encc refuses a tokenizer.json with a longer one. */
#define ENCM_MAX_ADDED_TOKEN_BYTES 256

#endif /* ENCRT_SCHEMA_VERSION_H */
