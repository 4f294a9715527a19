"""Depth and size bounds shared by every JSON and YAML reader (see `rankproof._limits`).

A hostile or broken file can cost far more than its size: ``[[[[…]]]]`` ten
thousand levels deep overflows a recursive reader, a YAML "billion laughs"
expands a few hundred bytes through aliases into millions of nodes, and an
integer of thousands of digits is slow to convert (Python 3.11 refuses more
than 4,300 digits with a bare ``ValueError``). Each reader used to meet these
differently, or not at all; here they are checked once, the same way:

* JSON: :func:`json_loads` parses with :func:`parse_int` (an integer literal
  longer than `MAX_INT_DIGITS` becomes a `HugeInt` stand-in instead of a
  number) and :func:`json_problem` walks the parsed value, without
  recursion, for nesting deeper than `MAX_NESTING_DEPTH` and for stand-ins;
* YAML: :func:`load_yaml` composes with a composer that counts nesting as it
  goes (so a deep document is refused before Python's recursion limit, with
  the line), refuses integers of too many digits as they are composed, then
  measures what the aliases expand to (nodes and depth, cycles refused)
  before anything is constructed.

Every refusal names the field as a path (``meta.a[3].b``); readers turn it
into their own typed error (`InputError` or `ConfigError`) with the file and
line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import rankproof._limits as _limits
from rankproof._errors import ConfigError


class HugeInt:
    """What the JSON decoder holds for an integer literal longer than `MAX_INT_DIGITS`.

    Not a number, so no reader can take it for one by accident; every JSON
    reader refuses it by name (:func:`json_problem`, `json_rel`, `json_score`).
    """

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<an integer of {self.digits:,} digits>"

    def message(self, what: str = "the value") -> str:
        """The one wording of the refusal."""
        return (f"{what} is an integer of {self.digits:,} digits; an integer may have at most "
                f"{_limits.MAX_INT_DIGITS} (RANKPROOF_MAX_INT_DIGITS raises the bound)")


def parse_int(text: str) -> int | HugeInt:
    """``json.loads``' ``parse_int`` hook: ``int(text)``, or a `HugeInt` when too long."""
    digits = len(text) - (text[:1] == "-")
    if digits > _limits.MAX_INT_DIGITS:
        return HugeInt(digits)
    return int(text)


def field_path(parts: tuple[Any, ...]) -> str:
    """``("meta", "a", 3, "b")`` as ``meta.a[3].b``, cut to `MAX_SHOWN_CHARS`."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        if len(out) > _limits.MAX_SHOWN_CHARS:
            return out[: _limits.MAX_SHOWN_CHARS - 1] + "…"
    return out


def depth_message(depth: int | None = None) -> str:
    """The one wording of a nesting refusal."""
    return (f"nested deeper than {depth or _limits.MAX_NESTING_DEPTH} levels of arrays/objects "
            "(RANKPROOF_MAX_NESTING_DEPTH raises the bound)")


def json_problem(value: Any, prefix: tuple[Any, ...] = ()) -> tuple[str, str | None] | None:
    """``(message, field)`` of the first bound ``value`` breaks, else None.

    ``value`` is a parsed JSON value (dicts, lists, `HugeInt` stand-ins);
    ``prefix`` is the field path of ``value`` itself. The walk is iterative,
    so it cannot overflow the stack, and stops at the first problem.
    """
    limit = _limits.MAX_NESTING_DEPTH
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, prefix)]
    while stack:
        item, depth, path = stack.pop()
        kind = type(item)
        if kind is HugeInt:
            return item.message(), field_path(path) or None
        if kind is dict or kind is list or isinstance(item, dict | list):
            depth += 1
            if depth > limit:
                return depth_message(limit), field_path(path) or None
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if type(child) in _SCALARS:
                    continue
                stack.append((child, depth, (*path, key)))
    return None


_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_loads(text: str, *, pairs_hook: Any = None) -> Any:
    """``json.loads`` with the integer hook (and ``pairs_hook`` when given), unchecked.

    Callers run :func:`json_problem` on the result (or refuse `HugeInt` where they
    read the value); a `RecursionError` (thousands of levels) is theirs to report.
    """
    return json.loads(text, parse_int=parse_int, object_pairs_hook=pairs_hook)


# -- YAML -------------------------------------------------------------------------

_INT_TAG = "tag:yaml.org,2002:int"


class YamlBoundError(Exception):
    """A bound broken while loading YAML: message, 1-based line (or None), field path."""

    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.field = field


def _bounded_loader(base: type[Any]) -> type[Any]:
    """``base`` (a SafeLoader subclass) with a composer that bounds nesting and integers."""
    import yaml

    class Bounded(base):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._rp_path: list[Any] = []
            self._rp_depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if isinstance(index, yaml.ScalarNode):
                label: Any = index.value
            elif isinstance(index, int) and not isinstance(index, bool):
                label = index
            else:
                label = "(key)" if parent is not None else None
            if label is not None:
                self._rp_path.append(label)
            nested = self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent)
            try:
                if nested:
                    self._rp_depth += 1
                    if self._rp_depth > _limits.MAX_NESTING_DEPTH:
                        mark = self.peek_event().start_mark
                        raise YamlBoundError(depth_message(), mark.line + 1,
                                             field_path(tuple(self._rp_path)) or None)
                node = super().compose_node(parent, index)
                if isinstance(node, yaml.ScalarNode) and node.tag == _INT_TAG:
                    digits = sum(ch.isdigit() for ch in node.value)
                    if digits > _limits.MAX_INT_DIGITS:
                        raise YamlBoundError(HugeInt(digits).message(),
                                             node.start_mark.line + 1,
                                             field_path(tuple(self._rp_path)) or None)
                return node
            finally:
                if nested:
                    self._rp_depth -= 1
                if label is not None:
                    self._rp_path.pop()

    Bounded.__name__ = f"Bounded{base.__name__}"
    return Bounded


_LOADERS: dict[type[Any], type[Any]] = {}


def _check_graph(root: Any) -> None:
    """Refuse a node graph whose aliases expand past `MAX_YAML_NODES` nodes or
    `MAX_NESTING_DEPTH` levels, or that contains itself; no recursion."""
    import yaml

    cap = _limits.MAX_YAML_NODES
    limit = _limits.MAX_NESTING_DEPTH
    done: dict[int, tuple[int, int]] = {}  # id -> (expanded size, nesting height)
    open_: set[int] = set()

    def children(node: Any) -> list[Any]:
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        if isinstance(node, yaml.MappingNode):
            return [n for pair in node.value for n in pair]
        return []

    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            kids = children(node)
            size = 1 + sum(done[id(k)][0] for k in kids)
            nested = isinstance(node, yaml.CollectionNode)
            height = (1 + max((done[id(k)][1] for k in kids), default=0)) if nested else 0
            if size > cap:
                raise YamlBoundError(f"the document expands to more than {cap:,} nodes "
                                     "through its aliases (RANKPROOF_MAX_YAML_NODES raises "
                                     "the bound)")
            if height > limit:
                raise YamlBoundError(depth_message(limit) + " once its aliases are expanded",
                                     node.start_mark.line + 1)
            done[key] = (size, height)
            continue
        if key in done:
            continue
        open_.add(key)
        stack.append((node, True))
        for kid in children(node):
            if id(kid) in open_:
                raise YamlBoundError("an alias refers to a collection that contains it (a "
                                     "cycle), which no reader can expand",
                                     kid.start_mark.line + 1)
            if id(kid) not in done:
                stack.append((kid, False))


def load_yaml(text: str, loader: type[Any] | None = None) -> tuple[Any, Any]:
    """``(data, root node)`` of one YAML document, within every bound; ``(None, None)``
    for an empty one.

    ``loader`` is a ``yaml.SafeLoader`` subclass (its constructors decide
    duplicate keys and line tracking; default ``SafeLoader``). A bound broken
    raises `YamlBoundError`; invalid YAML raises PyYAML's own ``YAMLError``,
    which callers word in their terms.
    """
    import yaml

    base = yaml.SafeLoader if loader is None else loader
    bounded = _LOADERS.get(base)
    if bounded is None:
        bounded = _LOADERS[base] = _bounded_loader(base)
    instance = bounded(text)
    try:
        try:
            node = instance.get_single_node()
        except RecursionError:  # unreachable with a sane bound; never a crash
            raise YamlBoundError(depth_message()) from None
        if node is None:
            return None, None
        _check_graph(node)
        return instance.construct_document(node), node
    finally:
        instance.dispose()


def cut(text: object) -> str:
    """``str(text)`` cut to `MAX_SHOWN_CHARS` (for ids printed without quotes)."""
    out = str(text)
    cap = _limits.MAX_SHOWN_CHARS
    return out if len(out) <= cap else out[: cap - 1] + "…"


class LinedDict(dict[Any, Any]):
    """A mapping read by `load_lined_yaml`: its own line and each key's line (1-based), so
    that a config reader can name the line of a field it refuses."""

    line: int = 0
    key_lines: dict[Any, int]


def _lined_loader() -> type[Any]:
    import yaml

    class Lined(yaml.SafeLoader):
        pass

    def mapping(loader: Any, node: Any) -> LinedDict:
        loader.flatten_mapping(node)
        out = LinedDict()
        out.line = node.start_mark.line + 1
        out.key_lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in out.key_lines:
                raise YamlBoundError(f"key {_limits.shown(key)} repeated (first at line "
                                     f"{out.key_lines[key]}); YAML would silently keep the last",
                                     line)
            out.key_lines[key] = line
            out[key] = loader.construct_object(value_node, deep=True)
        return out

    Lined.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return Lined


_LINED: list[type[Any]] = []


def load_lined_yaml(text: str) -> Any:
    """`load_yaml` (every bound) whose mappings are `LinedDict`; a key repeated in one mapping
    is a `YamlBoundError` at its line (PyYAML would silently keep the last value)."""
    if not _LINED:
        _LINED.append(_lined_loader())
    return load_yaml(text, _LINED[0])[0]


def read_config_text(path: str | os.PathLike[str], what: str) -> str:
    """The text of a configuration file (``what``: "checks file", "experiment file"), or a
    `ConfigError` naming the file: not found, unreadable, or not UTF-8."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read the {what}: {exc}") from None
