#!/usr/bin/env python3
"""sentence-transformers' own API on real and tiny models, recorded for encc's Python drop-in classes (issue 39).

Runs sentence-transformers' usage snippets (SentenceTransformer: encode with precision, truncate_dim,
normalize_embeddings, output_value, encode_query / encode_document, similarity and similarity_pairwise under
each similarity function; CrossEncoder: predict of one pair and of several, apply_softmax, rank with top_k and
return_documents) and writes what they return to st_api.json beside this script, in float64, for
python/tests/test_sentence_transformers.py to compare encc.SentenceTransformer / encc.CrossEncoder with.

    PYTHON tests/reference/record_st_api.py --minilm DIR --make-tiny-model BUILD/bin/make-tiny-model

PYTHON: a venv with sentence-transformers 5.x or later (tests/reference/modernbert/versions.txt's venv).
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile

import numpy as np
import sentence_transformers
import torch
from sentence_transformers import CrossEncoder, SentenceTransformer
from sentence_transformers.quantization import quantize_embeddings
from sentence_pairs import sentences  # this folder's

HERE = os.path.dirname(os.path.abspath(__file__))
# Tiny cross-encoders make-tiny-model writes (the Python test builds the same folders).
CROSS_ENCODERS = {
    "one_label": ["--hidden", "32", "--heads", "2", "--layers", "2", "--intermediate", "64", "--vocab", "2000",
                  "--max-positions", "64", "--seed", "71", "--num-labels", "1", "--pooling", "none"],
    "three_labels": ["--hidden", "32", "--heads", "2", "--layers", "2", "--intermediate", "64", "--vocab", "2000",
                     "--max-positions", "64", "--seed", "72", "--num-labels", "3", "--pooling", "none"],
}


def tolist(x):
    return np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float64).tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minilm", required=True)
    ap.add_argument("--make-tiny-model", required=True)
    args = ap.parse_args()
    texts = sentences()[:12]
    model = SentenceTransformer(args.minilm, device="cpu")
    st = {"texts": texts}
    emb = model.encode(texts)
    st["float32"] = tolist(emb)
    st["precision"] = {p: np.asarray(model.encode(texts, precision=p)).tolist()
                       for p in ("int8", "uint8", "binary", "ubinary")}
    # quantize_embeddings on the float embeddings above (the algorithm alone, to compare exactly).
    st["quantized_from_float32"] = {p: np.asarray(quantize_embeddings(emb, precision=p)).tolist()
                                    for p in ("int8", "uint8", "binary", "ubinary")}
    st["truncate_dim_128"] = tolist(model.encode(texts, truncate_dim=128))
    st["truncate_dim_128_normalized"] = tolist(model.encode(texts, truncate_dim=128, normalize_embeddings=True))
    st["single"] = tolist(model.encode(texts[0]))
    st["query"] = tolist(model.encode_query(texts[:3]))
    st["document"] = tolist(model.encode_document(texts[:3]))
    st["token_embedding_shapes"] = [list(t.shape) for t in model.encode(texts[:3], output_value="token_embeddings")]
    st["similarity"] = {}
    st["similarity_pairwise"] = {}
    for fn in ("cosine", "dot", "euclidean", "manhattan"):
        model.similarity_fn_name = fn
        st["similarity"][fn] = tolist(model.similarity(emb[:4], emb[4:7]))
        st["similarity_pairwise"][fn] = tolist(model.similarity_pairwise(emb[:4], emb[4:8]))
    model.max_seq_length = 8  # sentence-transformers' setter: texts cut to 8 tokens
    st["max_seq_length_8"] = tolist(model.encode(texts))
    model.max_seq_length = 256
    st["dimension"] = model.get_sentence_embedding_dimension()
    st["max_seq_length"] = model.max_seq_length

    ce = {}
    query = texts[0]
    docs = texts[1:7]
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in CROSS_ENCODERS.items():
            d = os.path.join(tmp, name)
            subprocess.run([args.make_tiny_model, d] + flags, check=True, stdout=subprocess.DEVNULL)
            m = CrossEncoder(d, device="cpu")
            rec = {"flags": flags, "query": query, "documents": docs,
                   "pair": tolist(m.predict((query, docs[0]))),
                   "pairs": tolist(m.predict([(query, d) for d in docs])),
                   "softmax": tolist(m.predict([(query, d) for d in docs], apply_softmax=True)),
                   "identity": tolist(m.predict([(query, d) for d in docs], activation_fn=torch.nn.Identity()))}
            if m.num_labels == 1:
                rec["rank"] = [{"corpus_id": int(r["corpus_id"]), "score": float(r["score"]), "text": r["text"]}
                               for r in m.rank(query, docs, top_k=4, return_documents=True)]
            ce[name] = rec
    out = {"versions": {"python": platform.python_version(), "sentence_transformers": sentence_transformers.__version__,
                        "torch": torch.__version__},
           "notes": "sentence-transformers' API on all-MiniLM-L6-v2 (real weights) and on tiny cross-encoders "
                    "written by make-tiny-model (flags); float64 lists",
           "sentence_transformer": st, "cross_encoder": ce}
    with open(os.path.join(HERE, "st_api.json"), "w", encoding="utf-8") as f:
        json.dump(out, f)
        f.write("\n")
    print("recorded", len(texts), "texts,", len(ce), "cross-encoders")


if __name__ == "__main__":
    main()
