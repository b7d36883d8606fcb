"""A user's script, type-checked with ``mypy --strict`` by scripts/python-test (issue 39): the package's
annotations (py.typed) must let code written against encc pass a strict checker. Not collected by pytest."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

import encc
from encc import CrossEncoder, SentenceTransformer, quantize_embeddings


def search(model_path: str, reranker_path: str, query: str, documents: list[str]) -> list[tuple[int, float]]:
    with SentenceTransformer(model_path, threads=2, truncate_dim=256) as model:
        q: npt.NDArray[np.float32] = model.encode_query(query)
        d: npt.NDArray[np.float32] = model.encode_document(documents, batch_size=16)
        scores = model.similarity(q, d)
        packed = quantize_embeddings(d, "ubinary")
        assert packed.dtype == np.uint8 and model.get_sentence_embedding_dimension() == 256
    reranker = CrossEncoder(reranker_path)
    ranked = reranker.rank(query, documents, top_k=3)
    ids, lengths = encc.Model(model_path).tokenize(documents)
    assert ids.shape[0] == lengths.shape[0] == len(documents)
    return [(int(r["corpus_id"]), float(r["score"])) for r in ranked] + [(-1, float(np.asarray(scores).max()))]
