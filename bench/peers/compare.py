"""encc vs ONNX Runtime, CTranslate2 and PyTorch on all-MiniLM-L6-v2 (or a BERT-base-shaped
model), one run, same machine.

usage: python compare.py --model-dir DIR --encc-build DIR --fp32 A.encm --int8 B.encm
                         [--model-name NAME] [--tag TAG] [--cache DIR] [--threads 1,2]
                         [--runs 20] [--out DIR]
Run through bench/peers/compare.sh, which builds encc, compiles the two artifacts and
sets up the Python environment (onnxruntime, onnx, transformers, ctranslate2, torch).

Every peer gets the same token ids (written once to OUT/inputs.json), the same thread
count, 3 warm-up runs and the median of --runs timed runs (PyTorch: Debian's build is
~50x slower than the others, so it is capped by a time budget and marked). encc is timed
twice: through its C API from this very timing loop (ctypes on libencrt.so; the ratio
base) and with build/bin/encc_bench (Google Benchmark, JSON output) for the shapes it
registers. Outputs: the last hidden state of every valid token is compared with encc
fp32 (cosine per token; min reported, fp32 peers must reach 0.999). Next to encc's
times: the model's FLOPs for the shape (valid tokens only: 2·tokens·(4H² + 2HI) per layer
for the Linears plus 4·H·Σ len² for attention) and the GFLOP/s encc achieves.
"""
import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

FP32_MIN_COSINE = 0.999


def model_dims(model_dir):
    """hidden, heads, layers, intermediate from the folder's config.json."""
    with open(os.path.join(model_dir, "config.json")) as f:
        c = json.load(f)
    return c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"], c["intermediate_size"]


def model_flops(dims, lengths):
    """Multiply-adds x 2 of one forward over the valid tokens (no padding work)."""
    hidden, _, layers, inter = dims
    tokens = sum(lengths)
    linear = 2 * tokens * (4 * hidden * hidden + 2 * hidden * inter)
    attention = 4 * hidden * sum(n * n for n in lengths)  # QK^T and PV
    return layers * (linear + attention)


# --- inputs -------------------------------------------------------------------------------

def make_inputs(extra=()):
    """Shapes and ids. The ids follow bench/e2e_bench.cpp: id[b*S+j] = 1000 +
    ((b*S+j)*7919) % 20000 over the padded [B, S] grid, [CLS]=101 first, [SEP]=102 at
    the last valid token. Mixed: lengths 16, 32, ..., 128 (batch 8, seq 128). extra:
    more (name, batch, seq, lengths) shapes after these."""
    shapes = [("b1_s128", 1, 128, [128]),
              ("b8_s128", 8, 128, [128] * 8),
              ("b8_mixed16-128", 8, 128, [16 * (b + 1) for b in range(8)]),
              ("b32_s64", 32, 64, [64] * 32)] + list(extra)
    out = []
    for name, batch, seq, lengths in shapes:
        ids = [[1000 + ((b * seq + j) * 7919) % 20000 for j in range(seq)] for b in range(batch)]
        for b, n in enumerate(lengths):
            ids[b][0] = 101
            ids[b][n - 1] = 102
            for j in range(n, seq):
                ids[b][j] = 0  # [PAD]
        out.append({"name": name, "batch": batch, "seq": seq, "lengths": lengths, "ids": ids,
                    "encc_bench": f"{batch}/{seq}/" + ("0" if all(n == seq for n in lengths) else "1")})
    return out


def arrays(shape):
    ids = np.array(shape["ids"], dtype=np.int64)
    lengths = np.array(shape["lengths"], dtype=np.int64)
    mask = (np.arange(shape["seq"])[None, :] < lengths[:, None]).astype(np.int64)
    return ids, mask, lengths


# --- timing -------------------------------------------------------------------------------

def time_fn(fn, runs, warmup=3, budget_s=None):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < runs:
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        if budget_s is not None and time.perf_counter() - start > budget_s and len(times) >= 3:
            break
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
            "runs": len(times)}


def token_cosines(ref, out, lengths):
    """Min and mean cosine between rows of the valid tokens of two [B, S, H] arrays."""
    cos = []
    for b, n in enumerate(lengths):
        r, o = ref[b, :n].astype(np.float64), out[b, :n].astype(np.float64)
        cos.append((r * o).sum(-1) / (np.linalg.norm(r, axis=-1) * np.linalg.norm(o, axis=-1) + 1e-30))
    cos = np.concatenate(cos)
    return float(cos.min()), float(cos.mean())


# --- encc through its C API ---------------------------------------------------------------

class EnccModelOptions(ctypes.Structure):
    """encrt_model_options, every field: encrt_model_options_initialize writes all of them."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_threads", ctypes.c_int32),
                ("cpu_target", ctypes.c_char_p), ("device", ctypes.c_char_p),
                ("max_text_bytes", ctypes.c_int64), ("require_sha256", ctypes.c_char_p),
                ("trusted_public_key", ctypes.c_char_p), ("signature_path", ctypes.c_char_p)]


class EnccModelInfo(ctypes.Structure):
    _fields_ = [("architecture", ctypes.c_char_p), ("hidden_size", ctypes.c_int32),
                ("num_layers", ctypes.c_int32), ("num_heads", ctypes.c_int32),
                ("max_seq", ctypes.c_int32), ("vocab_size", ctypes.c_int32),
                ("pooling", ctypes.c_char_p), ("normalize", ctypes.c_int32),
                ("has_pooled_output", ctypes.c_int32), ("cpu_target", ctypes.c_char_p),
                ("num_steps", ctypes.c_int32), ("weight_bytes", ctypes.c_uint64),
                ("device", ctypes.c_char_p), ("random_weights", ctypes.c_int32)]


class Encc:
    """One encrt model + session (runtime/include/encrt/encrt.h) with `threads` workers."""

    def __init__(self, lib, path, threads):
        self.lib = lib
        lib.encrt_status_message.restype = ctypes.c_char_p
        # Statuses are pointers: the default int restype would cut them to 32 bits.
        for fn in ("encrt_model_load", "encrt_session_create", "encrt_session_run"):
            getattr(lib, fn).restype = ctypes.c_void_p
        opt = EnccModelOptions()
        lib.encrt_model_options_initialize(ctypes.byref(opt))
        opt.num_threads = threads
        self.model, self.session = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(lib.encrt_model_load(path.encode(), ctypes.byref(opt), ctypes.byref(self.model)))
        info = EnccModelInfo()
        lib.encrt_model_get_info(self.model, ctypes.byref(info), ctypes.c_size_t(ctypes.sizeof(info)))
        self.hidden, self.cpu_target = info.hidden_size, info.cpu_target.decode()
        self._check(lib.encrt_session_create(self.model, None, ctypes.byref(self.session)))

    def _check(self, status):
        if status:
            msg = self.lib.encrt_status_message(ctypes.c_void_p(status)).decode()
            raise RuntimeError(f"encrt: {msg}")

    def runner(self, shape):
        ids, _, lengths = arrays(shape)
        ids32 = np.ascontiguousarray(ids, dtype=np.int32)
        len32 = np.ascontiguousarray(lengths, dtype=np.int32)
        out = np.zeros((shape["batch"], shape["seq"], self.hidden), dtype=np.float32)
        p = lambda a, t: a.ctypes.data_as(ctypes.POINTER(t))
        args = (self.session, p(ids32, ctypes.c_int32), p(len32, ctypes.c_int32),
                ctypes.c_int64(shape["batch"]), ctypes.c_int64(shape["seq"]), p(out, ctypes.c_float), None)
        run = self.lib.encrt_session_run

        def fn():
            st = run(*args)
            if st:
                self._check(st)
            return out
        return fn

    def close(self):
        self.lib.encrt_session_release(self.session)
        self.lib.encrt_model_release(self.model)


def encc_bench(binary, fp32, int8, threads, out_json):
    """Median real time (ms) per BM_Forward case of build/bin/encc_bench."""
    env = dict(os.environ, ENCC_BENCH_ARTIFACT=fp32, ENCC_BENCH_ARTIFACT_INT8=int8,
               ENCC_BENCH_THREADS=str(threads))
    subprocess.run([binary, "--benchmark_filter=BM_Forward", "--benchmark_repetitions=5",
                    "--benchmark_report_aggregates_only=true", f"--benchmark_out={out_json}",
                    "--benchmark_out_format=json"], env=env, check=True, stdout=subprocess.DEVNULL)
    with open(out_json) as f:
        data = json.load(f)
    res = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        # BM_Forward/<label>/<B>/<S>/<mixed>/real_time; mixed: lengths S*(b+1)/B
        parts = b["run_name"].split("/")
        scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        res[(parts[1], f"{parts[2]}/{parts[3]}/{parts[4]}")] = b["real_time"] * scale
    return res


# --- ONNX Runtime -------------------------------------------------------------------------

def has_vnni():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l for l in f if l.startswith("flags")), "").split()
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def prepare_onnx(model_dir, name, cache, log, optimizer="bert"):
    """Exports (once, cached) and optimises/quantises: returns paths and settings. optimizer:
    the model_type of ORT's transformer optimiser, or "none" (the exported graph as it is, for
    architectures the optimiser does not know; ORT's own graph optimisations still run)."""
    import onnxruntime as ort
    os.makedirs(cache, exist_ok=True)
    hidden, heads = model_dims(model_dir)[:2]
    raw = os.path.join(cache, f"{name}.onnx")
    if not os.path.exists(raw):
        import torch
        from transformers import BertModel
        log(f"exporting {model_dir} to ONNX (torch {torch.__version__})")
        model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
        ids = torch.ones(2, 16, dtype=torch.long)
        torch.onnx.export(
            model, (ids, torch.ones_like(ids)), raw + ".partial",
            input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"},
                          "last_hidden_state": {0: "b", 1: "s"}},
            opset_version=14)
        os.replace(raw + ".partial", raw)
    tag = ort.__version__
    opt_path = raw if optimizer == "none" else os.path.join(cache, f"{name}.opt-ort{tag}.onnx")
    fused = None
    stats_path = opt_path + ".fused.json"
    if optimizer == "none":
        log("ORT transformer optimiser not applied (--ort-optimizer none)")
    elif not os.path.exists(opt_path):
        import importlib.util
        from onnxruntime.transformers.optimizer import optimize_model
        # The optimiser's ORT pre-pass imports torch (onnxruntime 1.2x); without torch its Python
        # fusions run alone (opt_level 0) and the session applies ORT's graph optimisations at load.
        kwargs = {} if importlib.util.find_spec("torch") else {"opt_level": 0}
        log(f"ORT transformer optimiser (model_type {optimizer}, num_heads {heads}, hidden {hidden}"
            + (", opt_level 0: no torch for its ORT pre-pass" if kwargs else "") + ")")
        opt = optimize_model(raw, model_type=optimizer, num_heads=heads, hidden_size=hidden, **kwargs)
        fused = opt.get_fused_operator_statistics()
        opt.save_model_to_file(opt_path + ".partial.onnx")
        os.replace(opt_path + ".partial.onnx", opt_path)
        with open(stats_path, "w") as f:
            json.dump(fused, f)
    elif os.path.exists(stats_path):
        with open(stats_path) as f:
            fused = json.load(f)
    vnni = has_vnni()
    reduce_range = not vnni  # ORT: 7-bit weights on AVX2/AVX-512 without VNNI (u8s8 overflow)
    q_path = os.path.join(cache, f"{name}.int8-ort{tag}-rr{int(reduce_range)}.onnx")
    if not os.path.exists(q_path):
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
        log(f"ORT quantize_dynamic (per_channel=True, QInt8, reduce_range={reduce_range})")
        # The fused com.microsoft ops defeat ONNX shape inference: name the float type.
        # Models over ONNX's 2 GB protobuf limit keep their weights in external data.
        external = any(t.data_location == onnx.TensorProto.EXTERNAL
                       for t in onnx.load(opt_path, load_external_data=False).graph.initializer)
        quantize_dynamic(opt_path, q_path + ".partial.onnx", per_channel=True,
                         weight_type=QuantType.QInt8, reduce_range=reduce_range,
                         use_external_data_format=external,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        os.replace(q_path + ".partial.onnx", q_path)
    settings = {"onnxruntime": ort.__version__, "optimizer": optimizer, "fused_operators": fused,
                "quantize_dynamic": {"per_channel": True, "weight_type": "QInt8",
                                     "reduce_range": reduce_range, "cpu_vnni": vnni,
                                     "why": "VNNI present: full 8-bit range" if vnni else
                                     "AVX2/AVX-512 without VNNI: ORT recommends reduce_range=True"}}
    return opt_path, q_path, settings


def ort_runner(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}

    def make(shape):
        ids, mask, _ = arrays(shape)
        feeds = {k: v for k, v in {"input_ids": ids, "attention_mask": mask,
                                   "token_type_ids": np.zeros_like(ids)}.items() if k in names}
        return lambda: sess.run(None, feeds)[0]
    return make


# --- CTranslate2 --------------------------------------------------------------------------

def prepare_ct2(model_dir, name, cache, log):
    import ctranslate2
    from ctranslate2.converters import TransformersConverter
    out = os.path.join(cache, f"{name}.ct2-{ctranslate2.__version__}")
    if not os.path.exists(os.path.join(out, "model.bin")):
        class Converter(TransformersConverter):
            # CTranslate2 >= 4.6 passes dtype= (transformers >= 4.56); older
            # transformers (the one that runs on Debian's torch 1.13) want torch_dtype=.
            def load_model(self, model_class, path, **kwargs):
                import transformers
                if "dtype" in kwargs and tuple(int(x) for x in transformers.__version__.split(".")[:2]) < (4, 56):
                    kwargs["torch_dtype"] = kwargs.pop("dtype")
                return model_class.from_pretrained(path, **kwargs)
        log(f"converting to CTranslate2 {ctranslate2.__version__} (BERT encoder, float32 weights)")
        Converter(model_dir).convert(out, force=True)
    return out


def ct2_runner(path, compute_type, threads):
    import ctranslate2
    enc = ctranslate2.Encoder(path, device="cpu", compute_type=compute_type, intra_threads=threads,
                              inter_threads=1)

    def make(shape):
        ids, _, lengths = arrays(shape)
        sv_ids = ctranslate2.StorageView.from_array(np.ascontiguousarray(ids, dtype=np.int32))
        sv_len = ctranslate2.StorageView.from_array(np.ascontiguousarray(lengths, dtype=np.int32))
        return lambda: np.array(enc.forward_batch(sv_ids, sv_len).last_hidden_state)
    return make


# --- PyTorch ------------------------------------------------------------------------------

def torch_runner(model_dir, threads):
    import torch
    from transformers import BertModel
    torch.set_num_threads(threads)
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()

    def make(shape):
        ids, mask, _ = arrays(shape)
        ids, mask = torch.from_numpy(ids), torch.from_numpy(mask)

        def fn():
            with torch.inference_mode():
                return model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
        return fn
    return make


# --- report -------------------------------------------------------------------------------

def fmt_ms(v):
    return "-" if v is None else (f"{v:.1f}" if v >= 100 else f"{v:.2f}")


def print_table(rows, peers, base_of):
    head = ["shape", "thr"] + [p for p in peers]
    print()
    print("latency, ms (median); (x) = peer time / encc time of the same precision, > 1: encc faster")
    cols = []
    for r in rows:
        line = [r["shape"], str(r["threads"])]
        for p in peers:
            c = r["peers"].get(p)
            if c is None or c.get("median_ms") is None:
                line.append(c.get("error", "-")[:14] if c else "-")
                continue
            cell = fmt_ms(c["median_ms"])
            base = r["peers"].get(base_of(p))
            if base_of(p) != p and base and base.get("median_ms"):
                cell += f" ({c['median_ms'] / base['median_ms']:.2f}x)"
            if c.get("runs") is not None and c["runs"] < 20:
                cell += f" n={c['runs']}"
            line.append(cell)
        cols.append(line)
    widths = [max(len(x[i]) for x in cols + [head]) for i in range(len(head))]
    for line in [head, ["-" * w for w in widths]] + cols:
        print("  ".join(s.ljust(w) if i < 2 else s.rjust(w) for i, (s, w) in enumerate(zip(line, widths))))
    print()
    print("cosine vs encc fp32 (min over valid tokens of the last hidden state):")
    for p in peers:
        vals = [r["peers"][p]["cos_min"] for r in rows if p in r["peers"] and r["peers"][p].get("cos_min") is not None]
        if vals:
            print(f"  {p:<18} min {min(vals):.5f}")


def plot(rows, peers, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"no plot: {e}"
    labels = [f"{r['shape']}\n{r['threads']} thr" for r in rows]
    fig, ax = plt.subplots(figsize=(max(10, 1.6 * len(rows)), 5.5))
    width = 0.8 / len(peers)
    for i, p in enumerate(peers):
        xs, ys = [], []
        for j, r in enumerate(rows):
            c = r["peers"].get(p)
            if c and c.get("median_ms"):
                xs.append(j + (i - (len(peers) - 1) / 2) * width)
                ys.append(c["median_ms"])
        ax.bar(xs, ys, width, label=p)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("median latency, ms (log scale, lower is better)")
    ax.set_title(f"{title} on this machine: encc vs peers, one run")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--model-name", default="all-MiniLM-L6-v2", help="names the cached exports and the plot")
    ap.add_argument("--tag", default="", help="suffix of results-TAG.json / compare-TAG.svg (default: none)")
    ap.add_argument("--encc-build", required=True)
    ap.add_argument("--fp32", required=True)
    ap.add_argument("--int8", required=True)
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/encc/peers"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--torch-budget-s", type=float, default=8.0,
                    help="PyTorch: stop after this many seconds per case (>= 3 runs)")
    ap.add_argument("--torch-shapes", default="b1_s128",
                    help="shapes PyTorch runs (comma-separated or 'all'): Debian's build takes seconds a run")
    ap.add_argument("--skip", default="", help="comma-separated peers to leave out (torch, ct2, ort, encc_bench)")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    threads = [int(t) for t in args.threads.split(",")]
    t_start = time.perf_counter()
    log = lambda m: print(f"[{time.perf_counter() - t_start:6.1f}s] {m}", file=sys.stderr, flush=True)

    shapes = make_inputs()
    inputs_path = os.path.join(args.cache, "inputs.json")
    os.makedirs(args.cache, exist_ok=True)
    with open(inputs_path, "w") as f:
        json.dump(shapes, f)
    with open(inputs_path) as f:  # every peer reads the same file
        shapes = json.load(f)

    meta = {"command": " ".join(sys.argv), "machine": platform.machine(), "python": platform.python_version(),
            "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
            "nproc": os.cpu_count(), "runs": args.runs, "warmup": 3, "inputs": inputs_path,
            "versions": {}, "notes": []}

    if args.runs < 20:
        meta["notes"].append(f"{args.runs} timed runs per case (fewer than the usual 20: "
                             f"{args.model_name} costs more per run); medians are noisier")
    # Peers: name -> (precision, factory(threads) -> make(shape) -> fn)
    peers = {}
    lib = ctypes.CDLL(os.path.join(args.encc_build, "lib", "libencrt.so"))
    peers["encc fp32"] = ("fp32", lambda t: Encc(lib, args.fp32, t).runner)
    peers["encc int8"] = ("int8", lambda t: Encc(lib, args.int8, t).runner)
    if "ort" not in skip:
        try:
            opt_path, q_path, ort_settings = prepare_onnx(args.model_dir, args.model_name, args.cache, log)
            meta["onnxruntime"] = ort_settings
            meta["versions"]["onnxruntime"] = ort_settings["onnxruntime"]
            peers["ORT fp32 opt"] = ("fp32", lambda t: ort_runner(opt_path, t))
            peers["ORT int8"] = ("int8", lambda t: ort_runner(q_path, t))
        except Exception as e:  # noqa: BLE001 - report and go on with the other peers
            meta["notes"].append(f"ONNX Runtime left out: {type(e).__name__}: {e}")
    if "ct2" not in skip:
        try:
            import ctranslate2
            ct2_path = prepare_ct2(args.model_dir, args.model_name, args.cache, log)
            meta["versions"]["ctranslate2"] = ctranslate2.__version__
            peers["CT2 fp32"] = ("fp32", lambda t: ct2_runner(ct2_path, "float32", t))
            peers["CT2 int8"] = ("int8", lambda t: ct2_runner(ct2_path, "int8", t))
        except Exception as e:  # noqa: BLE001
            meta["notes"].append(f"CTranslate2 left out: {type(e).__name__}: {e}")
    if "torch" not in skip:
        try:
            import torch
            import transformers
            meta["versions"]["torch"] = torch.__version__
            meta["versions"]["transformers"] = transformers.__version__
            peers["PyTorch fp32*"] = ("fp32", lambda t: torch_runner(args.model_dir, t))
            meta["notes"].append(
                f"PyTorch fp32* = torch {torch.__version__} eager from {os.path.dirname(torch.__file__)}"
                " (Debian's python3-torch, tens of times slower than a PyPI wheel here: a marker, not a"
                " representative peer); runs capped at --torch-budget-s per case (n= shows how many),"
                f" shapes: {args.torch_shapes}")
        except Exception as e:  # noqa: BLE001
            meta["notes"].append(f"PyTorch left out: {type(e).__name__}: {e}")
    for n in meta["notes"]:
        log(n)

    rows = {(s["name"], t): {"shape": s["name"], "threads": t, "peers": {}} for t in threads for s in shapes}
    torch_shapes = set(args.torch_shapes.split(",")) if args.torch_shapes != "all" else {s["name"] for s in shapes}
    refs = {}  # encc fp32 outputs by shape
    for t in threads:
        makers, encc_models = {}, []
        for name, (prec, factory) in peers.items():
            try:
                makers[name] = factory(t)
            except Exception as e:  # noqa: BLE001
                for s in shapes:
                    rows[(s["name"], t)]["peers"][name] = {"error": f"{type(e).__name__}: {e}"}
                log(f"  {name} failed to load: {e}")
                continue
            if name.startswith("encc"):
                encc_models.append(makers[name].__self__)
                meta.setdefault("encc_cpu_target", {})[name] = makers[name].__self__.cpu_target
        # Shape by shape, every peer in turn: load drifts hit all of them alike.
        for s in shapes:
            log(f"{s['name']}, {t} thread(s): " + ", ".join(makers))
            for name, make in makers.items():
                is_torch = name.startswith("PyTorch")
                if is_torch and s["name"] not in torch_shapes:
                    continue
                try:
                    fn = make(s)
                    out = np.asarray(fn())
                    budget = args.torch_budget_s if is_torch else None
                    cell = time_fn(fn, args.runs, warmup=0 if is_torch else 3, budget_s=budget)
                    if name == "encc fp32" and s["name"] not in refs:
                        refs[s["name"]] = out.copy()
                    ref = refs.get(s["name"])
                    if ref is not None and name != "encc fp32":
                        cell["cos_min"], cell["cos_mean"] = token_cosines(ref, out, s["lengths"])
                    rows[(s["name"], t)]["peers"][name] = cell
                except Exception as e:  # noqa: BLE001
                    rows[(s["name"], t)]["peers"][name] = {"error": f"{type(e).__name__}: {e}"}
                    log(f"  {name} {s['name']} failed: {e}")
        for m in encc_models:
            m.close()
        makers.clear()

    if "encc_bench" not in skip:
        binary = os.path.join(args.encc_build, "bin", "encc_bench")
        for t in threads:
            log(f"encc_bench (Google Benchmark, median of 5 repetitions), {t} thread(s)")
            try:
                res = encc_bench(binary, args.fp32, args.int8, t, os.path.join(args.cache, f"encc_bench_t{t}.json"))
            except Exception as e:  # noqa: BLE001
                meta["notes"].append(f"encc_bench failed: {e}")
                break
            for s in shapes:
                for label in ("fp32", "int8"):
                    key = (label, s["encc_bench"]) if s["encc_bench"] else None
                    if key in res:
                        rows[(s["name"], t)]["peers"][f"encc_bench {label}"] = {"median_ms": res[key], "runs": None}
        missing = [s["name"] for s in shapes if not s["encc_bench"]]
        if missing:
            meta["notes"].append("encc_bench has no case for " + ", ".join(missing) +
                                 " (its BM_Forward runs full-length batches only): the encc columns"
                                 " there come from the C API timing alone")

    order = [p for p in ["encc fp32", "encc_bench fp32", "ORT fp32 opt", "CT2 fp32", "PyTorch fp32*",
                         "encc int8", "encc_bench int8", "ORT int8", "CT2 int8"] if any(p in r["peers"] for r in rows.values())]
    base_of = lambda p: "encc int8" if ("int8" in p) else "encc fp32"
    row_list = list(rows.values())
    # Ratios and the accuracy gate.
    failures = []
    for r in row_list:
        for p, c in r["peers"].items():
            b = r["peers"].get(base_of(p), {})
            if c.get("median_ms") and b.get("median_ms") and base_of(p) != p:
                c["ratio_vs_encc"] = c["median_ms"] / b["median_ms"]
            if peers.get(p, ("",))[0] == "fp32" and c.get("cos_min") is not None and c["cos_min"] < FP32_MIN_COSINE:
                failures.append(f"{p} {r['shape']} t{r['threads']}: cosine {c['cos_min']:.5f} < {FP32_MIN_COSINE}")
    print_table(row_list, order, base_of)
    dims = model_dims(args.model_dir)
    meta["model"] = {"name": args.model_name, "hidden": dims[0], "heads": dims[1], "layers": dims[2],
                     "intermediate": dims[3]}
    print(f"encc throughput ({args.model_name}; FLOPs of the valid tokens, no padding work):")
    for r in row_list:
        shape = next(s for s in shapes if s["name"] == r["shape"])
        gflop = model_flops(dims, shape["lengths"]) / 1e9
        r["gflop"] = gflop
        cells = []
        for p in ("encc fp32", "encc int8"):
            ms = r["peers"].get(p, {}).get("median_ms")
            if ms:
                r["peers"][p]["gflops"] = gflop / (ms / 1e3)
                cells.append(f"{p} {ms:.1f} ms = {gflop / (ms / 1e3):.0f} GFLOP/s")
        print(f"  {r['shape']:<16} t{r['threads']}: {gflop:.2f} GFLOP; " + ", ".join(cells))
    print("encc, batch 8: padded to 128 / mixed lengths 16-128 (issue 5 wants >= 1.5):")
    for t in threads:
        for p in ("encc fp32", "encc int8"):
            a = rows.get(("b8_s128", t), {}).get("peers", {}).get(p, {}).get("median_ms")
            b = rows.get(("b8_mixed16-128", t), {}).get("peers", {}).get(p, {}).get("median_ms")
            if a and b:
                meta.setdefault("encc_padded_over_mixed", {})[f"{p} t{t}"] = a / b
                print(f"  {p} {t} thread(s): {a:.1f} / {b:.1f} ms = {a / b:.2f}x")
    for n in meta["notes"]:
        print("note:", n)
    meta["encc_artifacts"] = {"fp32": args.fp32, "int8": args.int8}
    meta["accuracy_failures"] = failures
    meta["total_s"] = time.perf_counter() - t_start
    os.makedirs(args.out, exist_ok=True)
    suffix = f"-{args.tag}" if args.tag else ""
    results = os.path.join(args.out, f"results{suffix}.json")
    with open(results, "w") as f:
        json.dump({"meta": meta, "columns": order, "rows": row_list}, f, indent=1)
    err = plot(row_list, order, os.path.join(args.out, f"compare{suffix}.svg"), args.model_name)
    if err:
        print("note:", err)
    print(f"wrote {results} and compare{suffix}.svg in {meta['total_s']:.0f} s")
    if failures:
        print("ACCURACY FAILURES (fp32 cosine < 0.999):\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
