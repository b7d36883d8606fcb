#!/usr/bin/env python3
"""Tokenizer conformance: encrt against the `tokenizers` library on a large generated corpus.

For each tokenizer type (WordPiece uncased: the real all-MiniLM-L6-v2 file; WordPiece cased: the
same vocabulary with lowercasing and accent stripping off; with --mpnet DIR, all-mpnet-base-v2's
WordPiece file with its own added tokens; byte-level BPE: tests/tokenizer/bpe's GPT-2-style, NFC
(GPT-NeoX-style) and Qwen2-style files; SentencePiece BPE on characters with byte fallback:
tests/tokenizer/spbpe's Gemma- and Llama-style files, one without byte fallback, and two with a Metaspace
pre-tokenizer (transformers' non-legacy Llama / Mistral layout, and one that splits); Unigram: the three
files of tests/tokenizer/unigram) this compiles a model whose artifact carries
that tokenizer, then tokenises every string of a seeded corpus twice: with the library
(Tokenizer.encode, truncated to the artifact's maximum) and with encrt through its C API
(encrt_model_tokenize_text over ctypes, so NUL and newlines are data). It also compares each token's
offsets and special flag (encrt_model_tokenize_offsets against the Encoding's offsets, taken from
characters to bytes, and special_tokens_mask; on every 7th string without the template too) and
decoding (encrt_model_decode against Tokenizer.decode on each string's ids, special tokens skipped, and
kept on every 5th, and on random sequences of the tokenizer's ids). Any difference is printed and
the exit status is 1.

The corpus (COUNT strings, default 100 000): the project's sentences; generated multilingual text
(words of code points drawn from the assigned code points of many Unicode blocks, joined by
spaces and punctuation); and adversarial strings: combining-mark stacks, controls and format
characters, emoji ZWJ and flag sequences, Hangul jamo, Indic conjuncts, fullwidth forms, long
words, whitespace runs, literal special tokens, and invalid UTF-8 (the library cannot take
invalid UTF-8; encrt's documented behaviour is compared instead: its WordPiece replaces each
invalid byte with U+FFFD, which BERT's cleaning then removes, and its BPE and Unigram drop them,
i.e. the library on the text decoded with errors="ignore").

Usage (a venv with `tokenizers`; BUILD is a build directory with bin/encc, bin/make-tiny-model and
lib/libencrt.so; MINILM the all-MiniLM-L6-v2 folder):

  python tests/tokenizer/conformance.py BUILD MINILM [--mpnet DIR] [--count N] [--seed S] [--only NAME...]
      [--jobs N]   (tokenizers checked at once, one process each; default: the CPUs this may use)
"""
import argparse
import ctypes
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import unicodedata

import tokenizers
from tokenizers import Tokenizer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
from sentence_pairs import sentences  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_SEQ = 256


# --- the corpus ---------------------------------------------------------------------------

def assigned_blocks():
    """Ranges of assigned code points, in chunks of 128, weighted by script use."""
    chunks = []
    for start in range(0, 0x30000, 128):
        cps = [c for c in range(start, start + 128)
               if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn"]
        if cps:
            chunks.append(cps)
    return chunks


COMBINING = [chr(c) for c in range(0x300, 0x370)] + ["\u0483", "\u0591", "\u064b", "\u0903", "\u093c",
                                                     "\u094d", "\u0e31", "\u20dd", "\ufe0f", "\u200d"]
CONTROLS = [chr(c) for c in range(0, 0x20)] + ["\x7f", "\x85", "\u00ad", "\u061c", "\u200b", "\u200c",
                                               "\u200e", "\u2028", "\u2029", "\u202e", "\u2060", "\ufeff",
                                               "\ufff9", "\U000e0001", "\U000e0041"]
EMOJI = ["\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
         "\U0001f1eb\U0001f1f7", "\U0001f1fa\U0001f1f8\U0001f1e6", "\u2764\ufe0f", "\U0001f3f3\ufe0f\u200d\U0001f308",
         "#\ufe0f\u20e3", "\U0001f9d1\U0001f3ff\u200d\U0001f4bb"]
SCRIPTS = ["\u1100\u1161\u11a8", "\u0915\u094d\u0937", "\u0915\u093c\u0940", "\u0e01\u0e34\u0e48",
           "\uff21\uff42\uff43\uff11", "\uff76\uff9e", "\ufb01", "\u2460", "\u337f", "\u2122", "\u00bd",
           "\u0627\u0644\u0633\u0651\u064e\u0644\u0627\u0645", "\u4e2d\u6587", "\u65e5\u672c\u8a9e",
           "\u00e9", "e\u0301", "\u1e9e", "\u0130", "\u03a3\u03c3\u03c2", "\u00df"]
# Literal special tokens of every tokenizer here, in other cases too (matched exactly unless normalized).
SPECIALS = ["COVID19", "covid19 ", "\u00c4rger  x", "[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]", "<s>", "</s>", "<mask>", "<unk>", "<pad>",
            " <mask>", " [MASK]", "<0x41>", "##ing", "[cls]", "[Mask]", "<S>", "<PAD>", "<|endoftext|>",
            "<|im_start|>", "<|im_end|>", "<|ENDOFTEXT|>", "<|im_start|>user\n", "[CLS][SEP]", "</s></s>"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2003", " \n "]
PUNCT = [".", ",", "!", "?", "'", "\"", "-", "(", ")", ":", ";", "'s", "'ll", "...", "\u2014", "\u00bf"]


def generate(count, seed):
    rng = random.Random(seed)
    blocks = assigned_blocks()
    # Common scripts more often: Latin, Cyrillic, Greek, Arabic, Devanagari, CJK, Hangul, kana, Thai.
    common = [b for b in blocks if b[0] < 0x0700 or 0x0900 <= b[0] < 0x0E80 or 0x3040 <= b[0] < 0x3100
              or 0x4E00 <= b[0] < 0x9FFF or 0xAC00 <= b[0] < 0xD7A3]
    base = sentences()
    out = list(base)

    def word():
        pool = rng.choice(common) if rng.random() < 0.7 else rng.choice(blocks)
        return "".join(chr(rng.choice(pool)) for _ in range(rng.randint(1, 12)))

    def adversarial():
        parts = []
        for _ in range(rng.randint(1, 8)):
            k = rng.random()
            if k < 0.15:
                parts.append(rng.choice("abcdefghijklmnopqrstuvwxyzAEIOU") + "".join(
                    rng.choice(COMBINING) for _ in range(rng.randint(1, 5))))
            elif k < 0.3:
                parts.append("".join(rng.choice(CONTROLS) for _ in range(rng.randint(1, 3))))
            elif k < 0.42:
                parts.append(rng.choice(EMOJI))
            elif k < 0.57:
                parts.append(rng.choice(SCRIPTS))
            elif k < 0.65:
                parts.append(rng.choice(SPECIALS))
            elif k < 0.72:
                parts.append(rng.choice("abcdefghijklmnopqrstuvwxyz") * rng.randint(20, 120))
            elif k < 0.85:
                parts.append(word())
            else:
                parts.append(rng.choice(PUNCT))
            parts.append(rng.choice(SPACES) if rng.random() < 0.6 else "")
        return "".join(parts)

    while len(out) < count:
        k = rng.random()
        if k < 0.35:
            text = " ".join(word() for _ in range(rng.randint(1, 12)))
            if rng.random() < 0.5:
                text += rng.choice(PUNCT)
        elif k < 0.5:
            a, b = rng.choice(base), rng.choice(base)
            cut = rng.randint(0, len(a))
            text = a[:cut] + rng.choice(SPACES + PUNCT + SCRIPTS + EMOJI) + b[rng.randint(0, len(b)):]
        else:
            text = adversarial()
        out.append(text)
    # Invalid UTF-8: bytes, not str (about 1 in 50).
    corpus = []
    for text in out[:count]:
        data = text.encode("utf-8")
        if rng.random() < 0.02 and data:
            pos = rng.randint(0, len(data))
            data = data[:pos] + rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\x80\x80", b"\xed\xa0\x80"]) + data[pos:]
        corpus.append(data)
    return corpus


# --- encrt through its C API --------------------------------------------------------------

class EncrtText(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_int64)]


class EncrtToken(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int32), ("special", ctypes.c_int32), ("start", ctypes.c_int64),
                ("stop", ctypes.c_int64)]


class Encrt:
    def __init__(self, lib, path):
        self.lib = lib
        lib.encrt_status_message.restype = ctypes.c_char_p
        self.model = ctypes.c_void_p()
        self._check(lib.encrt_model_load(path.encode(), None, ctypes.byref(self.model)))
        self.ids = (ctypes.c_int32 * (MAX_SEQ + 8))()
        self.tokens = (EncrtToken * (MAX_SEQ + 8))()

    def _check(self, status):
        if status:
            msg = self.lib.encrt_status_message(ctypes.c_void_p(status)).decode()
            self.lib.encrt_status_free(ctypes.c_void_p(status))
            raise RuntimeError(msg)

    def tokenize(self, data):
        count = ctypes.c_int64()
        self._check(self.lib.encrt_model_tokenize_text(self.model, EncrtText(data, len(data)), self.ids,
                                                       ctypes.c_int64(len(self.ids)), ctypes.byref(count)))
        return list(self.ids[:count.value])

    def offsets(self, data, add_special_tokens):
        """[(id, special, start, stop)] by encrt_model_tokenize_offsets, cut to MAX_SEQ tokens."""
        count = ctypes.c_int64()
        self._check(self.lib.encrt_model_tokenize_offsets(
            self.model, EncrtText(data, len(data)), ctypes.c_int32(int(add_special_tokens)), ctypes.c_int64(MAX_SEQ),
            self.tokens, ctypes.c_int64(len(self.tokens)), ctypes.byref(count)))
        return [(t.id, t.special, t.start, t.stop) for t in self.tokens[:count.value]]

    def decode(self, ids, skip_special_tokens):
        """encrt_model_decode's text (bytes, decoded as UTF-8: it is valid)."""
        arr = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        size = ctypes.c_int64()
        self._check(self.lib.encrt_model_decode(self.model, arr, ctypes.c_int64(len(ids)),
                                                ctypes.c_int32(int(skip_special_tokens)), None, ctypes.c_int64(0),
                                                ctypes.byref(size)))
        buf = ctypes.create_string_buffer(max(size.value, 1))
        self._check(self.lib.encrt_model_decode(self.model, arr, ctypes.c_int64(len(ids)),
                                                ctypes.c_int32(int(skip_special_tokens)), buf, size,
                                                ctypes.byref(size)))
        return buf.raw[:size.value].decode("utf-8")


def char_spans(data, errors):
    """The bytes of `data` each character of data.decode("utf-8", errors) came from: a valid character
    its own; with errors="replace", each U+FFFD of an invalid run the whole run."""
    spans, run_start, i = [], None, 0

    def close_run(end):
        if run_start is not None and errors == "replace":
            spans.extend([(run_start, end)] * len(data[run_start:end].decode("utf-8", "replace")))

    while i < len(data):
        for k in (1, 2, 3, 4):
            try:
                if len(data[i:i + k].decode("utf-8")) == 1:
                    break
            except UnicodeDecodeError:
                pass
        else:
            if run_start is None:
                run_start = i
            i += 1
            continue
        close_run(i)
        run_start = None
        spans.append((i, i + k))
        i += k
    close_run(len(data))
    return spans


def library_tokens(encoding, data, errors):
    """[(id, special, start, stop)] of a library Encoding, its character offsets as bytes of `data`."""
    spans = char_spans(data, errors)
    out = []
    for id_, (a, b), special in zip(encoding.ids, encoding.offsets, encoding.special_tokens_mask):
        if special:
            out.append((id_, 1, 0, 0))
        elif a == b:
            at = spans[a][0] if a < len(spans) else len(data)
            out.append((id_, 0, at, at))
        else:
            out.append((id_, 0, spans[a][0], spans[b - 1][1]))
    return out


# --- the tokenizers under test ------------------------------------------------------------

def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def build_artifacts(build, minilm, tmp, mpnet=None):
    """(name, tokenizer.json path, artifact path, invalid-UTF-8 decoding) for each tokenizer."""
    encc, tiny = os.path.join(build, "bin", "encc"), os.path.join(build, "bin", "make-tiny-model")
    out = []

    def compile_dir(name, folder, tj, errors):
        art = os.path.join(tmp, name + ".encm")
        run([encc, "compile", folder, "-o", art, "--max-seq", str(MAX_SEQ), "-q"])
        out.append((name, tj, art, errors))

    compile_dir("wordpiece-uncased", minilm, os.path.join(minilm, "tokenizer.json"), "replace")
    cased = os.path.join(tmp, "cased")
    run([tiny, cased, "--vocab", "30522", "--hidden", "32", "--heads", "2", "--intermediate", "64",
         "--max-positions", "300", "--seed", "3"])
    tj = json.load(open(os.path.join(minilm, "tokenizer.json"), encoding="utf-8"))
    tj["normalizer"]["lowercase"] = False
    tj["normalizer"]["strip_accents"] = False
    os.remove(os.path.join(cased, "vocab.txt"))
    json.dump(tj, open(os.path.join(cased, "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
    json.dump({"do_lower_case": False, "strip_accents": False},
              open(os.path.join(cased, "tokenizer_config.json"), "w"))
    compile_dir("wordpiece-cased", cased, os.path.join(cased, "tokenizer.json"), "replace")
    # The uncased file with two added tokens matched on normalised text whose normalisation changes
    # them (the library's id_to_token, and so decode, gives them normalised; a special one is then
    # not skipped by its content).
    added = os.path.join(tmp, "added")
    run([tiny, added, "--vocab", "30524", "--hidden", "32", "--heads", "2", "--intermediate", "64",
         "--max-positions", "300", "--seed", "3"])
    tj = json.load(open(os.path.join(minilm, "tokenizer.json"), encoding="utf-8"))
    tj["added_tokens"] += [
        {"id": 30522, "content": "COVID19", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": True, "special": False},
        {"id": 30523, "content": "\u00c4rger", "single_word": False, "lstrip": False, "rstrip": True,
         "normalized": True, "special": True}]
    os.remove(os.path.join(added, "vocab.txt"))
    json.dump(tj, open(os.path.join(added, "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
    compile_dir("wordpiece-added", added, os.path.join(added, "tokenizer.json"), "replace")
    for name, model_type, vocab, src in (
            ("bpe", "roberta", "2001", "bpe/tokenizer.json"),
            ("bpe-nfc", "roberta", "2005", "bpe/tokenizer-neox.json"),
            ("bpe-qwen2", "roberta", "2003", "bpe/tokenizer-qwen2.json"),
            ("spbpe-gemma", "bert", "2261", "spbpe/tokenizer-gemma.json"),
            ("spbpe-llama", "bert", "2261", "spbpe/tokenizer-llama.json"),
            ("spbpe-nofallback", "bert", "2261", "spbpe/tokenizer-nofallback.json"),
            ("spbpe-mistral", "bert", "2261", "spbpe/tokenizer-mistral.json"),
            ("spbpe-metaspace-split", "bert", "2261", "spbpe/tokenizer-metaspace-split.json"),
            ("unigram", "xlm-roberta", "4002", "unigram/tokenizer.json"),
            ("unigram-variant", "xlm-roberta", "4258", "unigram/tokenizer-variant.json"),
            ("unigram-first", "xlm-roberta", "4002", "unigram/tokenizer-first.json")):
        folder = os.path.join(tmp, name)
        run([tiny, folder, "--model-type", model_type, "--vocab", vocab, "--hidden", "32", "--heads", "2",
             "--intermediate", "64", "--max-positions", "300", "--seed", "4"])
        os.remove(os.path.join(folder, "vocab.txt"))
        with open(os.path.join(HERE, src), encoding="utf-8") as f, \
                open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as g:
            g.write(f.read())
        compile_dir(name, folder, os.path.join(HERE, src), "ignore")
    if mpnet:
        # all-mpnet-base-v2's tokenizer files in a tiny MPNet folder: WordPiece with its
        # tokenizer.json's added tokens (<mask> with lstrip, <unk> matched on normalised text).
        folder = os.path.join(tmp, "mpnet")
        run([tiny, folder, "--model-type", "mpnet", "--vocab", "30527", "--hidden", "32", "--heads", "2",
             "--intermediate", "64", "--max-positions", "300", "--seed", "5"])
        for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            with open(os.path.join(mpnet, f), encoding="utf-8") as src, \
                    open(os.path.join(folder, f), "w", encoding="utf-8") as dst:
                dst.write(src.read())
        compile_dir("wordpiece-mpnet", folder, os.path.join(mpnet, "tokenizer.json"), "replace")
    return out


def check(name, tj, art, errors, lib_path, seed, corpus):
    """Compares one tokenizer's artifact with the library on the corpus: (report lines, failed)."""
    out = []
    lib = ctypes.CDLL(lib_path)
    lib.encrt_model_tokenize_offsets.argtypes = [ctypes.c_void_p, EncrtText, ctypes.c_int32, ctypes.c_int64,
                                                 ctypes.POINTER(EncrtToken), ctypes.c_int64,
                                                 ctypes.POINTER(ctypes.c_int64)]
    lib.encrt_model_tokenize_offsets.restype = ctypes.c_void_p
    lib.encrt_model_decode.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_int64,
                                       ctypes.c_int32, ctypes.c_char_p, ctypes.c_int64,
                                       ctypes.POINTER(ctypes.c_int64)]
    lib.encrt_model_decode.restype = ctypes.c_void_p
    t0 = time.time()
    ref = Tokenizer.from_file(tj)
    ref.enable_truncation(MAX_SEQ)
    ref.no_padding()
    texts = [d.decode("utf-8", errors=errors) for d in corpus]
    encodings = ref.encode_batch(texts)
    want = [e.ids for e in encodings]
    # Offsets without the template on every 7th string (RobertaProcessing trims them anyway).
    plain = ref.encode_batch(texts[::7], add_special_tokens=False)
    enc = Encrt(lib, art)
    mismatches, ids, offset_mismatches = 0, 0, 0
    for i, (data, text, w) in enumerate(zip(corpus, texts, want)):
        got = enc.tokenize(data)
        ids += len(w)
        if got != w:
            mismatches += 1
            if mismatches <= 5:
                out.append(f"  {name}: {text!r}\n    encrt      {got}\n    tokenizers {w}")
        checks = [(True, encodings[i])] + ([(False, plain[i // 7])] if i % 7 == 0 else [])
        for special, encoding in checks:
            got_tokens, want_tokens = enc.offsets(data, special), library_tokens(encoding, data, errors)
            if got_tokens != want_tokens:
                offset_mismatches += 1
                if offset_mismatches <= 5:
                    diff = [(g, w) for g, w in zip(got_tokens, want_tokens) if g != w][:4]
                    out.append(f"  {name} offsets (add_special_tokens={special}): {data!r}\n"
                               f"    (encrt, tokenizers) {diff} lengths {len(got_tokens)} {len(want_tokens)}")
    # Decoding: the ids back to text, special tokens kept on every 5th string; then random
    # sequences of the tokenizer's ids (lone byte tokens, specials anywhere).
    rng = random.Random(seed)
    every_id = sorted(ref.get_vocab(with_added_tokens=True).values())
    added_ids = sorted(ref.get_added_tokens_decoder())  # in every other sequence
    random_ids = [[rng.choice(every_id) for _ in range(rng.randint(1, 30))]
                  + ([rng.choice(added_ids)] if added_ids and k % 2 else [])
                  for k in range(max(1, len(corpus) // 20))]
    cases = [(w, skip, "") for i, w in enumerate(want) for skip in (True,) + ((False,) if i % 5 == 0 else ())]
    cases += [(w, i % 2 == 0, " of random ids") for i, w in enumerate(random_ids)]
    decode_mismatches = 0
    for w, skip, what in cases:
        got_text, want_text = enc.decode(w, skip), ref.decode(w, skip_special_tokens=skip)
        if got_text != want_text:
            decode_mismatches += 1
            if decode_mismatches <= 5:
                out.append(f"  {name} decode{what} (skip_special_tokens={skip}) {w[:40]}\n"
                           f"    encrt      {got_text!r}\n    tokenizers {want_text!r}")
    out.append(f"{name:18s} {len(corpus)} strings, {ids} ids, {mismatches} mismatches, "
               f"{offset_mismatches} offset mismatches, {decode_mismatches} decode mismatches "
               f"({time.time() - t0:.0f} s)")
    return out, mismatches > 0 or offset_mismatches > 0 or decode_mismatches > 0


_corpus = None  # the parent's corpus, which forked workers inherit


def check_in_worker(job):
    return check(*job, _corpus)


def main():
    global _corpus
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("minilm")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--mpnet", default=os.environ.get("ENCC_MPNET_DIR"),
                    help="the all-mpnet-base-v2 folder: its tokenizer too (default $ENCC_MPNET_DIR)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="tokenizers checked at once, each in a process of its own (default: the CPUs)")
    args = ap.parse_args()

    t0 = time.time()
    _corpus = generate(args.count, args.seed)
    print(f"corpus: {len(_corpus)} strings, {sum(map(len, _corpus)) / 1e6:.1f} MB, "
          f"{sum(1 for d in _corpus if not is_utf8(d))} with invalid UTF-8 ({time.time() - t0:.0f} s)", flush=True)
    lib_path = os.path.join(args.build, "lib", "libencrt.so")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [(name, tj, art, errors, lib_path, args.seed)
                for name, tj, art, errors in build_artifacts(args.build, args.minilm, tmp, args.mpnet)
                if not args.only or name in args.only]
        # Forked workers (the corpus is inherited, not sent); this process never calls the library,
        # so no worker inherits its thread pool.
        with multiprocessing.get_context("fork").Pool(max(1, min(args.jobs, len(jobs)))) as pool:
            for lines, bad in pool.imap(check_in_worker, jobs):
                print("\n".join(lines), flush=True)
                failed |= bad
    print(f"tokenizers {tokenizers.__version__}: {'MISMATCHES' if failed else 'all identical'}")
    return 1 if failed else 0


def is_utf8(data):
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


if __name__ == "__main__":
    sys.exit(main())
