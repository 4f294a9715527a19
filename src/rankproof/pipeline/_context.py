"""What a stage sees while it runs (`Context`) and what it hands back (`Made`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankproof.data import Run, load_run
from rankproof.pipeline._config import Experiment
from rankproof.pipeline._inputs import Sources


@dataclass
class Made:
    """A finished stage: which of the files it wrote is its run / chunk run / document, a
    summary for ``stage.json``, caveats, and (a gate) whether it passed."""

    run: str | None = None
    """The run's file name in the stage folder (or, for ``run_file``, an absolute path)."""
    chunks: str | None = None
    document: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    passed: bool | None = None
    upstream_files: list[Path] = field(default_factory=list)
    input_files: dict[str, Any] = field(default_factory=dict)
    external: dict[str, Any] | None = None
    """An output that lives outside the stage folder (``run_file``): path and digest."""


@dataclass
class Context:
    """The experiment, its loaded inputs, and the records of the stages done so far."""

    exp: Experiment
    sources: Sources
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def folder(self, stage_id: str) -> Path:
        return self.exp.output / stage_id

    def _file(self, stage_id: str, key: str) -> Path | None:
        name = self.records[stage_id].get(key)
        if name is None:
            return None
        p = Path(name)
        return p if p.is_absolute() else self.folder(stage_id) / p

    def run_path(self, stage_id: str) -> Path:
        path = self._file(stage_id, "run")
        assert path is not None, f"stage {stage_id} has no run"
        return path

    def chunks_path(self, stage_id: str) -> Path | None:
        return self._file(stage_id, "chunks")

    def document_path(self, stage_id: str) -> Path:
        path = self._file(stage_id, "document")
        assert path is not None, f"stage {stage_id} has no document"
        return path

    def summary(self, stage_id: str) -> dict[str, Any]:
        return dict(self.records[stage_id].get("summary") or {})

    def run(self, stage_id: str, chunks: bool = False) -> Run:
        """The stage's run (or chunk run), named by the stage id."""
        path = self.chunks_path(stage_id) if chunks else self.run_path(stage_id)
        assert path is not None
        run = load_run(str(path))
        return run if run.name == stage_id else dataclasses.replace(run, name=stage_id)
