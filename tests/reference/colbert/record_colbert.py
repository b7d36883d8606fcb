#!/usr/bin/env python3
"""Record PyLate's ColBERT outputs for encc's tests (issue 42, item 3).

PyLate 1.6 pins sentence-transformers 5.3.0; with the bench's venv-stb (torch 2.x, transformers 4.57, pylate 1.6.0
installed beside sentence-transformers 5.7) put that version first on the path:

    pip install --no-deps --target ST530 sentence-transformers==5.3.0
    PYTHONPATH=ST530 PYTHON tests/reference/colbert/record_colbert.py

Writes, beside this script:
  models/<case>/  a tiny random BertModel with a WordPiece vocabulary (punctuation included), wrapped by
                  pylate.models.ColBERT (a per-token Dense projection, the [Q] / [D] prefixes as added tokens or
                  [unused0] / [unused1]) and saved by PyLate itself (config_sentence_transformers.json holds the
                  query / document settings); or written as Stanford colbert-ai saves a checkpoint (HF_ColBERT,
                  linear.weight beside bert.*, artifact.metadata), which PyLate loads
  colbert.json    per case: texts; for each role (query, document) PyLate's tokenize() ids and attention mask and
                  encode()'s token vectors (is_query True / False) in float64 (the float32 weights, the model cast
                  to float64), one list of rows per text
"""
import json
import math
import os
import shutil
import sys
import warnings

import safetensors.torch
import torch
import transformers
from pylate import models
from transformers import BertConfig, BertModel

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from random_init import randomize_  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "runs", "in", "park", "and", "##s", "what", "where", "is",
         ".", ",", ";", "!", "?", "'", "-", "(", ")"]
TEXTS = ["The cat sat on the mat.", "Where is the dog? In the park!", "cats, dogs; and (a) mat", "PARK",
         "the cat runs and the dog runs and the cat sat on the mat in the park and the dog sat", ""]


def vocabulary(size):
    toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]"] + WORDS
    return toks + [f"w{i}" for i in range(size - len(toks))]


BERT = dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
            max_position_embeddings=64, hidden_act="gelu")
CASES = [
    # PyLate's defaults: added [Q] / [D] tokens, expansion tokens not attended to (GTE-ModernColBERT's,
    # answerai-colbert's settings), a bias-free projection.
    dict(name="bert_colbert", seed=7, dim=16, bias=False,
         kw=dict(query_length=12, document_length=16)),
    # Stanford's markers from the vocabulary, attended expansion tokens, a biased projection, a skiplist of
    # its own.
    dict(name="bert_colbert_attend", seed=8, dim=24, bias=True,
         kw=dict(query_prefix="[unused0]", document_prefix="[unused1]", query_length=10, document_length=40,
                 attend_to_expansion_tokens=True, skiplist_words=[".", "!", "the"])),
    # ModernBERT (as GTE-ModernColBERT): rotary positions, local attention layers (a window of 8) beside the
    # unattended expansion, a BPE tokenizer.
    dict(name="modernbert_colbert", family="modernbert", seed=10, dim=12, bias=False,
         kw=dict(query_length=12, document_length=40)),
    # A Stanford colbert-ai checkpoint (config.json architectures HF_ColBERT): the BertModel under "bert.", the
    # bias-free projection as "linear.weight" in the same model.safetensors, the settings in artifact.metadata;
    # PyLate reads it as a ColBERT model (Dense.from_stanford_weights).
    dict(name="bert_colbert_stanford", seed=9, dim=20, stanford=dict(
        query_token_id="[unused0]", doc_token_id="[unused1]", query_maxlen=14, doc_maxlen=24,
        attend_to_mask_tokens=False, mask_punctuation=True, similarity="cosine", nbits=2)),
]


def write_stanford(case, d):
    """The folder colbert-ai's HF_ColBERT.save_pretrained writes: config.json (architectures HF_ColBERT),
    model.safetensors (bert.* and linear.weight), the tokenizer, artifact.metadata."""
    os.makedirs(d)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(vocabulary(BERT["vocab_size"])) + "\n")
    torch.manual_seed(case["seed"])
    config = BertConfig(**BERT)
    config.architectures = ["HF_ColBERT"]
    bert = BertModel(config, add_pooling_layer=False).double()
    randomize_(bert, case["seed"])
    linear = torch.nn.Linear(BERT["hidden_size"], case["dim"], bias=False).double()
    randomize_(linear, case["seed"] + 100)
    state = {"bert." + k: v.float().contiguous() for k, v in bert.state_dict().items()}
    state["linear.weight"] = linear.weight.detach().float().contiguous()
    safetensors.torch.save_file(state, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    config.save_pretrained(d)
    transformers.BertTokenizerFast(os.path.join(d, "vocab.txt"), do_lower_case=True).save_pretrained(d)
    with open(os.path.join(d, "artifact.metadata"), "w") as f:
        json.dump(case["stanford"], f, indent=2)


def record(case):
    d = os.path.join(HERE, "models", case["name"])
    shutil.rmtree(d, ignore_errors=True)
    if "stanford" in case:
        write_stanford(case, d)
    else:
        write_pylate(case, d)
    cb = models.ColBERT(model_name_or_path=d, device="cpu")
    cb.to(torch.float64)
    out = dict(name=case["name"], dir="models/" + case["name"], dim=case["dim"], texts=TEXTS)
    for role, is_query in (("query", True), ("document", False)):
        f = cb.tokenize(TEXTS, is_query=is_query)
        with torch.no_grad():
            emb = cb.encode(TEXTS, is_query=is_query, batch_size=len(TEXTS), convert_to_numpy=False)
        out[role] = dict(ids=f["input_ids"].tolist(), attention_mask=f["attention_mask"].tolist(),
                         vectors=[e.to(torch.float64).tolist() for e in emb])
    return out


def write_bert(case, hf):
    with open(os.path.join(hf, "vocab.txt"), "w") as f:
        f.write("\n".join(vocabulary(BERT["vocab_size"])) + "\n")
    torch.manual_seed(case["seed"])
    bert = BertModel(BertConfig(**BERT), add_pooling_layer=False).double()
    randomize_(bert, case["seed"])
    bert.float().save_pretrained(hf)
    transformers.BertTokenizerFast(os.path.join(hf, "vocab.txt"), do_lower_case=True).save_pretrained(hf)


def write_modernbert(case, hf):
    """tests/reference/modernbert's tiny legacy_mean config and BPE tokenizer.json (with a tokenizer_config.json
    naming its special tokens, [MASK] among them), random O(1) weights."""
    src = os.path.join(HERE, "..", "modernbert", "models", "legacy_mean")
    with open(os.path.join(src, "config.json")) as f:
        config = transformers.ModernBertConfig(**{k: v for k, v in json.load(f).items()
                                                  if k not in ("architectures", "transformers_version", "dtype")})
    # A window of +-12: every expansion token of a 12-token query keeps an attended token in its window. (Where
    # one has none, transformers' ModernBERT averages every key uniformly, its mask's minimum swallowing the
    # scores, and encc's attention gives that row nothing; real checkpoints never meet it: GTE-ModernColBERT's
    # window is +-64, its queries 32 tokens.)
    config.local_attention = 24
    torch.manual_seed(case["seed"])
    model = transformers.ModernBertModel(config).double()
    randomize_(model, case["seed"], norm="norm")
    model.float().save_pretrained(hf)
    transformers.PreTrainedTokenizerFast(
        tokenizer_file=os.path.join(src, "tokenizer.json"), unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
        pad_token="[PAD]", mask_token="[MASK]", model_input_names=["input_ids", "attention_mask"]).save_pretrained(hf)


def write_pylate(case, d):
    """A tiny encoder wrapped by pylate.models.ColBERT and saved by PyLate."""
    hf = d + ".hf"
    shutil.rmtree(hf, ignore_errors=True)
    os.makedirs(hf)
    (write_modernbert if case.get("family") == "modernbert" else write_bert)(case, hf)
    torch.manual_seed(case["seed"])
    cb = models.ColBERT(model_name_or_path=hf, embedding_size=case["dim"], bias=case["bias"], device="cpu",
                        **case["kw"])
    with torch.no_grad():  # the projection O(1) too (and the new [Q] / [D] rows, which PyLate made random)
        gen = torch.Generator().manual_seed(case["seed"] + 100)
        for p in cb[1].parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * (1.5 / math.sqrt(p.shape[-1])))
    cb.save(d)
    shutil.rmtree(hf)
    for junk in ("README.md",):
        if os.path.exists(os.path.join(d, junk)):
            os.remove(os.path.join(d, junk))


def main():
    import pylate
    import sentence_transformers
    res = dict(versions=dict(torch=torch.__version__, transformers=transformers.__version__,
                             sentence_transformers=sentence_transformers.__version__, pylate=pylate.__version__),
               cases=[record(c) for c in CASES])
    with open(os.path.join(HERE, "colbert.json"), "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
