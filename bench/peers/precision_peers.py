#!/usr/bin/env python3
"""encc's precision tiers (fp32, bf16, int8) against OpenVINO (f32 and its default
precision, which is bf16 on CPUs with AVX512-BF16 or AMX) and ONNX Runtime (fp32 with its
transformer optimiser, int8 quantize_dynamic: compare.py's preparation): same
process, same token ids, same thread count, interleaved rounds (the median of the
rounds' medians), plus each output's min token cosine vs encc fp32.

    precision_peers.py --onnx DIR/NAME.onnx --model-dir MODEL_DIR --encc-lib build/lib/libencrt.so \
        --fp32 m.encm [--bf16 m-bf16.encm] [--int8 m-int8.encm] [--threads 2] [--rounds 7] [--busy 1]

--baseline-lib OTHER/libencrt.so: the same encc artifacts also through another build of the
runtime (e.g. main's, to A/B a runtime change in one process; columns "... (baseline)").

--encc LABEL=PATH: one more encc artifact timed in the same rounds (column "encc LABEL"), e.g.
the same precision built with a pass disabled, to A/B a compiler change in one process.

--openvino-int8: OpenVINO int8 too, the model quantised by NNCF post-training quantisation
(model_type TRANSFORMER) calibrated on the 64 reference sentences' token ids (--calibration).

--busy N: the same table, then again with N busy processes (a spinning loop each, as
another tenant of a shared server) running beside the peers, and each peer's slowdown
(busy median / idle median).

MODEL.onnx: the model exported with torch.onnx.export (inputs input_ids and
attention_mask; output last_hidden_state), e.g. by `bench/peers/export_onnx.py MODEL_DIR
DIR/NAME.onnx` in a venv with torch and transformers; ORT's optimised and int8 files are
made next to it (cached) and --model-dir gives the config for the optimiser.
Peers come from PyPI (`pip install openvino onnxruntime onnx sympy`: ORT's transformer optimiser
needs sympy, and torch for its ORT pre-pass, which is skipped without it) in a venv of their own;
a peer that does not import is left out. Shapes and ids are compare.py's.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import (Encc, make_inputs, arrays, ort_runner, prepare_onnx, time_fn,  # noqa: E402
                     token_cosines)


def nncf_int8(model, calibration):
    """The model quantised by NNCF post-training quantisation (model_type TRANSFORMER),
    calibrated on the token ids of `calibration` (the project's reference sentences)."""
    import nncf
    with open(calibration) as f:
        sentences = json.load(f)["sentences"]
    names = {p.get_any_name() for p in model.inputs}
    feeds = []
    for s in sentences:
        ids = np.array([s["ids"]], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        feeds.append({k: v for k, v in feed.items() if k in names})
    return nncf.quantize(model, nncf.Dataset(feeds), model_type=nncf.ModelType.TRANSFORMER,
                         subset_size=len(feeds))


def openvino_runners(onnx_path, threads, int8_calibration=None, wanted=lambda label: True):
    """OpenVINO f32, its default precision and (with int8_calibration) int8 through NNCF, those
    `wanted` accepts: {label: (make(shape), note)}."""
    import openvino as ov
    core = ov.Core()
    model = core.read_model(onnx_path)
    out = {}
    variants = [("OpenVINO f32", model, {"INFERENCE_PRECISION_HINT": "f32"}), ("OpenVINO default", model, {})]
    if int8_calibration:
        variants.append(("OpenVINO int8", nncf_int8(model, int8_calibration), {}))
    for label, m, config in variants:
        if not wanted(label):
            continue
        config = dict(config, INFERENCE_NUM_THREADS=threads, PERFORMANCE_HINT="LATENCY")
        compiled = core.compile_model(m, "CPU", config)
        precision = str(compiled.get_property("INFERENCE_PRECISION_HINT"))

        def make(shape, compiled=compiled):
            ids, mask, _ = arrays(shape)
            request = compiled.create_infer_request()
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            names = {p.get_any_name() for p in compiled.inputs}
            feed = {k: v for k, v in feed.items() if k in names}

            def fn():
                request.infer(feed)
                return request.get_output_tensor(0).data
            return fn
        out[label] = (make, f"{label}: inference precision {precision}, OpenVINO {ov.__version__}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--model-dir", required=True, help="the HF folder the ONNX file was exported from")
    ap.add_argument("--encc-lib", required=True)
    ap.add_argument("--fp32", required=True)
    ap.add_argument("--bf16")
    ap.add_argument("--int8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--runs", type=int, default=10, help="timed runs per round")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs before each round's timed ones")
    ap.add_argument("--shapes", default="b1_s128,b8_s128,b8_mixed16-128",
                    help="comma-separated, of b1_s128, b8_s128, b8_mixed16-128, b32_s64, b1_s512, b8_s512, "
                         "b1_s8192, b16_s128, b1_s16, b1_s8")
    ap.add_argument("--ort-optimizer", default="bert",
                    help="model_type for ORT's transformer optimiser, or none (ModernBERT: the optimiser's "
                         "fusions do not know its graph)")
    ap.add_argument("--baseline-lib", help="another libencrt.so to run the same artifacts with")
    ap.add_argument("--encc", action="append", default=[], metavar="LABEL=PATH",
                    help="one more encc artifact in the same rounds, in a column 'encc LABEL' "
                         "(e.g. bf16-f32pv=m.encm: an A/B of a pass; repeatable)")
    ap.add_argument("--only", help="comma-separated peer labels to build and time (encc fp32, the reference of "
                                   "the cosines, always runs): one peer per process, for shapes where all of "
                                   "them do not fit in memory at once (1 x 8192); prints the peak RSS")
    ap.add_argument("--busy", type=int, default=0, help="also time with N busy processes beside the peers")
    ap.add_argument("--openvino-int8", action="store_true",
                    help="also OpenVINO int8: NNCF post-training quantisation (needs `pip install nncf`; "
                         "NNCF imports any torch it finds, so a venv without Debian's torch 1.13)")
    ap.add_argument("--calibration", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                          "tests", "reference", "minilm_embeddings.json"),
                    help="JSON with sentences[].ids to calibrate NNCF on (default: the 64 reference sentences)")
    args = ap.parse_args()

    only = set(args.only.split(",")) | {"encc fp32"} if args.only else None
    wanted = lambda label: only is None or label in only  # noqa: E731
    libs = [("", ctypes.CDLL(args.encc_lib))]
    if args.baseline_lib:
        libs.append((" (baseline)", ctypes.CDLL(os.path.abspath(args.baseline_lib))))
    peers = {}
    notes = []
    extra = []
    for item in args.encc:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            ap.error(f"--encc expects LABEL=PATH, got {item!r}")
        extra.append(("encc " + label, path))
    for suffix, lib in libs:
        for label, path in [("encc fp32", args.fp32), ("encc bf16", args.bf16), ("encc int8", args.int8)] + extra:
            if path is None or not wanted(label + suffix):
                continue
            e = Encc(lib, path, args.threads)
            peers[label + suffix] = e.runner
            notes.append(f"{label + suffix}: code object {e.cpu_target}")
    try:
        calibration = args.calibration if args.openvino_int8 else None
        for label, (make, note) in openvino_runners(args.onnx, args.threads, calibration, wanted).items():
            peers[label] = make
            notes.append(note)
    except ImportError as err:
        notes.append(f"OpenVINO left out: {err}")
    try:
        if not (wanted("ORT fp32") or wanted("ORT int8")):
            raise ImportError("not asked for (--only)")
        cache, name = os.path.split(os.path.abspath(args.onnx))
        opt_path, q_path, settings = prepare_onnx(args.model_dir, name[:-len(".onnx")], cache,
                                                  lambda m: print(m, file=sys.stderr), args.ort_optimizer)
        if wanted("ORT fp32"):
            peers["ORT fp32"] = ort_runner(opt_path, args.threads)
        if wanted("ORT int8"):
            peers["ORT int8"] = ort_runner(q_path, args.threads)
        notes.append(f"ONNX Runtime {settings['onnxruntime']}: {settings['quantize_dynamic']}")
    except ImportError as err:
        notes.append(f"ONNX Runtime left out: {err}")

    wanted = args.shapes.split(",")
    # b1_s512: one sequence at a 512-token model's limit (where attention's share grows);
    # b8_s512, b1_s8192: long-context encoders (ModernBERT's 8192 positions).
    # b16_s128: a batch of passages for a decoder-sized embedder (Qwen3-Embedding).
    # b1_s16: one search query (where per-step overheads, not the products, take the time);
    # b1_s8: a keyword query (fewer rows than tasks: each Linear streams its weight for few products).
    extra_shapes = [("b1_s512", 1, 512, [512]), ("b8_s512", 8, 512, [512] * 8), ("b1_s8192", 1, 8192, [8192]),
                    ("b16_s128", 16, 128, [128] * 16), ("b1_s16", 1, 16, [16]), ("b1_s8", 1, 8, [8])]
    shapes = [s for s in make_inputs(extra=extra_shapes) if s["name"] in wanted]
    print("\n".join(notes))
    idle = table(peers, shapes, args, "idle")
    if only is not None:
        import resource
        print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")
    if args.busy > 0:
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        try:
            time.sleep(1.0)
            busy = table(peers, shapes, args, f"{args.busy} busy process(es) beside them")
        finally:
            for p in spinners:
                p.kill()
                p.wait()
        print("\nslowdown under load (busy median / idle median)")
        header = ["shape"] + list(peers)
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for shape in shapes:
            n = shape["name"]
            print("| " + " | ".join([n] + [f"{busy[n][p] / idle[n][p]:.2f}x" for p in peers]) + " |")


def table(peers, shapes, args, title):
    """Prints one table of medians; returns {shape: {peer: median ms}}."""
    print(f"\n{title}: threads {args.threads}, {args.rounds} interleaved rounds x {args.runs} runs, median ms "
          "(min token cosine vs encc fp32)")
    header = ["shape"] + list(peers)
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    out = {}
    for shape in shapes:
        fns = {label: make(shape) for label, make in peers.items()}
        ref = np.array(fns["encc fp32"](), copy=True)
        cos = {label: token_cosines(ref, np.asarray(fn()), shape["lengths"])[0] for label, fn in fns.items()}
        rounds = {label: [] for label in fns}
        # The order reversed every other round: a burst of background load then spoils no column more than
        # another (in a fixed order, a few rounds could favour a column by its place).
        for r in range(args.rounds):
            for label in list(fns) if r % 2 == 0 else list(fns)[::-1]:
                rounds[label].append(time_fn(fns[label], args.runs, warmup=args.warmup)["median_ms"])
        med = {label: statistics.median(v) for label, v in rounds.items()}
        cells = [shape["name"]]
        for label in fns:
            c = "" if label == "encc fp32" else f" ({cos[label]:.5f})"
            cells.append(f"{med[label]:.1f}{c}")
        print("| " + " | ".join(cells) + " |")
        sys.stdout.flush()
        out[shape["name"]] = med
    return out

if __name__ == "__main__":
    main()
