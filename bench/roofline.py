#!/usr/bin/env python3
"""Where a model's time goes against what this CPU can do: a roofline per step kind (issue 40, item 1).

For each artifact and batch shape, runs `encc run --profile` (per-kernel mean times), derives each kernel's work
from its symbol and the shape (the code generator names kernels by op, precision and dims:
enc_linear_f32_T_k384_n1536_gelu, enc_qlinear_u8s8_T_k384_n1152, enc_attention_packed_f32_Tx384_h12, ...), and
compares the achieved rate with the peak that binds it, measured here by qgemm_bench's Peak benchmarks:

  Linear (any fusion of qlinear / linear with epilogues): 2*M*K*N operations (M = the tokens of the batch) against
      the compute peak of its precision on the code object the runtime runs (fp32: FMA zmm or ymm; int8:
      tdpbusd with AMX, else vpdpbusd; bf16: tdpbf16ps with AMX, vdpbf16ps on the AVX512-BF16 object, else the
      fp32 FMA peak), and its weight
      bytes against the read bandwidth of where they live (the model's weights <= 64 MiB: the 32 MiB read peak,
      an L3-sized set; larger: the 1 GiB one). The roofline time is the larger of the two.
  Attention: 4*H*sum(len^2) operations (q.k^T and p.v; a window band limits the keys) against the fp32 FMA peak
      (q.k^T and the softmax are fp32 in every tier).
  Row-wise steps (LayerNorm, residual adds, GELU, quantisation, embedding, pooling, bf16 conversion): the bytes
      they read and write (4 per f32 element, 2 per bf16, 1 per int8 of the [M, N] tensors in their symbol)
      against the 512 KiB read peak when their tensors fit the core's L2, else the 32 MiB one.

Peaks scale with --threads (one core's peak times the threads; the profile's times are wall times).

    PYTHON bench/roofline.py --encc build/bin/encc --qgemm-bench build/bin/qgemm_bench \
        --shapes 1x128,8x128,1x512 --threads 1 fp32.encm int8.encm bf16.encm [--json out.json]

Prints per artifact and shape: each step kind's time, share of the run, achieved rate, the binding peak, and
roofline time / measured time ("of roof": 100 % = at the hardware's limit); then the whole run's roofline share.
"""
import argparse
import json
import os
import re
import subprocess
import sys

LINEAR = re.compile(r"^enc_q?linear.*_(?:T|BxS)_k(\d+)_n(\d+)")
ATTENTION = re.compile(r"^enc_attention(?:_packed)?_f32_(?:Tx|BxSx)(\d+)_h(\d+)((?:_\w+)*)$")
ROW = re.compile(r"_(?:Tx|BxSx|Bx)(\d+)")


def peaks(qgemm_bench, min_time):
    out = subprocess.run([qgemm_bench, "--benchmark_filter=Peak/", "--benchmark_format=json",
                          f"--benchmark_min_time={min_time}"], check=True, capture_output=True, text=True).stdout
    got = {}
    for b in json.loads(out)["benchmarks"]:
        name = b["name"].split("/", 1)[1]
        got[name] = b.get("GOP/s", b.get("GB/s", 0.0))  # rates in G per second
    return got


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


# encc's feature names where /proc/cpuinfo spells them otherwise.
CPUINFO_NAMES = {"bmi": "bmi1", "lzcnt": "abm", "avx512vnni": "avx512_vnni", "avx512bf16": "avx512_bf16",
                 "avxvnni": "avx_vnni"}


def chosen_target(inspect):
    """The first code object whose features this CPU has: the one the runtime runs."""
    flags = cpu_flags()
    for t in inspect["targets"]:
        if all(CPUINFO_NAMES.get(f, f.replace("-", "_")) in flags for f in t["features"]):
            return t["target"]
    sys.exit(f"roofline: this CPU runs none of the artifact's code objects ({inspect['targets']})")


def full_length_ids(seq, vocab):
    """One sequence of seq token ids for timing (their values do not change the work): BERT's [CLS] 2000...
    [SEP], clamped into a vocabulary of `vocab` ids (an artifact's metadata vocab_size)."""
    tok = lambda i: str(min(i, vocab - 1))
    return " ".join([tok(101)] + [tok(2000)] * (seq - 2) + [tok(102)])


def profile(encc, artifact, batch, seq, threads, runs, vocab):
    """Per-kernel mean ms and the kernels' total; (None, why) when the run fails."""
    ids = full_length_ids(seq, vocab)
    cmd = [encc, "run", artifact, "--runs", str(runs), "--profile", "--threads", str(threads)]
    for _ in range(batch):
        cmd += ["--ids", ids]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    err = proc.stderr
    rows, total = [], None
    for line in err.splitlines():
        m = re.match(r"profile: (\d+) steps, ([\d.]+) ms in kernels per run", line)
        if m:
            total = float(m.group(2))
            continue
        parts = line.split()
        kernel = next((p for p in parts if p.startswith("enc_")), None)
        if kernel and len(parts) >= 4 and parts[-1].replace(".", "").isdigit():
            rows.append(dict(kernel=kernel, steps=int(parts[-3]), ms=float(parts[-2])))
    if total is None:
        sys.exit(f"roofline: no profile from {' '.join(cmd[:3])}: {err[-500:]}")
    return rows, total


def element_bytes(kernel):
    if "u8s8" in kernel or "_q8" in kernel:
        return 1
    return 2 if "bf16" in kernel else 4


def classify(kernel, steps, tokens, lengths, weights_bytes, target, pk, threads):
    """(kind, operations or bytes, unit, peak per second in G, roofline seconds per run)."""
    amx, v4 = target.endswith("-amx"), "-v4" in target
    fp32_peak = pk["fp32_fma_zmm" if v4 and "fp32_fma_zmm" in pk else "fp32_fma_ymm"]
    weight_bw = pk["read_32MiB" if weights_bytes <= (64 << 20) else "read_1GiB"]
    m = LINEAR.match(kernel)
    if m:
        k, n = int(m.group(1)), int(m.group(2))
        if kernel.startswith("enc_qlinear"):
            kind = "linear int8"
            peak = pk["int8_tdpbusd_amx"] if amx and "int8_tdpbusd_amx" in pk else pk.get(
                "int8_vpdpbusd_zmm" if v4 else "int8_vpdpbusd_ymm", pk["int8_vpmaddubsw_7bit_ymm"])
            wbytes = k * n
        elif kernel.startswith("enc_linear_bf16"):
            kind = "linear bf16"
            if amx and "bf16_tdpbf16ps_amx" in pk:
                peak = pk["bf16_tdpbf16ps_amx"]
            elif target.endswith("-bf16") and "bf16_vdpbf16ps_zmm" in pk:
                peak = pk["bf16_vdpbf16ps_zmm"]
            else:  # the bf16 weights widened to fp32
                peak = fp32_peak
            wbytes = 2 * k * n
        else:
            kind = "linear fp32"
            peak, wbytes = fp32_peak, 4 * k * n
        ops = 2.0 * tokens * k * n * steps
        roof = max(ops / (peak * threads * 1e9), wbytes * steps / (weight_bw * threads * 1e9))
        return kind, ops, "GOP/s", peak * threads, roof
    m = ATTENTION.match(kernel)
    if m:
        h = int(m.group(1))
        band = re.search(r"_band(all|\d+)_(all|\d+)", m.group(3) or "")
        ops = 0.0
        for n in lengths:
            keys = n
            if band:
                left = n if band.group(1) == "all" else int(band.group(1))
                right = n if band.group(2) == "all" else int(band.group(2))
                keys = min(n, left + right + 1)
            ops += 4.0 * h * n * keys
        ops *= steps
        return "attention", ops, "GOP/s", fp32_peak * threads, ops / (fp32_peak * threads * 1e9)
    m = ROW.search(kernel)
    width = int(m.group(1)) if m else 0
    rows = len(lengths) if "_Bx" in kernel else tokens
    # Reads and writes of the [rows, width] tensors: residual adds read two, quantisation writes int8, a fused
    # bf16 conversion writes bf16, the embedding reads a table row per token.
    reads = 2 if "add_layernorm" in kernel else 1
    write = 1 if "quantize" in kernel else 2 if "to_bf16" in kernel else 4
    nbytes = rows * width * (4 * reads + write) * steps
    fits_l2 = rows * width * 4 * (reads + 1) <= (2 << 20)
    bw = pk["read_512KiB" if fits_l2 else "read_32MiB"]
    return "row-wise", float(nbytes), "GB/s", bw * threads, nbytes / (bw * threads * 1e9)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifacts", nargs="+")
    ap.add_argument("--encc", default="build/bin/encc")
    ap.add_argument("--qgemm-bench", default="build/bin/qgemm_bench")
    ap.add_argument("--shapes", default="1x128,8x128,1x512", help="BATCHxSEQ list (every sequence full length)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3,
                    help="profiles per artifact and shape, taken in turns; the quietest (least total) is reported "
                         "(a shared machine's background load comes and goes within minutes)")
    ap.add_argument("--peak-min-time", type=float, default=0.3, help="seconds per Peak benchmark")
    ap.add_argument("--json", help="write the rows here too")
    a = ap.parse_args()
    if a.rounds < 1 or a.runs < 1:
        sys.exit("roofline: --rounds and --runs must be at least 1")
    pk = peaks(a.qgemm_bench, a.peak_min_time)
    print("peaks (one core): " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(pk.items())) +
          " (GOP/s; read_*: GB/s)")
    out = []
    inspects = {art: json.loads(subprocess.run([a.encc, "inspect", art, "--format=json"], check=True,
                                               capture_output=True, text=True).stdout) for art in a.artifacts}
    shapes = [tuple(int(x) for x in shape.split("x")) for shape in a.shapes.split(",")]
    # Every (artifact, shape) profiled once per round, in turns, so that a burst of background load spoils one
    # round of each rather than all rounds of one; the round with the least kernel time is reported.
    profiles = {}
    for _ in range(a.rounds):
        for art in a.artifacts:
            for batch, seq in shapes:
                earlier = profiles.get((art, batch, seq))
                if earlier and earlier[0][0] is None:
                    continue  # refused once (a shape past max_seq): refused again
                # The model's embedding rows (a config-only artifact has no tokenizer: its vocab_size is 0).
                rows, total = profile(a.encc, art, batch, seq, a.threads, a.runs,
                                      inspects[art]["metadata"]["vocab_size"])
                profiles.setdefault((art, batch, seq), []).append((rows, total))
    for art in a.artifacts:
        inspect = inspects[art]
        target = chosen_target(inspect)
        for batch, seq in shapes:
            taken = [rt for rt in profiles[(art, batch, seq)] if rt[0] is not None]
            if not taken:
                print(f"\n{os.path.basename(art)}, {batch} x {seq}: skipped: {profiles[(art, batch, seq)][0][1]}")
                continue
            totals = [t for _, t in taken]
            rows, total = min(taken, key=lambda rt: rt[1])
            lengths = [seq] * batch
            kinds = {}
            for r in rows:
                kind, work, unit, peak, roof = classify(r["kernel"], r["steps"], batch * seq, lengths,
                                                        inspect["weights_bytes"], target, pk, a.threads)
                k = kinds.setdefault(kind, dict(ms=0.0, work=0.0, unit=unit, peak=peak, roof_ms=0.0))
                k["ms"] += r["ms"]
                k["work"] += work
                k["roof_ms"] += roof * 1e3
            print(f"\n{os.path.basename(art)} ({target}), {batch} x {seq}, {a.threads} thread(s): "
                  f"{total:.3f} ms in kernels (the least of {len(totals)} rounds: {min(totals):.3f}-{max(totals):.3f})")
            print(f"  {'step kind':<12} {'ms':>8} {'share':>6} {'achieved':>16} {'peak':>16} {'of roof':>8}")
            roof_total = 0.0
            for kind, k in sorted(kinds.items(), key=lambda kv: -kv[1]["ms"]):
                rate = k["work"] / (k["ms"] * 1e-3) / 1e9 if k["ms"] > 0 else 0.0
                roof_total += k["roof_ms"]
                share = k["roof_ms"] / k["ms"] if k["ms"] > 0 else 0.0
                print(f"  {kind:<12} {k['ms']:8.3f} {100 * k['ms'] / total:5.1f}% {rate:10.1f} {k['unit']:<5}"
                      f" {k['peak']:10.1f} {k['unit']:<5} {100 * share:7.1f}%")
                out.append(dict(artifact=art, target=target, batch=batch, seq=seq, threads=a.threads, kind=kind,
                                ms=k["ms"], share_of_run=k["ms"] / total, achieved=rate, unit=k["unit"],
                                peak=k["peak"], roofline_ms=k["roof_ms"], of_roof=share))
            print(f"  whole run: roofline {roof_total:.3f} ms = {100 * roof_total / total:.1f}% of the measured "
                  f"{total:.3f} ms")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(peaks=pk, rows=out), f, indent=1)


if __name__ == "__main__":
    main()
