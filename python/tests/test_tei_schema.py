"""encc-serve's TEI routes against text-embeddings-inference's own OpenAPI description (issue 38).

tests/reference/tei/openapi.json is TEI's docs/openapi.json, unchanged. Each route's answer, on success and
on the errors TEI documents for it, is checked against the response schema TEI declares for that status,
with a small OpenAPI 3.0 schema checker (type, required, properties, items, additionalProperties, $ref,
oneOf, enum, nullable, minimum). Two places where TEI's description and TEI's server disagree follow the
server, as clients see it: ErrorType's enum is spelled "Validation" where the server sends "validation"
(serde's snake_case), so enums compare without case. OpenAI's route answers errors in OpenAI's own shape
(the `openai` client needs it; test_serve_clients.py), not TEI's OpenAICompatErrorResponse, so only its
success is checked here.

Models: all-MiniLM-L6-v2 (an embedder), tiny classifiers with three labels and one (a reranker), and the
recorded SPLADE folder (tests/reference/splade) and bge-m3 folder (tests/reference/bge_m3). Run by
scripts/serve-clients (./scripts/test).
"""
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest

import encc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ENCC_BUILD_DIR", os.path.join(ROOT, "build"))
MINILM = os.environ.get("ENCC_MINILM_DIR")
ENCC = os.path.join(BUILD, "bin", "encc")

with open(os.path.join(ROOT, "tests", "reference", "tei", "openapi.json"), encoding="utf-8") as f:
    OPENAPI = json.load(f)


def resolve(schema):
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = OPENAPI["components"]["schemas"][name]
    return schema


def violations(value, schema, where="$"):
    """What in `value` breaks the OpenAPI 3.0 `schema` (empty: nothing)."""
    schema = resolve(schema)
    if value is None:
        return [] if schema.get("nullable") else [f"{where}: null where {schema.get('type', 'a value')} is due"]
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not violations(value, s, where)]
        return [] if len(matching) == 1 else [f"{where}: matches {len(matching)} of oneOf's schemas, not one"]
    out = []
    kind = schema.get("type")
    checks = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)}
    if kind and not checks[kind](value):
        return [f"{where}: {type(value).__name__} where {kind} is due"]
    if "enum" in schema and str(value).lower() not in [str(e).lower() for e in schema["enum"]]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        out.append(f"{where}: {value} < {schema['minimum']}")
    if kind == "object":
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{where}: '{key}' is missing")
        properties = schema.get("properties", {})
        for key, v in value.items():
            if key in properties:
                out += violations(v, properties[key], f"{where}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                out += violations(v, schema["additionalProperties"], f"{where}.{key}")
    if kind == "array" and "items" in schema:
        for i, v in enumerate(value):
            out += violations(v, schema["items"], f"{where}[{i}]")
    return out


def response_schema(path, method, status):
    responses = OPENAPI["paths"][path][method]["responses"]
    assert str(status) in responses, f"TEI documents no {status} for {method.upper()} {path}"
    return responses[str(status)]["content"]["application/json"]["schema"]


class Server:
    def __init__(self, artifact, *args):
        self.proc = subprocess.Popen([os.path.join(BUILD, "bin", "encc-serve"), str(artifact), "--port", "0",
                                      "--threads", "2", "--max-input-texts", "8", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        if "listening on http://" not in line:
            self.proc.kill()
            raise RuntimeError(f"encc-serve did not start: {line}{self.proc.stdout.read()}")
        self.url = line.strip().rsplit(" ", 1)[1]

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method.upper(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def check(self, method, path, body, status):
        """Calls the route, expects `status`, and checks the answer against TEI's schema for it."""
        got, answer = self.call(method, path, body)
        assert got == status, f"{method.upper()} {path} {body}: {got} {answer}"
        problems = violations(answer, response_schema(path, method, status))
        assert not problems, f"{method.upper()} {path} {body} -> {answer}: {problems}"
        return answer

    def close(self):
        self.proc.terminate()
        assert self.proc.wait(timeout=60) == 0
        self.proc.stdout.close()


def tiny(tmp_path, name, *flags):
    folder = tmp_path / name
    subprocess.run([os.path.join(BUILD, "bin", "make-tiny-model"), str(folder), "--hidden", "32", "--heads", "2",
                    "--layers", "1", "--intermediate", "48", "--seed", "6", *flags], check=True,
                   stdout=subprocess.DEVNULL)
    return encc.compile(folder, tmp_path / f"{name}.encm", encc=ENCC, max_seq=32)


def test_the_checker_finds_what_is_wrong():
    token = {"$ref": "#/components/schemas/SimpleToken"}
    assert not violations({"id": 1, "text": "a", "special": True, "start": None, "stop": None}, token)
    assert violations({"id": 1, "text": "a", "special": "no", "start": 0, "stop": 1}, token)
    assert violations({"id": -1, "text": "a", "special": False}, token)
    assert violations({"text": "a", "special": False}, token)
    assert violations([[{"id": 1}]], response_schema("/tokenize", "post", 200))
    assert violations({"error": "x", "error_type": "nonsense"}, response_schema("/embed", "post", 413))
    assert violations({"embedding": {"pooling": "mean"}, "reranker": {"id2label": {}, "label2id": {}}},
                      {"$ref": "#/components/schemas/ModelType"})


def test_embedding_routes_match_tei_schema():
    if not MINILM or not os.path.isdir(MINILM):
        pytest.fail("ENCC_MINILM_DIR is not set to the all-MiniLM-L6-v2 folder")
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"encc-tei-schema-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    try:
        server = Server(encc.compile(MINILM, os.path.join(work, "minilm.encm"), encc=ENCC))
        try:
            server.check("post", "/embed", {"inputs": "Hello, world!"}, 200)
            server.check("post", "/embed", {"inputs": ["a", "b"], "normalize": True, "truncate": True}, 200)
            server.check("post", "/embed_all", {"inputs": ["Hello, world!"]}, 200)
            server.check("post", "/similarity", {"inputs": {"source_sentence": "a cat",
                                                            "sentences": ["a dog", "the sea"]}}, 200)
            tokens = server.check("post", "/tokenize", {"inputs": ["Hello, wörld!", "x"]}, 200)
            assert tokens[0][0]["special"] and tokens[0][0]["start"] is None  # [CLS]
            assert tokens[0][2] == {"id": 1010, "text": ",", "special": False, "start": 5, "stop": 6}
            server.check("post", "/tokenize", {"inputs": "Hello", "add_special_tokens": False}, 200)
            ids = [[t["id"] for t in row] for row in tokens]
            text = server.check("post", "/decode", {"ids": ids}, 200)
            assert text == ["hello, world!", "x"]
            server.check("post", "/decode", {"ids": ids[0], "skip_special_tokens": False}, 200)
            server.check("get", "/info", None, 200)
            server.check("post", "/v1/embeddings", {"input": ["a", "b"], "model": "m"}, 200)
            # Errors, each with a status TEI documents for the route: its ErrorResponse.
            server.check("post", "/embed", {"inputs": []}, 422)
            server.check("post", "/embed", {"inputs": ["a"] * 9}, 413)
            server.check("post", "/embed_sparse", {"inputs": "a"}, 424)
            server.check("post", "/tokenize", {"nothing": 1}, 422)
            server.check("post", "/decode", {"ids": []}, 400)
            server.check("post", "/decode", {"ids": [10 ** 6]}, 422)
            server.check("post", "/predict", {"inputs": "a"}, 424)
        finally:
            server.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_classifier_reranker_and_sparse_routes_match_tei_schema(tmp_path):
    nli = tiny(tmp_path, "nli", "--pooling", "none", "--num-labels", "3")
    server = Server(nli)
    try:
        server.check("post", "/predict", {"inputs": "the cat sits"}, 200)
        answer = server.check("post", "/predict", {"inputs": [["a cat", "a dog"], ["x"]], "raw_scores": True}, 200)
        assert {p["label"] for p in answer[0]} == {"LABEL_0", "LABEL_1", "LABEL_2"}  # no id2label: transformers' names
        info = server.check("get", "/info", None, 200)
        assert "classifier" in info["model_type"]
        server.check("post", "/predict", {"inputs": []}, 422)
        server.check("post", "/embed", {"inputs": "a"}, 424)
    finally:
        server.close()
    reranker = tiny(tmp_path, "reranker", "--pooling", "none", "--num-labels", "1")
    server = Server(reranker)
    try:
        server.check("post", "/rerank", {"query": "a cat", "texts": ["a dog", "the sea"], "return_text": True}, 200)
        info = server.check("get", "/info", None, 200)
        assert "reranker" in info["model_type"]
        server.check("post", "/rerank", {"query": "a cat", "texts": []}, 400)  # TEI's "`texts` cannot be empty"
    finally:
        server.close()
    splade_dir = os.path.join(ROOT, "tests", "reference", "splade", "models", "bert_mlm")
    splade = encc.compile(splade_dir, tmp_path / "splade.encm", encc=ENCC, max_seq=32)
    server = Server(splade)
    try:
        answer = server.check("post", "/embed_sparse", {"inputs": ["a cat", "the sea"]}, 200)
        assert all(row for row in answer)
    finally:
        server.close()
    # bge-m3's lexical weights in /embed_sparse's shape (tests/reference/bge_m3: a tiny XLM-R with its heads).
    m3 = encc.compile(os.path.join(ROOT, "tests", "reference", "bge_m3", "models", "xlmr_m3"), tmp_path / "m3.encm",
                      encc=ENCC)
    server = Server(m3)
    try:
        answer = server.check("post", "/embed_sparse", {"inputs": ["The cat sat on the mat.", "x"]}, 200)
        assert answer[0] and all(e["value"] > 0 for row in answer for e in row)
        server.check("post", "/embed", {"inputs": "a cat"}, 200)
    finally:
        server.close()
