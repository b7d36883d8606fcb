"""encc-serve through the clients people already have (issue 38), each on its defaults.

A server started here (build/bin/encc-serve, a free port) is called by the official `openai` client (its
default encoding, base64, and float), LangChain's `OpenAIEmbeddings` (with check_embedding_ctx_length=False:
its default tokenises with tiktoken and sends the ids, which encc-serve refuses unless --allow-token-ids,
README), and `huggingface_hub`'s `InferenceClient(model=URL)` (feature_extraction and sentence_similarity
post to /, as to a TEI server; text_classification on a classifier artifact posts to / too). Each answer is
compared with what this process gets from the runtime directly: embeddings from encc.Model (the C API) must be
the same floats (JSON's shortest round-trip text and base64 both carry every bit); similarities their cosines
and a classifier's scores the softmax of the logits `encc run --format=json` prints, within 1e-6.

scripts/serve-clients runs this with ENCC_REQUIRE_CLIENTS=1 in a venv of its own with the clients and the
encc wheel (./scripts/test runs it); elsewhere a missing client skips.
"""
import json
import os
import subprocess

import numpy as np
import pytest

import encc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ENCC_BUILD_DIR", os.path.join(ROOT, "build"))
MINILM = os.environ.get("ENCC_MINILM_DIR")
TEXTS = ["A man is eating food.", "A man is riding a horse.", "", "Ünïcödé — ok?", "x " * 300]


def client(name):
    if os.environ.get("ENCC_REQUIRE_CLIENTS") == "1":
        return __import__(name)
    return pytest.importorskip(name)


class Server:
    """encc-serve ARTIFACT --port 0 ...; the port from its listening line; SIGTERM at the end."""

    def __init__(self, artifact, *args):
        self.proc = subprocess.Popen([os.path.join(BUILD, "bin", "encc-serve"), str(artifact), "--port", "0",
                                      "--threads", "2", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        line = self.proc.stdout.readline()
        if "listening on http://" not in line:
            self.proc.kill()
            raise RuntimeError(f"encc-serve did not start: {line}{self.proc.stdout.read()}")
        self.url = line.strip().rsplit(" ", 1)[1]

    def close(self):
        self.proc.terminate()
        assert self.proc.wait(timeout=60) == 0
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    if not MINILM or not os.path.isdir(MINILM):
        pytest.fail("ENCC_MINILM_DIR is not set to the all-MiniLM-L6-v2 folder")
    path = encc.compile(MINILM, tmp_path_factory.mktemp("clients") / "minilm.encm",
                        encc=os.path.join(BUILD, "bin", "encc"))
    server = Server(path, "--auto-truncate")  # the fifth text is 600 tokens: cut, as the clients send no truncate
    with encc.Model(path, threads=2) as m:
        want = m.encode(TEXTS)  # the C API, each text cut to max_seq as the server cuts it
    yield server, want
    server.close()


def same_floats(got, want):
    got = np.asarray(got, dtype=np.float32)
    assert got.shape == want.shape
    assert np.array_equal(got, want), f"max |diff| {np.abs(got - want).max():.3g}"


def test_openai_client(minilm):
    openai = client("openai")
    server, want = minilm
    c = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    got = c.embeddings.create(model="minilm", input=TEXTS)  # the client asks for base64 and decodes it
    assert [d.index for d in got.data] == list(range(len(TEXTS)))
    same_floats([d.embedding for d in got.data], want)
    got = c.embeddings.create(model="minilm", input=TEXTS, encoding_format="float")
    same_floats([d.embedding for d in got.data], want)
    assert got.usage.prompt_tokens > 0
    short = c.embeddings.create(model="minilm", input=TEXTS[0], dimensions=64).data[0].embedding
    np.testing.assert_allclose(short, want[0][:64] / np.linalg.norm(want[0][:64]), atol=1e-6)
    with pytest.raises(openai.BadRequestError, match="token ids are refused"):
        c.embeddings.create(model="minilm", input=[[101, 7592, 102]])


def test_langchain_openai_embeddings(minilm):
    langchain_openai = client("langchain_openai")
    server, want = minilm
    e = langchain_openai.OpenAIEmbeddings(model="minilm", base_url=server.url + "/v1", api_key="unused",
                                          check_embedding_ctx_length=False, max_retries=0)
    same_floats(e.embed_documents(TEXTS), want)
    same_floats([e.embed_query(TEXTS[1])], want[1:2])


def test_huggingface_hub_inference_client(minilm):
    huggingface_hub = client("huggingface_hub")
    server, want = minilm
    c = huggingface_hub.InferenceClient(model=server.url)
    for i in (0, 3):
        same_floats(c.feature_extraction(TEXTS[i]), want[i:i + 1])
    # sentence_similarity posts TEI's similarity body to /: the cosines of the C API's embeddings.
    got = c.sentence_similarity(TEXTS[0], other_sentences=TEXTS[1:4])
    w = want.astype(np.float64)
    cos = [w[0] @ w[i] / (np.linalg.norm(w[0]) * np.linalg.norm(w[i])) for i in (1, 2, 3)]
    np.testing.assert_allclose(got, cos, atol=1e-6)


def test_huggingface_hub_text_classification(tmp_path):
    huggingface_hub = client("huggingface_hub")
    folder = tmp_path / "nli"
    subprocess.run([os.path.join(BUILD, "bin", "make-tiny-model"), str(folder), "--hidden", "32", "--heads", "2",
                    "--layers", "1", "--intermediate", "48", "--seed", "6", "--pooling", "none", "--num-labels", "3"],
                   check=True, stdout=subprocess.DEVNULL)
    config = json.loads((folder / "config.json").read_text())
    names = ["contradiction", "entailment", "neutral"]
    config["id2label"] = {str(i): n for i, n in enumerate(names)}
    config["label2id"] = {n: i for i, n in enumerate(names)}
    (folder / "config.json").write_text(json.dumps(config))
    path = encc.compile(folder, tmp_path / "nli.encm", encc=os.path.join(BUILD, "bin", "encc"), max_seq=32)
    text = "the cat sits on the mat"
    with encc.Model(path) as m:
        ids, lengths = m.tokenize([text])
        ids = ids[0][:lengths[0]]
    run = subprocess.run([os.path.join(BUILD, "bin", "encc"), "run", str(path), "--ids", " ".join(map(str, ids)),
                          "--format=json"], check=True, capture_output=True, text=True)
    logits = np.asarray(json.loads(run.stdout)["logits"][0], dtype=np.float64)
    probs = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    server = Server(path)
    try:
        got = huggingface_hub.InferenceClient(model=server.url).text_classification(text)
        # TEI answers one input with the labels by descending score; the client keeps the first (the top one).
        top = got[0] if isinstance(got, list) else got
        assert top.label == names[int(probs.argmax())]
        assert abs(top.score - probs.max()) <= 1e-6
    finally:
        server.close()
