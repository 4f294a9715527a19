"""The one provenance (manifest) block: its fields, input digests, scope and `verify`."""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import distributions
from pathlib import Path

import pytest

from rankproof import _manifest
from rankproof._manifest import (
    VARYING_FIELDS,
    environment_digest,
    input_entry,
    provenance,
    query_scope,
    recorded_scope,
    scope_line,
    scope_note,
    verify,
)

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "examples" / "toy"
OLD_EVAL = REPO / "tests" / "report" / "fixtures" / "eval.json"

FIELDS = {"manifest_version", "tool_version", "packages", "environment_digest", "lock_digest",
          "lock_file", "git_commit", "git_dirty", "inputs", "upstream", "output_dir", "cwd",
          "seed", "command", "python", "machine", "created_at", "scope"}


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_block_has_every_field_and_each_input_its_digest_and_size(tmp_path: Path) -> None:
    block = provenance(seed=7, inputs={"qrels": TOY / "qrels.txt",
                                       "runs": [TOY / "bm25.run", TOY / "dense.run"]},
                       upstream=[TOY / "bm25.run"], output=tmp_path / "out" / "m.json",
                       scope={"queries": "subset"})
    assert set(block) == FIELDS
    assert block["manifest_version"] == 1 and block["seed"] == 7
    assert block["inputs"]["qrels"] == {"path": str(TOY / "qrels.txt"),
                                        "sha256": _sha(TOY / "qrels.txt"),
                                        "bytes": (TOY / "qrels.txt").stat().st_size}
    assert [e["sha256"] for e in block["inputs"]["runs"]] == [
        _sha(TOY / "bm25.run"), _sha(TOY / "dense.run")]
    assert block["upstream"][0]["sha256"] == _sha(TOY / "bm25.run")
    assert block["output_dir"] == str((tmp_path / "out").resolve())
    assert block["scope"] == {"queries": "subset", "pool": "unknown"}
    assert block["created_at"].endswith("+00:00") and "." not in block["created_at"]
    assert block["machine"]["python"] == block["python"]
    json.dumps(block, allow_nan=False)  # plain JSON


def test_existing_callers_keep_working() -> None:
    block = provenance(seed=0, inputs={"cases": str(TOY / "qrels.txt")})
    assert block["inputs"]["cases"]["sha256"] == _sha(TOY / "qrels.txt")
    assert provenance()["inputs"] == {} and provenance()["seed"] is None


def test_the_environment_digest_is_stable_and_covers_every_distribution() -> None:
    # Computed afresh: an earlier test in this worker may have put a folder holding
    # distributions on sys.path (a plugin package, Ray's worker setup) after the cache filled.
    environment_digest.cache_clear()
    first = environment_digest()
    assert provenance()["environment_digest"] == first == environment_digest()
    names = sorted({f"{(d.metadata['Name'] or '').lower()}=={d.version}"
                    for d in distributions()})
    assert first == "sha256:" + hashlib.sha256("\n".join(names).encode()).hexdigest()
    assert environment_digest.cache_info().currsize == 1  # computed once per process


def test_standard_input_and_a_missing_path_have_no_digest(tmp_path: Path) -> None:
    assert input_entry("-") == {"path": "-", "sha256": None, "bytes": None}
    gone = tmp_path / "gone.run"
    assert input_entry(gone) == {"path": str(gone), "sha256": None, "bytes": None}
    block = provenance(inputs={"runs": ["-", TOY / "bm25.run"], "queries": None})
    assert [e["sha256"] is None for e in block["inputs"]["runs"]] == [True, False]
    assert "queries" not in block["inputs"]


def test_a_folder_is_digested_over_its_sorted_files(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("alpha")
    (folder / "sub" / "b.txt").write_text("beta")
    entry = input_entry(folder)
    expected = hashlib.sha256(
        f"a.txt\0{_sha(folder / 'a.txt')}\nsub/b.txt\0{_sha(folder / 'sub' / 'b.txt')}\n"
        .encode()).hexdigest()
    assert entry == {"path": str(folder), "sha256": "sha256:" + expected, "bytes": 9, "files": 2}
    (folder / "sub" / "b.txt").write_text("BETA")
    assert input_entry(folder)["sha256"] != entry["sha256"]


def test_a_folder_over_the_bound_is_counted_not_digested(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text(str(i))
    monkeypatch.setattr(_manifest, "MAX_FOLDER_FILES", 2)
    assert input_entry(tmp_path) == {"path": str(tmp_path), "sha256": None, "bytes": 3,
                                     "files": 3}


def test_a_file_rewritten_in_the_same_process_is_hashed_again(tmp_path: Path) -> None:
    f = tmp_path / "run.txt"
    f.write_text("1 Q0 d1 1 1.0 x\n")
    before = input_entry(f)["sha256"]
    f.write_text("1 Q0 d2 1 1.0 x\n")
    assert input_entry(f)["sha256"] == _sha(f) != before


@pytest.mark.parametrize("argv, shown", [
    (["/venv/bin/rankproof", "measure", "q"], ["rankproof", "measure", "q"]),
    (["/x/site-packages/rankproof/__main__.py", "gate"], ["rankproof", "gate"]),
    (["script.py", "--flag"], ["script.py", "--flag"]),
])
def test_the_command_shows_the_console_script_as_rankproof(argv: list[str],
                                                          shown: list[str]) -> None:
    assert provenance(command=argv)["command"] == shown


def test_the_lock_file_beside_pyproject_is_hashed(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert provenance()["lock_digest"] is None
    (tmp_path / "requirements.txt").write_text("numpy\n")
    assert provenance()["lock_file"] == "requirements.txt"
    (tmp_path / "uv.lock").write_text("version = 1\n")  # first in LOCK_FILES wins
    block = provenance()
    assert block["lock_file"] == "uv.lock" and block["lock_digest"] == _sha(tmp_path / "uv.lock")


def test_output_dir_is_null_for_standard_output(tmp_path: Path) -> None:
    assert provenance(output="-")["output_dir"] is None
    assert provenance()["output_dir"] is None
    assert provenance(output=tmp_path)["output_dir"] == str(tmp_path.resolve())


def test_a_scope_outside_the_vocabulary_is_refused() -> None:
    with pytest.raises(ValueError, match="scope queries must be one of"):
        provenance(scope={"queries": "some"})
    with pytest.raises(ValueError, match="scope pool must be one of"):
        provenance(scope={"pool": "pooled"})


def test_scope_words() -> None:
    assert query_scope((), ()) == "full" and query_scope((), ("q1",)) == "subset"
    assert scope_line({"queries": "full", "pool": "unknown"}) == \
        "scope: full query set; pool unknown"
    assert scope_note({"queries": "full", "pool": "unknown"}) is None
    assert scope_note({"queries": "full", "pool": "sampled"}) == \
        "scope: full query set; metrics over a sampled pool"
    assert scope_note({"queries": "subset"}) == \
        "scope: a subset of the judged queries; pool unknown"


def test_recorded_scope_reads_a_saved_document(tmp_path: Path) -> None:
    doc = tmp_path / "d.json"
    doc.write_text(json.dumps({"provenance": provenance(scope={"pool": "sampled"})}))
    assert recorded_scope(doc) == {"queries": "unknown", "pool": "sampled"}
    doc.write_text(json.dumps({"provenance": {"scope": {"queries": "weird"}}}))
    assert recorded_scope(doc) is None
    assert recorded_scope(tmp_path / "missing.json") is None


def test_verify_says_unchanged_changed_missing_and_not_recorded(tmp_path: Path) -> None:
    a, b, c = (tmp_path / n for n in ("a.txt", "b.txt", "c.txt"))
    for f in (a, b, c):
        f.write_text(f.name)
    block = provenance(inputs={"first": a, "runs": [b, c, "-"]},
                       upstream=[tmp_path / "never.txt"])
    b.write_text("changed")
    c.unlink()
    got = {e["role"]: e["status"] for e in verify(block)}
    assert got == {"first": "unchanged", "runs[0]": "CHANGED", "runs[1]": "missing",
                   "runs[2]": "not a file", "upstream[0]": "missing"}


def test_verify_finds_relative_paths_under_the_recorded_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "q.txt").write_text("x")
    monkeypatch.chdir(tmp_path)
    block = provenance(inputs={"qrels": "q.txt"})
    monkeypatch.chdir(REPO)
    [entry] = verify(block)
    assert entry["status"] == "unchanged" and entry["resolved"] == str(tmp_path / "q.txt")


def test_an_eval_report_written_before_the_manifest_still_loads() -> None:
    from rankproof.harness import read_report

    old = json.loads(OLD_EVAL.read_text())
    assert "manifest_version" not in old["provenance"]
    report = read_report(OLD_EVAL)
    assert report.provenance.manifest_version is None and report.provenance.inputs == {}
    assert report.provenance.scope is None
    assert report.provenance.corpus_digest == old["provenance"]["corpus_digest"]


def test_without_timings_drops_what_varies_between_reruns() -> None:
    from rankproof.harness import read_report

    report = read_report(OLD_EVAL).stamped(inputs={"judgments": TOY / "qrels.txt"})
    assert report.provenance.manifest_version == 1
    assert report.provenance.inputs["judgments"]["sha256"] == _sha(TOY / "qrels.txt")
    prov = report.without_timings()["provenance"]
    assert not set(VARYING_FIELDS) & set(prov)
    assert {"environment_digest", "inputs", "scope", "seed", "corpus_digest"} <= set(prov)
