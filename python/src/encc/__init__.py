"""encc: run encoder models compiled by encc (``.encm`` artifacts) from Python.

Switching from sentence-transformers::

    # from sentence_transformers import SentenceTransformer
    from encc import SentenceTransformer
    model = SentenceTransformer("minilm.encm")  # encc compile all-MiniLM-L6-v2 -o minilm.encm
    embeddings = model.encode(sentences)       # same arguments, same shapes
    scores = model.similarity(embeddings, embeddings)

encc.CrossEncoder does the same for rerankers (predict, rank); encc.Model is the lower-level handle.

The runtime (libencrt) is linked into the extension: no MLIR, no PyTorch; CUDA is used when the
artifact carries a CUDA plan and a GPU is present (``device="auto"``).
"""
from __future__ import annotations

import contextlib
import operator
import os
import shutil
import subprocess
import sys
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar, Union

import numpy as np
import numpy.typing as npt

from ._encc import _Model, _set_error_classes, runtime_version

__all__ = ["Model", "SentenceTransformer", "CrossEncoder", "SparseEncoder", "quantize_embeddings", "compile", "Error", "InvalidArgumentError", "IOError", "InvalidArtifactError",
           "UnsupportedError", "OutOfMemoryError", "InternalError", "runtime_version", "__version__"]
__version__ = "0.1.0"


class Error(RuntimeError):
    """A runtime error; the message is libencrt's one line. Subclasses by status code."""


class InvalidArgumentError(Error, ValueError):
    """ENCRT_INVALID_ARGUMENT: an input the runtime refuses (too long, ids out of range...)."""


class IOError(Error, OSError):  # noqa: A001 - the status code's name
    """ENCRT_IO_ERROR: the artifact could not be read."""


class InvalidArtifactError(Error):
    """ENCRT_INVALID_ARTIFACT: a damaged, untrusted or incompatible .encm file."""


class UnsupportedError(Error):
    """ENCRT_UNSUPPORTED: e.g. device="cuda" without a GPU, or a CPU the artifact has no code for."""


class OutOfMemoryError(Error, MemoryError):
    """ENCRT_OUT_OF_MEMORY."""


class InternalError(Error):
    """ENCRT_INTERNAL: a bug in encc; please report it."""


# The runtime's messages name C API calls and fields; in Python they name what a Python user changes.
_C_API_WORDS = (
    ("; raise it in encrt_model_options)", "; pass max_text_bytes=N when loading: encc.Model(..., max_text_bytes=N))"),
    ("(use encrt_session_score_pairs)", "(load it with encc.CrossEncoder, or call Model.predict)"),
    ("(use encrt_session_run for hidden states)",
     "(Model.run or encode(output_value=\"token_embeddings\") give the token states)"),
)


@contextlib.contextmanager
def _python_words() -> Any:
    """Re-raises a runtime error in Python's terms (see _C_API_WORDS)."""
    try:
        yield
    except Error as e:
        message = str(e)
        for c_words, py_words in _C_API_WORDS:
            message = message.replace(c_words, py_words)
        if message == str(e):
            raise
        raise type(e)(message) from None


_set_error_classes({1: InvalidArgumentError, 2: IOError, 3: InvalidArtifactError, 4: UnsupportedError,
                    5: OutOfMemoryError, 6: InternalError})


Texts = Union[str, Sequence[str]]
Pair = Union[tuple[str, str], Sequence[str]]
FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int32]
_M = TypeVar("_M", bound="Model")


def _encode(s: object, what: str) -> bytes:
    """`s` (a str) as UTF-8; a TypeError or ValueError naming `what` otherwise."""
    if not isinstance(s, str):
        raise TypeError(f"{what} must be a str, not {type(s).__name__}")
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate: not text any tokenizer can take
        raise ValueError(f"{what} is not valid Unicode: {e.reason} at index {e.start} ({s[e.start]!r})") from None


def _texts(sentences: object, what: str = "sentences") -> list[bytes]:
    """A list of UTF-8 byte strings from a str or a list of str (checked before the runtime)."""
    if isinstance(sentences, str):
        sentences = [sentences]
    if (sentences is None or isinstance(sentences, (bytes, bytearray, dict, set, frozenset))
            or not hasattr(sentences, "__iter__")):
        raise TypeError(f"{what} must be a str or a list of str, not {type(sentences).__name__}")
    assert isinstance(sentences, Iterable)
    return [_encode(s, f"{what}[{i}]") for i, s in enumerate(sentences)]


def _threshold(threshold: Any) -> float:
    """A sparse threshold: a finite number >= 0 (ValueError otherwise)."""
    try:
        limit = float(threshold) if not isinstance(threshold, (bool, str, bytes)) else -1.0
    except (TypeError, ValueError):
        limit = -1.0
    if not 0 <= limit < np.inf:
        raise ValueError(f"threshold must be a finite number >= 0, not {threshold!r}")
    return limit


def _positive_int(value: object, what: str = "batch_size") -> int:
    """An int >= 1 from any integer type (numpy's included), else a ValueError naming `what`."""
    try:
        n = operator.index(value) if not isinstance(value, bool) else 0  # type: ignore[arg-type]
    except TypeError:
        n = 0
    if n < 1:
        raise ValueError(f"{what} must be an int >= 1, not {value!r}")
    return n


class _TextProgress:
    """A progress bar on stderr for when tqdm is not installed."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self._draw()

    def _draw(self) -> None:
        width = 30
        filled = width * self.done // max(self.total, 1)
        sys.stderr.write(f"\rBatches: [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}")
        sys.stderr.flush()

    def update(self, n: int) -> None:
        self.done += n
        self._draw()

    def close(self) -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()


def _progress(total: int, show: Optional[bool]) -> Any:
    if not show:
        return None
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return _TextProgress(total)
    return tqdm(total=total, desc="Batches", unit="batch")


class Model:
    """A compiled encoder (``.encm``), loaded and verified by libencrt.

    Args:
        path: the artifact ``encc compile`` wrote.
        threads: worker threads of the model's pool (0: all cores).
        device: "auto" (CUDA when the artifact has a CUDA plan and a GPU is present), "cpu",
            "cuda" or "cuda:N".
        cpu_target: force a CPU code object (e.g. "cpu-x86-64-v3"); None: the best this CPU runs.
        require_sha256, trusted_public_key, signature_path: the trust options of docs/security.md.
        max_text_bytes: texts longer than this many bytes are refused (0: the runtime's 1 MiB).
        max_seq_length: texts are cut to this many tokens (0: the compiled maximum, which it may not exceed).

    Thread-safe: every calling thread gets its own runtime session, so a ThreadPoolExecutor over
    one Model runs concurrently. Use as a context manager or call close().
    """

    def __init__(self, path: Union[str, os.PathLike[str]], *, threads: int = 0, device: str = "auto",
                 cpu_target: Optional[str] = None, require_sha256: Optional[str] = None,
                 trusted_public_key: Optional[str] = None, signature_path: Optional[str] = None,
                 max_text_bytes: int = 0, max_seq_length: int = 0) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
            raise ValueError(f"threads must be an int >= 0, not {threads!r}")
        if not isinstance(device, str):
            raise TypeError(f"device must be a str, not {type(device).__name__}")
        self.path = os.fspath(path)
        if not isinstance(max_text_bytes, int) or isinstance(max_text_bytes, bool) or max_text_bytes < 0:
            raise ValueError(f"max_text_bytes must be an int >= 0 (0: the runtime's 1 MiB), not {max_text_bytes!r}")
        if not isinstance(max_seq_length, int) or isinstance(max_seq_length, bool) or max_seq_length < 0:
            raise ValueError(f"max_seq_length must be an int >= 0 (0: the compiled maximum), not {max_seq_length!r}")
        self._load = (threads, device, cpu_target, require_sha256, trusted_public_key, signature_path,
                      max_text_bytes)
        self._model = _Model(self.path, *self._load, max_seq_length)
        self._info = self._model.info()
        self._max_seq_length = max_seq_length or int(self._info["max_seq"])

    # --- life cycle ---
    def close(self) -> None:
        """Releases the model and its sessions; later calls raise InvalidArgumentError."""
        self._model.close()

    def __enter__(self: _M) -> _M:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        i = self._info
        state = "closed" if self._model.closed else f"{i['device'] or i['cpu_target']}"
        return (f"encc.Model({self.path!r}: {i['architecture']}, hidden {i['hidden_size']}, "
                f"{i['num_layers']} layers, max_seq {i['max_seq']}, pooling {i['pooling']}, {state})")

    @property
    def info(self) -> dict[str, Any]:
        """dict: architecture, hidden_size, embedding_dim (floats per embedding: hidden_size, or the width
        sentence-transformers' Dense modules project to; 0 without a pooled output), num_layers, num_heads,
        max_seq, vocab_size, pooling,
        normalize, has_pooled_output, cpu_target, device, num_steps, weight_bytes, random_weights,
        type_vocab_size, num_labels, score_activation, precision ("fp32", "bf16" or "int8": what
        the Linears compute in)."""
        return dict(self._model.info())

    @property
    def max_seq_length(self) -> int:
        """Texts are cut to this many tokens (special tokens included): the compiled maximum unless
        max_seq_length was given at load or set here."""
        return self._max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, value: int) -> None:
        """As sentence-transformers' setter: later texts are cut to `value` tokens (at most the compiled
        maximum, ``encc compile --max-seq``). The artifact is loaded again with that option: not while other
        threads use this model."""
        value = _positive_int(value, "max_seq_length")
        replacement = _Model(self.path, *self._load, value)
        self._model.close()
        self._model = replacement
        self._max_seq_length = value

    @property
    def prompts(self) -> dict[str, str]:
        """dict: the model's prompts (name -> text), as SentenceTransformer.prompts: the
        config_sentence_transformers.json the model was compiled from."""
        return {name: text for name, text, _ in self._model.prompts()}

    @property
    def roles(self) -> list[str]:
        """list: a ColBERT model's roles ("query", "document": how encode_outputs(role=...) tokenises a
        text); empty for other models."""
        return list(self._model.roles())

    @property
    def default_prompt_name(self) -> Optional[str]:
        """The prompt encode() uses when given none (SentenceTransformer.default_prompt_name), or None."""
        return next((name for name, _, default in self._model.prompts() if default), None)

    def get_sentence_embedding_dimension(self) -> int:
        return int(self._info["embedding_dim"])

    def get_embedding_dimension(self) -> int:
        """sentence-transformers 6's name for get_sentence_embedding_dimension."""
        return self.get_sentence_embedding_dimension()

    # --- text ---
    def tokenize(self, texts: Texts) -> tuple[IntArray, IntArray]:
        """Token ids of each text (special tokens included, truncated to max_seq).

        Returns (ids, lengths): ids int32 [N, longest] right-padded with 0, lengths int32 [N].
        """
        with _python_words():
            rows = self._model.tokenize(_texts(texts, "texts"))
        lengths = np.array([len(r) for r in rows], dtype=np.int32)
        ids = np.zeros((len(rows), int(lengths.max()) if len(rows) else 0), dtype=np.int32)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = r
        return ids, lengths

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        """The text of token ids as the model's tokenizer decodes them (the tokenizers library's decode,
        the tokenizer.json decoder: WordPiece's "##" joins, byte-level BPE's bytes, SentencePiece's
        "\u2581"; transformers' tokenizer.decode may clean up spaces further).

        ids: a sequence of ints or a 1-D integer array (one row of tokenize()'s ids, up to its
        length). skip_special_tokens: leave out [CLS], <s> and the other special tokens.
        Raises InvalidArgumentError for an id the tokenizer has no string for.
        """
        row = np.asarray(ids)
        if row.ndim != 1 or (row.size and not np.issubdtype(row.dtype, np.integer)):
            raise ValueError("ids must be a 1-D sequence of integers")
        if row.size and (row.min() < -2**31 or row.max() >= 2**31):
            raise ValueError("ids must fit in int32")
        with _python_words():
            return self._model.decode([int(i) for i in row], bool(skip_special_tokens))

    def predict(self, pairs: Union[Pair, Sequence[Pair]], *, batch_size: int = 32,
                truncation: str = "longest_first") -> Any:
        """A cross-encoder's scores of text pairs, as sentence-transformers' CrossEncoder.predict
        gives them (the model's activation applied: sigmoid for one label).

        pairs: a (str, str) pair (result: a float, or a 1-D array for several labels) or a list of
            them (result: float32 [N] for one label, [N, num_labels] for more).
        batch_size: pairs per runtime call. truncation: as tokenize_pairs.
        Raises UnsupportedError for an embedding model (info["num_labels"] == 0).
        """
        modes = {"longest_first": 0, "only_first": 1, "only_second": 2}
        if truncation not in modes:
            raise ValueError(f"truncation must be one of {sorted(modes)}, not {truncation!r}")
        batch_size = _positive_int(batch_size)
        if self._info["num_labels"] == 0:
            self._model.score_pairs([], [], 0)  # raises the runtime's UnsupportedError, naming the file
        single = isinstance(pairs, tuple) and len(pairs) == 2 and all(isinstance(t, str) for t in pairs)
        a, b = self._pair_texts([pairs] if single else pairs)
        labels = max(1, self._info["num_labels"])
        out = np.zeros((len(a), labels), dtype=np.float32)
        with _python_words():
            for start in range(0, len(a), batch_size):
                out[start:start + batch_size] = self._model.score_pairs(a[start:start + batch_size],
                                                                         b[start:start + batch_size],
                                                                         modes[truncation])
        if labels == 1:
            out = out[:, 0]
        return out[0] if single else out

    @staticmethod
    def _pairs(pairs: object) -> list[Any]:
        if isinstance(pairs, (str, bytes, dict, set)) or not hasattr(pairs, "__iter__"):
            raise TypeError("pairs must be a list of (str, str)")
        assert isinstance(pairs, Iterable)
        out = list(pairs)
        for i, p in enumerate(out):
            if not (isinstance(p, (tuple, list)) and len(p) == 2):
                raise TypeError(f"pairs[{i}] must be a (str, str) pair")
        return out

    @classmethod
    def _pair_texts(cls, pairs: object) -> tuple[list[bytes], list[bytes]]:
        """The first and the second texts of the pairs as UTF-8, errors naming pairs[i][k]."""
        checked = cls._pairs(pairs)
        return ([_encode(p[0], f"pairs[{i}][0]") for i, p in enumerate(checked)],
                [_encode(p[1], f"pairs[{i}][1]") for i, p in enumerate(checked)])

    def tokenize_pairs(self, pairs: Sequence[Pair], *,
                       truncation: str = "longest_first") -> tuple[IntArray, IntArray, IntArray]:
        """Token ids of text pairs (query, document) in the model's pair template ([CLS] a [SEP] b
        [SEP], <s> a </s></s> b </s>), as the `tokenizers` library makes them.

        pairs: a list of (str, str). truncation: "longest_first", "only_first" or "only_second"
        (how a pair longer than max_seq is cut; only_* raise InvalidArgumentError when that text
        is too short). Returns (ids, type_ids, lengths): int32, ids and type_ids right-padded with 0.
        """
        modes = {"longest_first": 0, "only_first": 1, "only_second": 2}
        if truncation not in modes:
            raise ValueError(f"truncation must be one of {sorted(modes)}, not {truncation!r}")
        a, b = self._pair_texts(pairs)
        with _python_words():
            rows = self._model.tokenize_pairs(a, b, modes[truncation])
        ids, lengths = self._pad([r[0] for r in rows]) if rows else (np.zeros((0, 0), np.int32),
                                                                     np.zeros(0, np.int32))
        types = np.zeros_like(ids)
        for i, (_, t) in enumerate(rows):
            types[i, :len(t)] = t
        return ids, types, lengths

    def encode(self, sentences: Texts, *, prompt_name: Optional[str] = None, prompt: Optional[str] = None,
               batch_size: int = 32, normalize_embeddings: Optional[bool] = None,
               show_progress_bar: Optional[bool] = None, convert_to_numpy: bool = True,
               output_value: str = "sentence_embedding", is_query: Optional[bool] = None) -> Any:
        """Embeddings of `sentences`, as SentenceTransformer.encode gives them.

        sentences: a str (result 1-D) or a list of str (result 2-D float32 [N, hidden]).
        prompt_name: one of self.prompts (e.g. "query"), whose text goes before each sentence;
            None: the model's default prompt, if it has one.
        prompt: a text to put before each sentence instead (it wins over prompt_name).
        batch_size: texts per runtime call; texts are sorted by length so batches pack well, and
            results come back in input order.
        normalize_embeddings: True L2-normalises; None/False keep the model's own setting (a
            model compiled with normalisation always returns unit vectors).
        show_progress_bar: True shows a bar over the batches (tqdm's when installed, else a plain one
            on stderr).
        convert_to_numpy: False returns a list of 1-D arrays instead of one 2-D array.
        output_value: "sentence_embedding" or "token_embeddings" (a list of [tokens, hidden]
            arrays, special tokens included, padding excluded).
        is_query: a ColBERT model only (PyLate's ColBERT.encode): True encodes queries, False documents;
            the result is each sentence's float32 [vectors, dim] array (a list; one array for a str).
        """
        if self.roles:
            if is_query is None:
                raise ValueError(f"a ColBERT model encodes a sentence as one of its roles {self.roles}: pass "
                                 f"is_query=True or False (or encode_outputs(role=...))")
            vectors = self.encode_outputs(sentences, role="query" if is_query else "document", prompt_name=prompt_name,
                                          prompt=prompt, batch_size=batch_size, show_progress_bar=show_progress_bar)
            return vectors["multi_vector"]
        if is_query is not None:
            raise ValueError("is_query applies to a ColBERT model; this one has no roles")
        single = isinstance(sentences, str)
        texts = self._prompted(_texts(sentences), prompt_name, prompt)
        batch_size = _positive_int(batch_size)
        if output_value not in ("sentence_embedding", "token_embeddings"):
            raise ValueError(f"output_value must be 'sentence_embedding' or 'token_embeddings', "
                             f"not {output_value!r}")
        run: Callable[[list[bytes]], Iterable[Any]] = (
            self._token_embeddings if output_value == "token_embeddings" else self._model.embed)
        results = self._in_batches(texts, batch_size, show_progress_bar, run)
        if output_value == "token_embeddings":
            return results[0] if single else results
        if normalize_embeddings:
            results = [r / max(float(np.linalg.norm(r)), 1e-12) for r in results]
        if single:
            return np.asarray(results[0], dtype=np.float32)
        if not convert_to_numpy:
            return [np.asarray(r, dtype=np.float32) for r in results]
        if not results:
            return np.zeros((0, self._info["embedding_dim"]), dtype=np.float32)
        return np.stack(results).astype(np.float32, copy=False)

    def encode_sparse(self, sentences: Texts, *, prompt_name: Optional[str] = None, prompt: Optional[str] = None,
                      batch_size: int = 32, max_active_dims: Optional[int] = None, threshold: float = 0.0,
                      show_progress_bar: Optional[bool] = None) -> Any:
        """Sparse embeddings: for each sentence, (token ids int32, weights float32), heaviest first (equal
        weights: the lower id first). A SPLADE model's (pooling "splade") are its vocabulary-wide weights; a
        model with a lexical-weights head's (bge-m3) are FlagEmbedding's lexical weights: per token id, the
        largest positive weight of the sentence's tokens, special tokens left out.

        max_active_dims: keep at most this many entries per sentence (sentence-transformers' SparseEncoder
            argument); None: every non-zero one.
        threshold: keep only weights above it (>= 0).
        prompt_name, prompt, batch_size, show_progress_bar: as encode(). One str: one pair; a list: a list.
        """
        if not self._info.get("sparse"):
            raise ValueError(f"encode_sparse needs a SPLADE model or a lexical-weights head (bge-m3); this one "
                             f"pools by {self._info['pooling']!r} and has none (use encode)")
        single = isinstance(sentences, str)
        texts = self._prompted(_texts(sentences), prompt_name, prompt)
        batch_size = _positive_int(batch_size)
        top_k = self._sparse_top_k(max_active_dims)
        limit = _threshold(threshold)
        def run(batch: list[bytes]) -> list[tuple[IntArray, FloatArray]]:
            counts, ids, weights = self._model.embed_sparse(batch, top_k, limit)
            return [(ids[k, :counts[k]].copy(), weights[k, :counts[k]].copy()) for k in range(len(batch))]

        results = self._in_batches(texts, batch_size, show_progress_bar, run)
        return results[0] if single else results

    def encode_outputs(self, sentences: Texts, *, dense: Optional[bool] = None, sparse: Optional[bool] = None,
                       multi_vector: Optional[bool] = None, prompt_name: Optional[str] = None,
                       prompt: Optional[str] = None,
                       batch_size: int = 32, max_active_dims: Optional[int] = None, threshold: float = 0.0,
                       show_progress_bar: Optional[bool] = None, role: Optional[str] = None) -> dict[str, Any]:
        """Several outputs of one pass per batch (bge-m3: its dense, sparse and ColBERT outputs), as a dict
        with the keys asked for:

        "dense": float32 [N, embedding_dim], the pooled embeddings (encode's; not a SPLADE model's);
        "sparse": per sentence (token ids int32, weights float32), heaviest first, as encode_sparse gives them
            (max_active_dims, threshold as there);
        "multi_vector": per sentence a float32 [tokens, multivector_dim] array of its token vectors (bge-m3:
            every token's but the first, L2-normalised; FlagEmbedding's colbert_vecs).

        None (the default) asks for an output when the model has it; True for one it lacks is a ValueError.
        One str: the values for it alone, not lists. prompt_name, prompt, batch_size, show_progress_bar: as
        encode(). role: one of self.roles for a ColBERT model ("query": a [Q] marker, padded with [MASK] to the
        query length; "document": a [D] marker, punctuation's vectors left out), which needs one.
        """
        roles = self.roles
        if roles and role not in roles:
            raise ValueError(f"a ColBERT model encodes a sentence as one of its roles {roles}: pass role="
                             f"{'one of them' if role is None else 'one of them, not ' + repr(role)}")
        if role is not None and not roles:
            raise ValueError("role applies to a ColBERT model; this one has no roles")
        has_dense = self._info["pooling"] != "splade" and bool(self._info["has_pooled_output"])
        has_sparse, has_multi = bool(self._info.get("sparse")), bool(self._info.get("multivector_dim"))
        if sparse and not has_sparse:
            raise ValueError("the model has no sparse output (pass sparse=False)")
        if multi_vector and not has_multi:
            raise ValueError("the model has no multi-vector output (pass multi_vector=False)")
        if dense and not has_dense:
            raise ValueError("a SPLADE model's embedding is its sparse output (pass dense=False)"
                             if self._info["pooling"] == "splade" else
                             "the model has no dense output (pass dense=False)")
        dense = has_dense if dense is None else dense
        sparse = has_sparse if sparse is None else sparse
        multi_vector = has_multi if multi_vector is None else multi_vector
        single = isinstance(sentences, str)
        texts = self._prompted(_texts(sentences), prompt_name, prompt)
        batch_size = _positive_int(batch_size)
        top_k = self._sparse_top_k(max_active_dims) if sparse else 0
        limit = _threshold(threshold)

        def run(batch: list[bytes]) -> list[dict[str, Any]]:
            d, counts, ids, weights, rows, vectors = self._model.encode_outputs(batch, dense, top_k, limit,
                                                                                multi_vector, role)
            out: list[dict[str, Any]] = [{} for _ in batch]
            at = 0
            for k, o in enumerate(out):
                if d is not None:
                    o["dense"] = d[k].copy()
                if counts is not None and ids is not None and weights is not None:
                    o["sparse"] = (ids[k, :counts[k]].copy(), weights[k, :counts[k]].copy())
                if rows is not None and vectors is not None:
                    o["multi_vector"] = vectors[at:at + int(rows[k])].copy()
                    at += int(rows[k])
            return out

        results = self._in_batches(texts, batch_size, show_progress_bar, run)
        if single:
            first: dict[str, Any] = results[0]
            return first
        merged: dict[str, Any] = {}
        if dense:
            merged["dense"] = (np.stack([r["dense"] for r in results]) if results
                               else np.zeros((0, self._info["embedding_dim"]), dtype=np.float32))
        if sparse:
            merged["sparse"] = [r["sparse"] for r in results]
        if multi_vector:
            merged["multi_vector"] = [r["multi_vector"] for r in results]
        return merged

    def _sparse_top_k(self, max_active_dims: Optional[int]) -> int:
        """Entries kept per text: max_active_dims, at most what a text can have (SPLADE: the vocabulary;
        lexical weights: one per token)."""
        most = int(self._info["vocab_size"])
        if self._info["pooling"] != "splade":
            most = min(most, int(self._info["max_seq"]))
        return most if max_active_dims is None else min(_positive_int(max_active_dims, "max_active_dims"), most)

    def _in_batches(self, texts: list[bytes], batch_size: int, show_progress_bar: Optional[bool],
                    run: Callable[[list[bytes]], Iterable[Any]]) -> list[Any]:
        """run() over batches of `texts`, longest first (batches pack well), its results back in input order."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        bar = _progress((len(texts) + batch_size - 1) // batch_size, show_progress_bar)
        results: list[Any] = [None] * len(texts)
        with _python_words():
            try:
                for start in range(0, len(texts), batch_size):
                    idx = order[start:start + batch_size]
                    for i, r in zip(idx, run([texts[i] for i in idx])):
                        results[i] = r
                    if bar is not None:
                        bar.update(1)
            finally:
                if bar is not None:
                    bar.close()
        return results

    def _prompted(self, texts: list[bytes], prompt_name: Optional[str], prompt: Optional[str]) -> list[bytes]:
        """`texts` with the prompt encode() puts before each."""
        prefix = self._prompt_text(prompt_name, prompt)
        return [prefix.encode() + t for t in texts] if prefix else texts

    def _prompt_text(self, prompt_name: Optional[str], prompt: Optional[str]) -> str:
        """What encode() puts before each text, as SentenceTransformer.encode resolves it."""
        if prompt is not None:
            if not isinstance(prompt, str):
                raise TypeError(f"prompt must be a str, not {type(prompt).__name__}")
            return prompt
        prompts = self.prompts
        if prompt_name is None:
            default = self.default_prompt_name
            return prompts[default] if default is not None else ""
        if prompt_name not in prompts:
            raise ValueError(f"Prompt name '{prompt_name}' not found in the configured prompts dictionary with keys "
                             f"{list(prompts)!r}.")
        return prompts[prompt_name]

    def _token_embeddings(self, batch: list[bytes]) -> list[FloatArray]:
        rows = self._model.tokenize(batch)
        ids, lengths = self._pad(rows)
        hidden, _ = self._model.run(ids, None, lengths, True, False)
        assert hidden is not None
        return [hidden[b, :lengths[b]].copy() for b in range(len(rows))]

    @staticmethod
    def _pad(rows: Sequence[Union[Sequence[int], IntArray]]) -> tuple[IntArray, IntArray]:
        lengths = np.array([len(r) for r in rows], dtype=np.int32)
        ids = np.zeros((len(rows), int(lengths.max())), dtype=np.int32)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = r
        return ids, lengths

    # --- ids ---
    def run(self, ids: Any, lengths: Any = None, type_ids: Any = None) -> FloatArray:
        """The last hidden state [B, S, hidden] (float32) of token ids.

        ids: a 2-D int array (int32 or int64, right-padded) with `lengths` [B] (default: every row
            full), or a list of lists (ragged allowed; lengths then come from the lists).
        type_ids: token type ids with the shape of ids as an array (each token's segment, as
            tokenize_pairs gives them); None: all 0.
        Rows past a sequence's length are 0.
        """
        if ids is None:
            raise TypeError("ids must be an array or a list of lists of ints, not None")
        if isinstance(ids, (list, tuple)):
            if lengths is not None:
                raise ValueError("lengths is given by the lists themselves; pass it only with an array")
            rows = []
            for i, r in enumerate(ids):
                if not isinstance(r, (list, tuple, np.ndarray)) or len(r) == 0:
                    raise ValueError(f"ids[{i}] must be a non-empty list of ints")
                rows.append(self._int32(np.asarray(r), f"ids[{i}]"))
            arr, lens = self._pad(rows)
        else:
            arr = self._int32(np.asarray(ids), "ids")
            if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
                raise ValueError(f"ids must be a non-empty 2-D array [batch, seq], not shape {arr.shape}")
            if lengths is None:
                lens = np.full(arr.shape[0], arr.shape[1], dtype=np.int32)
            else:
                lens = self._int32(np.asarray(lengths), "lengths")
                if lens.shape != (arr.shape[0],):
                    raise ValueError(f"lengths must have shape ({arr.shape[0]},), not {lens.shape}")
                if (lens < 1).any() or (lens > arr.shape[1]).any():
                    raise ValueError(f"lengths must lie in [1, {arr.shape[1]}]")
        types = None
        if type_ids is not None:
            types = self._int32(np.asarray(type_ids), "type_ids")
            if types.shape != arr.shape:
                raise ValueError(f"type_ids must have the shape of the padded ids {arr.shape}, not {types.shape}")
            types = np.ascontiguousarray(types)
        hidden, _ = self._model.run(np.ascontiguousarray(arr), types, np.ascontiguousarray(lens), True, False)
        assert hidden is not None
        return hidden

    @staticmethod
    def _int32(a: npt.NDArray[Any], what: str) -> IntArray:
        if a.dtype.kind not in "iu":
            raise TypeError(f"{what} must hold integers, not {a.dtype}")
        if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):
            raise ValueError(f"{what} holds values outside int32")
        return a.astype(np.int32, copy=False)


def compile(model_dir: Union[str, os.PathLike[str]], output: Union[str, os.PathLike[str]], *,  # noqa: A001
            encc: Optional[str] = None, quiet: bool = True, **options: Any) -> str:
    """Runs ``encc compile MODEL_DIR -o OUTPUT`` and returns OUTPUT.

    model_dir: a Hugging Face model folder or an ONNX file (``tokenizer="DIR"`` -> ``--tokenizer=DIR``
    names the folder with its config.json and tokenizer files). encc: the compiler's path (default: ``encc`` on PATH, or $ENCC). options become flags:
    ``quantize="int8"`` -> ``--quantize=int8``, ``max_seq=128`` -> ``--max-seq=128``, ``normalize=False``
    -> ``--no-normalize``, ``cpu=["x86-64-v4", "x86-64-v3"]`` -> ``--cpu=x86-64-v4,x86-64-v3``.
    Raises FileNotFoundError when no compiler is found, Error with its message when it fails.
    """
    exe = encc or os.environ.get("ENCC") or shutil.which("encc")
    if not exe or not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise FileNotFoundError("the encc compiler was not found (install encc, put it on PATH, or pass "
                                "encc=PATH / set $ENCC); the Python package holds only the runtime")
    cmd = [exe, "compile", os.fspath(model_dir), "-o", os.fspath(output)]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            cmd.append(flag)
        elif value is False:
            cmd.append("--no-" + key.replace("_", "-"))
        elif isinstance(value, (list, tuple)):
            cmd.append(f"{flag}={','.join(map(str, value))}")
        elif value is not None:
            cmd.append(f"{flag}={value}")
    if quiet:
        cmd.append("-q")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise Error(proc.stderr.strip() or f"encc compile exited with {proc.returncode}")
    return os.fspath(output)


from ._sentence_transformers import CrossEncoder, SentenceTransformer, SparseEncoder, quantize_embeddings  # noqa: E402
