"""Bad experiment files: exit 2 naming the file, the line and the field; nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.pipeline._helpers import invoke, runs_experiment, write

from rankproof import ConfigError
from rankproof.pipeline import STAGE_KINDS, load_experiment, parse_experiment

HEAD = """\
name: bad
output: out
inputs:
  qrels: {qrels}
stages:
"""


def _file(tmp_path: Path, stages: str) -> Path:
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    write(tmp_path / "run.txt", "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    return write(tmp_path / "exp.yaml", HEAD.format(qrels=qrels) + stages)


def _refused(tmp_path: Path, stages: str, *fragments: str) -> str:
    exp = _file(tmp_path, stages)
    r = invoke("run", exp)
    assert r.exit_code == 2, r.output
    message = " ".join(r.stderr.split())
    for fragment in (str(exp), *fragments):
        assert fragment in message, message
    assert not (tmp_path / "out").exists()
    dry = invoke("run", exp, "--dry-run")
    assert dry.exit_code == 2 and not (tmp_path / "out").exists()
    return message


def test_an_unknown_stage_kind_names_its_line_field_and_the_allowed_kinds(
        tmp_path: Path) -> None:
    message = _refused(tmp_path, "  - id: a\n    kind: run_file\n    path: run.txt\n"
                                 "  - id: b\n    kind: rerankk\n    runs: [a]\n",
                       "line 10", "field 'stages[1].kind'", "unknown stage kind 'rerankk'")
    assert "allowed: " + ", ".join(STAGE_KINDS) in message


def test_a_cycle_is_refused_naming_its_ids(tmp_path: Path) -> None:
    _refused(tmp_path, "  - id: a\n    kind: run_file\n    path: run.txt\n"
                       "  - id: f\n    kind: fuse\n    runs: [a, g]\n"
                       "  - id: g\n    kind: fuse\n    runs: [a, f]\n",
             "the stages form a cycle: f -> g -> f", "line 9", "field 'stages[f]'")


def test_a_missing_input_file_is_refused_before_anything_runs(tmp_path: Path) -> None:
    _refused(tmp_path, "  - id: a\n    kind: run_file\n    path: run.txt\n"
                       "  - id: b\n    kind: run_file\n    path: nowhere.txt\n"
                       "  - id: m\n    kind: measure\n    runs: [a, b]\n",
             "line 11", "field 'stages[b].path'", "no such file", "nowhere.txt")


def test_a_missing_collection_root_names_the_inputs_field(tmp_path: Path) -> None:
    exp = write(tmp_path / "exp.yaml", "output: out\ninputs:\n  collection:\n    name: vaswani\n"
                                       "    root: ../no-such-root\nstages:\n"
                                       "  - {id: b, kind: retrieve, method: bm25}\n")
    r = invoke("run", exp)
    assert r.exit_code == 2
    message = " ".join(r.stderr.split())
    assert "line 5, field 'inputs.collection.root': no such folder" in message
    assert not (tmp_path / "out").exists()


def test_an_unknown_reference_and_a_wrong_kind_of_reference(tmp_path: Path) -> None:
    message = _refused(tmp_path, "  - id: a\n    kind: run_file\n    path: run.txt\n"
                                 "  - id: m\n    kind: measure\n    runs: [a, bm52]\n"
                                 "  - id: r\n    kind: report\n    input: a\n",
                       "line 9", "field 'stages[m].runs'", "no stage has the id 'bm52'")
    assert "field 'stages[r].input': 'a' is a run_file stage" in message


def test_a_duplicate_id_is_refused_with_both_lines(tmp_path: Path) -> None:
    _refused(tmp_path, "  - id: a\n    kind: run_file\n    path: run.txt\n"
                       "  - id: a\n    kind: run_file\n    path: run.txt\n",
             "line 9", "field 'stages[1].id'", "duplicate stage id 'a' (first at line 6)")


def test_unknown_keys_wrong_types_and_repeated_keys(tmp_path: Path) -> None:
    message = _refused(tmp_path, "  - id: a\n    kind: run_file\n    path: run.txt\n"
                                 "  - id: f\n    kind: fuse\n    runs: [a, a]\n    methd: rrf\n"
                                 "    k: fast\n",
                       "2 problems", "line 12, field 'stages[1].methd': unknown key (did you "
                                     "mean 'method'?)", "line 13, field 'stages[1].k'")
    assert "allowed: " in message
    exp = write(tmp_path / "dup.yaml", "output: o\noutput: p\nstages: []\n")
    with pytest.raises(ConfigError, match=r"line 2: key 'output' repeated \(first at line 1\)"):
        load_experiment(exp)


def test_the_top_level_is_checked_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        parse_experiment("name: x\nseed: -1\noutptu: o\nstages: []\n", tmp_path / "e.yaml")
    text = str(info.value)
    assert "line 3, field 'outptu': unknown top-level key (did you mean 'output'?)" in text
    assert "line 2, field 'seed': expected an integer >= 0" in text
    assert "field 'output': expected the output folder" in text
    assert "field 'stages': expected a non-empty list of stages" in text


def test_retrieval_over_qrels_only_is_refused(tmp_path: Path) -> None:
    _refused(tmp_path, "  - {id: b, kind: retrieve, method: bm25}\n",
             "field 'stages[b].kind'", "needs a corpus")


def test_the_output_may_not_sit_inside_an_input_folder(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    write(corpus / "a.md", "water\n")
    write(tmp_path / "j.jsonl", "")
    exp = write(tmp_path / "exp.yaml", f"output: {corpus}/out\ninputs:\n  corpus: {corpus}\n"
                                       f"  judgments: {tmp_path / 'j.jsonl'}\nstages:\n"
                                       "  - {id: b, kind: retrieve, method: bm25}\n")
    r = invoke("run", exp, "--dry-run")
    assert r.exit_code == 2 and "field 'output'" in r.stderr and "inside the input" in r.stderr


def test_the_example_files_are_valid(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "experiments"
    found = [p for p in sorted(examples.glob("*.yaml")) if not p.stem.endswith("-checks")]
    assert {p.stem for p in found} >= {"vaswani", "toy", "golden"}
    for path in found:
        exp = load_experiment(path)
        assert exp.order and exp.output.is_absolute()
    exp = load_experiment(runs_experiment(tmp_path))
    assert exp.order == ("bm25", "rm3", "tasb", "hybrid", "scores", "compare", "gate", "report")
