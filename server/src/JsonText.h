//===- JsonText.h - What encc-serve writes and checks as JSON text --------===//
//
// The embeddings go out as text built here rather than through nlohmann (a
// float written in the fewest digits that read back to the same float:
// std::to_chars), or as base64 of their little-endian bytes (OpenAI's
// encoding_format "base64").
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_SERVER_JSONTEXT_H
#define ENCC_SERVER_JSONTEXT_H

#include <cstddef>
#include <string>
#include <string_view>

namespace encc::serve {

/// Appends v in the fewest digits that read back to it (non-finite: null,
/// JSON has no NaN).
void appendFloat(std::string &out, float v);
/// Appends [v0,v1,...] (non-finite values as null).
void appendFloatArray(std::string &out, const float *v, size_t n);
/// Appends the base64 text (RFC 4648, padded) of n bytes.
void appendBase64(std::string &out, const void *data, size_t n);
/// Appends s as a JSON string literal (quotes, escapes).
void appendJsonString(std::string &out, std::string_view s);
/// The deepest nesting of arrays and objects in `text` (strings skipped), up
/// to `limit` + 1; run before a parser, which would recurse that deep.
int jsonNestingDepth(std::string_view text, int limit);

} // namespace encc::serve

#endif
