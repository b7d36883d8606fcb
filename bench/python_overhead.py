#!/usr/bin/env python3
"""The Python package's overhead over libencrt's C API, for bench/RESULTS.md.

Times the same work through `encc` (the nanobind extension) and through the C API directly
(ctypes on libencrt.so; a call costs ~1-2 us, far below the runs timed), interleaved round by
round on one artifact with the same thread count, and prints the medians and their ratio:

  run     Model.run(ids, lengths) vs encrt_session_run (last hidden state), 1 x 128 and
          32 x mixed lengths (16..128 tokens)
  encode  Model.encode(texts) vs encrt_session_embed_texts on the same texts (32 sentences of
          mixed length; encode also sorts by length and restores the order)

  python bench/python_overhead.py ARTIFACT LIBENCRT_SO [--threads N] [--rounds R]
(in a venv where `pip install ./python` has been run)
"""
import argparse
import ctypes
import random
import statistics
import time

import numpy as np

import encc


class Text(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_int64)]


class ModelOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_threads", ctypes.c_int32),
                ("cpu_target", ctypes.c_char_p), ("device", ctypes.c_char_p),
                ("max_text_bytes", ctypes.c_int64), ("require_sha256", ctypes.c_char_p),
                ("trusted_public_key", ctypes.c_char_p), ("signature_path", ctypes.c_char_p)]


class CApi:
    def __init__(self, lib_path, artifact, threads):
        self.lib = lib = ctypes.CDLL(lib_path)
        lib.encrt_status_message.restype = ctypes.c_char_p
        opt = ModelOptions()
        lib.encrt_model_options_initialize(ctypes.byref(opt))
        opt.num_threads = threads
        opt.device = b"cpu"
        self.model, self.session = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(lib.encrt_model_load(artifact.encode(), ctypes.byref(opt), ctypes.byref(self.model)))
        self.check(lib.encrt_session_create(self.model, None, ctypes.byref(self.session)))

    def check(self, status):
        if status:
            raise RuntimeError(self.lib.encrt_status_message(ctypes.c_void_p(status)).decode())

    def run(self, ids, lengths, hidden):
        self.check(self.lib.encrt_session_run(
            self.session, ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
            lengths.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), ctypes.c_int64(ids.shape[0]),
            ctypes.c_int64(ids.shape[1]), hidden.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), None))

    def embed(self, texts, out):
        arr = (Text * len(texts))(*[Text(t, len(t)) for t in texts])
        self.check(self.lib.encrt_session_embed_texts(self.session, arr, ctypes.c_int64(len(texts)),
                                                      out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))


def timed(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e3


def compare(name, py, c, n, rounds):
    py_ms, c_ms = [], []
    for _ in range(rounds):  # interleaved, so drift on a shared machine hits both
        py_ms.append(timed(py, n))
        c_ms.append(timed(c, n))
    p, q = statistics.median(py_ms), statistics.median(c_ms)
    print(f"{name:28s} encc (Python) {p:8.3f} ms   C API {q:8.3f} ms   overhead {100 * (p / q - 1):+6.2f} %")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("artifact")
    ap.add_argument("libencrt")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()

    model = encc.Model(args.artifact, threads=args.threads, device="cpu")
    capi = CApi(args.libencrt, args.artifact, args.threads)
    info = model.info
    rng = np.random.default_rng(7)
    print(f"{args.artifact}: {info['architecture']}, hidden {info['hidden_size']}, {info['cpu_target']}, "
          f"{args.threads} threads, encc {encc.__version__}")

    for batch, lens, n in ((1, [128], 20), (32, list(rng.integers(16, 129, 32)), 3)):
        seq = max(lens)
        ids = rng.integers(1000, info["vocab_size"], (batch, seq)).astype(np.int32)
        lengths = np.array(lens, dtype=np.int32)
        out = np.empty((batch, seq, info["hidden_size"]), dtype=np.float32)
        assert np.abs(model.run(ids, lengths) - (capi.run(ids, lengths, out) or out)).max() < 1e-5
        compare(f"run {batch} x {'128' if batch == 1 else 'mixed'}", lambda: model.run(ids, lengths),
                lambda: capi.run(ids, lengths, out), n, args.rounds)

    words = "the quick brown fox jumps over a lazy dog while it rains in the old town".split()
    random.seed(3)
    texts = [" ".join(random.choice(words) for _ in range(random.randint(4, 90))) for _ in range(32)]
    raw = [t.encode() for t in texts]
    out = np.empty((32, info["hidden_size"]), dtype=np.float32)
    capi.embed(raw, out)
    assert np.abs(model.encode(texts) - out).max() < 1e-5
    compare("encode 32 mixed texts", lambda: model.encode(texts), lambda: capi.embed(raw, out), 3, args.rounds)


if __name__ == "__main__":
    main()
