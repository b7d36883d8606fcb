"""sentence-transformers' classes over an encc artifact: ``encc.SentenceTransformer``, ``encc.CrossEncoder`` and
``encc.SparseEncoder``.

Code written for ``sentence_transformers.SentenceTransformer`` / ``CrossEncoder`` (5.x) runs with the import
and the model path changed: the same methods, argument names, defaults, return shapes and dtypes, for every
argument that applies to an inference engine. Arguments that do not apply (multi-process pools, moving the
model to another device after loading, training) raise a ValueError that says why. numpy is the only
dependency: ``convert_to_tensor=True`` returns a torch tensor when torch is importable and raises otherwise.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import Model, _positive_int, _progress

Precision = Literal["float32", "int8", "uint8", "binary", "ubinary"]
SimilarityFunction = Literal["cosine", "dot", "euclidean", "manhattan"]
PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")
SIMILARITIES = ("cosine", "dot", "euclidean", "manhattan")


def _torch() -> Any:
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ImportError("convert_to_tensor=True needs torch, which is not installed (encc itself does not need "
                          "it): pip install torch, or use convert_to_numpy=True") from None
    return torch


def _reject(name: str, value: Any, why: str) -> None:
    if value is not None:
        raise ValueError(f"{name}={value!r} does not apply to encc: {why}")


def quantize_embeddings(embeddings: npt.NDArray[Any], precision: Precision,
                        ranges: Optional[npt.NDArray[Any]] = None,
                        calibration_embeddings: Optional[npt.NDArray[Any]] = None) -> npt.NDArray[Any]:
    """sentence_transformers.quantization.quantize_embeddings for a 2-D float array.

    int8 / uint8: 256 buckets per dimension between the per-dimension minimum and maximum of `ranges`
    (else of `calibration_embeddings`, else of `embeddings` themselves, which needs at least two rows);
    binary / ubinary: the bits (x > 0) packed 8 per byte, binary shifted by -128 into int8.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"Precision {precision!r} is not supported, must be one of {list(PRECISIONS)}")
    emb = np.asarray(embeddings)
    if emb.dtype in (np.uint8, np.int8):
        raise ValueError("Embeddings to quantize must be float rather than int8 or uint8.")
    if precision == "float32":
        return emb.astype(np.float32)
    if precision.endswith("int8"):
        if ranges is None:
            calib = emb if calibration_embeddings is None else np.asarray(calibration_embeddings)
            if calibration_embeddings is None and (calib.ndim == 1 or calib.shape[0] == 1):
                raise ValueError(f"Cannot compute {precision} quantization ranges from a single embedding. Call "
                                 "`quantize_embeddings` with `ranges` or `calibration_embeddings` from a "
                                 "representative set of embeddings instead.")
            ranges = np.vstack((np.min(calib, axis=0), np.max(calib, axis=0)))
        r = np.asarray(ranges).astype(np.float32, copy=False)
        starts = r[0, :]
        steps = (r[1, :] - starts) / 255
        steps = np.where(steps == 0, 1, steps)
        q = np.clip(np.floor((emb - starts) / steps), 0, 255)
        return q.astype(np.uint8) if precision == "uint8" else (q - 128).astype(np.int8)
    bits = np.packbits(emb > 0, axis=-1)
    return (bits - 128).astype(np.int8) if precision == "binary" else bits


def _as_2d(x: Any) -> npt.NDArray[np.float64]:
    a = np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float64)
    return a[None, :] if a.ndim == 1 else a


def _similarity(fn: SimilarityFunction, a: Any, b: Any, pairwise: bool) -> Any:
    x, y = _as_2d(a), _as_2d(b)
    if pairwise and x.shape != y.shape:
        raise ValueError(f"similarity_pairwise needs two arrays of one shape, not {x.shape} and {y.shape}")
    if fn == "cosine":
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        y = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
    if fn in ("cosine", "dot"):
        out = (x * y).sum(1) if pairwise else x @ y.T
    elif fn == "euclidean":
        d = x - y if pairwise else x[:, None, :] - y[None, :, :]
        out = -np.sqrt((d * d).sum(-1))
    else:
        d = x - y if pairwise else x[:, None, :] - y[None, :, :]
        out = -np.abs(d).sum(-1)
    out = out.astype(np.float32)
    if hasattr(a, "detach") or hasattr(b, "detach"):  # torch in, torch out (as sentence-transformers)
        return _torch().from_numpy(out)
    return out


def _query_prompt(model: Model, prompt_name: Optional[str], prompt: Optional[str]) -> Optional[str]:
    """encode_query's prompt name: the given one, else the model's "query" prompt when it has one."""
    if prompt_name is None and prompt is None and "query" in model.prompts:
        return "query"
    return prompt_name


def _document_prompt(model: Model, prompt_name: Optional[str], prompt: Optional[str]) -> Optional[str]:
    """encode_document's prompt name: the given one, else the model's "document" (else "passage", "corpus")."""
    if prompt_name is None and prompt is None:
        return next((n for n in ("document", "passage", "corpus") if n in model.prompts), None)
    return prompt_name


class SentenceTransformer(Model):
    """``sentence_transformers.SentenceTransformer`` over a compiled artifact (``encc compile MODEL -o m.encm``).

    Args:
        model_name_or_path: the ``.encm`` file.
        truncate_dim: keep the first N dimensions of every embedding (Matryoshka models), as
            sentence-transformers' argument of that name.
        similarity_fn_name: "cosine", "dot", "euclidean" or "manhattan" for similarity(); default: the model's
            similarity_fn_name (config_sentence_transformers.json, compiled in), cosine when it names none.
        device, threads, cpu_target, require_sha256, trusted_public_key, signature_path, max_text_bytes,
            max_seq_length: encc.Model's.
    """

    def __init__(self, model_name_or_path: Union[str, "os.PathLike[str]"], *, device: Optional[str] = None,
                 truncate_dim: Optional[int] = None,
                 similarity_fn_name: Optional[SimilarityFunction] = None, threads: int = 0,
                 cpu_target: Optional[str] = None, require_sha256: Optional[str] = None,
                 trusted_public_key: Optional[str] = None, signature_path: Optional[str] = None,
                 max_text_bytes: int = 0, max_seq_length: int = 0) -> None:
        super().__init__(model_name_or_path, threads=threads, device=device or "auto", cpu_target=cpu_target,
                         require_sha256=require_sha256, trusted_public_key=trusted_public_key,
                         signature_path=signature_path, max_text_bytes=max_text_bytes, max_seq_length=max_seq_length)
        self.truncate_dim = None if truncate_dim is None else self._checked_dim(truncate_dim)
        if similarity_fn_name is not None and similarity_fn_name not in SIMILARITIES:
            raise ValueError(f"similarity_fn_name must be one of {list(SIMILARITIES)}, not {similarity_fn_name!r}")
        # As sentence-transformers: the argument, else the model's config_sentence_transformers.json (compiled in).
        self.similarity_fn_name: SimilarityFunction = similarity_fn_name or self.info["similarity"]

    def _checked_dim(self, dim: Any) -> int:
        n = _positive_int(dim, "truncate_dim")
        if n > self.info["embedding_dim"]:
            raise ValueError(f"truncate_dim {n} is larger than the model's {self.info['embedding_dim']} dimensions")
        return n

    @property
    def device(self) -> str:
        """Where the model runs: "cpu" or "cuda:N" (chosen when it was loaded)."""
        return self.info["device"] or "cpu"

    def get_sentence_embedding_dimension(self) -> int:
        return self.truncate_dim or int(self.info["embedding_dim"])

    def encode(self, inputs: Union[str, Sequence[str]], prompt_name: Optional[str] = None,  # type: ignore[override]
               prompt: Optional[str] = None, batch_size: int = 32, show_progress_bar: Optional[bool] = None,
               output_value: Optional[Literal["sentence_embedding", "token_embeddings"]] = "sentence_embedding",
               precision: Precision = "float32", convert_to_numpy: bool = True, convert_to_tensor: bool = False,
               device: Optional[str] = None, normalize_embeddings: bool = False, truncate_dim: Optional[int] = None,
               pool: Any = None, chunk_size: Optional[int] = None, **kwargs: Any) -> Any:
        """Embeddings of `inputs`, as SentenceTransformer.encode computes them (see its documentation).

        One str: a 1-D result; a list: 2-D [N, dim] float32 (int8 / uint8 for those precisions, packed bits
        [N, dim / 8] for binary / ubinary). truncate_dim keeps the first dimensions after the model's own
        normalisation; normalize_embeddings then normalises the truncated vectors.
        """
        if kwargs:
            raise ValueError(f"{type(self).__name__}.encode() has been called with additional keyword arguments "
                             f"that this model does not use: {list(kwargs)}.")
        if device is not None and device != self.device:
            raise ValueError(f"device={device!r} does not apply to encc: the device is chosen when the artifact is "
                             f"loaded (this model runs on {self.device}); load it with device=...")
        _reject("pool", pool, "there are no worker processes; the runtime's threads are set by threads= at load")
        _reject("chunk_size", chunk_size, "there are no worker processes to hand chunks to")
        batch_size = _positive_int(batch_size, "batch_size")
        if precision not in PRECISIONS:
            raise ValueError(f"Precision {precision!r} is not supported, must be one of {list(PRECISIONS)}")
        dim = self._checked_dim(truncate_dim) if truncate_dim is not None else self.truncate_dim
        if convert_to_tensor:
            convert_to_numpy = False
        if output_value != "sentence_embedding":
            return self._features(inputs, prompt_name, prompt, batch_size, show_progress_bar, output_value, dim)
        single = isinstance(inputs, str)
        emb = super().encode(inputs, prompt_name=prompt_name, prompt=prompt, batch_size=batch_size,
                             show_progress_bar=show_progress_bar)
        emb = np.atleast_2d(emb) if single else emb
        if dim is not None:
            emb = emb[:, :dim]
        if normalize_embeddings:
            emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        if len(emb) and precision != "float32":
            emb = quantize_embeddings(emb, precision)
        result: Any
        if convert_to_tensor:
            torch = _torch()
            result = torch.as_tensor(emb) if len(emb) else torch.tensor([])
        elif convert_to_numpy:
            result = emb if len(emb) else np.array([])
        else:
            result = list(emb)
        return result[0] if single else result

    def _features(self, inputs: Union[str, Sequence[str]], prompt_name: Optional[str], prompt: Optional[str],
                  batch_size: int, show_progress_bar: Optional[bool],
                  output_value: Optional[str], dim: Optional[int]) -> Any:
        """output_value "token_embeddings" (a [tokens, hidden] array per input) or None (a dict per input)."""
        if output_value not in ("token_embeddings", None):
            raise ValueError(f"output_value must be 'sentence_embedding', 'token_embeddings' or None, "
                             f"not {output_value!r}")
        tokens = super().encode(inputs, prompt_name=prompt_name, prompt=prompt, batch_size=batch_size,
                                show_progress_bar=show_progress_bar, output_value="token_embeddings")
        if output_value == "token_embeddings":
            return tokens
        single = isinstance(inputs, str)
        sentences = np.atleast_2d(super().encode(inputs, prompt_name=prompt_name, prompt=prompt,
                                                 batch_size=batch_size))
        rows = [tokens] if single else tokens
        out = [{"sentence_embedding": s[:dim] if dim else s, "token_embeddings": t}
               for s, t in zip(sentences, rows)]
        return out[0] if single else out

    def encode_query(self, inputs: Union[str, Sequence[str]], prompt_name: Optional[str] = None,
                     prompt: Optional[str] = None, **kwargs: Any) -> Any:
        """encode() with the model's "query" prompt when it has one and none is given."""
        return self.encode(inputs, prompt_name=_query_prompt(self, prompt_name, prompt), prompt=prompt, **kwargs)

    def encode_document(self, inputs: Union[str, Sequence[str]], prompt_name: Optional[str] = None,
                        prompt: Optional[str] = None, **kwargs: Any) -> Any:
        """encode() with the model's "document" (else "passage", "corpus") prompt when it has one and none is given."""
        return self.encode(inputs, prompt_name=_document_prompt(self, prompt_name, prompt), prompt=prompt, **kwargs)

    def similarity(self, embeddings1: Any, embeddings2: Any) -> Any:
        """The [N, M] similarity matrix under similarity_fn_name (cosine by default; euclidean and manhattan
        as negative distances), float32; torch in, torch out."""
        return _similarity(self.similarity_fn_name, embeddings1, embeddings2, pairwise=False)

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> Any:
        """The [N] similarities of row i with row i."""
        return _similarity(self.similarity_fn_name, embeddings1, embeddings2, pairwise=True)


class SparseEncoder(Model):
    """``sentence_transformers.SparseEncoder`` over a compiled SPLADE artifact (a SparseEncoder folder, or a BERT
    masked-LM folder compiled with ``--pooling splade``).

    encode() returns what SparseEncoder.encode returns: torch sparse COO tensors by default (torch needed);
    ``convert_to_sparse_tensor=False`` gives dense vocabulary-wide vectors (numpy with ``convert_to_tensor=False``).
    ``max_active_dims`` keeps each embedding's heaviest entries. Model.encode_sparse gives (ids, weights) pairs
    with numpy alone. Args: encc.Model's.
    """

    def __init__(self, model_name_or_path: Union[str, "os.PathLike[str]"], *, device: Optional[str] = None,
                 max_active_dims: Optional[int] = None, threads: int = 0, cpu_target: Optional[str] = None,
                 require_sha256: Optional[str] = None, trusted_public_key: Optional[str] = None,
                 signature_path: Optional[str] = None, max_text_bytes: int = 0, max_seq_length: int = 0) -> None:
        super().__init__(model_name_or_path, threads=threads, device=device or "auto", cpu_target=cpu_target,
                         require_sha256=require_sha256, trusted_public_key=trusted_public_key,
                         signature_path=signature_path, max_text_bytes=max_text_bytes, max_seq_length=max_seq_length)
        if self.info["pooling"] != "splade":
            raise ValueError(f"{self.path}: not a SPLADE model (pooling {self.info['pooling']!r}); load it with "
                             "encc.SentenceTransformer")
        self.max_active_dims = None if max_active_dims is None else _positive_int(max_active_dims, "max_active_dims")
        self.similarity_fn_name: SimilarityFunction = "dot"

    def get_sentence_embedding_dimension(self) -> int:
        return int(self.info["embedding_dim"])

    def encode(self, inputs: Union[str, Sequence[str]], prompt_name: Optional[str] = None,  # type: ignore[override]
               prompt: Optional[str] = None, batch_size: int = 32, show_progress_bar: Optional[bool] = None,
               convert_to_tensor: bool = True, convert_to_sparse_tensor: bool = True, save_to_cpu: bool = False,
               max_active_dims: Optional[int] = None, **kwargs: Any) -> Any:
        """Sparse embeddings of `inputs`, as SparseEncoder.encode gives them: one str a 1-D result, a list a 2-D
        [N, vocabulary] one (a list of 1-D results with convert_to_tensor=False)."""
        if kwargs:
            raise ValueError(f"{type(self).__name__}.encode() has been called with additional keyword arguments "
                             f"that this model does not use: {list(kwargs)}.")
        single = isinstance(inputs, str)
        pairs = self.encode_sparse(inputs, prompt_name=prompt_name, prompt=prompt, batch_size=batch_size,
                                   max_active_dims=self.max_active_dims if max_active_dims is None else max_active_dims,
                                   show_progress_bar=show_progress_bar)
        rows = [pairs] if single else pairs
        dim = self.get_sentence_embedding_dimension()
        if convert_to_sparse_tensor:
            torch = _torch()

            def sparse(ids: Any, weights: Any, shape: tuple[int, ...]) -> Any:
                return torch.sparse_coo_tensor(torch.as_tensor(ids, dtype=torch.int64), torch.as_tensor(weights),
                                               shape, check_invariants=True).coalesce()

            if single or not convert_to_tensor:
                out = [sparse(i[None, :], w, (dim,)) for i, w in rows]
                return out[0] if single else out
            coords = np.array([np.repeat(np.arange(len(rows)), [len(i) for i, _ in rows]),
                               np.concatenate([i for i, _ in rows]) if rows else np.zeros(0, np.int32)])
            values = np.concatenate([w for _, w in rows]) if rows else np.zeros(0, np.float32)
            return sparse(coords, values, (len(rows), dim))
        dense = np.zeros((len(rows), dim), dtype=np.float32)
        for r, (ids, weights) in enumerate(rows):
            dense[r, ids] = weights
        result: Any = dense
        if convert_to_tensor:
            result = _torch().as_tensor(dense)
        elif not single:
            result = list(dense)
        return result[0] if single else result

    def encode_query(self, inputs: Union[str, Sequence[str]], prompt_name: Optional[str] = None,
                     prompt: Optional[str] = None, **kwargs: Any) -> Any:
        """encode() with the model's "query" prompt when it has one and none is given."""
        return self.encode(inputs, prompt_name=_query_prompt(self, prompt_name, prompt), prompt=prompt, **kwargs)

    def encode_document(self, inputs: Union[str, Sequence[str]], prompt_name: Optional[str] = None,
                        prompt: Optional[str] = None, **kwargs: Any) -> Any:
        """encode() with the model's "document" (else "passage", "corpus") prompt when it has one and none is given."""
        return self.encode(inputs, prompt_name=_document_prompt(self, prompt_name, prompt), prompt=prompt, **kwargs)

    def decode(self, embeddings: Any, top_k: Optional[int] = None) -> Any:
        """(token, weight) pairs of sparse embeddings, heaviest first, as SparseEncoder.decode gives them: a list
        for a 1-D embedding, a list of lists for a 2-D batch; at most top_k per embedding (None: every non-zero).
        Takes torch tensors (sparse or dense) or numpy arrays. Tokens are the vocabulary's strings ("##ing")."""
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 0):
            raise ValueError(f"top_k must be a positive integer, got {top_k}.")
        dense = np.asarray(embeddings.to_dense().cpu().numpy() if hasattr(embeddings, "to_dense") else embeddings)
        if dense.ndim not in (1, 2):
            raise ValueError(f"Input tensor must be 1D or 2D, got {dense.ndim}D.")
        rows = np.atleast_2d(dense)
        out = []
        for row in rows:
            nonzero = np.flatnonzero(row)
            order = nonzero[np.argsort(-row[nonzero], kind="stable")][:top_k]
            out.append([(self._model.token(int(i)), float(row[i])) for i in order])
        return out[0] if dense.ndim == 1 else out

    def similarity(self, embeddings1: Any, embeddings2: Any) -> Any:
        """The [N, M] dot products (SparseEncoder's similarity); sparse or dense, torch or numpy in."""
        def dense(e: Any) -> Any:
            return e.to_dense() if hasattr(e, "to_dense") else e
        return _similarity("dot", dense(embeddings1), dense(embeddings2), pairwise=False)


class CrossEncoder(Model):
    """``sentence_transformers.CrossEncoder`` over a compiled cross-encoder (a ``*ForSequenceClassification``
    folder compiled by encc): predict() and rank() as sentence-transformers computes them."""

    def __init__(self, model_name_or_path: Union[str, "os.PathLike[str]"], *, device: Optional[str] = None,
                 threads: int = 0,
                 cpu_target: Optional[str] = None, require_sha256: Optional[str] = None,
                 trusted_public_key: Optional[str] = None, signature_path: Optional[str] = None,
                 max_text_bytes: int = 0, max_seq_length: int = 0) -> None:
        super().__init__(model_name_or_path, threads=threads, device=device or "auto", cpu_target=cpu_target,
                         require_sha256=require_sha256, trusted_public_key=trusted_public_key,
                         signature_path=signature_path, max_text_bytes=max_text_bytes, max_seq_length=max_seq_length)
        if self.info["num_labels"] == 0:
            raise ValueError(f"{model_name_or_path} is an embedding model (no classification head): load it with "
                             "encc.SentenceTransformer")

    @property
    def num_labels(self) -> int:
        return int(self.info["num_labels"])

    def predict(self, sentences: Any, batch_size: int = 32,  # type: ignore[override]
                show_progress_bar: Optional[bool] = None,
                activation_fn: Optional[Callable[[Any], Any]] = None, apply_softmax: bool = False,
                convert_to_numpy: bool = True, convert_to_tensor: bool = False, **kwargs: Any) -> Any:
        """Scores of (query, document) pairs: a float for one pair and one label, [N] for several pairs,
        [.., num_labels] for more labels. The model's activation (sigmoid for one label) unless
        activation_fn is given (applied to the logits instead); apply_softmax over the labels."""
        if kwargs:
            raise ValueError(f"CrossEncoder.predict() got arguments that do not apply to encc: {list(kwargs)}")
        batch_size = _positive_int(batch_size, "batch_size")
        single = isinstance(sentences, (tuple, list)) and len(sentences) == 2 and all(
            isinstance(t, str) for t in sentences)
        pairs = self._pairs([sentences] if single else sentences)
        if activation_fn is None:
            scores = np.atleast_1d(super().predict(pairs, batch_size=batch_size)).astype(np.float32)
            if self.num_labels > 1:
                scores = scores.reshape(len(pairs), self.num_labels)
        else:
            logits = self._logits(pairs, batch_size, show_progress_bar)
            scores = np.asarray(self._apply(activation_fn, logits), dtype=np.float32)
        if apply_softmax and scores.ndim == 2 and scores.shape[1] > 1:
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            scores = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
        result: Any = scores
        if convert_to_tensor:
            result = _torch().as_tensor(scores)
        elif not convert_to_numpy:
            result = list(scores)
        return result[0] if single else result

    @staticmethod
    def _apply(fn: Callable[[Any], Any], logits: npt.NDArray[np.float32]) -> Any:
        try:
            import torch  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            return fn(logits)
        if isinstance(fn, torch.nn.Module):
            return fn(torch.from_numpy(logits)).detach().numpy()
        return fn(logits)

    def _logits(self, pairs: list[Any], batch_size: int, show_progress_bar: Optional[bool]) -> Any:
        out = []
        bar = _progress((len(pairs) + batch_size - 1) // batch_size, show_progress_bar)
        for start in range(0, len(pairs), batch_size):
            ids, types, lengths = self.tokenize_pairs(pairs[start:start + batch_size])
            _, pooled = self._model.run(ids, types, lengths, False, True)
            assert pooled is not None
            out.append(pooled)
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        logits = np.concatenate(out) if out else np.zeros((0, self.num_labels), np.float32)
        return logits[:, 0] if self.num_labels == 1 else logits

    def rank(self, query: str, documents: Sequence[str], top_k: Optional[int] = None,
             return_documents: bool = False, batch_size: int = 32, show_progress_bar: Optional[bool] = None,
             activation_fn: Optional[Callable[[Any], Any]] = None, apply_softmax: bool = False,
             convert_to_numpy: bool = True, convert_to_tensor: bool = False) -> list[dict[str, Any]]:
        """The documents sorted by score for the query: [{"corpus_id", "score"(, "text")}], best first."""
        if self.num_labels != 1:
            raise ValueError("CrossEncoder.rank() needs a model with one label (a reranker)")
        if isinstance(documents, str):
            raise TypeError("documents must be a list of str, not a str")
        docs = list(documents)
        scores = self.predict([(query, d) for d in docs], batch_size=batch_size, show_progress_bar=show_progress_bar,
                              activation_fn=activation_fn, apply_softmax=apply_softmax)
        order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
        results: list[dict[str, Any]] = []
        for i in order[:top_k] if top_k is not None else order:
            r: dict[str, Any] = {"corpus_id": int(i), "score": np.float32(scores[i])}
            if return_documents:
                r["text"] = docs[i]
            results.append(r)
        return results
