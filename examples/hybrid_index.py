#!/usr/bin/env python3
"""A local hybrid index with encc: dense and sparse (SPLADE) vectors of each document, written as Qdrant points,
and a query answered with both scores fused (and a ColBERT model's token vectors as a third ranking); or, with a
bge-m3 artifact, its dense, sparse and ColBERT outputs from one pass and the three scores combined.

  python examples/hybrid_index.py --dense DENSE.encm --sparse SPLADE.encm [--colbert COLBERT.encm]
      --docs DOCS.txt --out DIR [--query TEXT] [--top 5] [--batch-size 64] [--threads 0]
  python examples/hybrid_index.py --m3 BGE_M3.encm --docs DOCS.txt --out DIR [--query TEXT] ...

DOCS.txt: one document per line. DIR/points.json is the body of Qdrant's `PUT /collections/NAME/points`
(`{"points": [{"id", "vector": {"dense": [...], "sparse": {"indices": [...], "values": [...]}},
"payload": {"text"}}]}`), for a collection created with a named dense vector "dense" (cosine) and a named
sparse vector "sparse"; DIR/collection.json is that creation body. Nothing needs a server: with --query the
script ranks the documents itself, by cosine of the dense vectors and by the dot product of the sparse ones
(SPLADE's score), then fuses the two rankings by reciprocal rank (score = sum over rankings of
1 / (60 + rank), the constant of Cormack et al.), and prints the best --top with the three scores.

DENSE.encm: any embedding artifact (e.g. `encc compile all-MiniLM-L6-v2 -o dense.encm`); SPLADE.encm: a
sentence-transformers SparseEncoder folder compiled by encc (`encc compile SPLADE_DIR -o splade.encm`), queried
with its "query" prompt when it has one. COLBERT.encm: a PyLate or colbert-ai checkpoint compiled by encc; each
point then also holds a named multi-vector "colbert" (the document's token vectors, declared with Qdrant's
max_sim comparator), the query is encoded as a ColBERT query, and its MaxSim ranking (the sum over the query's
vectors of the best dot product with a document's, PyLate's colbert_scores) is fused with the other two.

BGE_M3.encm: bge-m3 compiled with its heads (`encc compile bge-m3 -o m3.encm`, the folder's sparse_linear and
colbert_linear as .safetensors). Each point then also holds a named multi-vector "colbert" (its token vectors;
the collection declares it with Qdrant's max_sim comparator), and the query's score is FlagEmbedding's
compute_score combination: (0.4 dense + 0.2 sparse + 0.4 ColBERT) / 1.0, where the sparse score is the lexical
matching score (the products of shared tokens' weights, summed) and the ColBERT score the mean over the query's
vectors of the best dot product with the document's.
"""
import argparse
import json
import os
import time

import numpy as np

import encc


def read_docs(path):
    with open(path, encoding="utf-8") as f:
        docs = [line.rstrip("\n") for line in f]
    docs = [d for d in docs if d.strip()]
    if not docs:
        raise SystemExit(f"{path}: no documents (one per line expected)")
    return docs


def rrf(*rankings, k=60):
    """Reciprocal rank fusion of rankings (lists of document indices, best first): {index: score}."""
    fused = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking, 1):
            fused[i] = fused.get(i, 0.0) + 1.0 / (k + rank)
    return fused


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dense", help="a dense embedding artifact (.encm)")
    ap.add_argument("--sparse", help="a SPLADE artifact (.encm)")
    ap.add_argument("--colbert", help="a ColBERT artifact (.encm), beside --dense and --sparse: a third ranking")
    ap.add_argument("--m3", help="a bge-m3 artifact with its heads (.encm): dense, sparse and ColBERT from one pass")
    ap.add_argument("--docs", required=True, help="documents, one per line")
    ap.add_argument("--out", required=True, help="folder for points.json and collection.json")
    ap.add_argument("--query", help="rank the documents for this query")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if bool(args.m3) == bool(args.dense or args.sparse) or (not args.m3 and not (args.dense and args.sparse)) or \
            (args.m3 and args.colbert):
        ap.error("pass --dense and --sparse (and --colbert), or --m3")
    if args.m3:
        return m3_index(args)

    docs = read_docs(args.docs)
    dense_model = encc.SentenceTransformer(args.dense, threads=args.threads)
    sparse_model = encc.SparseEncoder(args.sparse, threads=args.threads)
    colbert_model = encc.Model(args.colbert, threads=args.threads) if args.colbert else None
    if colbert_model and colbert_model.roles != ["query", "document"]:
        raise SystemExit(f"{args.colbert}: not a ColBERT model (its roles: {colbert_model.roles})")
    start = time.perf_counter()
    dense = dense_model.encode_document(docs, batch_size=args.batch_size)
    sparse = sparse_model.encode_sparse(docs, batch_size=args.batch_size,
                                        prompt_name="document" if "document" in sparse_model.prompts else None)
    colbert = colbert_model.encode(docs, is_query=False, batch_size=args.batch_size) if colbert_model else None
    seconds = time.perf_counter() - start

    os.makedirs(args.out, exist_ok=True)
    points = [{"id": i,
               "vector": {"dense": [float(x) for x in dense[i]],
                          "sparse": {"indices": [int(t) for t in ids], "values": [float(w) for w in weights]}},
               "payload": {"text": doc}}
              for i, (doc, (ids, weights)) in enumerate(zip(docs, sparse))]
    vectors = {"dense": {"size": int(dense.shape[1]), "distance": "Cosine"}}
    if colbert is not None:
        for p, rows in zip(points, colbert):
            p["vector"]["colbert"] = [[float(x) for x in row] for row in rows]
        vectors["colbert"] = {"size": int(colbert_model.info["multivector_dim"]), "distance": "Cosine",
                              "multivector_config": {"comparator": "max_sim"}}
    with open(os.path.join(args.out, "points.json"), "w", encoding="utf-8") as f:
        json.dump({"points": points}, f)
    with open(os.path.join(args.out, "collection.json"), "w", encoding="utf-8") as f:
        json.dump({"vectors": vectors, "sparse_vectors": {"sparse": {}}}, f, indent=1)
    nonzero = sum(len(ids) for ids, _ in sparse) / len(docs)
    print(f"indexed {len(docs)} documents in {seconds:.2f} s: dense {dense.shape[1]} floats, sparse "
          f"{nonzero:.1f} non-zero of {sparse_model.get_sentence_embedding_dimension()} on average"
          f"{'' if colbert is None else f', {sum(len(c) for c in colbert) / len(docs):.1f} ColBERT vectors'} -> "
          f"{os.path.join(args.out, 'points.json')}")

    if args.query is None:
        return
    q_dense = dense_model.encode_query(args.query)
    q_ids, q_weights = sparse_model.encode_sparse(
        args.query, prompt_name="query" if "query" in sparse_model.prompts else None)
    cosine = dense @ q_dense / np.maximum(np.linalg.norm(dense, axis=1) * np.linalg.norm(q_dense), 1e-12)
    q_sparse = dict(zip(q_ids.tolist(), q_weights.tolist()))
    dot = np.array([sum(q_sparse.get(int(t), 0.0) * float(w) for t, w in zip(ids, weights))
                    for ids, weights in sparse])
    by_dense = list(np.argsort(-cosine, kind="stable"))
    by_sparse = [i for i in np.argsort(-dot, kind="stable") if dot[i] > 0]  # no shared term: not ranked
    rankings = [by_dense, by_sparse]
    if colbert is not None:
        q_vectors = colbert_model.encode(args.query, is_query=True)
        maxsim = np.array([float((q_vectors @ rows.T).max(axis=1).sum()) if len(rows) else 0.0 for rows in colbert])
        rankings.append(list(np.argsort(-maxsim, kind="stable")))
    fused = rrf(*rankings)
    best = sorted(fused, key=lambda i: -fused[i])[:args.top]
    print(f"query: {args.query}")
    for i in best:
        extra = "" if colbert is None else f", maxsim {maxsim[i]:.3f}"
        print(f"  {fused[i]:.4f}  (cosine {cosine[i]:.3f}, sparse {dot[i]:.3f}{extra})  {docs[i]}")


def m3_index(args):
    """--m3: one model's three outputs per document, and the query's three scores combined."""
    docs = read_docs(args.docs)
    model = encc.Model(args.m3, threads=args.threads)
    info = model.info
    if not info["sparse"] or not info["multivector_dim"]:
        raise SystemExit(f"{args.m3}: not compiled with bge-m3's heads (its sparse and multi-vector outputs)")
    start = time.perf_counter()
    out = model.encode_outputs(docs, batch_size=args.batch_size)
    seconds = time.perf_counter() - start
    dense, sparse, colbert = out["dense"], out["sparse"], out["multi_vector"]

    os.makedirs(args.out, exist_ok=True)
    points = [{"id": i,
               "vector": {"dense": [float(x) for x in dense[i]],
                          "sparse": {"indices": [int(t) for t in ids], "values": [float(w) for w in weights]},
                          "colbert": [[float(x) for x in row] for row in colbert[i]]},
               "payload": {"text": doc}}
              for i, (doc, (ids, weights)) in enumerate(zip(docs, sparse))]
    with open(os.path.join(args.out, "points.json"), "w", encoding="utf-8") as f:
        json.dump({"points": points}, f)
    with open(os.path.join(args.out, "collection.json"), "w", encoding="utf-8") as f:
        json.dump({"vectors": {"dense": {"size": int(dense.shape[1]), "distance": "Cosine"},
                               "colbert": {"size": int(info["multivector_dim"]), "distance": "Cosine",
                                           "multivector_config": {"comparator": "max_sim"}}},
                   "sparse_vectors": {"sparse": {}}}, f, indent=1)
    print(f"indexed {len(docs)} documents in {seconds:.2f} s (one pass: dense {dense.shape[1]} floats, "
          f"{sum(len(ids) for ids, _ in sparse) / len(docs):.1f} lexical weights and "
          f"{sum(len(c) for c in colbert) / len(docs):.1f} token vectors on average) -> "
          f"{os.path.join(args.out, 'points.json')}")

    if args.query is None:
        return
    q = model.encode_outputs(args.query)
    q_sparse = dict(zip(q["sparse"][0].tolist(), q["sparse"][1].tolist()))
    scores = []
    for i in range(len(docs)):
        d = float(dense[i] @ q["dense"])
        s = sum(q_sparse.get(int(t), 0.0) * float(w) for t, w in zip(*sparse[i]))
        c = float((q["multi_vector"] @ colbert[i].T).max(axis=1).mean()) if len(colbert[i]) else 0.0
        scores.append((0.4 * d + 0.2 * s + 0.4 * c, d, s, c))
    best = sorted(range(len(docs)), key=lambda i: -scores[i][0])[:args.top]
    print(f"query: {args.query}")
    for i in best:
        total, d, s, c = scores[i]
        print(f"  {total:.4f}  (dense {d:.3f}, sparse {s:.3f}, colbert {c:.3f})  {docs[i]}")


if __name__ == "__main__":
    main()
