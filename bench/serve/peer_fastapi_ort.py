"""The server a user would otherwise write here: FastAPI + ONNX Runtime, the way
their docs show it (one InferenceSession, a sync endpoint FastAPI runs in its
thread pool, the `tokenizers` fast tokenizer, mean pooling and L2
normalisation as sentence-transformers does), answering TEI's POST /embed.

  python peer_fastapi_ort.py MODEL.onnx TOKENIZER_DIR [--port 8081] [--threads 2]

No dynamic batching: each request is one session.run (what the FastAPI/ORT
tutorials write); ORT sessions are thread-safe, so concurrent requests run
concurrently.
"""
import argparse

import numpy as np
import onnxruntime as ort
import uvicorn
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel
from tokenizers import Tokenizer

p = argparse.ArgumentParser()
p.add_argument("onnx")
p.add_argument("tokenizer_dir")
p.add_argument("--port", type=int, default=8081)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--max-seq", type=int, default=256)
args = p.parse_args()

so = ort.SessionOptions()
so.intra_op_num_threads = args.threads
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession(args.onnx, so, providers=["CPUExecutionProvider"])
input_names = {i.name for i in session.get_inputs()}
tokenizer = Tokenizer.from_file(f"{args.tokenizer_dir}/tokenizer.json")
tokenizer.enable_truncation(args.max_seq)
tokenizer.enable_padding()

app = FastAPI()


class EmbedRequest(BaseModel):
    inputs: str | list[str]
    normalize: bool = True
    truncate: bool = True


@app.post("/embed")
def embed(req: EmbedRequest):
    texts = [req.inputs] if isinstance(req.inputs, str) else req.inputs
    if not texts:
        raise HTTPException(422, "inputs is empty")
    enc = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in input_names:
        feed["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feed)[0]
    m = mask[:, :, None].astype(np.float32)
    pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    if req.normalize:
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return pooled.tolist()


@app.get("/health")
def health():
    return {"status": "ok"}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
