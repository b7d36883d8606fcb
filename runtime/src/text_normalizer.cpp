//===- text_normalizer.cpp - A tokenizer.json normalizer sequence ---------===//
//
// The origins follow tokenizer/normalizer.rs (NormalizedString::replace and
// transform_range) and normalizers/precompiled.rs (its list of (char,
// change) transformations).
//
//===----------------------------------------------------------------------===//
#include "text_normalizer.h"

#include "unicode.h"
#include "unicode_nfc.h"

#include <stdexcept>

namespace encrt {
namespace {

bool isWhiteSpace(char32_t cp) { return unicode::gpt2Class(cp) == unicode::Gpt2Class::Space; }

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// Replace: non-overlapping occurrences left to right (or runs of at least
/// minRepeat), as a regex / string replace_all. A replacement's bytes take
/// the origin of the last byte it replaced.
void replace(std::string_view text, const NormalizerStep &s, std::string &out, const std::vector<TextSpan> *in,
             std::vector<TextSpan> *origin) {
  const std::string_view p = s.pattern;
  auto keep = [&](size_t from, size_t to) {
    out.append(text.substr(from, to - from));
    if (origin)
      origin->insert(origin->end(), in->begin() + from, in->begin() + to);
  };
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t hit = text.find(p, pos);
    if (hit == std::string_view::npos)
      break;
    size_t end = hit + p.size(), count = 1;
    if (s.minRepeat > 0)
      for (; text.substr(end, p.size()) == p; end += p.size())
        ++count;
    keep(pos, hit);
    if (count >= static_cast<size_t>(std::max(s.minRepeat, 1))) {
      out += s.content;
      if (origin)
        origin->insert(origin->end(), s.content.size(), (*in)[end - 1]);
    } else {
      keep(hit, end);
    }
    pos = end;
  }
  keep(pos, text.size());
}

void strip(std::string_view text, const NormalizerStep &s, std::string &out, const std::vector<TextSpan> *in,
           std::vector<TextSpan> *origin) {
  auto strippable = [&](char32_t cp) { return s.stripSpacesOnly ? cp == ' ' : isWhiteSpace(cp); };
  size_t from = 0, to = text.size();
  if (s.stripLeft)
    for (size_t pos = 0; pos < text.size();) {
      char32_t cp;
      unicode::decodeUtf8(text, pos, cp);
      if (!strippable(cp))
        break;
      from = pos;
    }
  if (s.stripRight)
    while (to > from) {
      size_t start = to - 1;
      while (start > from && continuation(text[start]))
        --start;
      size_t pos = start;
      char32_t cp;
      unicode::decodeUtf8(text, pos, cp);
      if (!strippable(cp))
        break;
      to = start;
    }
  out.append(text.substr(from, to - from));
  if (origin)
    origin->assign(in->begin() + from, in->begin() + to);
}

/// The origins after the precompiled charsmap rewrote `text` into `out` by
/// `parts`, replaying the library's transformations: each new character
/// replaces the next old one (change 0), is inserted after it (change 1), or
/// replaces it and removes more (change < 0); a part shorter than what it
/// replaced folds the difference into the previous transformation, which the
/// first part has none of.
void precompiledOrigins(std::string_view text, std::string_view out,
                        const std::vector<PrecompiledCharsmap::Part> &parts, const std::vector<TextSpan> &in,
                        std::vector<TextSpan> &origin) {
  struct Change {
    uint32_t bytes;
    int64_t change;
  };
  std::vector<Change> changes;
  size_t at = 0;
  for (const PrecompiledCharsmap::Part &part : parts) {
    int64_t newChars = 0;
    for (size_t b = at; b < at + part.newBytes; ++b)
      if (!continuation(out[b]) || changes.empty()) { // (a stray byte counts as a character)
        changes.push_back({1, 0});
        ++newChars;
      } else {
        ++changes.back().bytes;
      }
    at += part.newBytes;
    const int64_t diff = newChars - int64_t(part.oldChars);
    if (diff > 0)
      for (size_t i = changes.size() - size_t(diff); i < changes.size(); ++i)
        changes[i].change = 1;
    else if (diff < 0 && !changes.empty())
      changes.back().change += diff;
  }
  std::vector<size_t> oldStarts; // byte offset of each old character
  for (size_t b = 0; b < text.size(); ++b)
    if (!continuation(text[b]))
      oldStarts.push_back(b);
  auto originOf = [&](size_t oldChar) {
    return oldChar < oldStarts.size() ? in[oldStarts[oldChar]] : in.empty() ? TextSpan{} : in.back();
  };
  origin.clear();
  size_t next = 0; // the next old character to replace
  for (const Change &c : changes) {
    TextSpan o;
    if (c.change > 0) {
      o = next == 0 ? TextSpan{} : originOf(next - 1);
    } else {
      o = originOf(next);
      next += 1 + size_t(-c.change);
    }
    origin.insert(origin.end(), c.bytes, o);
  }
}

} // namespace

void characterAlignments(std::string_view text, std::vector<TextSpan> &out) {
  out.clear();
  out.reserve(text.size());
  for (size_t b = 0; b < text.size();) {
    size_t end = b + 1;
    while (end < text.size() && continuation(text[end]))
      ++end;
    out.insert(out.end(), end - b, TextSpan{uint32_t(b), uint32_t(end)});
    b = end;
  }
}

TextNormalizer::TextNormalizer(const std::vector<NormalizerStep> &steps) {
  for (const NormalizerStep &s : steps) {
    Step step{s, nullptr};
    switch (s.kind) {
    case NormalizerStep::Kind::Precompiled:
      step.charsmap = std::make_shared<PrecompiledCharsmap>(s.charsmap);
      step.spec.charsmap.clear();
      break;
    case NormalizerStep::Kind::Replace:
      if (s.pattern.empty() || s.minRepeat < 0)
        throw std::invalid_argument("Replace normalizer: empty pattern or negative repeat count");
      for (const std::string *text : {&s.pattern, &s.content}) {
        std::string buffer;
        if (unicode::validUtf8(*text, buffer, "").size() != text->size())
          throw std::invalid_argument("Replace normalizer: pattern or content is not valid UTF-8");
      }
      break;
    case NormalizerStep::Kind::Prepend:
      if (s.content.empty() || unicode::validUtf8(s.content, step.spec.pattern, "").size() != s.content.size())
        throw std::invalid_argument("Prepend normalizer: empty or invalid UTF-8 content");
      step.spec.pattern.clear();
      break;
    case NormalizerStep::Kind::Strip:
    case NormalizerStep::Kind::Nfc:
      break;
    default:
      throw std::invalid_argument("unknown normalizer kind");
    }
    steps_.push_back(std::move(step));
  }
}

void TextNormalizer::apply(std::string_view text, std::string &out, std::vector<TextSpan> *origin) const {
  out.assign(text);
  std::vector<TextSpan> in;
  if (origin)
    characterAlignments(text, *origin);
  std::string next;
  std::vector<PrecompiledCharsmap::Part> parts;
  for (const Step &step : steps_) {
    next.clear();
    if (origin)
      in.swap(*origin), origin->clear();
    switch (step.spec.kind) {
    case NormalizerStep::Kind::Precompiled:
      parts.clear();
      step.charsmap->normalize(out, next, origin ? &parts : nullptr);
      if (origin)
        precompiledOrigins(out, next, parts, in, *origin);
      break;
    case NormalizerStep::Kind::Replace:
      replace(out, step.spec, next, origin ? &in : nullptr, origin);
      break;
    case NormalizerStep::Kind::Strip:
      strip(out, step.spec, next, origin ? &in : nullptr, origin);
      break;
    case NormalizerStep::Kind::Nfc:
      if (origin)
        *origin = in;
      unicode::nfc(out, next, origin);
      break;
    case NormalizerStep::Kind::Prepend: // the library's NormalizedString::prepend: only a non-empty text
      if (!out.empty())
        next = step.spec.content;
      next += out;
      if (origin) { // the inserted characters share the first one's origin
        origin->assign(next.size() - out.size(), in.empty() ? TextSpan{} : in.front());
        origin->insert(origin->end(), in.begin(), in.end());
      }
      break;
    }
    out.swap(next);
  }
}

} // namespace encrt
