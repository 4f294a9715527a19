"""The experiment file: one YAML document validated completely before anything runs.

.. code-block:: yaml

    name: vaswani
    output: out/vaswani          # relative paths: against the experiment file's folder
    seed: 0
    scope: {pool: full-corpus}   # full-corpus | sampled | unknown (default)
    inputs:
      collection: {name: vaswani, root: ../../../shared/data}
      granularity: document
    stages:
      - {id: bm25, kind: retrieve, method: bm25}
      - {id: dense, kind: retrieve, method: dense}
      - {id: fusion, kind: fuse, runs: [bm25, dense]}
      - {id: scores, kind: measure, runs: [bm25, dense, fusion], measures: [nDCG@10]}

Every stage has an ``id`` (unique; it names the stage's folder, so it is one path
component) and a ``kind`` (`STAGE_KINDS`); its other fields are the kind's own
(`KIND_MODELS`). Stages refer to each other by id (``runs``, ``inputs``, ``baseline``,
``candidates``, ``input``), and those references form a graph that must be acyclic.

A pipeline that silently ignored a line would run something else than what was written,
so the file is refused — every problem at once, each with the file, the line and the
field — for: invalid YAML, a repeated key, an unknown key, a missing or mistyped field,
an unknown ``kind`` (the allowed kinds are listed), a repeated id, a reference to an id
that no stage has, a reference to a stage of the wrong kind (a ``measure`` reads runs,
not a report), and a cycle (its ids named in order). Input files are checked too
(`check_paths`), before the first stage runs.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from rankproof._errors import ConfigError
from rankproof._limits import shown
from rankproof.data import IRDS_PREFIX, YamlBoundError, load_lined_yaml, read_config_text
from rankproof.pipeline._models import (
    KIND_MODELS,
    STAGE_KINDS,
    WANTS,
    Inputs,
    Scope,
)

TOP_KEYS = ("name", "output", "seed", "scope", "inputs", "stages")


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file: its stages in file order and in run order."""

    name: str
    path: Path
    """The experiment file (absolute)."""
    output: Path
    seed: int
    scope: Scope
    inputs: Inputs
    stages: tuple[Any, ...]
    order: tuple[str, ...]
    """Stage ids in the order they run (every stage after the ones it reads)."""
    lines: Mapping[str, int]
    """Stage id → its line in the file (for messages)."""
    field_lines: Mapping[str, int]
    """Field path (``inputs.corpus``, ``stages[ID].path``) → its line in the file."""

    def line(self, field: str) -> int | None:
        """The line of ``field`` (a field path), or of its stage, when known."""
        if field in self.field_lines:
            return self.field_lines[field]
        if field.startswith("stages[") and "]" in field:
            return self.lines.get(field[len("stages["):field.index("]")])
        return None

    def stage(self, stage_id: str) -> Any:
        for s in self.stages:
            if s.id == stage_id:
                return s
        raise KeyError(stage_id)

    def resolve(self, value: str) -> Path:
        """A path from the file, relative to the file's folder unless absolute; an
        ir_datasets id (``irds:ID``) as it is (the readers take ``Path("irds:ID")`` for it)."""
        return _resolve(self.path, value)

    def upstream(self, stage_id: str) -> list[str]:
        """The ids ``stage_id`` reads, directly."""
        return list(dict.fromkeys(ref for _, ref in self.stage(stage_id).reads()))

    def ancestors(self, stage_ids: Sequence[str]) -> list[str]:
        """Every stage the given ones read, directly or not, in run order."""
        seen: set[str] = set()
        stack = list(stage_ids)
        while stack:
            for ref in self.upstream(stack.pop()):
                if ref not in seen:
                    seen.add(ref)
                    stack.append(ref)
        return [s for s in self.order if s in seen]


class _Problems:
    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, line: int | None, field: str | None, message: str) -> None:
        where = self.source + (f", line {line}" if line else "")
        at = f", field '{field}'" if field else ""
        self.items.append(f"{where}{at}: {message}")

    def raise_if_any(self) -> None:
        if self.items:
            head = "1 problem" if len(self.items) == 1 else f"{len(self.items)} problems"
            raise ConfigError(f"invalid experiment file ({head}):\n"
                              + "\n".join(f"  - {p}" for p in self.items))


def _suggest(key: object, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _line_of(raw: Any, loc: tuple[Any, ...]) -> int | None:
    """The line of the deepest mapping key along ``loc`` (pydantic's error location)."""
    line = getattr(raw, "line", None)
    node = raw
    for part in loc:
        if isinstance(node, Mapping):
            line = getattr(node, "key_lines", {}).get(part, line)
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            line = getattr(node, "line", line)
        else:
            break
    return line


def _validate(model: type[BaseModel], raw: Mapping[str, Any], problems: _Problems,
              prefix: str) -> Any:
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            field = ".".join(str(p) for p in loc)
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                known = [k for k in model.model_fields if k != "kind"]
                msg = f"unknown key{_suggest(loc[-1], known)}; allowed: {', '.join(known)}"
            problems.add(_line_of(raw, loc), f"{prefix}{field}" if field else prefix.rstrip("."),
                         msg)
        return None


def parse_experiment(text: str, path: str | Path) -> Experiment:
    """Validate an experiment file's text (``path`` names it and anchors relative paths)."""
    source = str(path)
    problems = _Problems(source)
    try:
        data = load_lined_yaml(text)
    except YamlBoundError as exc:  # a bound broken, or a key repeated
        problems.add(exc.line, exc.field, exc.message)
        problems.raise_if_any()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problems.add(mark.line + 1 if mark is not None else None, None,
                     f"invalid YAML: {getattr(exc, 'problem', None) or exc}")
        problems.raise_if_any()
    if not isinstance(data, Mapping):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        raise ConfigError(f"{source}: expected a mapping with 'stages', found {found}")
    top = getattr(data, "key_lines", {})
    for key in data:
        if key not in TOP_KEYS:
            problems.add(top.get(key), str(key), f"unknown top-level key{_suggest(key, TOP_KEYS)};"
                                                 f" allowed: {', '.join(TOP_KEYS)}")
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        problems.add(top.get("name"), "name", f"expected a non-empty string, got {shown(name)}")
    output = data.get("output")
    if not isinstance(output, str) or not output:
        problems.add(top.get("output"), "output",
                     "expected the output folder (a path), got "
                     + ("nothing" if output is None else shown(output)))
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems.add(top.get("seed"), "seed", f"expected an integer >= 0, got {shown(seed)}")
    scope = _section(data, "scope", Scope, problems, top)
    inputs = _section(data, "inputs", Inputs, problems, top)
    stages, lines = _stages(data.get("stages"), top.get("stages"), problems)
    problems.raise_if_any()
    if inputs is not None and not inputs.has_corpus:
        for s in stages:
            if s.kind in ("retrieve", "eval"):
                problems.add(lines[s.id], f"stages[{s.id}].kind",
                             f"a {s.kind} stage needs a corpus, and the inputs give qrels only")
    order = _order(stages, lines, problems)
    problems.raise_if_any()
    assert scope is not None and inputs is not None
    here = Path(path).resolve()
    return Experiment(name=str(name), path=here, output=_resolve(here, str(output)),
                      seed=int(seed), scope=scope, inputs=inputs, stages=tuple(stages),
                      order=tuple(order), lines=lines, field_lines=_field_lines(data))


def _field_lines(data: Mapping[str, Any]) -> dict[str, int]:
    """The line of every key under ``inputs`` and of every stage's keys."""
    out: dict[str, int] = {}
    stack: list[tuple[str, Any]] = [("inputs", data.get("inputs"))]
    while stack:
        prefix, node = stack.pop()
        if isinstance(node, Mapping):
            for key, line in getattr(node, "key_lines", {}).items():
                out[f"{prefix}.{key}"] = line
                stack.append((f"{prefix}.{key}", node.get(key)))
    for item in data.get("stages") or ():
        if isinstance(item, Mapping) and isinstance(item.get("id"), str):
            for key, line in getattr(item, "key_lines", {}).items():
                out.setdefault(f"stages[{item['id']}].{key}", line)
    return out


def _resolve(path: Path, value: str) -> Path:
    if value.startswith(IRDS_PREFIX):
        return Path(value)  # a dataset id, not a path: never made relative to the file
    p = Path(value).expanduser()
    return Path(os.path.normpath(p if p.is_absolute() else path.parent / p))


def _section(data: Mapping[str, Any], key: str, model: type[BaseModel], problems: _Problems,
             top: Mapping[str, int]) -> Any:
    raw = data.get(key)
    if raw is None:
        return model()
    if not isinstance(raw, Mapping):
        problems.add(top.get(key), key, f"expected a mapping, got {type(raw).__name__}")
        return None
    return _validate(model, raw, problems, f"{key}.")


def _stages(raw: Any, line: int | None, problems: _Problems) -> tuple[list[Any], dict[str, int]]:
    if not isinstance(raw, list) or not raw:
        problems.add(line, "stages", "expected a non-empty list of stages, got "
                                     + ("nothing" if raw is None else shown(raw)))
        return [], {}
    out: list[Any] = []
    lines: dict[str, int] = {}
    for i, item in enumerate(raw):
        here = getattr(item, "line", line)
        if not isinstance(item, Mapping):
            problems.add(here, f"stages[{i}]", f"expected a mapping with id and kind, got "
                                               f"{type(item).__name__}")
            continue
        keys = getattr(item, "key_lines", {})
        sid = item.get("id")
        label = f"stages[{i}]"
        kind = item.get("kind")
        if kind not in KIND_MODELS:
            problems.add(keys.get("kind", here), f"{label}.kind",
                         ("missing" if kind is None else f"unknown stage kind {shown(kind)}")
                         + f"{_suggest(kind, STAGE_KINDS)}; allowed: {', '.join(STAGE_KINDS)}")
            continue
        stage = _validate(KIND_MODELS[kind], item, problems, f"{label}.")
        if stage is None:
            continue
        if sid in lines:
            problems.add(keys.get("id", here), f"{label}.id",
                         f"duplicate stage id {shown(sid)} (first at line {lines[sid]}); ids "
                         "name the stages' folders and references, so they must be unique")
            continue
        lines[stage.id] = int(keys.get("id", here) or 0)
        out.append(stage)
    return out, lines


def _order(stages: list[Any], lines: Mapping[str, int], problems: _Problems) -> list[str]:
    """Check every reference, then order the stages so each follows what it reads."""
    kinds = {s.id: s.kind for s in stages}
    ok = True
    for s in stages:
        for field, ref in s.reads():
            if ref not in kinds:
                ok = False
                problems.add(lines[s.id], f"stages[{s.id}].{field}",
                             f"no stage has the id {shown(ref)}{_suggest(ref, list(kinds))}; "
                             f"ids: {', '.join(kinds)}")
                continue
            wanted = WANTS.get((s.kind, field))
            if wanted is not None and kinds[ref] not in wanted:
                ok = False
                problems.add(lines[s.id], f"stages[{s.id}].{field}",
                             f"{shown(ref)} is a {kinds[ref]} stage; a {s.kind} stage's "
                             f"{field} names a {' or '.join(wanted)} stage")
            if ref == s.id:
                ok = False
                problems.add(lines[s.id], f"stages[{s.id}].{field}",
                             "a stage cannot read its own output (a cycle)")
    if not ok:
        return []
    deps = {s.id: list(dict.fromkeys(ref for _, ref in s.reads())) for s in stages}
    done: list[str] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for nxt in deps[node]:
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt):], nxt]
                problems.add(lines[nxt], f"stages[{nxt}]",
                             "the stages form a cycle: " + " -> ".join(cycle)
                             + " (a stage cannot read, directly or not, its own output)")
                return False
            if nxt not in state and not visit(nxt, [*stack, nxt]):
                return False
        state[node] = 2
        done.append(node)
        return True

    for s in stages:
        if s.id not in state and not visit(s.id, [s.id]):
            return []
    return done


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment file (a `ConfigError` names every problem)."""
    p = Path(path)
    text = read_config_text(p, "experiment file")
    return parse_experiment(text, p)
