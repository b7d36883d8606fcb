"""The encc Python package against the C API (through `encc tokenize` / `encc embed` and the
recorded sentence-transformers embeddings of all-MiniLM-L6-v2, tests/reference).

Needs: ENCC_BUILD_DIR (a build with bin/encc and bin/make-tiny-model; default ../build) and
ENCC_MINILM_DIR (the all-MiniLM-L6-v2 folder), as ./scripts/test sets them.
"""
import concurrent.futures
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
REFERENCE = os.path.join(ROOT, "tests", "reference", "minilm_embeddings.json")


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory):
    if not os.path.exists(ENCC):
        pytest.fail(f"{ENCC} not found: set ENCC_BUILD_DIR to a build of encc")
    if not MINILM or not os.path.isdir(MINILM):
        pytest.fail("ENCC_MINILM_DIR is not set to the all-MiniLM-L6-v2 folder")
    tmp = tmp_path_factory.mktemp("artifacts")
    minilm = encc.compile(MINILM, tmp / "minilm.encm", encc=ENCC)
    raw = encc.compile(MINILM, tmp / "minilm-raw.encm", encc=ENCC, normalize=False, max_seq=32)
    return {"minilm": minilm, "raw": raw, "dir": tmp}


@pytest.fixture(scope="session")
def model(artifacts):
    with encc.Model(artifacts["minilm"], threads=2) as m:
        yield m


@pytest.fixture(scope="session")
def reference():
    with open(REFERENCE, encoding="utf-8") as f:
        return json.load(f)


def cli_embed(artifact, texts):
    out = subprocess.run([ENCC, "embed", os.fspath(artifact), *texts, "--format=json"], check=True,
                         capture_output=True, text=True).stdout
    return np.array(json.loads(out)["embeddings"], dtype=np.float32)


def test_encode_matches_sentence_transformers(model, reference):
    texts = [s["text"] for s in reference["sentences"]]
    want = np.array([s["embedding"] for s in reference["sentences"]], dtype=np.float64)
    got = model.encode(texts, batch_size=16).astype(np.float64)
    assert got.shape == want.shape == (64, 384)
    cos = (got * want).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    print(f"[ measured ] min cosine vs sentence-transformers over {len(texts)} sentences: {cos.min():.9f}")
    assert cos.min() >= 0.9999


def test_encode_matches_the_c_api(model, artifacts, reference):
    texts = [s["text"] for s in reference["sentences"][:12]] + ["naïve café", "x"]
    want = cli_embed(artifacts["minilm"], texts)
    got = model.encode(texts, batch_size=5)
    assert np.abs(got - want).max() < 1e-5


def test_shapes_order_and_batching(model):
    texts = ["a", "a much longer sentence with quite a few more words in it", "mid length text here", "b"]
    one = model.encode(texts[1])
    assert one.shape == (384,) and one.dtype == np.float32
    all_at_once = model.encode(texts, batch_size=32)
    by_three = model.encode(texts, batch_size=3)
    singly = np.stack([model.encode(t) for t in texts])
    assert all_at_once.shape == (4, 384)
    assert np.abs(all_at_once - singly).max() < 1e-5  # input order kept through the length sort
    assert np.abs(by_three - singly).max() < 1e-5
    assert np.abs(all_at_once[1] - one).max() < 1e-5
    assert model.encode([]).shape == (0, 384)
    as_list = model.encode(texts, convert_to_numpy=False)
    assert isinstance(as_list, list) and len(as_list) == 4 and as_list[0].shape == (384,)


def test_normalize_embeddings(artifacts):
    with encc.Model(artifacts["raw"]) as raw:
        assert raw.info["normalize"] is False
        e = raw.encode(["A man is eating food.", "Someone plays a violin."])
        assert not np.allclose(np.linalg.norm(e, axis=1), 1.0)
        n = raw.encode(["A man is eating food.", "Someone plays a violin."], normalize_embeddings=True)
        assert np.allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-6)
        assert np.abs(n - e / np.linalg.norm(e, axis=1, keepdims=True)).max() < 1e-6


def test_tokenize_run_and_token_embeddings(model, reference):
    s = reference["sentences"][0]
    ids, lengths = model.tokenize([s["text"], "hello"])
    assert ids.dtype == np.int32 and lengths.tolist() == [len(s["ids"]), 3]
    assert ids[0, :lengths[0]].tolist() == s["ids"] and ids[1, 3:].tolist() == [0] * (ids.shape[1] - 3)
    hidden = model.run(ids, lengths)
    assert hidden.shape == (2, ids.shape[1], 384)
    head = np.array(s["hidden_head"], dtype=np.float64)  # tokens 0 and 1, features 0..7 (PyTorch)
    assert np.abs(hidden[0, :2, :8] - head).max() < 1e-3 * np.abs(head).max()
    assert not hidden[1, 3:].any()  # padding rows are 0
    # Ragged lists and int64 give the same; token_embeddings are the valid rows.
    ragged = model.run([s["ids"], [101, 7592, 102]])
    assert np.abs(ragged - hidden).max() < 1e-6
    assert np.abs(model.run(ids.astype(np.int64), lengths) - hidden).max() < 1e-6
    tokens = model.encode([s["text"], "hello"], output_value="token_embeddings")
    assert [t.shape for t in tokens] == [(lengths[0], 384), (3, 384)]
    assert np.abs(tokens[0] - hidden[0, :lengths[0]]).max() < 1e-5


def test_decode(model):
    # WordPiece's decoder as the tokenizers library's decode (recorded from tokenizers 0.23.3): "##"
    # joined, the space before punctuation cleaned up token by token, [CLS] / [SEP] left out unless asked.
    ids, lengths = model.tokenize(["Hello, worlds! Don't stop."])
    row = ids[0, :lengths[0]]
    assert row.tolist() == [101, 7592, 1010, 8484, 999, 2123, 1005, 1056, 2644, 1012, 102]
    assert model.decode(row) == "hello, worlds! don ' t stop."
    assert model.decode(row.tolist(), skip_special_tokens=False) == "[CLS] hello, worlds! don ' t stop. [SEP]"
    assert model.decode([7592, 2088]) == "hello world" and model.decode([]) == ""
    with pytest.raises(encc.InvalidArgumentError, match="not in the vocabulary"):
        model.decode([7592, 10**6])
    with pytest.raises(ValueError):
        model.decode([[1, 2]])


def test_tokenize_pairs(model):
    ids, types, lengths = model.tokenize_pairs([("A man is eating food.", "A man is eating a piece of bread."),
                                                ("hello", "world")])
    # Recorded from the tokenizers library (tests/tokenizer/pairs-expected.json).
    assert ids[0, :lengths[0]].tolist() == [101, 1037, 2158, 2003, 5983, 2833, 1012, 102, 1037, 2158, 2003,
                                           5983, 1037, 3538, 1997, 7852, 1012, 102]
    assert types[0, :lengths[0]].tolist() == [0] * 8 + [1] * 10
    assert ids[1, :lengths[1]].tolist() == [101, 7592, 102, 2088, 102] and lengths.tolist() == [18, 5]
    long = " ".join(["word"] * 300)
    cut, _, n = model.tokenize_pairs([(long, "world")])
    assert n.tolist() == [256] and cut[0, -2] == 2088  # longest_first cut the long text
    with pytest.raises(encc.InvalidArgumentError, match="too short"):
        model.tokenize_pairs([(long, "world")], truncation="only_second")
    with pytest.raises(ValueError):
        model.tokenize_pairs([("a", "b")], truncation="longest")
    with pytest.raises(TypeError):
        model.tokenize_pairs([("a",)])


def test_threads_share_one_model(model, reference):
    texts = [s["text"] for s in reference["sentences"]]
    serial = [model.encode(texts[i::4]) for i in range(4)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(model.encode, texts[i % 4::4], batch_size=4) for i in range(8)]
        results = [f.result() for f in futures]
    for i, r in enumerate(results):
        assert np.abs(r - serial[i % 4]).max() < 1e-5


def test_argument_errors_before_the_runtime(model):
    with pytest.raises(TypeError):
        model.encode(None)
    with pytest.raises(TypeError):
        model.encode([b"bytes"])
    with pytest.raises(TypeError):
        model.encode(["ok", 3])
    with pytest.raises(ValueError):
        model.encode(["x"], batch_size=0)
    with pytest.raises(ValueError):
        model.encode(["x"], output_value="pooled")
    with pytest.raises(TypeError):
        model.run(None)
    with pytest.raises(TypeError):
        model.run(np.zeros((1, 4), dtype=np.float32))
    with pytest.raises(ValueError):
        model.run(np.ones((2, 4), dtype=np.int32), lengths=[4, -1])
    with pytest.raises(ValueError):
        model.run(np.ones((2, 4), dtype=np.int32), lengths=[4])
    with pytest.raises(ValueError):
        model.run([[101, 102], []])
    with pytest.raises(ValueError):
        encc.Model("x.encm", threads=-1)
    with pytest.raises(TypeError):
        encc.Model(None)


def test_runtime_errors_by_status_code(model, artifacts, tmp_path):
    with pytest.raises(encc.InvalidArgumentError, match="outside the vocabulary"):
        model.run([[101, 999999, 102]])
    with pytest.raises(encc.InvalidArgumentError):
        model.run(np.ones((1, 300), dtype=np.int32))  # longer than max_seq 256
    with pytest.raises(encc.InvalidArgumentError, match="bytes"):
        model.encode("x" * ((1 << 20) + 1))  # max_text_bytes
    with pytest.raises(encc.IOError) as missing:
        encc.Model(tmp_path / "missing.encm")
    assert isinstance(missing.value, OSError) and "cannot open" in str(missing.value)
    damaged = tmp_path / "damaged.encm"
    data = bytearray(open(artifacts["minilm"], "rb").read())
    data[len(data) // 2] ^= 0x55
    damaged.write_bytes(bytes(data))
    with pytest.raises(encc.InvalidArtifactError):
        encc.Model(damaged)
    with pytest.raises(encc.InvalidArgumentError, match="require_sha256"):
        encc.Model(artifacts["minilm"], require_sha256="")
    m = encc.Model(artifacts["raw"])
    m.close()
    with pytest.raises(encc.InvalidArgumentError, match="closed"):
        m.encode("x")


def test_cuda_without_a_device_is_refused(artifacts):
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU is present")
    with pytest.raises(encc.UnsupportedError):
        encc.Model(artifacts["minilm"], device="cuda")


def test_info(model):
    info = model.info
    assert info["architecture"] == "bert" and info["hidden_size"] == 384 and info["num_layers"] == 6
    assert info["embedding_dim"] == 384
    assert info["max_seq"] == model.max_seq_length == 256 and info["pooling"] == "mean"
    assert info["normalize"] is True and info["vocab_size"] == 30522
    assert info["precision"] == "fp32"
    assert model.get_sentence_embedding_dimension() == 384
    assert "encc.Model(" in repr(model)


def test_compile_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="encc compiler was not found"):
        encc.compile(tmp_path, tmp_path / "x.encm", encc=str(tmp_path / "no-encc"))
    with pytest.raises(encc.Error, match="config.json"):
        encc.compile(tmp_path, tmp_path / "x.encm", encc=ENCC)


def test_cross_encoder_predict_matches_sentence_transformers(tmp_path, model):
    """Model.predict on the tiny cross-encoders of tests/reference/cross_encoder.json (written by
    make-tiny-model with the recorded flags) equals CrossEncoder.predict within 1e-4."""
    with open(os.path.join(ROOT, "tests", "reference", "cross_encoder.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    make_tiny = os.path.join(BUILD, "bin", "make-tiny-model")
    for case in cases:
        folder = tmp_path / case["name"]
        subprocess.run([make_tiny, os.fspath(folder), *case["flags"]], check=True)
        artifact = encc.compile(folder, tmp_path / (case["name"] + ".encm"), encc=ENCC,
                                max_seq=case["max_length"])
        with encc.Model(artifact) as ce:
            labels = ce.info["num_labels"]
            assert labels == len(case["scores"][0])
            got = ce.predict([tuple(p) for p in case["pairs"]], batch_size=4)
            want = np.array(case["scores"], dtype=np.float32)
            assert got.shape == ((len(case["pairs"]),) if labels == 1 else (len(case["pairs"]), labels))
            np.testing.assert_allclose(got.reshape(want.shape), want, atol=1e-4, rtol=0)
            one = ce.predict(tuple(case["pairs"][0]))
            np.testing.assert_allclose(np.reshape(one, -1), want[0], atol=1e-4, rtol=0)
            # The typed run gives the logits the scores came from.
            ids, types, lengths = ce.tokenize_pairs([tuple(p) for p in case["pairs"]])
            hidden = ce.run(ids, lengths, type_ids=types)
            assert hidden.shape[:2] == ids.shape
            with pytest.raises(ValueError, match="type_ids must have the shape"):
                ce.run(ids, lengths, type_ids=types[:, :1])
    with pytest.raises(encc.UnsupportedError, match="not a sequence-classification model"):
        model.predict([("a", "b")])


def test_prompts_match_sentence_transformers(tmp_path):
    """encode(prompt_name=...) / encode(prompt=...) as SentenceTransformer.encode resolves them, on the
    tiny Qwen3 with Qwen3-Embedding's prompts (tests/reference/qwen3: sentence-transformers' own
    encode() with each prompt); the CLI's --prompt-name gives the same."""
    with open(os.path.join(ROOT, "tests", "reference", "qwen3", "qwen3.json"), encoding="utf-8") as f:
        case = next(c for c in json.load(f)["cases"] if c["name"] == "text_last")
    texts, recorded = case["texts"]["texts"], case["prompts"]
    folder = os.path.join(ROOT, "tests", "reference", "qwen3", case["dir"])
    artifact = encc.compile(folder, tmp_path / "qwen3.encm", encc=ENCC)
    with encc.Model(artifact) as m:
        assert m.prompts == recorded["prompts"]
        assert list(m.prompts) == ["query", "document"]  # the file's order
        assert m.default_prompt_name is None
        for name, want in recorded["encode"].items():
            got = m.encode(texts, prompt_name=name or None)
            err = np.abs(got - np.array(want)).max() / np.abs(np.array(want)).max()
            print(f"[ measured ] prompt {name!r}: {err:.2e} vs sentence-transformers")
            assert err < 1e-5
        query = recorded["prompts"]["query"]
        assert np.abs(m.encode(texts, prompt=query) - m.encode(texts, prompt_name="query")).max() == 0
        assert np.abs(m.encode(texts, prompt=query, prompt_name="document") -
                      m.encode(texts, prompt_name="query")).max() == 0  # prompt wins, as in sentence-transformers
        with pytest.raises(ValueError, match="Prompt name 'passage' not found"):
            m.encode(texts, prompt_name="passage")
        with pytest.raises(TypeError, match="prompt must be a str"):
            m.encode(texts, prompt=3)
    out = subprocess.run([ENCC, "embed", os.fspath(artifact), *texts[:3], "--prompt-name", "query", "--format=json"],
                         check=True, capture_output=True, text=True).stdout
    cli = np.array(json.loads(out)["embeddings"], dtype=np.float32)
    assert np.abs(cli - np.array(recorded["encode"]["query"][:3])).max() < 1e-5


def write_safetensors(path, tensors):
    """A safetensors file of float32 tensors (name -> array), written by hand: no torch here."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def test_dense_module_to_another_width(tmp_path):
    """A sentence-transformers Dense module projecting 32 -> 12 (tanh) before Normalize: encode() gives
    12-wide unit rows equal to tanh(W x + b) / |.| of the same model's mean pooling without it (1e-5),
    and every width the package reports is 12."""
    folder = tmp_path / "m"
    subprocess.run([os.path.join(BUILD, "bin", "make-tiny-model"), str(folder), "--hidden", "32", "--heads", "2",
                    "--layers", "1", "--intermediate", "48", "--seed", "9"], check=True, stdout=subprocess.DEVNULL)
    plain = encc.compile(folder, tmp_path / "plain.encm", encc=ENCC, normalize=False)
    rng = np.random.default_rng(4)
    w, b = rng.normal(0, 0.3, (12, 32)), rng.normal(0, 0.3, 12)
    (folder / "2_Dense").mkdir()
    (folder / "2_Dense" / "config.json").write_text(json.dumps(
        {"in_features": 32, "out_features": 12, "bias": True,
         "activation_function": "torch.nn.modules.activation.Tanh"}))
    write_safetensors(folder / "2_Dense" / "model.safetensors", {"linear.weight": w, "linear.bias": b})
    modules = json.loads((folder / "modules.json").read_text())
    at = next(i for i, m in enumerate(modules) if m["type"].endswith("Normalize"))
    modules.insert(at, {"idx": at, "name": "2_Dense", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    (folder / "modules.json").write_text(json.dumps(modules))
    dense = encc.compile(folder, tmp_path / "dense.encm", encc=ENCC)
    texts = ["hello world", "a", "the quick brown fox"]
    with encc.Model(plain) as p:
        x = p.encode(texts).astype(np.float64)
    want = np.tanh(x @ w.T + b)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    with encc.SentenceTransformer(dense) as m:
        got = m.encode(texts)
        assert got.shape == (3, 12) and m.get_sentence_embedding_dimension() == 12
        assert m.info["embedding_dim"] == 12 and m.info["hidden_size"] == 32
        np.testing.assert_allclose(got, want, atol=1e-5)
        assert m.encode([]).shape == (0,) and m.encode(texts, truncate_dim=4).shape == (3, 4)
        with pytest.raises(ValueError, match="larger than the model's 12 dimensions"):
            m.encode(texts, truncate_dim=13)


@pytest.fixture(scope="module")
def bge_m3(tmp_path_factory):
    """The tiny bge-m3-layout folder of tests/reference/bge_m3, compiled, and FlagEmbedding's recorded outputs."""
    with open(os.path.join(ROOT, "tests", "reference", "bge_m3", "bge_m3.json"), encoding="utf-8") as f:
        case = json.load(f)["cases"][0]
    path = encc.compile(os.path.join(ROOT, "tests", "reference", "bge_m3", "models", case["name"]),
                        tmp_path_factory.mktemp("bge_m3") / "m3.encm", encc=ENCC)
    with encc.Model(path, threads=2) as m:
        yield m, case


def test_encode_outputs_match_flag_embedding(bge_m3):
    """encode_outputs: bge-m3's dense, sparse and ColBERT outputs from one pass against FlagEmbedding's
    BGEM3FlagModel (float64), within 1e-5 of each output's largest value."""
    m, case = bge_m3
    texts = [t["text"] for t in case["texts"]]
    assert m.info["sparse"] and m.info["multivector_dim"] == case["colbert_dim"]
    out = m.encode_outputs(texts, batch_size=3)
    assert set(out) == {"dense", "sparse", "multi_vector"}
    assert out["dense"].shape == (len(texts), 32) and out["dense"].dtype == np.float32
    for k, t in enumerate(case["texts"]):
        np.testing.assert_allclose(out["dense"][k], t["dense"], atol=1e-5 * np.abs(t["dense"]).max())
        ids, weights = out["sparse"][k]
        want = dict((i, w) for i, w in t["lexical"])
        assert sorted(ids.tolist()) == sorted(want), t["text"]
        for i, w in zip(ids.tolist(), weights.tolist()):
            assert abs(w - want[i]) <= 1e-5 * max(want.values()), (t["text"], i)
        assert list(weights) == sorted(weights, reverse=True)
        colbert = np.array(t["colbert"])
        assert out["multi_vector"][k].shape == colbert.shape
        np.testing.assert_allclose(out["multi_vector"][k], colbert, atol=1e-5 * np.abs(colbert).max())
    # One text: its values alone; only what is asked for; encode_sparse / encode give the same.
    one = m.encode_outputs(texts[0], sparse=False)
    assert set(one) == {"dense", "multi_vector"}
    np.testing.assert_array_equal(one["dense"], out["dense"][0])
    sparse = m.encode_sparse(texts, max_active_dims=2)
    assert all(len(ids) <= 2 for ids, _ in sparse)
    np.testing.assert_array_equal(sparse[0][0], out["sparse"][0][0][:2])
    np.testing.assert_array_equal(m.encode(texts), out["dense"])


@pytest.fixture(scope="module")
def colbert(tmp_path_factory):
    """The tiny PyLate ColBERT checkpoint of tests/reference/colbert, compiled, and PyLate's recorded outputs."""
    with open(os.path.join(ROOT, "tests", "reference", "colbert", "colbert.json"), encoding="utf-8") as f:
        case = json.load(f)["cases"][0]
    path = encc.compile(os.path.join(ROOT, "tests", "reference", "colbert", "models", case["name"]),
                        tmp_path_factory.mktemp("colbert") / "cb.encm", encc=ENCC)
    with encc.Model(path, threads=2) as m:
        yield m, case


def test_colbert_roles_match_pylate(colbert):
    """A ColBERT model: encode(is_query=...) and encode_outputs(role=...) give PyLate's ColBERT.encode vectors
    (float64 reference, within 1e-5 of the largest value) for queries ([MASK]-expanded) and documents
    (punctuation left out); a role is required, dense is refused."""
    m, case = colbert
    assert m.roles == ["query", "document"]
    assert not m.info["has_pooled_output"] and m.info["multivector_dim"] == case["dim"]
    texts = case["texts"]
    for role, is_query in (("query", True), ("document", False)):
        got = m.encode(texts, is_query=is_query, batch_size=4)
        assert len(got) == len(texts)
        for k, want in enumerate(case[role]["vectors"]):
            want = np.array(want)
            assert got[k].shape == want.shape, (role, texts[k])
            np.testing.assert_allclose(got[k], want, atol=1e-5 * np.abs(want).max())
        out = m.encode_outputs(texts[0], role=role)
        assert set(out) == {"multi_vector"}
        np.testing.assert_array_equal(out["multi_vector"], got[0])
    with pytest.raises(ValueError, match="pass is_query=True or False"):
        m.encode(texts)
    with pytest.raises(ValueError, match="pass role=one of them, not 'passage'"):
        m.encode_outputs(texts, role="passage")
    with pytest.raises(ValueError, match="no dense output"):
        m.encode_outputs(texts, role="query", dense=True)


def test_encode_outputs_gives_what_the_model_has(model):
    """By default the outputs the model has (MiniLM: dense alone); asking for one it lacks is a ValueError."""
    out = model.encode_outputs(["a", "b c"])
    assert set(out) == {"dense"}
    np.testing.assert_array_equal(out["dense"], model.encode(["a", "b c"]))
    with pytest.raises(ValueError, match="no sparse output"):
        model.encode_outputs(["a"], sparse=True)
    with pytest.raises(ValueError, match="no multi-vector output"):
        model.encode_outputs(["a"], multi_vector=True)
    with pytest.raises(ValueError, match="role applies to a ColBERT model"):
        model.encode_outputs(["a"], role="query")
    with pytest.raises(ValueError, match="is_query applies to a ColBERT model"):
        model.encode(["a"], is_query=True)


def test_hybrid_index_example_with_bge_m3(bge_m3, tmp_path):
    """examples/hybrid_index.py --m3: Qdrant points holding exactly encode_outputs' three outputs (a named
    multi-vector "colbert" declared with max_sim), and the query's three scores combined (the query is a
    document: dense, ColBERT 1.000 and the best total)."""
    import sys
    m, case = bge_m3
    texts = [t["text"] for t in case["texts"] if t["text"].strip()]
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(texts) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "hybrid_index.py"), "--m3", m.path,
                          "--docs", str(docs), "--out", str(tmp_path / "index"), "--query", texts[1], "--top", "2",
                          "--threads", "2"], capture_output=True, text=True, check=True).stdout
    points = json.loads((tmp_path / "index" / "points.json").read_text(encoding="utf-8"))["points"]
    want = m.encode_outputs(texts)
    for p, d, (ids, weights), c in zip(points, want["dense"], want["sparse"], want["multi_vector"]):
        assert np.array_equal(np.array(p["vector"]["dense"], dtype=np.float32), d)
        assert p["vector"]["sparse"]["indices"] == ids.tolist()
        assert np.array_equal(np.array(p["vector"]["sparse"]["values"], dtype=np.float32), weights)
        assert np.array_equal(np.array(p["vector"]["colbert"], dtype=np.float32).reshape(c.shape), c)
    collection = json.loads((tmp_path / "index" / "collection.json").read_text(encoding="utf-8"))
    assert collection["vectors"]["colbert"] == {"size": 24, "distance": "Cosine",
                                                "multivector_config": {"comparator": "max_sim"}}
    lines = out.splitlines()
    assert lines[1] == f"query: {texts[1]}"
    ranked = lines[2:]
    assert len(ranked) == 2
    assert any(line.endswith(texts[1]) and "dense 1.000" in line and "colbert 1.000" in line for line in ranked), out
    totals = []
    for line in ranked:  # "  total  (dense d, sparse s, colbert c)  text"
        total, rest = line.split("  (")
        d, sp, c = (float(part.split()[1]) for part in rest.split(")")[0].split(", "))
        assert abs(float(total) - (0.4 * d + 0.2 * sp + 0.4 * c)) < 2e-3, line
        totals.append(float(total))
    assert totals == sorted(totals, reverse=True)
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "hybrid_index.py"), "--m3", m.path,
                          "--dense", m.path, "--docs", str(docs), "--out", str(tmp_path / "x")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "pass --dense and --sparse (and --colbert), or --m3" in bad.stderr
