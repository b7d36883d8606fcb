#!/usr/bin/env python3
"""Batch embedding on Ray Data with encc: an actor pool, one encc.Model per actor.

Reads texts from Parquet (a file or a folder) or JSON Lines, embeds the text column with a
compiled artifact, and writes Parquet with the input's columns plus `embedding` (float32 list).
Each actor loads the model once and runs `threads` runtime threads and asks Ray for as many CPUs;
leave at least one CPU of the cluster free of actors (actors x threads < CPUs), or the read and
write tasks never get one and the pipeline waits forever.

  python examples/ray_embed.py MODEL.encm INPUT OUTPUT_DIR [--text-column text] [--actors 2]
      [--threads 1] [--batch-size 256] [--address auto]

On a cluster: the artifact must be readable at the same path on every node (shared storage, or
copied there first); run with `--address auto` from a node of the cluster (docs/scale-out.md).
"""
import argparse
import time

import numpy as np
import ray

import encc


class Embedder:
    """One per actor: the model stays loaded across batches."""

    def __init__(self, model_path, threads, column):
        self.model = encc.Model(model_path, threads=threads)
        self.column = column

    def __call__(self, batch):
        texts = [str(t) for t in batch[self.column]]
        batch["embedding"] = list(self.model.encode(texts, batch_size=64).astype(np.float32))
        return batch


def read(path):
    if path.endswith(".jsonl"):
        return ray.data.read_json(path, lines=True)
    if path.endswith(".json"):
        return ray.data.read_json(path)
    return ray.data.read_parquet(path)


def embed(model_path, input_path, output_path, column="text", actors=2, threads=1, batch_size=256):
    """Runs the pipeline (ray.init must have been called); returns the number of rows written."""
    ds = read(input_path)
    ds = ds.map_batches(Embedder, fn_constructor_args=(model_path, threads, column), batch_size=batch_size,
                        batch_format="pandas", compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=threads)
    ds.write_parquet(output_path)
    return ray.data.read_parquet(output_path).count()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--text-column", default="text")
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--address", default=None, help="a Ray cluster (default: a local one)")
    args = ap.parse_args()
    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    t0 = time.perf_counter()
    rows = embed(args.model, args.input, args.output, args.text_column, args.actors, args.threads, args.batch_size)
    dt = time.perf_counter() - t0
    print(f"{rows} rows embedded in {dt:.1f} s ({rows / dt:.0f} rows/s) -> {args.output}")


if __name__ == "__main__":
    main()
