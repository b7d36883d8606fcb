"""Interleaved timing rounds of ONNX Runtime sessions against encc artifacts on the same ids, shared by
splade_peers.py and bge_m3_peers.py: each round times every engine once (ONNX Runtime: the median of `runs`
calls in this process; encc: `encc run --runs`, the median it prints), so that the machine's drift falls
on all of them; the summary is each engine's median over the rounds, as a ratio to the first."""
import os
import re
import statistics
import subprocess
import time


def add_round_arguments(ap, runs):
    """The arguments run_rounds and ort_sessions read: --model, --artifact, --encc, --batch, --seq, --threads,
    --rounds, --runs (default `runs`), --ort-int8."""
    ap.add_argument("--model", help="the folder --make wrote")
    ap.add_argument("--artifact", action="append", default=[])
    ap.add_argument("--encc", default="build/bin/encc")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=runs, help="timed runs per engine per round")
    ap.add_argument("--ort-int8", action="store_true",
                    help="also ONNX Runtime on quantize_dynamic's int8 export of the model (per channel; written "
                         "once)")


def ort_sessions(args, fp32, int8, external_data=False):
    """ONNX Runtime sessions ({name: session}, --threads intra-op threads) of the export `fp32` and, with
    --ort-int8, of its quantize_dynamic int8 form written once at `int8`."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    files = {"onnxruntime " + ort.__version__: fp32}
    if args.ort_int8:
        if not os.path.exists(int8):
            from onnxruntime.quantization import QuantType, quantize_dynamic
            os.makedirs(os.path.dirname(int8), exist_ok=True)
            quantize_dynamic(fp32, int8, per_channel=True, weight_type=QuantType.QInt8,
                             use_external_data_format=external_data)
        files["onnxruntime " + ort.__version__ + " int8"] = int8
    return {n: ort.InferenceSession(f, opts, providers=["CPUExecutionProvider"]) for n, f in files.items()}


def encc_ms(encc, artifact, ids, threads, runs):
    """The median latency `encc run ARTIFACT --runs RUNS` prints for the rows of `ids`."""
    cmd = [encc, "run", artifact, "--threads", str(threads), "--runs", str(runs)]
    for row in ids:
        cmd += ["--ids", " ".join(map(str, row))]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"\(([\d.]+) ms: median of", out)
    if not m:
        raise SystemExit(f"no latency in encc run's output: {out[:300]}")
    return float(m.group(1))


def run_rounds(sessions, ort_call, args, ids):
    """sessions: {name: ONNX Runtime session}, each timed as ort_call(session, ids); args: the scripts'
    --artifact, --encc, --threads, --runs, --rounds, --batch, --seq."""
    for sess in sessions.values():
        ort_call(sess, ids)  # warm-up
    names = list(sessions) + [os.path.basename(p) for p in args.artifact]
    times = {n: [] for n in names}
    for r in range(args.rounds):
        for n, sess in sessions.items():
            runs = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                ort_call(sess, ids)
                runs.append((time.perf_counter() - t0) * 1e3)
            times[n].append(statistics.median(runs))
        for p, n in zip(args.artifact, names[len(sessions):]):
            times[n].append(encc_ms(args.encc, p, ids, args.threads, args.runs))
        print(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.1f} ms" for n in names), flush=True)
    base = statistics.median(times[names[0]])
    print(f"\n{args.batch} x {args.seq} tokens, {args.threads} threads, medians of {args.rounds} rounds:")
    for n in names:
        m = statistics.median(times[n])
        print(f"  {n:<28} {m:8.1f} ms   ONNX Runtime / this: {base / m:.2f}x")
