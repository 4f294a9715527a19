"""`read_model`: the one reader for JSON and YAML files validated by a pydantic model.

Reports, baselines, comparison files and configs are pydantic models on
disk. Reading one can fail in five ways — the file is missing or unreadable,
it is not UTF-8, it is not JSON/YAML, a key is repeated (both parsers would
silently keep the last), or it does not fit the model — and each used to be
caught, and worded, by every loader for itself. Here every failure becomes
one error (`InputError` by default, `ConfigError` for configuration files)
that names the path and, where there is one, the line or the field of the
first problem.

YAML is read with a safe loader (no Python objects). Both formats are held
to the bounds of `rankproof._limits` (``_bounds``): nesting depth, the nodes
YAML aliases expand to (a "billion laughs" is refused before anything walks
it) and integer length; a refusal names the field.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any, TypeVar

import rankproof._limits as _limits
from rankproof._errors import InputError, RankproofError
from rankproof._io import PathLike
from rankproof.data._bounds import (
    YamlBoundError,
    cut,
    json_loads,
    json_problem,
    load_yaml,
    parse_int,
)
from rankproof.data._jsonl import json_error
from rankproof.data._text import Input

M = TypeVar("M")

#: The most nodes a YAML document may expand to once its aliases are followed
#: (`rankproof._limits.MAX_YAML_NODES`, kept here under its old name).
MAX_YAML_NODES = _limits.MAX_YAML_NODES


class _Problem(Exception):
    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.field = field


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Problem(f"duplicate key {_limits.shown(key)}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise _Problem(f"invalid JSON: {name} is not valid JSON")


def _load_json(text: str, finite: bool = False) -> Any:
    try:
        if finite:
            value = json.loads(text, parse_int=parse_int, object_pairs_hook=_pairs_hook,
                               parse_constant=_no_constant)
        else:
            value = json_loads(text, pairs_hook=_pairs_hook)
    except json.JSONDecodeError as exc:
        err = json_error(exc, None)
        raise _Problem(err.reason, exc.lineno) from None
    except RecursionError:
        raise _Problem("invalid JSON: nested too deeply") from None
    problem = json_problem(value)
    if problem is not None:
        raise _Problem(problem[0], field=problem[1])
    return value


class _Loader:
    """Built on first use: PyYAML is imported only by readers of YAML."""

    cls: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls.cls is None:
            import yaml

            class Loader(yaml.SafeLoader):
                def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
                    seen: set[Any] = set()
                    for key_node, _ in node.value:
                        key = self.construct_object(key_node, deep=True)
                        if key in seen:
                            raise _Problem(f"duplicate key {_limits.shown(key)}",
                                           key_node.start_mark.line + 1)
                        seen.add(key)
                    return super().construct_mapping(node, deep=deep)

            cls.cls = Loader
        return cls.cls


def _load_yaml(text: str) -> Any:
    import yaml

    try:
        return load_yaml(text, _Loader.get())[0]
    except YamlBoundError as exc:
        raise _Problem(exc.message, exc.line, exc.field) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise _Problem(f"invalid YAML: {exc.problem}",
                       None if mark is None else mark.line + 1) from None
    except yaml.YAMLError as exc:
        raise _Problem(f"invalid YAML: {exc}") from None


def _is_yaml(label: str) -> bool:
    name = PurePath(label).name.lower().removesuffix(".gz")
    return name.endswith((".yaml", ".yml"))


def _failer(label: str, error: type[RankproofError]) -> Any:
    def fail(message: str, line: int | None = None, field: str | None = None
             ) -> RankproofError:
        if issubclass(error, InputError):
            return error(message, path=label, line=line, field=field)
        where = f"{label}, line {line}" if line is not None else label
        at = f"field '{field}': " if field else ""
        return error(f"{where}: {at}{message}")

    return fail


def parse_document(
    text: str | bytes,
    label: str,
    *,
    what: str = "document",
    yaml: bool = False,
    finite: bool = False,
    error: type[RankproofError] = InputError,
) -> Any:
    """The parsed content of JSON (or YAML) already in memory, held to the same bounds.

    For what rankproof reads from elsewhere than a file path it opens itself
    (a server's reply, a cache entry read as bytes): nesting depth, integer
    length, duplicate keys and YAML's alias expansion are bounded as in
    `read_document`, and every failure is one ``error`` naming ``label`` —
    never a ``RecursionError`` (exit 3) from ``json.loads`` on a deep reply.
    ``finite=True`` also refuses ``NaN``/``Infinity`` (not JSON, though
    Python's parser takes them), as a reply from a model server must.
    """
    fail = _failer(label, error)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(f"cannot read the {what}: not UTF-8 (byte {exc.start})") from None
    try:
        return _load_yaml(text) if yaml else _load_json(text, finite)
    except _Problem as exc:
        raise fail(f"cannot read the {what}: {exc.message}", exc.line, exc.field) from None


def read_document(
    path: PathLike | Input,
    *,
    what: str = "file",
    error: type[RankproofError] = InputError,
) -> Any:
    """The parsed content of a JSON (or, for ``.yaml``/``.yml``, YAML) file, unvalidated.

    For callers that decide what a document is from its content (``kind``
    fields) before validating it; failures are those of `read_model`.
    """
    label = path.label if isinstance(path, Input) else str(path)
    fail = _failer(label, error)
    try:
        src = Input.open(path)
        text = src.text()
    except InputError as exc:
        if exc.reason == "no such file":
            raise fail(f"{what} not found") from None
        raise fail(f"cannot read the {what}: {exc.reason}", exc.line) from None
    try:
        return _load_yaml(text) if _is_yaml(label) else _load_json(text)
    except _Problem as exc:
        raise fail(f"cannot read the {what}: {exc.message}", exc.line, exc.field) from None


def read_model(
    path: PathLike | Input,
    model: type[M],
    *,
    what: str = "file",
    kind: str | None = None,
    error: type[RankproofError] = InputError,
) -> M:
    """Read ``path`` (JSON, or YAML for ``.yaml``/``.yml``) and validate it as ``model``.

    Every failure raises ``error`` (`InputError`, or `ConfigError` for
    configuration files) naming the path:

    * ``"{what} not found"`` / ``"cannot read the {what}: permission denied"``;
    * ``"cannot read the {what}: invalid JSON: ... "`` (with the line), and the
      same for invalid UTF-8, invalid YAML and a repeated key;
    * ``"not a {kind} (N problems; first: field.path: message)"`` when the
      content does not fit the model (``kind`` defaults to ``valid {what}``).

    ``model`` is a pydantic model class (anything with ``model_validate``).
    """
    label = path.label if isinstance(path, Input) else str(path)
    raw = read_document(path, what=what, error=error)
    return validate_model(raw, model, label, what=what, kind=kind, error=error)


def validate_model(
    raw: Any,
    model: type[M],
    label: str,
    *,
    what: str = "file",
    kind: str | None = None,
    error: type[RankproofError] = InputError,
) -> M:
    """Validate an already parsed document as ``model``; failures as in `read_model`."""
    from pydantic import ValidationError

    try:
        return model.model_validate(raw)  # type: ignore[attr-defined, no-any-return]
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = cut(".".join(str(x) for x in first["loc"])) or "(top level)"
        count = exc.error_count()
        problems = "1 problem" if count == 1 else f"{count} problems"
        raise _failer(label, error)(
            f"not a {kind or 'valid ' + what} ({problems}; first: {loc}: {first['msg']})"
        ) from None
