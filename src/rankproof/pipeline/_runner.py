"""Plan and run an experiment: every stage in dependency order, cached by content.

`plan` says, without running or writing anything, what `run` would do with each stage:
``run``, ``cached`` (its folder holds the output of the same key, intact), or ``skipped``
(not named by ``--only`` and not read by a stage that is). With ``only``, the named
stages run even when cached, and every stage they read, directly or not, must already
have a cached output matching its current key: otherwise the run is refused (a
`ConfigError`: "run it first or drop --only") before any stage runs.

`run` then executes the plan. Each stage's folder ``OUTPUT/<id>/`` holds its files and
``stage.json`` (`rankproof.pipeline._cache`); ``OUTPUT/run.json`` records the run: every
stage's status and seconds, the experiment file's digest and the provenance block. A
stage that raises leaves every earlier stage's folder (and its own previous one) intact;
``run.json`` then records it as failed and the error propagates.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from rankproof._errors import ConfigError, InputError
from rankproof._io import atomic_write
from rankproof._manifest import (
    digest_json,
    file_digest,
    input_entry,
    package_versions,
    provenance,
    tool_version,
)
from rankproof.pipeline import _cache
from rankproof.pipeline._config import Experiment
from rankproof.pipeline._context import Context, Made
from rankproof.pipeline._diagnostics import discover_stage, rag_compare_stage, rag_stage
from rankproof.pipeline._documents import eval_stage, gate_stage, report_stage
from rankproof.pipeline._inputs import Sources, check_paths
from rankproof.pipeline._kinds import (
    compare_stage,
    embed_model_spec,
    fuse_stage,
    measure_stage,
    query_transform_stage,
    retrieve,
    run_file,
    scope,
)
from rankproof.pipeline._models import NAMED_FILES
from rankproof.providers import is_provider_spec, provider_from_spec
from rankproof.retrieval import resolve_embed_model

RUN_KIND = "rankproof.experiment"
RUN_SCHEMA_VERSION = 1
RUN_FILE = "run.json"

Action = Literal["run", "cached", "skipped"]
Status = Literal["run", "cached", "skipped", "failed", "not run"]

EXECUTORS: dict[str, Callable[[Context, Any, Path], Made]] = {
    "retrieve": retrieve, "run_file": run_file, "fuse": fuse_stage, "measure": measure_stage,
    "compare": compare_stage, "eval": eval_stage, "gate": gate_stage, "report": report_stage,
    "discover": discover_stage, "rag": rag_stage, "rag_compare": rag_compare_stage,
    "query_transform": query_transform_stage,
}
_READS_INPUTS = frozenset({"retrieve", "fuse", "measure", "compare", "eval",
                           "query_transform"})
_MODELS = frozenset({"retrieve", "eval"})


@dataclass(frozen=True)
class PlannedStage:
    """What `run` will do with one stage, and why."""

    id: str
    kind: str
    action: Action
    reason: str
    key: str | None = None


@dataclass(frozen=True)
class StageRun:
    """One stage as it went: status, seconds (0 for cached and skipped), key, gate verdict."""

    id: str
    kind: str
    status: Status
    seconds: float
    key: str | None = None
    passed: bool | None = None


@dataclass(frozen=True)
class RunSummary:
    """A finished run: its stages in run order and where it wrote."""

    experiment: Path
    output: Path
    stages: tuple[StageRun, ...]
    seconds: float
    only: tuple[str, ...] | None = None
    failed_gates: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        """False when a gate stage has a failed blocking check."""
        return not self.failed_gates


def _files(ctx: Context, stage: Any) -> dict[str, str | None]:
    """Digests of the files a stage names itself (a run file, checks, a model folder)."""
    return {attr: ",".join(input_entry(ctx.exp.resolve(v))["sha256"] for v in value)
            if isinstance(value, list) else input_entry(ctx.exp.resolve(value))["sha256"]
            for attr in NAMED_FILES.get(stage.kind, ())
            if (value := getattr(stage, attr, None)) is not None}


def stage_key(ctx: Context, stage: Any) -> str | None:
    """The stage's cache key, or None while an upstream stage has no output yet."""
    refs = ctx.exp.upstream(stage.id)
    if any(r not in ctx.records for r in refs):
        return None
    material: dict[str, Any] = {
        "kind": stage.kind, "params": stage.model_dump(mode="json"), "seed": ctx.exp.seed,
        "pool": ctx.exp.scope.pool, "files": _files(ctx, stage),
        "upstream": {r: _cache.outputs_digest(ctx.records[r]) for r in refs},
    }
    if stage.kind in _READS_INPUTS and not (stage.kind == "measure" and stage.subtopics):
        material["inputs"] = ctx.sources.digest()  # (subtopics: the file's digest keys it)
    if stage.kind in _MODELS:
        material["packages"] = package_versions()
    spec = getattr(stage, "embed_model", None)
    if spec is not None and is_provider_spec(spec):  # a served model: its provider's settings
        served = provider_from_spec(embed_model_spec(ctx, spec), kind="embeddings")
        material["embed_model"] = digest_json(served.model_dump(mode="json"))
    elif spec is not None:  # the model's files, wherever they come from
        material["embed_model"] = input_entry(
            resolve_embed_model(embed_model_spec(ctx, spec))[0])["sha256"]
    return _cache.stage_key(material)


def _check_only(exp: Experiment, only: Sequence[str] | None) -> set[str] | None:
    if only is None:
        return None
    unknown = [s for s in only if s not in exp.order]
    if unknown:
        raise ConfigError(f"--only names no stage {', '.join(map(repr, unknown))} of "
                          f"{exp.path}; its stages: {', '.join(exp.order)}")
    return set(only)


def _check_output(exp: Experiment) -> None:
    out = exp.output
    if out.exists() and not out.is_dir():
        raise InputError("the output folder is a file", path=str(out))
    line = exp.line("output")
    for role, value in Sources(exp).files().items():
        for p in value if isinstance(value, list) else [value]:
            if p is not None and p.is_dir() and out.resolve().is_relative_to(p.resolve()):
                raise ConfigError(f"{exp.path}{f', line {line}' if line else ''}, field "
                                  f"'output': the output folder {out} is inside the input "
                                  f"folder {p} ({role}); write it elsewhere")


def plan(exp: Experiment, only: Sequence[str] | None = None,
         ctx: Context | None = None) -> list[PlannedStage]:
    """What `run` would do with each stage (see the module docstring); reads, writes nothing.

    Refused (`ConfigError`): an input path that is missing, ``only`` naming an unknown
    stage, and, with ``only``, a stage it needs that has no matching cached output.
    """
    check_paths(exp)
    _check_output(exp)
    named = _check_only(exp, only)
    ctx = ctx or Context(exp, Sources(exp))
    needed = set(exp.ancestors(sorted(named))) - named if named is not None else set()
    out: list[PlannedStage] = []
    missing: list[str] = []
    for sid in exp.order:
        stage = exp.stage(sid)
        if named is not None and sid not in named and sid not in needed:
            out.append(PlannedStage(sid, stage.kind, "skipped", "not named by --only"))
            continue
        key = stage_key(ctx, stage)
        record = _cache.valid_cache(ctx.folder(sid), key) if key is not None else None
        if record is not None:
            ctx.records[sid] = record
        if named is not None and sid in named:
            out.append(PlannedStage(sid, stage.kind, "run", "named by --only", key))
        elif record is not None:
            why = "read by a stage named by --only" if named is not None else "same key"
            out.append(PlannedStage(sid, stage.kind, "cached", why, key))
        elif named is not None:
            missing.append(sid)
        else:
            why = ("no output yet" if not (ctx.folder(sid) / _cache.STAGE_FILE).exists()
                   else "its upstream runs first" if key is None else "its key changed")
            out.append(PlannedStage(sid, stage.kind, "run", why, key))
    if missing:
        readers = sorted(s for s in (named or ()) if set(exp.ancestors([s])) & set(missing))
        raise ConfigError(
            f"--only {' '.join(sorted(named or ()))}: stage(s) {', '.join(map(repr, missing))}, "
            f"read by {', '.join(map(repr, readers))}, have no cached output matching their "
            f"current parameters and inputs in {exp.output}; run it first or drop --only")
    return out


def _record(ctx: Context, stage: Any, key: str, made: Made, work: Path, started: str,
            seconds: float) -> dict[str, Any]:
    return {
        "kind": _cache.STAGE_KIND, "schema_version": _cache.SCHEMA_VERSION, "id": stage.id,
        "stage_kind": stage.kind, "key": key, "status": "ok",
        "params": stage.model_dump(mode="json"), "seed": ctx.exp.seed,
        "inputs_digest": ctx.sources.digest() if stage.kind in _READS_INPUTS else None,
        "files": _files(ctx, stage),
        "upstream": {r: _cache.outputs_digest(ctx.records[r])
                     for r in ctx.exp.upstream(stage.id)},
        "outputs": _cache.digest_outputs(work), "external": made.external,
        "run": made.run, "chunks": made.chunks, "document": made.document,
        "passed": made.passed, "summary": made.summary, "notes": made.notes,
        "started_at": started, "seconds": round(seconds, 3), "rankproof": tool_version(),
        "provenance": provenance(seed=ctx.exp.seed, inputs={**made.input_files,
                                                             **_named_paths(ctx, stage)},
                                 upstream=made.upstream_files,
                                 output=ctx.folder(stage.id) / _cache.STAGE_FILE,
                                 scope=scope(ctx, made.summary.get("queries_scope", "full"))),
    }


def _named_paths(ctx: Context, stage: Any) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for k in _files(ctx, stage):
        value = getattr(stage, k)
        for i, one in enumerate(value) if isinstance(value, list) else [(None, value)]:
            out[k if i is None else f"{k}[{i}]"] = ctx.exp.resolve(one)
    return out


def _write_run(ctx: Context, rows: list[StageRun], only: Sequence[str] | None,
               seconds: float) -> None:
    exp = ctx.exp
    doc = {
        "kind": RUN_KIND, "schema_version": RUN_SCHEMA_VERSION, "name": exp.name,
        "experiment": str(exp.path), "experiment_sha256": file_digest(exp.path),
        "output": str(exp.output), "only": list(only) if only is not None else None,
        "seconds": round(seconds, 3),
        "stages": [{"id": r.id, "kind": r.kind, "status": r.status,
                    "seconds": round(r.seconds, 3), "key": r.key, "passed": r.passed}
                   for r in rows],
        "provenance": provenance(seed=exp.seed, inputs={"experiment": exp.path,
                                                        **Sources(exp).files()},
                                 output=exp.output / RUN_FILE, scope=scope(ctx)),
    }
    exp.output.mkdir(parents=True, exist_ok=True)
    with atomic_write(exp.output / RUN_FILE) as fh:
        fh.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")


def run(exp: Experiment, only: Sequence[str] | None = None,
        progress: Callable[[str], None] | None = None) -> RunSummary:
    """Run the experiment (see the module docstring); ``progress`` gets one line per event."""
    say = progress or (lambda _msg: None)
    ctx = Context(exp, Sources(exp))
    planned = plan(exp, only, Context(exp, ctx.sources))
    for p in planned:
        if p.action == "run":
            _cache.check_stage_folder(ctx.folder(p.id))
    actions = {p.id: p.action for p in planned}
    rows: list[StageRun] = []
    start = time.perf_counter()
    for sid in exp.order:
        stage = exp.stage(sid)
        if actions[sid] == "skipped":
            rows.append(StageRun(sid, stage.kind, "skipped", 0.0))
            continue
        key = stage_key(ctx, stage)
        assert key is not None  # every upstream stage is done, cached or refused by plan
        record = _cache.valid_cache(ctx.folder(sid), key)
        if actions[sid] != "run" or (only is None and record is not None):
            if record is None:
                raise ConfigError(f"stage {sid!r} has no cached output matching its current "
                                  "key (its upstream changed); run it first or drop --only")
            ctx.records[sid] = record
            rows.append(StageRun(sid, stage.kind, "cached", 0.0, key, record.get("passed")))
            say(f"{sid}: cached (key {key.removeprefix('sha256:')[:12]}), 0 s")
            continue
        say(f"{sid}: running ({stage.kind})")
        work = _cache.new_workdir(exp.output, sid)
        started = datetime.now(UTC).isoformat(timespec="seconds")
        t0 = time.perf_counter()
        try:
            made = EXECUTORS[stage.kind](ctx, stage, work)
            seconds = time.perf_counter() - t0
            record = _record(ctx, stage, key, made, work, started, seconds)
            _cache.commit(work, ctx.folder(sid), record)
        except BaseException:
            _cache.discard(work)
            rows.append(StageRun(sid, stage.kind, "failed", time.perf_counter() - t0, key))
            rows += [StageRun(s, exp.stage(s).kind, "not run", 0.0)
                     for s in exp.order[len(rows):]]
            _write_run(ctx, rows, only, time.perf_counter() - start)
            raise
        ctx.records[sid] = record
        rows.append(StageRun(sid, stage.kind, "run", seconds, key, made.passed))
        say(f"{sid}: done in {seconds:.1f} s")
    total = time.perf_counter() - start
    _write_run(ctx, rows, only, total)
    failed = tuple(r.id for r in rows if r.passed is False)
    return RunSummary(experiment=exp.path, output=exp.output, stages=tuple(rows),
                      seconds=total, only=tuple(only) if only is not None else None,
                      failed_gates=failed)
