#!/usr/bin/env python3
"""Batch embedding on Spark with encc: mapInPandas, the model loaded once per executor process.

Reads texts from Parquet or JSON Lines, embeds the text column with a compiled artifact, and
writes Parquet with the input's columns plus `embedding` (array<float>). Python workers are
reused between tasks (Spark's default), and each keeps its encc.Model in a module-level cache,
so a model is loaded once per worker, not once per partition.

  python examples/spark_embed.py MODEL.encm INPUT OUTPUT_DIR [--text-column text]
      [--threads 1] [--master local[2]] [--partitions N]

On a cluster: the artifact must be readable at the same path on every executor (shared
storage, or shipped with --files and read through SparkFiles); set --threads to the cores per
task (spark.task.cpus) (docs/scale-out.md).
"""
import argparse
import os
import sys
import time

_models = {}


def _model(path, threads):
    import encc

    key = (path, threads)
    if key not in _models:
        _models[key] = encc.Model(path, threads=threads)
    return _models[key]


def embed_frame(df, model_path, column="text", threads=1):
    """The DataFrame with an `embedding` column (array<float>)."""
    from pyspark.sql.types import ArrayType, FloatType, StructField, StructType

    schema = StructType(df.schema.fields + [StructField("embedding", ArrayType(FloatType()), False)])

    def embed_partitions(frames):
        model = _model(model_path, threads)
        for pdf in frames:
            emb = model.encode([str(t) for t in pdf[column]], batch_size=64)
            yield pdf.assign(embedding=[row for row in emb])

    return df.mapInPandas(embed_partitions, schema=schema)


def read(spark, path):
    if path.endswith((".jsonl", ".json")):
        return spark.read.json(path)
    return spark.read.parquet(path)


def main():
    from pyspark.sql import SparkSession

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local workers: this venv (encc, pandas)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=0)
    args = ap.parse_args()
    spark = SparkSession.builder.master(args.master).appName("encc-embed").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # Ship this file and use it as a module, so the workers import it (and
    # keep its model cache) instead of unpickling a copy per task.
    spark.sparkContext.addPyFile(os.path.abspath(__file__))
    import spark_embed

    t0 = time.perf_counter()
    df = read(spark, args.input)
    if args.partitions:
        df = df.repartition(args.partitions)
    spark_embed.embed_frame(df, args.model, args.text_column, args.threads).write.mode("overwrite").parquet(
        args.output)
    rows = spark.read.parquet(args.output).count()
    dt = time.perf_counter() - t0
    print(f"{rows} rows embedded in {dt:.1f} s ({rows / dt:.0f} rows/s) -> {args.output}")
    spark.stop()


if __name__ == "__main__":
    main()
