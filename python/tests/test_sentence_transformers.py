"""encc.SentenceTransformer / encc.CrossEncoder against sentence-transformers' own API (issue 39).

tests/reference/st_api.json (record_st_api.py, sentence-transformers 6.3) holds what sentence-transformers'
usage snippets return on all-MiniLM-L6-v2 and on tiny cross-encoders make-tiny-model writes; the same
snippets run here with the import and the model path changed. Tolerances: embeddings and scores within
2e-5 relative of the recorded ones (encc and PyTorch round differently; measured ~1e-6); quantisation
compared exactly on the same float input.
"""
import json
import os
import subprocess

import numpy as np
import pytest

import encc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ENCC_BUILD_DIR", os.path.join(ROOT, "build"))
ENCC = os.path.join(BUILD, "bin", "encc")
MINILM = os.environ.get("ENCC_MINILM_DIR")
RTOL = 2e-5


@pytest.fixture(scope="module")
def ref():
    with open(os.path.join(ROOT, "tests", "reference", "st_api.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def st(tmp_path_factory):
    if not MINILM or not os.path.isdir(MINILM):
        pytest.fail("ENCC_MINILM_DIR is not set to the all-MiniLM-L6-v2 folder")
    path = encc.compile(MINILM, tmp_path_factory.mktemp("st") / "minilm.encm", encc=ENCC)
    with encc.SentenceTransformer(path, threads=2) as m:
        yield m


def close(got, want, rtol=RTOL):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    assert err <= rtol, err
    return err


def test_encode_and_its_options(st, ref):
    r = ref["sentence_transformer"]
    texts = r["texts"]
    emb = st.encode(texts)
    assert emb.dtype == np.float32 and emb.shape == (12, 384)
    print(f"[ measured ] encode vs sentence-transformers: {close(emb, r['float32']):.2e}")
    close(st.encode(texts[0]), r["single"])
    close(st.encode(texts, truncate_dim=128), r["truncate_dim_128"])
    close(st.encode(texts, truncate_dim=128, normalize_embeddings=True), r["truncate_dim_128_normalized"])
    close(st.encode_query(texts[:3]), r["query"])
    close(st.encode_document(texts[:3]), r["document"])
    assert [list(t.shape) for t in st.encode(texts[:3], output_value="token_embeddings")] == \
        r["token_embedding_shapes"]
    assert st.get_sentence_embedding_dimension() == r["dimension"]
    assert st.max_seq_length == 256 and r["max_seq_length"] == 256
    rows = st.encode(texts[:2], convert_to_numpy=False)
    assert isinstance(rows, list) and len(rows) == 2 and rows[0].shape == (384,)
    assert st.encode([]).shape == (0,)  # as sentence-transformers: np.array([])
    assert st.encode(texts[:2], batch_size=np.int64(1)).shape == (2, 384)
    # max_seq_length below the compiled maximum, set as in sentence-transformers: texts cut to 8 tokens.
    st.max_seq_length = 8
    try:
        assert st.max_seq_length == 8 and st.tokenize(texts)[1].max() == 8
        close(st.encode(texts), r["max_seq_length_8"])
    finally:
        st.max_seq_length = 256
    close(st.encode(texts), r["float32"])


def test_quantisation_as_sentence_transformers_computes_it(st, ref):
    r = ref["sentence_transformer"]
    floats = np.asarray(r["float32"], dtype=np.float32)
    for precision, dtype in (("int8", np.int8), ("uint8", np.uint8), ("binary", np.int8), ("ubinary", np.uint8)):
        q = encc.quantize_embeddings(floats, precision)
        assert q.dtype == dtype
        np.testing.assert_array_equal(q, np.asarray(r["quantized_from_float32"][precision]), err_msg=precision)
        # encode(precision=...) is quantize_embeddings of encode()'s floats, shaped as sentence-transformers'.
        got = st.encode(r["texts"], precision=precision)
        np.testing.assert_array_equal(got, encc.quantize_embeddings(st.encode(r["texts"]), precision))
        assert got.shape == np.asarray(r["precision"][precision]).shape
    with pytest.raises(ValueError, match="single embedding"):
        st.encode(r["texts"][0], precision="int8")


def test_similarity_functions(st, ref):
    r = ref["sentence_transformer"]
    emb = np.asarray(r["float32"], dtype=np.float32)
    for fn in ("cosine", "dot", "euclidean", "manhattan"):
        st.similarity_fn_name = fn
        close(st.similarity(emb[:4], emb[4:7]), r["similarity"][fn], 1e-6)
        close(st.similarity_pairwise(emb[:4], emb[4:8]), r["similarity_pairwise"][fn], 1e-6)
    st.similarity_fn_name = "cosine"


def test_arguments_that_do_not_apply_say_why(st):
    with pytest.raises(ValueError, match="chosen when the artifact is loaded"):
        st.encode("x", device="cuda:1")
    with pytest.raises(ValueError, match="no worker processes"):
        st.encode("x", pool={"processes": []})
    with pytest.raises(ValueError, match="additional keyword arguments"):
        st.encode("x", task="query")
    with pytest.raises(encc.InvalidArgumentError, match="over the compiled maximum 256"):
        st.max_seq_length = 300
    assert st.max_seq_length == 256
    with pytest.raises(ValueError, match="truncate_dim 1000 is larger"):
        st.encode("x", truncate_dim=1000)
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs torch"):
            st.encode("x", convert_to_tensor=True)


def test_bad_inputs_name_the_argument_and_index(st):
    with pytest.raises(ValueError, match=r"sentences\[1\] is not valid Unicode"):
        st.encode(["ok", "abc\ud800def"])
    with pytest.raises(TypeError, match="not dict"):
        st.encode({"a": 1, "b": 2})
    with pytest.raises(TypeError, match=r"sentences\[1\] must be a str, not int"):
        st.encode(["a", 3])
    with pytest.raises(ValueError, match="batch_size must be"):
        st.encode(["a"], batch_size=0)


@pytest.fixture(scope="module")
def cross_encoders(ref, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ce")
    out = {}
    for name, rec in ref["cross_encoder"].items():
        folder = tmp / name
        subprocess.run([os.path.join(BUILD, "bin", "make-tiny-model"), str(folder)] + rec["flags"], check=True,
                       stdout=subprocess.DEVNULL)
        out[name] = encc.CrossEncoder(encc.compile(folder, tmp / f"{name}.encm", encc=ENCC), threads=2)
    yield out
    for m in out.values():
        m.close()


def test_cross_encoder_predict_and_rank(cross_encoders, ref):
    for name, rec in ref["cross_encoder"].items():
        m = cross_encoders[name]
        pairs = [(rec["query"], d) for d in rec["documents"]]
        close(m.predict((rec["query"], rec["documents"][0])), rec["pair"])
        close(m.predict([rec["query"], rec["documents"][0]]), rec["pair"])  # a list of two str is one pair
        close(m.predict(pairs), rec["pairs"])
        close(m.predict(pairs, apply_softmax=True), rec["softmax"])
        close(m.predict(pairs, activation_fn=lambda x: x), rec["identity"])
        if "rank" in rec:
            got = m.rank(rec["query"], rec["documents"], top_k=4, return_documents=True)
            assert [r["corpus_id"] for r in got] == [r["corpus_id"] for r in rec["rank"]]
            assert [r["text"] for r in got] == [r["text"] for r in rec["rank"]]
            close([r["score"] for r in got], [r["score"] for r in rec["rank"]])
    with pytest.raises(TypeError, match=r"pairs\[0\]\[1\] must be a str, not int"):
        cross_encoders["one_label"].predict([("q", 3)])


def test_errors_speak_python(st, cross_encoders, tmp_path):
    # A text over max_text_bytes names the Python argument that raises the limit, which Model exposes.
    long_text = "word " * (300 * 1024)  # 1.5 MiB
    with pytest.raises(encc.InvalidArgumentError, match=r"max_text_bytes=N"):
        st.encode(long_text)
    with encc.SentenceTransformer(st.path, threads=1, max_text_bytes=2 << 20) as big:
        assert big.encode(long_text).shape == (384,)  # truncated to max_seq as sentence-transformers does
    with pytest.raises(ValueError, match="max_text_bytes must be an int >= 0"):
        encc.Model(st.path, max_text_bytes=-1)
    # encode on a cross-encoder points at the Python class, not at a C function.
    with pytest.raises(encc.UnsupportedError, match="encc.CrossEncoder"):
        encc.Model(cross_encoders["one_label"].path).encode("x")
    with pytest.raises(ValueError, match="embedding model"):
        encc.CrossEncoder(st.path)


def test_similarity_function_comes_from_the_model(tmp_path):
    # config_sentence_transformers.json's similarity_fn_name is compiled into the artifact and is
    # similarity()'s default, as sentence-transformers takes it from the model's folder.
    folder = tmp_path / "dot"
    subprocess.run([os.path.join(BUILD, "bin", "make-tiny-model"), str(folder), "--seed", "5"], check=True,
                   stdout=subprocess.DEVNULL)
    (folder / "config_sentence_transformers.json").write_text('{"similarity_fn_name": "dot"}')
    with encc.SentenceTransformer(encc.compile(folder, tmp_path / "dot.encm", encc=ENCC)) as m:
        assert m.info["similarity"] == "dot" and m.similarity_fn_name == "dot"
        e = m.encode(["a b", "c"])
        close(m.similarity(e, e), e.astype(np.float64) @ e.T.astype(np.float64), 1e-6)
    with encc.SentenceTransformer(tmp_path / "dot.encm", similarity_fn_name="manhattan") as m:
        assert m.similarity_fn_name == "manhattan"  # the argument wins, as in sentence-transformers


@pytest.fixture(scope="module")
def splade(tmp_path_factory):
    """The SPLADE SparseEncoder folder of tests/reference/splade, compiled, and its recorded vectors."""
    with open(os.path.join(ROOT, "tests", "reference", "splade", "splade.json"), encoding="utf-8") as f:
        case = json.load(f)["cases"][0]
    path = encc.compile(os.path.join(ROOT, "tests", "reference", "splade", case["dir"]),
                        tmp_path_factory.mktemp("splade") / "splade.encm", encc=ENCC)
    dense = np.zeros((len(case["texts"]), case["vocab_size"]))
    for r, entries in enumerate(case["sparse"]):
        for index, value in entries:
            dense[r, index] = value
    with encc.SparseEncoder(path, threads=2) as m:
        yield m, case["texts"], dense


def test_sparse_encoder_as_sentence_transformers_sparse_encoder(splade):
    """SparseEncoder.encode's dense form against sentence-transformers 5.7's SparseEncoder (recorded in float64),
    max_active_dims as its top k, encode_sparse's pairs, and the torch sparse tensors when torch is there."""
    m, texts, want = splade
    dense = m.encode(texts, convert_to_tensor=False, convert_to_sparse_tensor=False)
    assert isinstance(dense, list) and len(dense) == len(texts)
    print(f"[ measured ] SparseEncoder vs sentence-transformers: {close(np.stack(dense), want, 1e-5):.2e}")
    assert [(np.asarray(d) != 0).sum() for d in dense] == [(w != 0).sum() for w in want]
    assert m.get_sentence_embedding_dimension() == want.shape[1]
    pairs = m.encode_sparse(texts, max_active_dims=4)
    for (ids, weights), row, w in zip(pairs, dense, want):
        assert ids.dtype == np.int32 and weights.dtype == np.float32 and len(ids) == min(4, (w != 0).sum())
        assert list(weights) == sorted(weights, reverse=True) and np.array_equal(row[ids], weights)
        assert set(ids) == set(np.argsort(-w, kind="stable")[:len(ids)])  # the reference's heaviest
    top = m.encode(texts[0], convert_to_tensor=False, convert_to_sparse_tensor=False, max_active_dims=3)
    assert top.shape == (want.shape[1],) and (top != 0).sum() == 3
    ids, weights = m.encode_sparse(texts[0], threshold=float(np.sort(dense[0])[-3]))
    assert len(ids) == 2  # strictly above the third-heaviest weight
    close(m.similarity(np.stack(dense[:2]), np.stack(dense[:2])), want[:2] @ want[:2].T, 1e-5)
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs torch"):
            m.encode(texts)  # sentence-transformers' default: a torch sparse tensor
    else:
        t = m.encode(texts)
        assert t.is_sparse and tuple(t.shape) == want.shape
        close(t.to_dense().numpy(), want, 1e-5)
    # decode: the vocabulary's strings of the heaviest entries (vocab.txt of the folder), as SparseEncoder.decode.
    with open(os.path.join(ROOT, "tests", "reference", "splade", "models", "bert_mlm", "vocab.txt"),
              encoding="utf-8") as f:
        vocab = f.read().splitlines()
    decoded = m.decode(np.stack(dense[:2]), top_k=3)
    assert len(decoded) == 2 and all(len(d) == 3 for d in decoded)
    for d, row in zip(decoded, dense[:2]):
        ids = np.argsort(-np.asarray(row), kind="stable")[:3]
        assert d == [(vocab[i], float(row[i])) for i in ids]
    assert len(m.decode(dense[0])) == int((np.asarray(dense[0]) != 0).sum())  # 1-D: every non-zero
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        m.decode(dense[0], top_k=0)
    with pytest.raises(ValueError, match="threshold must be a finite number >= 0"):
        m.encode_sparse(texts, threshold=-1.0)
    with pytest.raises(ValueError, match="max_active_dims"):
        m.encode_sparse(texts, max_active_dims=0)


def test_sparse_encoder_refuses_a_dense_model(st):
    with pytest.raises(ValueError, match="not a SPLADE model"):
        encc.SparseEncoder(st.path)
    with pytest.raises(ValueError, match="encode_sparse needs a SPLADE model"):
        st.encode_sparse(["a"])


def test_hybrid_index_example(st, splade, tmp_path):
    """examples/hybrid_index.py: Qdrant points holding exactly the package's dense and sparse vectors, and a
    query answered by the fused ranking (the query is a document: it ranks first on cosine and is listed)."""
    import sys
    m, recorded, _ = splade
    texts = [t for t in recorded if t.strip()]  # the example skips blank lines
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(texts) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "hybrid_index.py"), "--dense", st.path,
                          "--sparse", m.path, "--docs", str(docs), "--out", str(tmp_path / "index"),
                          "--query", texts[2], "--top", "3", "--threads", "2"],
                         capture_output=True, text=True, check=True).stdout
    points = json.loads((tmp_path / "index" / "points.json").read_text(encoding="utf-8"))["points"]
    assert [p["id"] for p in points] == list(range(len(texts)))
    assert [p["payload"]["text"] for p in points] == texts
    dense = st.encode_document(texts)
    sparse = m.encode_sparse(texts)
    for p, d, (ids, weights) in zip(points, dense, sparse):
        assert np.array_equal(np.array(p["vector"]["dense"], dtype=np.float32), d)
        assert p["vector"]["sparse"]["indices"] == ids.tolist()
        assert np.array_equal(np.array(p["vector"]["sparse"]["values"], dtype=np.float32), weights)
    collection = json.loads((tmp_path / "index" / "collection.json").read_text(encoding="utf-8"))
    assert collection["vectors"]["dense"] == {"size": 384, "distance": "Cosine"}
    lines = out.splitlines()
    assert lines[0].startswith(f"indexed {len(texts)} documents") and lines[1] == f"query: {texts[2]}"
    ranked = lines[2:]
    assert len(ranked) == 3 and any(line.endswith(texts[2]) and "cosine 1.000" in line for line in ranked), out
    # --colbert: each point also holds the ColBERT model's document vectors (a max_sim multi-vector), and the
    # query's MaxSim ranking is fused with the other two.
    colbert_path = encc.compile(os.path.join(ROOT, "tests", "reference", "colbert", "models", "bert_colbert"),
                                tmp_path / "colbert.encm", encc=ENCC)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "hybrid_index.py"), "--dense", st.path,
                          "--sparse", m.path, "--colbert", str(colbert_path), "--docs", str(docs),
                          "--out", str(tmp_path / "index3"), "--query", texts[2], "--top", "3", "--threads", "2"],
                         capture_output=True, text=True, check=True).stdout
    points = json.loads((tmp_path / "index3" / "points.json").read_text(encoding="utf-8"))["points"]
    with encc.Model(str(colbert_path), threads=2) as cb:
        want = cb.encode(texts, is_query=False)
        q = cb.encode(texts[2], is_query=True)
    for p, rows in zip(points, want):
        assert np.array_equal(np.array(p["vector"]["colbert"], dtype=np.float32).reshape(rows.shape), rows)
    collection = json.loads((tmp_path / "index3" / "collection.json").read_text(encoding="utf-8"))
    assert collection["vectors"]["colbert"] == {"size": 16, "distance": "Cosine",
                                                "multivector_config": {"comparator": "max_sim"}}
    best = max(range(len(texts)), key=lambda i: float((q @ want[i].T).max(axis=1).sum()))
    ranked = out.splitlines()[2:]
    assert len(ranked) == 3 and all("maxsim " in line for line in ranked), out
    maxsim = {line.split("  ")[-1]: float(line.split("maxsim ")[1].split(")")[0]) for line in ranked}
    assert texts[best] not in maxsim or abs(maxsim[texts[best]] - float((q @ want[best].T).max(axis=1).sum())) < 2e-3
