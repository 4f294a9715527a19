"""Every measure of the registry, in every place a measure is named.

For each registered family: its plain form (with a cutoff where one is
required or allowed), and one parametrised example per parameter it takes
(``rel=2``, ``gain=exp``, each float parameter at its default, a list of
recall levels, a label → gain map). Each canonical string must round-trip
through the parser and be accepted, under that same string, by

* ``rankproof measure`` (plain qrels, or ``--subtopics`` for the diversity
  measures), which reports a value for every one;
* ``rankproof compare`` (few resamples: this is about names, not statistics);
* a checks file threshold, gated against that measure output;
* an experiment file: measure stages (``subtopics:`` for the diversity ones)
  and a compare stage, validated by ``--dry-run`` and then run.

The inputs are trec_eval's small test collection (3 topics), so the whole
file runs in seconds.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.measures import DIVERSITY_FAMILIES, Measure, families, parse, parse_many

SUITE = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec_eval_tests"
runner = CliRunner()

_EXAMPLE_VALUES: dict[str, object] = {"floats": (0.2, 0.5, 0.8), "gains": {0: 0, 1: 2, 2: 5}}


@cache
def examples() -> tuple[Measure, ...]:
    """Every family's plain form(s) and one example per parameter."""
    out: list[Measure] = []
    for fam in families():
        k: int | float = 0.5 if fam.cutoff_kind == "float" else 10
        cutoffs = {"required": [k], "optional": [None, k], "none": [None]}[fam.cutoff]
        out.extend(Measure(fam.name, cutoff=c) for c in cutoffs)
        at = cutoffs[-1]
        for name, spec in fam.params.items():
            if spec.kind == "rel":
                out.append(Measure(fam.name, cutoff=at, rel=2))
            elif spec.kind == "gain":
                out.append(Measure(fam.name, cutoff=at, gain="exp"))
            elif spec.kind == "float":
                out.append(Measure(fam.name, cutoff=at, params={name: spec.default}))
            else:
                out.append(Measure(fam.name, cutoff=at, params={name: _EXAMPLE_VALUES[
                    spec.kind]}))
    return tuple(dict.fromkeys(out))


def _split() -> tuple[list[str], list[str]]:
    plain = [str(m) for m in examples() if m.family not in DIVERSITY_FAMILIES]
    diversity = [str(m) for m in examples() if m.family in DIVERSITY_FAMILIES]
    return plain, diversity


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("every")
    (here / "qrels.txt").write_text((SUITE / "qrels.test").read_text())
    rows = [line.split() for line in (SUITE / "qrels.test").read_text().splitlines()]
    (here / "subtopics.txt").write_text("".join(f"{q} 1 {d} {r}\n" for q, _, d, r in rows))
    run = (SUITE / "results.test").read_text()
    (here / "a.run").write_text(run)
    # a second system: the same documents, the scores of the first 30 per topic reversed
    lines = run.splitlines()
    (here / "b.run").write_text("\n".join(
        " ".join([*ln.split()[:4], str(-float(ln.split()[4])), "other"]) for ln in lines) + "\n")
    return here


def test_every_family_has_examples_and_each_round_trips() -> None:
    names = {m.family for m in examples()}
    assert names == {f.name for f in families()}
    kinds = {spec.kind for f in families() for spec in f.params.values()}
    assert kinds == {"rel", "gain", "float", "floats", "gains"}  # every kind exercised
    for m in examples():
        assert parse(str(m)) == m
        assert parse_many(str(m)) == (m,)


def _measure_json(folder: Path, names: list[str], *, subtopics: bool) -> dict[str, object]:
    qrels = folder / ("subtopics.txt" if subtopics else "qrels.txt")
    args = ["measure", str(qrels), str(folder / "a.run"), "-f", "json",
            *(["--subtopics"] if subtopics else [])]
    for name in names:
        args += ["-m", name]
    got = runner.invoke(app, args)
    assert got.exit_code == 0, got.stderr
    doc: dict[str, object] = json.loads(got.stdout)
    return doc


def test_measure_command_reports_every_one(folder: Path) -> None:
    plain, diversity = _split()
    for names, subtopics in ((plain, False), (diversity, True)):
        doc = _measure_json(folder, names, subtopics=subtopics)
        run = doc["runs"][0]  # type: ignore[index]
        assert run["measures"] == names
        assert set(run["means"]) == set(names)
        assert all(len(row) == len(names) for row in run["per_query"].values())


def test_compare_command_accepts_every_one(folder: Path) -> None:
    plain, diversity = _split()
    for names, subtopics in ((plain, False), (diversity, True)):
        qrels = folder / ("subtopics.txt" if subtopics else "qrels.txt")
        out = folder / f"cmp-{subtopics}.json"
        args = ["compare", str(qrels), str(folder / "a.run"), str(folder / "b.run"),
                "--resamples", "20", "-o", str(out), *(["--subtopics"] if subtopics else [])]
        for name in names:
            args += ["-m", name]
        got = runner.invoke(app, args)
        assert got.exit_code in (0, 1), got.stderr  # 1: a regression, not a bad name
        doc = json.loads(out.read_text())
        assert [str(m) for m in doc["measures"]] == names


def test_a_checks_file_accepts_every_one(folder: Path) -> None:
    plain, _ = _split()
    doc = _measure_json(folder, plain, subtopics=False)
    report = folder / "measure.json"
    report.write_text(json.dumps(doc))
    checks = folder / "checks.yaml"
    checks.write_text("checks:\n" + "".join(
        f"  - id: c{i}\n    metric: {json.dumps(name)}\n    op: '>='\n    threshold: -1.0e+9\n"
        for i, name in enumerate(plain)))
    got = runner.invoke(app, ["gate", str(checks), "--report", str(report)])
    assert got.exit_code == 0, got.output


def test_an_experiment_file_accepts_every_one(folder: Path) -> None:
    plain, diversity = _split()
    exp = folder / "exp.yaml"
    exp.write_text(f"""\
name: every
output: out
inputs:
  qrels: qrels.txt
stages:
  - {{id: a, kind: run_file, path: a.run}}
  - {{id: b, kind: run_file, path: b.run}}
  - id: plain
    kind: measure
    runs: [a, b]
    measures: {json.dumps(plain)}
  - id: diversity
    kind: measure
    runs: [a]
    measures: {json.dumps(diversity)}
    subtopics: subtopics.txt
  - id: compare
    kind: compare
    baseline: a
    candidates: [b]
    measures: {json.dumps(plain)}
    resamples: 20
    evidence_depth: 0
""")
    dry = runner.invoke(app, ["run", str(exp), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    ran = runner.invoke(app, ["run", str(exp), "--quiet"])
    assert ran.exit_code == 0, ran.output
    for stage, names in (("plain", plain), ("diversity", diversity)):
        doc = json.loads((folder / "out" / stage / "measure.json").read_text())
        assert doc["runs"][0]["measures"] == names
