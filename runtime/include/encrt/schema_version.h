/*===- schema_version.h - The .encm schema version ------------------------===*
 *
 * Model.schema_version of runtime/schema/artifact.fbs. encc writes it; the
 * runtime refuses any other version. Bump it on any incompatible change to
 * the schema or to the meaning of its fields.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_SCHEMA_VERSION_H
#define ENCRT_SCHEMA_VERSION_H

#define ENCM_SCHEMA_VERSION 6

#endif /* ENCRT_SCHEMA_VERSION_H */
