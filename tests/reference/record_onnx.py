#!/usr/bin/env python3
"""Exports tiny models to ONNX with torch.onnx.export and records ONNX Runtime's outputs.

Run (from the repository root, after building make-tiny-model), with a Python that has
torch, transformers 4.40.2, onnx, onnxscript and onnxruntime:
  PYTHON tests/reference/record_onnx.py --make-tiny-model BUILD/bin/make-tiny-model

Writes tests/reference/onnx/CASE.onnx (the exported graph with its weights; for the *_ortopt cases
after onnxruntime.transformers.optimizer, which writes its fused com.microsoft operators) and
onnx_outputs.json next to this script: per case the make-tiny-model flags of the Hugging Face
folder the export was made from (so a test can rebuild the same model and compare the two
frontends), the opset, fixed token ids (right-padded batch, lengths, token types) and ONNX
Runtime's last_hidden_state for the valid rows, or for the classification heads its logits
(CPU execution provider, float32, graph optimisations off, so the file as written is what ran). The product never uses Python; this
only produces test data.
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModel, AutoModelForSequenceClassification  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROBERTA_IDS = [[0, 17, 23, 99, 5, 64, 2], [0, 8, 33, 2], [0]]
SMALL = ["--hidden", "32", "--heads", "2", "--layers", "2", "--intermediate", "64", "--vocab", "120",
         "--max-positions", "32"]
CASES = [
    # Decomposed LayerNorm, erf GELU (opset 14); LayerNormalization (opset 17).
    {"name": "bert_gelu_opset14", "opset": 14, "flags": SMALL + ["--seed", "41"]},
    {"name": "bert_gelu_opset17", "opset": 17, "flags": SMALL + ["--seed", "41"]},
    # HF gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 pow(x, 3)))).
    {"name": "bert_gelu_new_opset14", "opset": 14, "flags": SMALL + ["--act", "gelu_new", "--seed", "42"]},
    # torch's tanh GELU (F.gelu(approximate="tanh")) as exported at opset 17.
    {"name": "bert_gelu_tanh_opset17", "opset": 17,
     "flags": SMALL + ["--act", "gelu_pytorch_tanh", "--seed", "43", "--type-vocab", "1"]},
    # ONNX Runtime's transformer optimiser applied to an export: EmbedLayerNormalization,
    # Attention, SkipLayerNormalization and BiasGelu / FastGelu (com.microsoft).
    {"name": "bert_gelu_opset17_ortopt", "opset": 17, "flags": SMALL + ["--seed", "41"],
     "optimize": {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization"}},
    {"name": "bert_gelu_new_opset14_ortopt", "opset": 14, "flags": SMALL + ["--act", "gelu_new", "--seed", "42"],
     "optimize": {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization"}},
    # RoBERTa: position ids computed from the ids (cumsum(ids != pad) * (ids != pad) + pad); <s> = 0,
    # and no pad id (1) among the valid tokens, as a tokenizer gives them.
    {"name": "roberta_opset14", "opset": 14, "flags": SMALL + ["--model-type", "roberta", "--seed", "44"],
     "ids": ROBERTA_IDS},
    # torch's dynamo exporter (torch.export + onnxscript, opset 18): other value names, Shape with
    # start/end, Reshape with allowzero, the weights in an external-data file beside the model.
    {"name": "bert_gelu_dynamo_opset18", "opset": 18, "flags": SMALL + ["--seed", "45"], "dynamo": True},
    # torch 2.15's default export (dynamo, opset 20): the ai.onnx Gelu operator, erf and tanh (issue 41, item 5);
    # recorded with transformers 4.40.2 (5.x builds its masks with ops the frontend does not know yet).
    {"name": "bert_gelu_dynamo_opset20", "opset": 20, "flags": SMALL + ["--seed", "48"], "dynamo": True},
    {"name": "bert_gelu_tanh_dynamo_opset20", "opset": 20,
     "flags": SMALL + ["--act", "gelu_pytorch_tanh", "--seed", "49"], "dynamo": True},
    # DistilBERT: Q divided by sqrt(d) before the product, the mask through Equal / Expand / Where
    # (masked_fill), no token types.
    {"name": "distilbert_opset14", "opset": 14, "flags": SMALL + ["--model-type", "distilbert", "--seed", "46"]},
    # ORT's optimiser on RoBERTa: the embeddings stay unfused (positions from the ids), the mask
    # index is ReduceSum(attention_mask, axis 1), then Attention and SkipLayerNormalization.
    {"name": "roberta_opset14_ortopt", "opset": 14, "flags": SMALL + ["--model-type", "roberta", "--seed", "44"],
     "ids": ROBERTA_IDS, "optimize": {"Attention", "SkipLayerNormalization"}},
    # XLM-R is RoBERTa's graph under another model type (and tokenizer), at opset 17.
    {"name": "xlm_roberta_opset17", "opset": 17, "flags": SMALL + ["--model-type", "xlm-roberta", "--seed", "47"],
     "ids": ROBERTA_IDS},
    # ORT's optimiser on DistilBERT: SkipLayerNormalization and BiasGelu, the attention left
    # decomposed with the K projection before Q's.
    {"name": "distilbert_opset17_ortopt", "opset": 17,
     "flags": SMALL + ["--model-type", "distilbert", "--seed", "46"], "optimize": {"SkipLayerNormalization"}},
    # Sequence-classification heads (cross-encoders), output `logits`: hidden[:, 0] as a Gather
    # along the sequence, Gemm (transB) + Tanh + Gemm. BERT's pooler with one label; RoBERTa's
    # classification head with three, after ORT's optimiser.
    {"name": "bert_cross_encoder_opset14", "opset": 14, "head": True,
     "flags": SMALL + ["--seed", "48", "--num-labels", "1", "--pooling", "none", "--weight-prefix", "bert."]},
    {"name": "roberta_classifier_opset17_ortopt", "opset": 17, "head": True, "ids": ROBERTA_IDS,
     "flags": SMALL + ["--model-type", "roberta", "--seed", "49", "--num-labels", "3", "--pooling", "none",
                       "--weight-prefix", "roberta."],
     "optimize": {"Attention", "SkipLayerNormalization"}},
    # What a user gets today (issue 41, item 5): torch 2.15's torch.onnx.export with its defaults (dynamo,
    # opset 20) of transformers 5.x models, which build the key-padding mask by indexing (Range / GatherND /
    # And, Where into 0 / -FLT_MAX), export SDPA as sqrt(scale) on q and kᵀ with kᵀ through a 3-D view
    # and isnan -> 0 after the softmax, and read the token types from a buffer of zeros (GatherElements)
    # when no token_type_ids are given. Recorded with transformers 5.x ("transformers": 5).
    {"name": "bert_default_export_t5", "transformers": 5, "default_export": True, "no_types": True,
     "flags": SMALL + ["--seed", "61"]},
    {"name": "bert_types_default_export_t5", "transformers": 5, "default_export": True,
     "flags": SMALL + ["--act", "gelu_pytorch_tanh", "--seed", "62"]},
    {"name": "roberta_default_export_t5", "transformers": 5, "default_export": True, "no_types": True,
     "ids": ROBERTA_IDS, "flags": SMALL + ["--model-type", "roberta", "--seed", "63"]},
    {"name": "xlm_roberta_default_export_t5", "transformers": 5, "default_export": True, "no_types": True,
     "ids": ROBERTA_IDS, "flags": SMALL + ["--model-type", "xlm-roberta", "--seed", "64"]},
    {"name": "distilbert_default_export_t5", "transformers": 5, "default_export": True,
     "flags": SMALL + ["--model-type", "distilbert", "--seed", "65"]},
]
IDS = [[1, 17, 23, 99, 5, 64, 2], [1, 8, 33, 2], [1]]
TYPES = [[0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1], [0]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--make-tiny-model", required=True)
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="record these cases only and merge them into the existing onnx_outputs.json (each keeps "
                         "the versions it was recorded with)")
    args = ap.parse_args()
    out_dir = os.path.join(HERE, "onnx")
    os.makedirs(out_dir, exist_ok=True)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in CASES:
            if args.only and c["name"] not in args.only:
                continue
            major = int(transformers.__version__.split(".")[0])
            if major != c.get("transformers", 4):
                raise SystemExit(f"{c['name']} is recorded with transformers {c.get('transformers', 4)}.x, this is "
                                 f"{transformers.__version__}: run it with --only in such a venv")
            case_ids = c.get("ids", IDS)
            seq = max(map(len, case_ids))
            ids = np.zeros((len(case_ids), seq), np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for b, s in enumerate(case_ids):
                ids[b, :len(s)] = s
                mask[b, :len(s)] = 1
                types[b, :len(s)] = TYPES[b]
            d = os.path.join(tmp, c["name"])
            subprocess.run([args.make_tiny_model, d, *c["flags"]], check=True, stdout=subprocess.DEVNULL)
            if c.get("head"):
                model = AutoModelForSequenceClassification.from_pretrained(d).eval()
            else:
                kw = {} if "distilbert" in c["flags"] else {"add_pooling_layer": False}
                model = AutoModel.from_pretrained(d, **kw).eval()
            out_name = "logits" if c.get("head") else "last_hidden_state"
            with_types = getattr(model.config, "type_vocab_size", 0) > 1 and not c.get("no_types")
            inputs = (torch.tensor(ids), torch.tensor(mask)) + ((torch.tensor(types),) if with_types else ())
            names = ["input_ids", "attention_mask", "token_type_ids"][:len(inputs)]
            dyn = {n: {0: "batch", 1: "sequence"} for n in names}
            dyn[out_name] = {0: "batch"} if c.get("head") else {0: "batch", 1: "sequence"}
            path = os.path.join(out_dir, c["name"] + ".onnx")
            if c.get("default_export"):  # torch's defaults: only the names and the dynamic axes given
                torch.onnx.export(model, inputs, path, input_names=names, output_names=[out_name], dynamic_axes=dyn)
                c["opset"] = onnx.load(path, load_external_data=False).opset_import[0].version
                c["dynamo"] = True
            else:
                torch.onnx.export(model, inputs, path, input_names=names, output_names=[out_name],
                                  dynamic_axes=dyn, opset_version=c["opset"], dynamo=bool(c.get("dynamo")),
                                  **({"external_data": True} if c.get("dynamo") else {}))
            onnx.checker.check_model(path)
            if c.get("optimize"):
                from onnxruntime.transformers.optimizer import optimize_model
                opt = optimize_model(path, model_type="bert", num_heads=model.config.num_attention_heads,
                                     hidden_size=model.config.hidden_size, opt_level=None)
                fused = {n.op_type for n in opt.model.graph.node if n.domain == "com.microsoft"}
                assert c["optimize"] <= fused, (c["name"], fused)
                opt.save_model_to_file(path)
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            feeds = {"input_ids": ids, "attention_mask": mask}
            if with_types:
                feeds["token_type_ids"] = types
            result = sess.run([out_name], feeds)[0]
            cases.append({
                "name": c["name"], "file": "onnx/" + c["name"] + ".onnx", "opset": c["opset"],
                "ort_optimized": bool(c.get("optimize")), "dynamo": bool(c.get("dynamo")),
                "flags": c["flags"], "ids": case_ids, "type_ids": TYPES if with_types else [],
            })
            if c.get("head"):
                cases[-1]["scores"] = [[float(f"{v:.9g}") for v in row] for row in result]
            else:
                cases[-1]["hidden"] = [[[float(f"{v:.9g}") for v in row] for row in result[b, :len(s)]]
                                       for b, s in enumerate(case_ids)]
    versions = {"torch": torch.__version__, "transformers": transformers.__version__, "onnx": onnx.__version__,
                "onnxruntime": ort.__version__, "python": platform.python_version()}
    if args.only:
        with open(os.path.join(HERE, "onnx_outputs.json")) as f:
            out = json.load(f)
        for c in cases:
            c["versions"] = versions
            out["cases"] = [old for old in out["cases"] if old["name"] != c["name"]] + [c]
    else:
        out = {"versions": versions, "cases": cases}
    with open(os.path.join(HERE, "onnx_outputs.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
