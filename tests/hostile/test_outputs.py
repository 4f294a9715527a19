"""Class 2 (an output never replaces an input, a device, a pipe or a link), the output
half of class 13 (``-o`` over a file of another kind), and ``--force``, through the CLI."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from tests.hostile._writes import (
    BM25,
    DENSE,
    QRELS,
    beir_folder,
    checks,
    leftovers,
    rankproof,
    report,
    tree,
)
from typer.testing import CliRunner

from rankproof.cli import app

runner = CliRunner()


def cli(*args: object) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "120"})
    return result.exit_code, result.stdout, result.stderr


def _copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


# -- an output resolving to an input is refused, before anything is read --------------------

@pytest.mark.parametrize("via", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("command", ["measure", "compare", "fuse"])
def test_an_output_resolving_to_an_input_is_refused(command: str, via: str,
                                                    tmp_path: Path) -> None:
    run = _copy(BM25, tmp_path / "bm25.run")
    out = {"same": run, "symlink": tmp_path / "link", "hardlink": tmp_path / "hard"}[via]
    if via == "symlink":
        out.symlink_to(run)
    elif via == "hardlink":
        os.link(run, out)
    args = {"measure": ["measure", QRELS, run],
            "compare": ["compare", QRELS, run, DENSE, "--resamples", "100"],
            "fuse": ["fuse", run, DENSE]}[command]
    code, _, err = cli(*args, "-o", out, "--force")  # --force never lets an input go
    assert code == 2 and "would replace the input" in err, err
    assert run.read_bytes() == BM25.read_bytes() and leftovers(tmp_path) == []


def test_the_refusal_comes_before_any_input_is_read(tmp_path: Path) -> None:
    """The qrels do not exist: a command that read first would say so; this one says the
    output is an input."""
    run = _copy(BM25, tmp_path / "bm25.run")
    code, _, err = cli("measure", tmp_path / "missing-qrels", run, "-o", run)
    assert code == 2 and "would replace the input" in err and "no such file" not in err


def test_eval_output_over_its_judgments_is_refused_before_running(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.txt").write_text("alpha beta\n")
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("not even read\n")
    before = tree(tmp_path)
    for out in (judgments, corpus / "a.txt"):
        code, _, err = cli("eval", corpus, "--judgments", judgments, "-o", out)
        assert code == 2 and ("would replace the input" in err or "input folder" in err), err
    assert tree(tmp_path) == before


def test_gate_outputs_over_checks_report_or_baseline_are_refused(tmp_path: Path) -> None:
    rep = _copy(report(), tmp_path / "report.json")
    chk = checks(tmp_path)
    base = tmp_path / "base.json"
    code, _, err = cli("baseline", "save", rep, "--name", "b", "--baseline-dir", tmp_path)
    assert code == 0, err
    os.replace(tmp_path / "b.json", base)
    before = tree(tmp_path)
    for flag, target in (("--json", chk), ("--junit", rep), ("--markdown", base)):
        code, _, err = cli("gate", chk, "--report", rep, "--baseline", base, flag, target,
                           "--force")
        assert code == 2 and "would replace the input" in err, err
    assert tree(tmp_path) == before


def test_baseline_save_over_its_report_is_refused(tmp_path: Path) -> None:
    rep = _copy(report(), tmp_path / "main.json")
    before = rep.read_bytes()
    code, _, err = cli("baseline", "save", rep, "--name", "main", "--baseline-dir", tmp_path,
                       "--force")
    assert code == 2 and "would replace the input" in err
    assert rep.read_bytes() == before


def test_adapt_beir_into_its_own_folder_is_refused(tmp_path: Path) -> None:
    src = beir_folder(tmp_path)
    before = tree(tmp_path)
    code, _, err = cli("adapt", "beir", src, src, "--force")
    assert code == 2 and "would replace the input" in err, err
    assert tree(tmp_path) == before


# -- links, pipes and devices are written through, never replaced ---------------------------

def test_a_symlinked_output_writes_through_to_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real" / "out.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    code, _, err = cli("measure", QRELS, BM25, "-m", "AP", "-f", "csv", "-o", link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("run,topic,measure,value")
    assert leftovers(tmp_path) == []


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.run"
    link.symlink_to(tmp_path / "made.run")
    code, _, err = cli("fuse", BM25, DENSE, "-o", link)
    assert code == 0, err
    assert link.is_symlink() and (tmp_path / "made.run").read_text().startswith("q")


def test_a_fifo_output_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _, err = cli("measure", QRELS, BM25, "-m", "AP", "-f", "jsonl", "-o", fifo)
    reader.join(timeout=30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(got[0].splitlines()[0])["measure"] == "AP"


def test_a_character_device_stays_a_device(tmp_path: Path) -> None:
    """A private copy of /dev/null (never the machine's own, in case of a bug)."""
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here ({exc}); needs root and CAP_MKNOD")
    chk = checks(tmp_path)
    for args in (["measure", QRELS, BM25, "-o", dev], ["fuse", BM25, DENSE, "-o", dev],
                 ["compare", QRELS, BM25, DENSE, "--resamples", "100", "-o", dev],
                 ["gate", chk, "--report", report(), "--junit", dev, "--markdown",
                  tmp_path / "m.md"]):
        code, _, err = cli(*args)
        assert code == 0, err
        assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert leftovers(tmp_path) == []


def test_dev_stdout_is_standard_output(tmp_path: Path) -> None:
    proc = rankproof("measure", QRELS, BM25, "-m", "AP", "-f", "csv", "-o", "/dev/stdout",
                     cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("run,topic,measure,value")


# -- read-only, other kinds, --force ----------------------------------------------------------

def test_a_read_only_output_is_refused_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "means.csv"
    out.write_text("keep me\n")
    out.chmod(0o444)
    code, _, err = cli("measure", QRELS, BM25, "-f", "csv", "-o", out)
    assert code == 2 and "read-only" in err and "--force" in err
    assert out.read_text() == "keep me\n"
    code, _, err = cli("measure", QRELS, BM25, "-f", "csv", "-o", out, "--force")
    assert code == 0, err
    assert out.read_text().startswith("run,topic")
    assert stat.S_IMODE(out.stat().st_mode) == 0o444  # replaced, keeping its permissions


@pytest.mark.parametrize(("existing", "args"), [
    ("run", ["measure", QRELS, BM25, "-f", "json"]),          # a report over a run
    ("qrels", ["fuse", BM25, DENSE]),                          # a run over qrels
    ("report", ["fuse", BM25, DENSE]),                         # a run over a report
    ("report", ["compare", QRELS, BM25, DENSE, "--resamples", "100"]),  # other JSON kind
    ("jsonl-run", ["measure", QRELS, BM25, "-f", "csv"]),
])
def test_an_output_of_another_kind_is_refused_unless_forced(existing: str, args: list[object],
                                                            tmp_path: Path) -> None:
    out = tmp_path / "out.file"
    content = {"run": DENSE.read_bytes(), "qrels": QRELS.read_bytes(),
               "report": report().read_bytes(),
               "jsonl-run": b'{"qid": "1", "docid": "d", "score": 1.5}\n'}[existing]
    out.write_bytes(content)
    code, _, err = cli(*args, "-o", out)
    assert code == 2 and "the file holds" in err and "--force" in err, err
    assert out.read_bytes() == content
    code, _, err = cli(*args, "-o", out, "--force")
    assert code == 0, err
    assert out.read_bytes() != content


def test_an_output_of_the_same_kind_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    for _ in range(2):
        code, _, err = cli("compare", QRELS, BM25, DENSE, "--resamples", "100", "-o", out)
        assert code == 0, err
    fused = tmp_path / "fused.run"
    for _ in range(2):
        code, _, err = cli("fuse", BM25, DENSE, "-o", fused)
        assert code == 0, err
    table = tmp_path / "table.txt"
    table.write_text("| a | b |\n|---|---|\n")  # text of no known kind may be replaced
    code, _, err = cli("measure", QRELS, BM25, "-f", "table", "-o", table)
    assert code == 0, err


@pytest.mark.parametrize("command", [["measure"], ["compare"], ["fuse"], ["eval"], ["gate"],
                                     ["baseline", "save"], ["adapt", "beir"]])
def test_every_command_that_writes_a_named_file_has_force(command: list[str]) -> None:
    code, out, _ = cli(*command, "--help")
    assert code == 0 and "--force" in out


def test_adapt_beir_force_replaces_only_a_previous_adaptation(tmp_path: Path) -> None:
    src = beir_folder(tmp_path)
    out = tmp_path / "out"
    code, _, err = cli("adapt", "beir", src, out)
    assert code == 0, err
    first = tree(out)
    code, _, err = cli("adapt", "beir", src, out)
    assert code == 2 and "not empty" in err and tree(out) == first
    code, _, err = cli("adapt", "beir", src, out, "--force")
    assert code == 0, err
    assert tree(out) == first and leftovers(tmp_path) == []
    other = tmp_path / "precious"
    other.mkdir()
    (other / "thesis.tex").write_text("years of work")
    code, _, err = cli("adapt", "beir", src, other, "--force")
    assert code == 2 and "not a previous adaptation" in err
    assert (other / "thesis.tex").read_text() == "years of work"
