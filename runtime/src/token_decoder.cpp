//===- token_decoder.cpp - Token strings back to text ---------------------===//
//
// Follows the `tokenizers` library (0.23): tokenizer/mod.rs decode,
// decoders/wordpiece.rs, bpe.rs, byte_fallback.rs, fuse.rs, strip.rs,
// sequence.rs, pre_tokenizers/byte_level.rs and metaspace.rs (their Decoder
// impls), normalizers/replace.rs (as a decoder).
//
//===----------------------------------------------------------------------===//
#include "token_decoder.h"

#include "tokenizer.h"
#include "unicode.h"

#include <stdexcept>
#include <unordered_map>

namespace encrt {
namespace {

using Tokens = std::vector<std::string>;

/// `s` with every occurrence of `from` replaced by `to`, left to right.
std::string replaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string_view::npos; pos = hit + from.size())
    out.append(s, pos, hit - pos).append(to);
  out.append(s.substr(pos));
  return out;
}

/// The code points of valid UTF-8 `s`.
std::vector<char32_t> codePoints(std::string_view s) {
  std::vector<char32_t> cps;
  for (size_t pos = 0; pos < s.size();) {
    char32_t cp;
    if (unicode::decodeUtf8(s, pos, cp))
      cps.push_back(cp);
  }
  return cps;
}

/// Bytes as UTF-8 as Rust's String::from_utf8_lossy makes it: each maximal
/// invalid subpart (a lead byte and the continuation bytes that could still
/// have completed it, or one stray byte) as one U+FFFD.
std::string lossyUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t from = pos;
    char32_t cp;
    if (unicode::decodeUtf8(bytes, pos, cp)) {
      out.append(bytes, from, pos - from);
      continue;
    }
    // The second byte's range after each lead (Unicode Table 3-7), then 80..BF.
    const auto b = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
    const unsigned lead = b(from);
    size_t need = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF)
      need = 1;
    else if (lead >= 0xE0 && lead <= 0xEF)
      need = 2, lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;
    else if (lead >= 0xF0 && lead <= 0xF4)
      need = 3, lo = lead == 0xF0 ? 0x90 : 0x80, hi = lead == 0xF4 ? 0x8F : 0xBF;
    size_t end = from + 1;
    for (size_t k = 0; k < need && end < bytes.size(); ++k, ++end) {
      const unsigned c = b(end);
      if (c < (k == 0 ? lo : 0x80) || c > (k == 0 ? hi : 0xBF))
        break;
    }
    out += "\xef\xbf\xbd";
    pos = end;
  }
  return out;
}

void wordPiece(const DecoderStep &s, Tokens &tokens) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string &t = tokens[i];
    if (i != 0)
      t = t.compare(0, s.text.size(), s.text) == 0 && !s.text.empty() ? t.substr(s.text.size()) : " " + t;
    if (s.cleanup)
      for (auto [from, to] : {std::pair<const char *, const char *>{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","},
                              {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"},
                              {" 've", "'ve"}, {" 're", "'re"}})
        t = replaceAll(t, from, to);
  }
}

void byteLevel(Tokens &tokens) {
  static const std::unordered_map<char32_t, unsigned char> bytes = [] {
    std::unordered_map<char32_t, unsigned char> m;
    for (unsigned b = 0; b < 256; ++b)
      m[unicode::gpt2ByteChar(b)] = static_cast<unsigned char>(b);
    return m;
  }();
  std::string all;
  for (const std::string &t : tokens) {
    std::string mapped;
    bool whole = true; // a token with a character outside the alphabet is taken as its own bytes
    for (char32_t c : codePoints(t)) {
      auto it = bytes.find(c);
      if (it == bytes.end()) {
        whole = false;
        break;
      }
      mapped.push_back(static_cast<char>(it->second));
    }
    all += whole ? mapped : t;
  }
  tokens = {lossyUtf8(all)};
}

void metaspace(const DecoderStep &s, char32_t replacement, Tokens &tokens) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string out;
    for (char32_t c : codePoints(tokens[i])) {
      if (c != replacement)
        unicode::appendUtf8(out, c);
      else if (!(i == 0 && s.prepend))
        out += ' ';
    }
    tokens[i] = std::move(out);
  }
}

void byteFallback(Tokens &tokens) {
  Tokens out;
  std::string pending; // bytes of consecutive <0xXX> tokens
  size_t pendingCount = 0;
  auto flush = [&] {
    if (!pendingCount)
      return;
    std::string buffer;
    if (unicode::validUtf8(pending, buffer, "").size() == pending.size())
      out.push_back(pending);
    else
      out.insert(out.end(), pendingCount, "\xef\xbf\xbd");
    pending.clear(), pendingCount = 0;
  };
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  for (std::string &t : tokens) {
    // u8::from_str_radix on the two characters: either case, no sign.
    if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && hex(t[3]) >= 0 && hex(t[4]) >= 0) {
      pending.push_back(static_cast<char>(hex(t[3]) * 16 + hex(t[4])));
      ++pendingCount;
      continue;
    }
    flush();
    out.push_back(std::move(t));
  }
  flush();
  tokens = std::move(out);
}

void strip(const DecoderStep &s, char32_t content, Tokens &tokens) {
  for (std::string &t : tokens) {
    const std::vector<char32_t> cps = codePoints(t);
    size_t from = 0, to = cps.size();
    for (size_t i = 0; i < cps.size() && i < size_t(s.start) && cps[i] == content; ++i)
      from = i + 1;
    for (size_t i = 0; i < size_t(s.stop) && i < cps.size() && cps[cps.size() - 1 - i] == content; ++i)
      to = cps.size() - 1 - i;
    std::string out;
    for (size_t i = from; i < to; ++i)
      unicode::appendUtf8(out, cps[i]);
    t = std::move(out);
  }
}

void bpe(const DecoderStep &s, Tokens &tokens) {
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = replaceAll(tokens[i], s.text, i + 1 == tokens.size() ? "" : " ");
}

} // namespace

TokenDecoder::TokenDecoder(std::vector<DecoderStep> steps, std::unordered_set<std::string> specials)
    : steps_(std::move(steps)), specials_(std::move(specials)) {
  for (const DecoderStep &s : steps_) {
    char32_t c = 0;
    if (s.kind == DecoderStep::Kind::Metaspace || s.kind == DecoderStep::Kind::Strip) {
      const std::vector<char32_t> cps = codePoints(s.text);
      if (cps.size() != 1)
        throw std::invalid_argument("decoder: a Metaspace or Strip step needs one character");
      c = cps[0];
    }
    if (s.kind == DecoderStep::Kind::Replace && s.text.empty())
      throw std::invalid_argument("decoder: a Replace step with an empty pattern");
    if (s.kind == DecoderStep::Kind::Strip && (s.start < 0 || s.stop < 0))
      throw std::invalid_argument("decoder: a Strip step with a negative count");
    metaspace_.push_back(c);
  }
}

std::string TokenDecoder::decode(const Tokenizer &tokenizer, const int32_t *ids, size_t count,
                                 bool skipSpecialTokens) const {
  Tokens tokens;
  tokens.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string *t = tokenizer.token(ids[i]);
    if (!t)
      throw std::out_of_range("ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                              " is not in the vocabulary or the added tokens");
    if (!(skipSpecialTokens && specials_.count(*t)))
      tokens.push_back(*t);
  }
  if (steps_.empty()) { // no decoder: the strings joined by spaces
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i)
      out.append(i ? " " : "").append(tokens[i]);
    return out;
  }
  for (size_t k = 0; k < steps_.size(); ++k) {
    const DecoderStep &s = steps_[k];
    switch (s.kind) {
    case DecoderStep::Kind::WordPiece: wordPiece(s, tokens); break;
    case DecoderStep::Kind::ByteLevel: byteLevel(tokens); break;
    case DecoderStep::Kind::Metaspace: metaspace(s, metaspace_[k], tokens); break;
    case DecoderStep::Kind::Replace:
      for (std::string &t : tokens)
        t = replaceAll(t, s.text, s.content);
      break;
    case DecoderStep::Kind::ByteFallback: byteFallback(tokens); break;
    case DecoderStep::Kind::Fuse: {
      std::string all;
      for (const std::string &t : tokens)
        all += t;
      tokens = {all};
      break;
    }
    case DecoderStep::Kind::Strip: strip(s, metaspace_[k], tokens); break;
    case DecoderStep::Kind::Bpe: bpe(s, tokens); break;
    }
  }
  std::string out; // Decoder::decode: the chain's strings joined
  for (const std::string &t : tokens)
    out += t;
  return out;
}

} // namespace encrt
