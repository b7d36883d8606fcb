"""examples/ray_embed.py and examples/spark_embed.py on local clusters (Ray with 2 CPUs, Spark
local[2]), every row checked against single-process Model.encode. ./scripts/test runs them
(scripts/python-scaleout, with ENCC_REQUIRE_SCALEOUT=1: a missing ray, pyspark or Java runtime is
then a failure); elsewhere they are skipped where those are not installed (`pip install "ray[data]"
pyspark pandas pyarrow` into the venv, and a Java runtime, to include them).
"""
import importlib.util
import json
import os
import shutil
import sys

import numpy as np
import pytest

import encc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
MINILM = os.environ.get("ENCC_MINILM_DIR")
BUILD = os.environ.get("ENCC_BUILD_DIR", os.path.join(ROOT, "build"))


def texts():
    out = []
    with open(os.path.join(ROOT, "tests", "reference", "sentence-pairs.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                out += line.rstrip("\n").split("\t")[1:3]
    return [f"{t} ({i})" for i in range(4) for t in out]  # 256 rows


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    if not MINILM:
        pytest.fail("ENCC_MINILM_DIR is not set")
    tmp = tmp_path_factory.mktemp("scaleout")
    model = encc.compile(MINILM, tmp / "minilm.encm", encc=os.path.join(BUILD, "bin", "encc"), max_seq=128)
    rows = texts()
    path = tmp / "texts.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, t in enumerate(rows):
            f.write(json.dumps({"id": i, "text": t}) + "\n")
    with encc.Model(model) as m:
        want = m.encode(rows)
    return {"model": str(model), "input": str(path), "dir": tmp, "want": want, "rows": rows}


def check(got_ids, got_emb, data):
    assert sorted(got_ids) == list(range(len(data["rows"])))
    for i, e in zip(got_ids, got_emb):
        assert np.abs(np.asarray(e, dtype=np.float32) - data["want"][i]).max() < 1e-5, f"row {i}"


REQUIRED = os.environ.get("ENCC_REQUIRE_SCALEOUT") == "1"


def need(missing, what):
    """Skips (or, under ENCC_REQUIRE_SCALEOUT=1, fails) a test whose engine is not installed."""
    if missing:
        (pytest.fail if REQUIRED else pytest.skip)(f"{what} is not installed")


def test_ray_actor_pool(data):
    need(importlib.util.find_spec("ray") is None, "ray")
    import ray
    import ray_embed

    # The workers import Embedder from examples/ as the driver did. Two actors
    # of one CPU each, and a CPU left for the read and write tasks (with
    # every CPU held by actors those would wait forever).
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.path.join(ROOT, "examples")}})
    try:
        out = str(data["dir"] / "ray-out")
        assert ray_embed.embed(data["model"], data["input"], out, actors=2, threads=1, batch_size=64) == 256
        df = ray.data.read_parquet(out).to_pandas()
        check(df["id"].tolist(), df["embedding"].tolist(), data)
    finally:
        ray.shutdown()


def test_spark_map_in_pandas(data):
    need(importlib.util.find_spec("pyspark") is None, "pyspark")
    need(shutil.which("java") is None, "a Java runtime (Debian: default-jre-headless)")
    from pyspark.sql import SparkSession
    import spark_embed

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need this venv's encc and pandas
    spark = SparkSession.builder.master("local[2]").appName("encc-test").getOrCreate()
    spark.sparkContext.addPyFile(os.path.join(ROOT, "examples", "spark_embed.py"))  # for the workers
    try:
        df = spark.read.json(data["input"]).repartition(4)
        rows = spark_embed.embed_frame(df, data["model"], "text", threads=1).collect()
        check([r["id"] for r in rows], [r["embedding"] for r in rows], data)
    finally:
        spark.stop()
