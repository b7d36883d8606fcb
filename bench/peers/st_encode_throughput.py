#!/usr/bin/env python3
"""encode() throughput: sentence-transformers (PyTorch, and its ONNX / OpenVINO backends) against encc.SentenceTransformer, in one run (issue 39).

The same code on every side: `model.encode(sentences, batch_size=B)` with the import and the model path
changed. sentence-transformers' `backend="onnx"` / `"openvino"` export the folder at load (optimum; installed by
`pip install "sentence-transformers[onnx,openvino]"`) and run it in ONNX Runtime (fp32) / OpenVINO (its default
inference precision, which is bf16 on a CPU with AMX or AVX512-BF16: the label says which it compiled). Sentences: the project's sentence pairs (tests/reference/sentence-pairs.tsv), repeated to N. Rounds
interleave the engines (this machine is shared: compare within a round); each round reports sentences per
second per engine, then the medians and the ratio encc / PyTorch. torch and encc get the same thread count.

    PYTHON bench/peers/st_encode_throughput.py --model DIR --artifact fp32.encm [--artifact int8.encm ...]
        [--backends torch,onnx,openvino]

PYTHON: a venv with sentence-transformers and the encc wheel (pip install build-python-wheel/encc-*.whl).
"""
import argparse
import os
import statistics
import sys
import time

import torch
from sentence_transformers import SentenceTransformer

import encc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "reference"))
from sentence_pairs import sentences  # noqa: E402


def repeated_sentences(n):
    """The project's sentences, repeated to n."""
    out = sentences()
    return (out * (n // len(out) + 1))[:n]


def precision_of(model, backend):
    """What the backend computes in: OpenVINO's compiled INFERENCE_PRECISION_HINT, else fp32."""
    if backend == "torch-bf16":
        return "bf16"
    if not backend.startswith("openvino"):
        return "fp32"
    model.encode(["compile"])  # optimum compiles on first use
    hint = model[0].auto_model.request.get_property("INFERENCE_PRECISION_HINT")
    return {"f32": "fp32", "bf16": "bf16", "f16": "fp16"}.get(str(hint.get_type_name()), str(hint))


def rate(model, texts, batch_size):
    t0 = time.perf_counter()
    model.encode(texts, batch_size=batch_size)
    return len(texts) / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the Hugging Face folder (sentence-transformers loads it)")
    ap.add_argument("--artifact", action="append", required=True, help="an encc artifact of the same model")
    ap.add_argument("--sentences", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--backends", default="torch",
                    help="sentence-transformers backends, comma-separated: torch, torch-bf16, onnx, openvino (its "
                         "default precision), openvino-f32 (default torch)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    texts = repeated_sentences(args.sentences)
    names = {"torch": "PyTorch", "torch-bf16": "PyTorch", "onnx": "ONNX Runtime", "openvino": "OpenVINO",
             "openvino-f32": "OpenVINO"}
    backends = args.backends.split(",")
    for b in backends:
        if b not in names:
            ap.error(f"--backends: unknown backend '{b}' ({', '.join(names)})")
    engines = {}
    for b in backends:
        if b == "openvino-f32":  # OpenVINO held to f32 (INFERENCE_PRECISION_HINT), as sentence-transformers passes ov_config
            m = SentenceTransformer(args.model, device="cpu", backend="openvino",
                                    model_kwargs={"ov_config": {"INFERENCE_PRECISION_HINT": "f32"}})
        elif b == "torch-bf16":  # the weights and activations in bfloat16 (model_kwargs torch_dtype)
            m = SentenceTransformer(args.model, device="cpu", model_kwargs={"torch_dtype": torch.bfloat16})
        else:
            m = SentenceTransformer(args.model, device="cpu", backend=b)
        engines[f"sentence-transformers ({names[b]} {precision_of(m, b)})"] = m
    for path in args.artifact:
        m = encc.SentenceTransformer(path, threads=args.threads)
        engines[f"encc ({m.info['precision']}, {os.path.basename(path)})"] = m
    for m in engines.values():  # warm-up
        m.encode(texts[:64], batch_size=args.batch_size)
    rates = {name: [] for name in engines}
    for r in range(args.rounds):
        for name, m in engines.items():
            rates[name].append(rate(m, texts, args.batch_size))
        print(f"round {r + 1}: " + ", ".join(f"{name} {v[-1]:.0f}/s" for name, v in rates.items()))
    base = statistics.median(rates[next(iter(engines))])
    print(f"{args.sentences} sentences, batch {args.batch_size}, {args.threads} threads; median sentences/s:")
    for name, v in rates.items():
        print(f"  {name:45s} {statistics.median(v):8.0f}/s  x{statistics.median(v) / base:.2f}")


if __name__ == "__main__":
    main()
