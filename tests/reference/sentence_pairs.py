"""The project's sentence pairs (tests/reference/sentence-pairs.tsv: an id and two sentences per tab-separated
row; '#' lines and blank lines skipped), read here for the reference recorders, the tokenizer conformance run
and the benchmarks."""
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sentence-pairs.tsv")


def sentence_pairs(path=PATH):
    """(first, second) of every row, in file order."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                out.append(tuple(line.split("\t")[1:3]))
    return out


def sentences(path=PATH):
    """Both sentences of every row, in file order."""
    return [s for pair in sentence_pairs(path) for s in pair]
