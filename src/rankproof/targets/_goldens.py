"""Golden sets: the hand-written cases a gate evaluates, read from JSONL, YAML or CSV.

One loader per file suffix, kept in a registry so that a team can add its
own format with `register_loader` without touching rankproof. Whatever the
format, the same rules hold, because a gate is only as trustworthy as its
cases: zero cases, a duplicate id or a malformed row is an `InputError` that
names the file, the line and the field — never a case silently skipped.

Row keys (JSONL objects, YAML mappings): ``id``, ``query`` (required),
``relevant`` (a list of document ids) *or* ``relevance`` (a ``{doc: grade}``
map), ``tags`` (a list), ``meta`` (a mapping). CSV columns: ``id``,
``query``, and optionally ``relevant`` and ``tags``, each a ``;``-separated
list (an empty ``relevant`` cell means no judgments). A case without
judgments loads, with ``case.judged`` False.

`load_goldens` returns a `GoldenSet`: a tuple of cases in file order (so
everything that takes a tuple of cases takes it) that can also look a case
up by id (`GoldenSet.get`) and list the ids (`GoldenSet.ids`, what a checks
file's ``known_case_ids`` wants).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeAlias

import yaml

import rankproof._limits as _limits
from rankproof._errors import InputError
from rankproof.data import Input, YamlBoundError, load_yaml, read_jsonl
from rankproof.targets._case import Case

Loader: TypeAlias = Callable[[Path], Iterable[Case | Mapping[str, Any]]]
"""A custom loader: ``path -> iterable of Case objects or row mappings``."""

# (line or None, case) per row, in file order.
_Located: TypeAlias = list[tuple[int | None, Case]]
_Builtin: TypeAlias = Callable[[Path, str], _Located]

_BUILTIN: dict[str, _Builtin] = {}
_CUSTOM: dict[str, Loader] = {}


class GoldenSet(tuple[Case, ...]):
    """The cases of a golden set, in file order, with lookup by id.

    A tuple subclass rather than a new container: a golden set *is* an
    ordered, immutable sequence of cases, and every function that takes a
    tuple of cases (`rankproof.targets.run`, `as_cases`) keeps taking it.
    Ids are unique (`load_goldens` refuses a repeat), so `get` finds at most
    one case; it scans (a golden set is hand-written, tens to thousands of
    cases), which keeps the type a plain tuple with no index to go stale.
    """

    __slots__ = ()

    def ids(self) -> tuple[str, ...]:
        """The case ids in file order (e.g. for ``load_checks(known_case_ids=...)``)."""
        return tuple(c.id for c in self)

    def get(self, case_id: str) -> Case:
        """The case with id ``case_id``; an unknown id raises `InputError` naming it.

        Raising, rather than returning None as `dict.get` does, is deliberate:
        a golden set is read to be evaluated, and a None handed to a target
        would fail later, further from the typo that caused it.
        """
        for case in self:
            if case.id == case_id:
                return case
        known = self.ids()
        shown_ = ", ".join(_limits.shown(i) for i in known[:5]) + (" …" if len(known) > 5 else "")
        raise InputError(f"the golden set has no case {_limits.shown(case_id)} "
                         f"({len(known)} case(s): {shown_})", field="id")


def _field(value: object) -> str:
    """A key or message from the file as a field name, cut to `MAX_SHOWN_CHARS`."""
    text = str(value)
    cap = _limits.MAX_SHOWN_CHARS
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _norm_suffix(suffix: str) -> str:
    if not isinstance(suffix, str) or not suffix.strip(". ") or os.sep in suffix \
            or "/" in suffix:
        raise InputError(f"a loader suffix looks like '.tsv', got {suffix!r}", field="suffix")
    return "." + suffix.lower().lstrip(".")


def register_loader(suffix: str) -> Callable[[Loader], Loader]:
    """Register ``fn(path) -> Iterable[Case | Mapping]`` for files ending in ``suffix``.

    Used as a decorator::

        @register_loader(".tsv")
        def load_tsv(path):
            for line in path.read_text().splitlines():
                qid, query = line.split("\\t")
                yield {"id": qid, "query": query}

    Mappings are validated like JSONL rows. Zero cases and duplicate ids are
    refused as for the built-in formats (errors name the case's position,
    since only the loader knows lines). The suffix is case-insensitive and
    may be compound (``.json.gz``). Registering a suffix that is already
    taken — by a built-in format or an earlier registration — raises
    `InputError`: two loaders silently competing for one suffix would make
    the same file load differently depending on import order.
    """
    key = _norm_suffix(suffix)
    if key in _BUILTIN or key in _CUSTOM:
        raise InputError(f"a golden-set loader for {key!r} is already registered",
                         field="suffix")

    def decorator(fn: Loader) -> Loader:
        if not callable(fn):
            raise TypeError(f"a loader must be callable, got {type(fn).__name__}")
        if key in _BUILTIN or key in _CUSTOM:
            raise InputError(f"a golden-set loader for {key!r} is already registered",
                             field="suffix")
        _CUSTOM[key] = fn
        return fn

    return decorator


def _unregister_loader(suffix: str) -> None:
    """Remove a custom loader (for tests); unknown suffixes are ignored."""
    _CUSTOM.pop(_norm_suffix(suffix), None)


def _known() -> list[str]:
    return sorted({*_BUILTIN, *_CUSTOM})


def load_goldens(path: str | os.PathLike[str]) -> GoldenSet:
    """Read a golden set; the format is chosen by the file's suffix.

    Built in: ``.jsonl``, ``.yaml``/``.yml``, ``.csv``; others through
    `register_loader`. Returns the cases in file order, as a `GoldenSet`
    (a tuple with ``get(id)`` and ``ids()``). Raises `InputError`
    (with path, line and field where known) for an unreadable file, an
    unknown suffix, a malformed row, a duplicate id, or zero cases.
    """
    p = Path(path)
    name = p.name.lower()
    # The longest registered suffix wins, so '.jsonl.gz' can differ from '.gz'.
    candidates = sorted({*_BUILTIN, *_CUSTOM}, key=len, reverse=True)
    suffix = next((s for s in candidates if name.endswith(s) and len(name) > len(s)), None)
    if suffix is None:
        found = "".join(p.suffixes) or "no suffix"
        raise InputError(
            f"unknown golden-set format ({found}); known suffixes: {', '.join(_known())}; "
            "register_loader(suffix) adds one", path=str(p))
    if suffix in _BUILTIN:
        located = _BUILTIN[suffix](p, _read_text(p))
        return _finish(p, located, by_line=True)
    try:
        items = list(_CUSTOM[suffix](p))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"the {suffix} loader raised {type(exc).__name__}: "
                         f"{_field(exc)}",
                         path=str(p)) from exc
    located = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, Case):
            located.append((i, item))
        else:
            located.append((i, _case(item, p, None, f"case #{i}: ")))
    return _finish(p, located, by_line=False)


def _finish(path: Path, located: _Located, *, by_line: bool) -> GoldenSet:
    if not located:
        raise InputError("the golden set has no cases; a gate over zero cases proves nothing",
                         path=str(path))
    first: dict[str, int | None] = {}
    for pos, case in located:
        if case.id in first:
            if by_line:
                raise InputError(
                    f"duplicate case id {_limits.shown(case.id)} (first on line "
                    f"{first[case.id]})",
                    path=str(path), line=pos, field="id")
            raise InputError(
                f"case #{pos}: duplicate case id {_limits.shown(case.id)} (first at case "
                f"#{first[case.id]})",
                path=str(path), field="id")
        first[case.id] = pos
    return GoldenSet(case for _, case in located)


def _read_text(path: Path) -> str:
    """The file's text through the project's one text reader (UTF-8, BOM, gzip by content)."""
    try:
        return Input.open(path).text()
    except InputError as exc:
        if exc.line is not None:  # invalid UTF-8: keep the reader's message and line
            raise
        raise InputError(f"cannot read the golden set: {exc.reason}", path=str(path)) from None


def _case(row: Any, path: Path, line: int | None, prefix: str = "",
          field_lines: Mapping[str, int] | None = None) -> Case:
    """Validate one row; re-raise `InputError` with the file's path and line."""
    try:
        return Case.from_dict(row)
    except InputError as exc:
        field = exc.field
        where = line
        if field_lines is not None and field is not None and field in field_lines:
            where = field_lines[field]
        raise InputError(prefix + exc.reason, path=str(path), line=where, field=field) from None


# -- JSONL ----------------------------------------------------------------------


def _load_jsonl(path: Path, text: str) -> _Located:
    src = Input.from_bytes(text.encode("utf-8"), str(path))
    return [(lineno, _case(row, path, lineno))
            for lineno, row in read_jsonl(src, allow_empty=True)]


# -- YAML -----------------------------------------------------------------------


def _load_yaml(path: Path, text: str) -> _Located:
    try:
        # One bounded parse: nesting, alias expansion and integer length are
        # refused (with the line) before anything is constructed.
        data, root = load_yaml(text)
    except YamlBoundError as exc:
        raise InputError(exc.message, path=str(path), line=exc.line, field=exc.field) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or str(exc)
        raise InputError(f"invalid YAML: {problem}", path=str(path),
                         line=mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", path=str(path)) from None
    if data is None:
        return []
    items_node: yaml.Node | None = root
    if isinstance(data, dict):
        unknown = [k for k in data if k != "cases"]
        if unknown:
            raise InputError(
                f"unknown top-level key {_limits.shown(unknown[0])}; expected a list of cases "
                "or a mapping with one key, 'cases'", path=str(path),
                line=_key_line(root, unknown[0]), field=_field(unknown[0]))
        if "cases" not in data:
            return []
        data = data["cases"]
        items_node = _value_node(root, "cases")
        if data is None:
            return []
    if not isinstance(data, list):
        line = items_node.start_mark.line + 1 if items_node is not None else None
        raise InputError(
            f"expected a list of cases (or a mapping with 'cases'), found {type(data).__name__}",
            path=str(path), line=line, field="cases")
    nodes = list(items_node.value) if isinstance(items_node, yaml.SequenceNode) else []
    out: _Located = []
    for i, row in enumerate(data):
        node = nodes[i] if len(nodes) == len(data) else None
        line = node.start_mark.line + 1 if node is not None else None
        prefix = "" if line is not None else f"case #{i + 1}: "
        field_lines: dict[str, int] = {}
        if isinstance(node, yaml.MappingNode):
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue  # a complex key; Case.from_dict refuses it as unknown
                key = key_node.value
                if key in field_lines:
                    raise InputError(f"key {_limits.shown(key)} appears twice in one case",
                                     path=str(path), line=key_node.start_mark.line + 1,
                                     field=_field(key))
                field_lines[key] = key_node.start_mark.line + 1
        if not isinstance(row, dict):
            raise InputError(f"{prefix}each case must be a mapping, found {type(row).__name__}",
                             path=str(path), line=line)
        out.append((line if line is not None else i + 1,
                    _case(row, path, line, prefix, field_lines)))
    return out


def _value_node(root: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if k.value == key:
                return v  # type: ignore[no-any-return]
    return None


def _key_line(root: yaml.Node | None, key: object) -> int | None:
    if isinstance(root, yaml.MappingNode):
        for k, _ in root.value:
            if k.value == key:
                return int(k.start_mark.line) + 1
    return None


# -- CSV ------------------------------------------------------------------------

_CSV_REQUIRED = ("id", "query")
_CSV_COLUMNS = ("id", "query", "relevant", "tags")


def _split_list(cell: str, path: Path, line: int, field: str) -> list[str]:
    if not cell.strip():
        return []
    items = [item.strip() for item in cell.split(";")]
    for i, item in enumerate(items, start=1):
        if not item:
            raise InputError(f"item {i} of the ';'-separated list {_limits.shown(cell)} is empty",
                             path=str(path), line=line, field=field)
    return items


def _load_csv(path: Path, text: str) -> _Located:
    # strict: a quote left open to the end of the file (or stray text after a
    # closing quote) is an error naming the line, not a field that silently
    # swallows every later row.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as exc:
        raise InputError(f"malformed CSV header: {exc}", path=str(path), line=1) from None
    header = [h.strip() for h in header]
    for col in header:
        if col not in _CSV_COLUMNS:
            raise InputError(f"unknown column {_limits.shown(col)}; columns are "
                             f"{', '.join(_CSV_COLUMNS)}", path=str(path), line=1,
                             field=_field(col))
    for col in _CSV_REQUIRED:
        if col not in header:
            raise InputError(f"missing required column {col!r}", path=str(path), line=1,
                             field=col)
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise InputError(f"column {_limits.shown(dup)} appears twice", path=str(path), line=1,
                         field=_field(dup))
    out: _Located = []
    end = reader.line_num
    while True:
        start = end + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", path=str(path), line=start) from None
        end = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields ({', '.join(header)}), "
                             f"found {len(row)}", path=str(path), line=start)
        cells = dict(zip(header, row, strict=True))
        record: dict[str, Any] = {"id": cells["id"].strip(), "query": cells["query"]}
        if "relevant" in cells and cells["relevant"].strip():
            record["relevant"] = _split_list(cells["relevant"], path, start, "relevant")
        if "tags" in cells:
            record["tags"] = _split_list(cells["tags"], path, start, "tags")
        out.append((start, _case(record, path, start)))
    return out


_BUILTIN.update({".jsonl": _load_jsonl, ".yaml": _load_yaml, ".yml": _load_yaml,
                 ".csv": _load_csv})
