#!/usr/bin/env python3
"""Times the `tokenizers` library (the Rust tokenizers behind sentence-transformers)
on the texts encc_bench's BM_Tokenize uses, for the ratios in bench/RESULTS.md.

  RAYON_NUM_THREADS=1 python bench/peers/tokenizers_peer.py TOKENIZER_JSON [MAX_LEN]

Per text: Tokenizer.encode in a loop (includes the Python call, ~1 us), and
encode_batch over 2000 copies on one thread (the library's own loop), each the
median of 7 rounds; truncation to MAX_LEN (default 256) as encrt applies it.
"""
import statistics
import sys
import time

from tokenizers import Tokenizer

SENTENCE = ("The quick brown fox jumps over the lazy dog, and then naïvely asks: "
            "how many word-pieces does tokenisation produce?")
PARAGRAPH = (SENTENCE + " ") * 20


def median_us(fn, n):
    rounds = []
    for _ in range(7):
        t0 = time.perf_counter()
        fn()
        rounds.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(rounds)


def main():
    tok = Tokenizer.from_file(sys.argv[1])
    max_len = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    tok.enable_truncation(max_len)
    tok.no_padding()
    for name, text in (("sentence", SENTENCE), ("paragraph", PARAGRAPH)):
        ids = len(tok.encode(text).ids)
        loop = median_us(lambda: [tok.encode(text) for _ in range(2000)], 2000)
        batch = median_us(lambda: tok.encode_batch([text] * 2000), 2000)
        print(f"tokenizers {name:9s} {ids:4d} ids: encode {loop:7.2f} us/text, encode_batch {batch:7.2f} us/text")


if __name__ == "__main__":
    main()
