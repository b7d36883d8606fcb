//===- TokenizerFuzzer.cpp - libFuzzer target: WordPiece and BPE tokenizers ===//
//
// Input: one option byte (lowercase, strip accents, split CJK, a small
// max_input_chars_per_word, the truncation length) then the text, any bytes
// (invalid UTF-8 included). A small fixed vocabulary with continuations,
// specials and non-ASCII pieces. Besides crashes and sanitizer reports it
// checks what must hold for every text: encode() is [CLS] ... [SEP], at most
// maxLen ids, every id in the vocabulary, and its inner ids are tokenize()'s
// pieces mapped through the vocabulary (so the two paths agree); again with
// a tokenizer.json's added tokens and pair template. The same
// text then goes through a byte-level BPE tokenizer (the 256 byte symbols,
// merges spelling a few words, <mask> with lstrip and a normalized added
// token with rstrip), checked the same way: <s> ... </s>, at most maxLen ids,
// every id one it can produce, and encode's ids are tokenize()'s pieces; again
// with the NFC normalizer, and NFC itself: valid UTF-8, idempotent, an input
// offset for every output byte.
// Then through the three SentencePiece Unigram tokenizers of
// tests/tokenizer/unigram (XLM-R's normalisers and Metaspace; WhitespaceSplit
// and byte_fallback; prepend_scheme "first"), checked the same way, and the
// input itself is tried as a precompiled charsmap (refused or used on the
// text, never read outside its bytes). Each tokenizer also encodes the input
// split in two as a text pair under the three truncation strategies, and
// through encodeTokens with and without the template (the same ids as
// encode, every offset a range of the text) and a decoder (valid UTF-8 out).
//
//===----------------------------------------------------------------------===//
#include "bpe_tokenizer.h"
#include "precompiled_charsmap.h"
#include "token_decoder.h"
#include "tests/tokenizer/ByteLevelVocab.h"
#include "tests/tokenizer/UnigramJson.h"
#include "tokenizer.h"
#include "unicode.h"
#include "unicode_nfc.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::vector<std::string> vocabulary() {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const char *w : {"the", "a", "an", "hello", "world", "un", "##able", "##s", "##ing",
                        "##ed", "play", "##er", "x", "##x", "caf", "##é", "café", "naïve",
                        "中", "文", "日本", "##語", "ü", "##ü", "é", "e", "##e", ",", ".", "!",
                        "?", "'", "\"", "(", ")", "-", "##-", "1", "2", "##1", "##2", "42",
                        "emoji", "😀", "##😀", "ß", "ss", "Ω", "ω", "i̇"})
    v.push_back(w);
  for (char c = 'a'; c <= 'z'; ++c) {
    v.push_back(std::string(1, c));
    v.push_back(std::string("##") + c);
  }
  return v;
}

[[noreturn]] void violated(const char *what) {
  std::fprintf(stderr, "tokenizer invariant violated: %s\n", what);
  std::abort();
}

/// The tokens with offsets (with and without the template): the ids are
/// encode()'s (with it) or the pieces between the template's (without), each
/// offset a range within the text; the ids decode (WordPiece's decoder, which
/// needs only token strings) to valid UTF-8.
void checkOffsets(const encrt::Tokenizer &tok, std::string_view text, int32_t maxLen) {
  const std::vector<int32_t> ids = tok.encode(text, maxLen);
  for (bool special : {true, false}) {
    const std::vector<encrt::EncodedToken> tokens = tok.encodeTokens(text, size_t(std::max(maxLen, 0)), special);
    size_t pieces = 0;
    for (const encrt::EncodedToken &t : tokens) {
      if (t.span.start > t.span.end || t.span.end > text.size())
        violated("an offset outside the text");
      if (t.special && (t.span.start != 0 || t.span.end != 0))
        violated("a template token with offsets");
      pieces += !t.special;
    }
    if (special) {
      if (tokens.size() != ids.size())
        violated("encodeTokens and encode disagree on the count");
      for (size_t i = 0; i < ids.size(); ++i)
        if (tokens[i].id != ids[i])
          violated("encodeTokens and encode disagree on an id");
    } else if (pieces != tokens.size()) {
      violated("a template token without the template");
    }
  }
  static const encrt::TokenDecoder decoder({{encrt::DecoderStep::Kind::WordPiece, "##", "", true},
                                            {encrt::DecoderStep::Kind::ByteFallback},
                                            {encrt::DecoderStep::Kind::Metaspace, "\xE2\x96\x81"},
                                            {encrt::DecoderStep::Kind::Strip, " ", "", false, true, 1, 1}},
                                           {"[CLS]", "<s>"});
  const std::string decoded = decoder.decode(tok, ids.data(), ids.size(), true);
  std::string buffer;
  if (encrt::unicode::validUtf8(decoded, buffer, "").size() != decoded.size())
    violated("a decoded text that is not valid UTF-8");
}

/// The text split in two as a pair, under each truncation strategy: at most
/// maxLen ids (the template's own at least), one type id per id, ids within
/// [0, maxId]; OnlyFirst / OnlySecond may refuse (std::length_error).
void checkPair(const encrt::Tokenizer &tok, std::string_view text, int32_t maxLen, int32_t maxId,
               size_t specials) {
  const std::string_view a = text.substr(0, text.size() / 3), b = text.substr(text.size() / 3);
  for (auto strategy : {encrt::PairTruncation::LongestFirst, encrt::PairTruncation::OnlyFirst,
                        encrt::PairTruncation::OnlySecond}) {
    try {
      const encrt::PairEncoding e = tok.encodePair(a, b, maxLen, strategy);
      if (e.ids.size() != e.typeIds.size() || e.ids.size() > std::max<size_t>(size_t(maxLen), specials) ||
          e.ids.size() < specials)
        violated("a pair's ids, type ids and maximum disagree");
      for (int32_t id : e.ids)
        if (id < 0 || id > maxId)
          violated("a pair id outside what the tokenizer produces");
    } catch (const std::length_error &) {
      if (strategy == encrt::PairTruncation::LongestFirst)
        violated("longest_first refused a pair");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static const std::vector<std::string> vocab = vocabulary();
  const uint8_t flags = data[0];
  encrt::WordPieceOptions o;
  o.lowercase = flags & 1;
  o.stripAccents = flags & 2;
  o.splitChinese = flags & 4;
  o.maxCharsPerWord = flags & 8 ? 5 : 100;
  o.unkId = 1, o.clsId = 2, o.sepId = 3, o.padId = 0;
  const int32_t maxLen = 2 + (flags >> 4) * 3; // 2..47
  // Constructed per input (options vary); the vocabulary is small.
  encrt::WordPieceTokenizer tok(vocab, o);
  std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);

  std::vector<std::string> pieces = tok.tokenize(text);
  std::vector<int32_t> ids = tok.encode(text, maxLen);
  if (ids.size() < 2 || ids.size() > static_cast<size_t>(maxLen))
    violated("encode length outside [2, maxLen]");
  if (ids.front() != o.clsId || ids.back() != o.sepId)
    violated("encode is not [CLS] ... [SEP]");
  checkPair(tok, text, maxLen, int32_t(vocab.size()) - 1, 3);
  checkOffsets(tok, text, maxLen);
  const size_t inner = ids.size() - 2;
  if (inner != std::min(pieces.size(), static_cast<size_t>(maxLen - 2)))
    violated("encode and tokenize disagree on the number of pieces");
  for (size_t i = 0; i < inner; ++i) {
    const int32_t id = ids[i + 1];
    if (id < 0 || static_cast<size_t>(id) >= vocab.size())
      violated("id outside the vocabulary");
    if (vocab[id] != pieces[i])
      violated("encode's id is not tokenize's piece");
  }

  // The same options with a tokenizer.json's added tokens (MPNet's kind: a
  // normalized one matched on the normalised text, one with lstrip past the
  // vocabulary) and a RobertaProcessing pair template.
  encrt::WordPieceSpecials specials;
  const int32_t maskId = int32_t(vocab.size()) + 5;
  specials.addedTokens = {{"[CLS]", 2, true, false, false, false},
                          {"[SEP]", 3, true, false, false, false},
                          {"<UNK>", 1, true, false, false, /*normalized=*/true},
                          {"<mask>", maskId, true, /*lstrip=*/true, false, false}};
  specials.pairTemplate = {{2, -1, 3, 3, -2, 3}, {0, 0, 0, 0, 0, 0}};
  encrt::WordPieceTokenizer added(vocab, o, specials);
  if (added.maxId() != maskId)
    violated("WordPiece maxId is not the largest added id");
  pieces = added.tokenize(text);
  ids = added.encode(text, maxLen);
  if (ids.size() < 2 || ids.size() > static_cast<size_t>(maxLen) || ids.front() != o.clsId || ids.back() != o.sepId)
    violated("WordPiece (added tokens) encode is not [CLS] ... [SEP] within maxLen");
  checkPair(added, text, maxLen, maskId, 4);
  checkOffsets(added, text, maxLen);
  if (ids.size() - 2 != std::min(pieces.size(), static_cast<size_t>(maxLen - 2)))
    violated("WordPiece (added tokens) encode and tokenize disagree on the number of pieces");
  for (size_t i = 1; i + 1 < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (id < 0 || id > maskId || (id < maskId && static_cast<size_t>(id) >= vocab.size()))
      violated("WordPiece (added tokens) id outside what it can produce");
    if ((id == maskId ? std::string("<mask>") : vocab[id]) != pieces[i - 1])
      violated("WordPiece (added tokens) encode's id is not tokenize's piece");
  }

  static const encc::testing::ByteLevelVocab bpe = encc::testing::byteLevelVocab(
      {" the", "the", " hello", "hello", " world", "ing", " a", "café", "'s", "  ", "123"});
  // Without a normalizer, with NFC (GPT-NeoX's, ModernBERT's), and with the
  // Split regexes (Qwen2's with NFC, cl100k's without).
  static const std::vector<encrt::BytePairTokenizer> bpeToks = [] {
    std::vector<encrt::BytePairTokenizer> toks;
    for (auto [nfc, split] : {std::pair{false, encrt::BpeSplit::Gpt2}, {true, encrt::BpeSplit::Gpt2},
                              {true, encrt::BpeSplit::Qwen2}, {false, encrt::BpeSplit::Cl100k}}) {
      encrt::BpeOptions bo;
      bo.split = split;
      bo.templateIds = {0, encrt::BpeOptions::kSequence, 1};
      bo.pairTemplate = {{0, encrt::PairTemplate::kFirst, 1, 1, encrt::PairTemplate::kSecond, 1}, {0, 0, 0, 0, 0, 0}};
      if (nfc) {
        encrt::NormalizerStep step;
        step.kind = encrt::NormalizerStep::Kind::Nfc;
        bo.normalizers.push_back(step);
      }
      std::vector<encrt::AddedToken> added = {{"<mask>", 9000, true, true, false, false},
                                              {"[X]", 9001, false, false, true, true}};
      toks.emplace_back(bpe.vocab, bpe.merges, added, bo);
    }
    return toks;
  }();
  for (const encrt::BytePairTokenizer &bpeTok : bpeToks) {
    checkPair(bpeTok, text, maxLen, bpeTok.maxId(), 4);
    checkOffsets(bpeTok, text, maxLen);
    pieces = bpeTok.tokenize(text);
    ids = bpeTok.encode(text, maxLen);
    if (ids.size() < 2 || ids.size() > static_cast<size_t>(maxLen) || ids.front() != 0 || ids.back() != 1)
      violated("BPE encode is not <s> ... </s> within maxLen");
    if (ids.size() - 2 != std::min(pieces.size(), static_cast<size_t>(maxLen - 2)))
      violated("BPE encode and tokenize disagree on the number of pieces");
    for (size_t i = 1; i + 1 < ids.size(); ++i) {
      const int32_t id = ids[i];
      const bool added = id == 9000 || id == 9001;
      if (id < 0 || (!added && static_cast<size_t>(id) >= bpe.vocab.size()))
        violated("BPE id outside what it can produce");
      if (!added && bpe.vocab[id] != pieces[i - 1])
        violated("BPE encode's id is not tokenize's piece");
    }
  }

  // SentencePiece BPE on characters (Gemma: Replace " " -> "▁" and a split
  // after spaces; Llama: Prepend "▁" too and no pre-tokenizer; and without
  // byte fallback, unknowns one <unk> each): encode and tokenize agree, ids
  // stay in the vocabulary.
  static const std::vector<std::string> charVocab = [] {
    std::vector<std::string> v = {"<unk>", "<bos>", "<eos>"};
    char name[8];
    for (unsigned b = 0; b < 256; ++b)
      std::snprintf(name, sizeof name, "<0x%02X>", b), v.push_back(name);
    for (const char *piece : {"\u2581", "a", "b", "c", "\u2581a", "ab", "\u2581ab", "\u00e9", "\u4e2d", "\n"})
      v.push_back(piece);
    return v;
  }();
  static const std::vector<encrt::BytePairTokenizer> charToks = [] {
    auto id = [](const char *piece) {
      return int32_t(std::find(charVocab.begin(), charVocab.end(), piece) - charVocab.begin());
    };
    const std::vector<std::pair<int32_t, int32_t>> merges = {
        {id("\u2581"), id("a")}, {id("a"), id("b")}, {id("\u2581a"), id("b")}};
    std::vector<encrt::BytePairTokenizer> toks;
    // 0: Gemma's; 1: Llama 2's; 2: without byte fallback; 3, 4: a Metaspace
    // pre-tokenizer instead of the normalizers (first without splitting,
    // always with).
    for (int variant = 0; variant < 5; ++variant) {
      encrt::BpeOptions bo;
      bo.alphabet = encrt::BpeAlphabet::Chars;
      bo.split = variant == 0 ? encrt::BpeSplit::SpaceMergedWithPrevious
                 : variant < 3 ? encrt::BpeSplit::Whole
                               : encrt::BpeSplit::Metaspace;
      bo.metaspace.prepend = variant == 3 ? encrt::MetaspacePrepend::First : encrt::MetaspacePrepend::Always;
      bo.metaspace.split = variant == 4;
      bo.byteFallback = variant != 2;
      bo.fuseUnk = variant == 0;
      bo.unkId = 0;
      bo.templateIds = {1, encrt::BpeOptions::kSequence, 2};
      encrt::NormalizerStep prepend, replace;
      prepend.kind = encrt::NormalizerStep::Kind::Prepend;
      prepend.content = "\u2581";
      replace.kind = encrt::NormalizerStep::Kind::Replace;
      replace.pattern = " ";
      replace.content = "\u2581";
      if (variant == 1 || variant == 2)
        bo.normalizers.push_back(prepend);
      if (variant < 3)
        bo.normalizers.push_back(replace);
      toks.emplace_back(charVocab, merges, std::vector<encrt::AddedToken>{{"<bos>", 1, true, false, false, false}},
                        bo);
    }
    return toks;
  }();
  for (const encrt::BytePairTokenizer &charTok : charToks) {
    pieces = charTok.tokenize(text);
    ids = charTok.encode(text, maxLen);
    if (ids.size() < 2 || ids.size() > static_cast<size_t>(maxLen) || ids.front() != 1 || ids.back() != 2)
      violated("SentencePiece BPE encode is not <bos> ... <eos> within maxLen");
    if (ids.size() - 2 != std::min(pieces.size(), static_cast<size_t>(maxLen - 2)))
      violated("SentencePiece BPE encode and tokenize disagree on the number of pieces");
    for (size_t i = 1; i + 1 < ids.size(); ++i)
      if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= charVocab.size() || charVocab[ids[i]] != pieces[i - 1])
        violated("SentencePiece BPE id outside the vocabulary or not tokenize's piece");
  }

  // The Split pre-tokenizers cut valid UTF-8 into non-empty pieces that
  // spell it exactly.
  {
    std::string buffer;
    const std::string_view valid = encrt::unicode::validUtf8(text, buffer, "");
    for (encrt::BpeSplit split : {encrt::BpeSplit::Gpt2, encrt::BpeSplit::Qwen2, encrt::BpeSplit::Cl100k,
                                  encrt::BpeSplit::Whole, encrt::BpeSplit::SpaceMergedWithPrevious,
                                  encrt::BpeSplit::Metaspace}) {
      std::string joined;
      for (const std::string &piece : encrt::BytePairTokenizer::preTokenize(split, valid)) {
        if (piece.empty())
          violated("a pre-tokenizer piece is empty");
        joined += piece;
      }
      if (joined != valid)
        violated("the pre-tokenizer pieces do not spell the text");
    }
  }

  // NFC: valid UTF-8 out, idempotent, one origin per output byte, each a
  // range of the input.
  {
    std::string buffer, once, twice;
    const std::string_view valid = encrt::unicode::validUtf8(text, buffer, "");
    std::vector<encrt::TextSpan> origin;
    encrt::characterAlignments(valid, origin);
    encrt::unicode::nfc(valid, once, &origin);
    encrt::unicode::nfc(once, twice);
    std::string check;
    if (encrt::unicode::validUtf8(once, check, "").size() != once.size())
      violated("NFC output is not valid UTF-8");
    if (twice != once)
      violated("NFC is not idempotent");
    if (origin.size() != once.size())
      violated("NFC origins do not cover its output");
    for (const encrt::TextSpan &o : origin)
      if (o.start > o.end || o.end > valid.size())
        violated("NFC origin outside the input");
  }

  static const std::vector<std::unique_ptr<encrt::UnigramTokenizer>> unigrams = [] {
    std::vector<std::unique_ptr<encrt::UnigramTokenizer>> u;
    for (const char *file : {"tokenizer.json", "tokenizer-variant.json", "tokenizer-first.json"})
      u.push_back(encc::testing::loadUnigram(std::string(ENCC_UNIGRAM_DIR) + "/" + file));
    return u;
  }();
  for (size_t u = 0; u < unigrams.size(); ++u) {
    const encrt::UnigramTokenizer &tok = *unigrams[u];
    const size_t specials = u == 2 ? 1 : 2; // "first" is $A </s>
    checkPair(tok, text, maxLen, tok.maxId(), u == 2 ? 2 : 4);
    checkOffsets(tok, text, maxLen);
    pieces = tok.tokenize(text);
    ids = tok.encode(text, maxLen);
    if (ids.size() < specials || ids.size() > static_cast<size_t>(maxLen) || ids.back() != 2 ||
        (specials == 2 && ids.front() != 0))
      violated("Unigram encode is not its template within maxLen");
    if (ids.size() - specials != std::min(pieces.size(), static_cast<size_t>(maxLen) - specials))
      violated("Unigram encode and tokenize disagree on the number of pieces");
    for (size_t i = specials - 1; i + 1 < ids.size(); ++i)
      if (ids[i] < 0 || ids[i] > tok.maxId())
        violated("Unigram id outside what it can produce");
  }

  // The input as a charsmap: refused, or applied without reading outside it.
  try {
    const encrt::PrecompiledCharsmap map(text);
    std::string out;
    map.normalize("Ａｂｃ \xe2\x91\xa0 e\xcc\x81", out);
    std::string buffer;
    map.normalize(encrt::unicode::validUtf8(text, buffer, ""), out);
  } catch (const std::invalid_argument &) {
  }
  return 0;
}
