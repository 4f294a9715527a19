"""How the runs of one request are named, and standard input read at most once.

A run is named, in every command and every output format, by:

1. the name given for it (``--name``, once per run in run order); else
2. its run tag (TREC's sixth column) when no other run has the same tag; else
3. its path, cut to the shortest suffix of folders that tells it apart from
   the other runs' paths (the file's last component without ``.gz`` and its
   format suffix, then its parent folders as needed).

The rule lives here, below the command line, because a request evaluated by the
engine names its runs after the workers are done, from what came back (`unique_labels`
reads only each run's loader name and tag), and must name them as a command that read
the runs itself would (`rankproof.cli._runs.load_runs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rankproof._errors import InputError

STDIN = "-"
"""The path that means standard input (and, for an output, standard output)."""


def check_stdin(paths: Sequence[str]) -> None:
    """Refuse standard input given more than once: it can be read only once."""
    if list(paths).count(STDIN) > 1:
        raise InputError("standard input (-) can be read only once, and it is given "
                         f"{list(paths).count(STDIN)} times")


def check_names(names: Sequence[str] | None, given: Sequence[str]) -> None:
    """Refuse names that are not one per run."""
    if names and len(names) != len(given):
        raise InputError(f"--name is given {len(names)} time(s) for {len(given)} run(s); give "
                         "it once per run, in run order", field="--name")


def unique_labels(given: list[str], names: Sequence[str] | None,
                  runs: Sequence[Any]) -> list[str]:
    """The name each run is shown under (the names given, else `run_names`), refusing a
    run given twice without names, or two runs that would share a name."""
    labels = list(names) if names else run_names(given, runs)
    dup = sorted({n for n in labels if labels.count(n) > 1})
    twice = sorted({p for p in given if given.count(p) > 1 and p != STDIN})
    if twice and not names:
        raise InputError(f"the run {twice[0]!r} is given twice; to compare a run with itself, "
                         "give each a --name", field="--name")
    if dup:
        raise InputError(f"two runs would be named {dup[0]!r}: give each run a --name",
                         field="--name")
    return labels


def run_names(paths: list[str], runs: Sequence[Any]) -> list[str]:
    """Each run's name: its tag when unique among the runs, else its path made unique.

    ``runs`` are `Run` objects, or anything with their ``name`` and ``tag`` (a run
    evaluated elsewhere: `rankproof.jobs.RunFileResult`)."""
    tags = [r.tag for r in runs]
    by_path = path_names(paths, [r.name for r in runs])
    out = [t if t and tags.count(t) == 1 else p for t, p in zip(tags, by_path, strict=True)]
    if len(set(out)) != len(out):  # a tag equal to another run's path name: paths for all
        return by_path
    return out


def path_names(paths: list[str], stems: list[str]) -> list[str]:
    """The shortest suffix of each path (``stem``, ``folder/stem``, …) that no other has."""
    parts = [[*Path(p).absolute().parts[:-1], s] if p != STDIN else [s]
             for p, s in zip(paths, stems, strict=True)]
    names = [p[-1] for p in parts]
    for i, own in enumerate(parts):
        depth = 1
        while depth < len(own):
            name = "/".join(own[-depth:])
            if not any("/".join(other[-depth:]) == name
                       for j, other in enumerate(parts) if j != i):
                break
            depth += 1
        names[i] = "/".join(own[-depth:])
    return names


__all__ = ["STDIN", "check_names", "check_stdin", "path_names", "run_names", "unique_labels"]
