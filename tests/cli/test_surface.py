"""One surface: every command reads every format, names runs the same way, and prints
every column and digit when its output is not a terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
QRELS, BM25, DENSE = TOY / "qrels.txt", TOY / "bm25.run", TOY / "dense.run"
runner = CliRunner()


def rankproof(*args: str, stdin: str | None = None, columns: int = 40,
              cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess whose stdout is a pipe (a narrow COLUMNS, so that a
    console that trusted it would squeeze its tables)."""
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "rankproof", *args], input=stdin,
                          capture_output=True, text=True, check=False, cwd=cwd, env=env)


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "40"})
    return result.exit_code, result.stdout, result.stderr


def means(stdout: str) -> dict[str, dict[str, float]]:
    return {r["run"]: r["means"] for r in json.loads(stdout)["runs"]}


# -- formats and standard input ------------------------------------------------------------

def test_run_from_standard_input() -> None:
    proc = rankproof("measure", str(QRELS), "-", "-m", "AP", "--format", "json",
                     stdin=BM25.read_text())
    assert proc.returncode == 0, proc.stderr
    from_file = rankproof("measure", str(QRELS), str(BM25), "-m", "AP", "--format", "json")
    assert list(means(proc.stdout).values()) == list(means(from_file.stdout).values())


def test_standard_input_is_read_once() -> None:
    code, _, err = cli("measure", "-", "-", "-m", "AP")
    assert code == 2 and "standard input" in err


def _beir_qrels(path: Path) -> None:
    rows = [line.split() for line in QRELS.read_text().splitlines() if line.strip()]
    path.write_text("query-id\tcorpus-id\tscore\n"
                    + "".join(f"{q}\t{d}\t{r}\n" for q, _, d, r in rows))


def _jsonl_run(src: Path, path: Path) -> None:
    rows = [line.split() for line in src.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps({"qid": q, "docid": d, "score": float(s)}) + "\n"
                            for q, _, d, _, s, _ in rows))


def test_beir_qrels_and_jsonl_run(tmp_path: Path) -> None:
    _beir_qrels(tmp_path / "qrels.tsv")
    _jsonl_run(BM25, tmp_path / "run.jsonl")
    code, out, err = cli("measure", str(tmp_path / "qrels.tsv"), str(tmp_path / "run.jsonl"),
                         "-m", "AP", "-m", "nDCG@10", "--format", "json")
    assert code == 0, err
    _, trec, _ = cli("measure", str(QRELS), str(BM25), "-m", "AP", "-m", "nDCG@10",
                     "--format", "json")
    assert means(out) == {"run": means(trec)["bm25"]}


def test_compare_and_fuse_read_every_format(tmp_path: Path) -> None:
    _beir_qrels(tmp_path / "qrels.tsv")
    _jsonl_run(DENSE, tmp_path / "dense.jsonl")
    code, out, err = cli("compare", str(tmp_path / "qrels.tsv"), str(BM25),
                         str(tmp_path / "dense.jsonl"), "-m", "AP", "--format", "json",
                         "--resamples", "200")
    assert code == 0, err
    assert json.loads(out)["systems"] == ["bm25", "dense"]
    code, out, err = cli("fuse", str(BM25), str(tmp_path / "dense.jsonl"), "-o", "-")
    assert code == 0, err
    assert out.splitlines()[0].split()[-1] == "rankproof-fusion"


# -- output that is not a terminal is never truncated ------------------------------------

def test_measure_into_a_pipe_keeps_every_column_and_digit() -> None:
    name = "a-run-name-much-longer-than-the-forty-columns-of-this-terminal"
    proc = rankproof("measure", str(QRELS), str(BM25), "--name", name)
    assert proc.returncode == 0, proc.stderr
    assert name in proc.stdout and "…" not in proc.stdout
    for header, value in (("nDCG@10", "0.4366"), ("RR@10", "0.8958"), ("AP", "0.2899"),
                          ("R@100", "0.3750"), ("P@10", "0.1750")):
        assert header in proc.stdout and value in proc.stdout
    assert "\x1b[" not in proc.stdout  # no colour codes in a pipe


def test_compare_into_a_pipe_does_not_wrap_numbers() -> None:
    proc = rankproof("compare", str(QRELS), str(BM25), str(DENSE), "-m", "AP",
                     "--resamples", "200")
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if "dense" in line and "│" in line)
    assert re.search(r"\[[+-]\d\.\d{4}, [+-]\d\.\d{4}\]", row), row
    assert "no detectable difference" in row or "better" in row or "worse" in row


def test_measure_output_to_standard_output_and_files_agree(tmp_path: Path) -> None:
    code, out, _ = cli("measure", str(QRELS), str(BM25), "--format", "csv", "-o", "-")
    assert code == 0
    code, _, _ = cli("measure", str(QRELS), str(BM25), "--format", "csv", "-o",
                     str(tmp_path / "m.csv"))
    assert code == 0 and (tmp_path / "m.csv").read_text() == out
    code, out, _ = cli("measure", str(QRELS), str(BM25), "-o", "-")
    assert code == 0 and "0.4366" in out and "…" not in out


def test_compare_output_dash_is_standard_output() -> None:
    code, out, err = cli("compare", str(QRELS), str(BM25), str(DENSE), "-m", "AP",
                         "--resamples", "200", "--format", "md", "-o", "-")
    assert code == 0, err
    doc, end = json.JSONDecoder().raw_decode(out)
    assert doc["baseline"] == "bm25"
    assert "| dense" in out[end:]


# -- run names -----------------------------------------------------------------------------

def _copy(src: Path, dst: Path, tag: str | None = None) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    lines = src.read_text().splitlines()
    if tag is not None:
        lines = [" ".join([*line.split()[:5], tag]) for line in lines]
    dst.write_text("\n".join(lines) + "\n")
    return dst


def _names(*args: str) -> list[str]:
    code, out, err = cli("measure", str(QRELS), *args, "-m", "AP", "--format", "json")
    assert code == 0, err
    return list(means(out))


def test_a_unique_run_tag_names_the_run(tmp_path: Path) -> None:
    a = _copy(BM25, tmp_path / "one" / "results.txt")
    b = _copy(DENSE, tmp_path / "two" / "results.txt")
    assert _names(str(a), str(b)) == ["bm25", "dense"]


def test_shared_tags_fall_back_to_the_shortest_distinguishing_path(tmp_path: Path) -> None:
    a = _copy(BM25, tmp_path / "x" / "dl19" / "trec_results_dl19.txt", tag="same")
    b = _copy(DENSE, tmp_path / "y" / "dl19" / "trec_results_dl19.txt", tag="same")
    c = _copy(DENSE, tmp_path / "z" / "other.txt", tag="same")
    assert _names(str(a), str(b), str(c)) == [
        "x/dl19/trec_results_dl19", "y/dl19/trec_results_dl19", "other"]


def test_names_are_the_same_in_every_command_and_format(tmp_path: Path) -> None:
    a = _copy(BM25, tmp_path / "x" / "run.txt", tag="same")
    b = _copy(DENSE, tmp_path / "y" / "run.txt", tag="same")
    assert _names(str(a), str(b)) == ["x/run", "y/run"]
    code, out, _ = cli("measure", str(QRELS), str(a), str(b), "-m", "AP", "--format", "csv")
    assert code == 0 and {line.split(",")[0] for line in out.splitlines()[1:]} == {
        "x/run", "y/run"}
    code, out, err = cli("compare", str(QRELS), str(a), str(b), "-m", "AP", "--format",
                         "json", "--resamples", "200")
    assert code == 0, err
    assert json.loads(out)["systems"] == ["x/run", "y/run"]


def test_name_option_names_each_run_in_order() -> None:
    assert _names(str(BM25), str(DENSE), "--name", "old", "--name", "new") == ["old", "new"]
    code, _, err = cli("measure", str(QRELS), str(BM25), str(DENSE), "--name", "old")
    assert code == 2 and "--name" in err
    code, _, err = cli("measure", str(QRELS), str(BM25), str(DENSE), "--name", "x",
                       "--name", "x")
    assert code == 2 and "'x'" in err


def test_the_same_file_twice_needs_names() -> None:
    code, _, err = cli("measure", str(QRELS), str(BM25), str(BM25))
    assert code == 2 and "--name" in err
    assert _names(str(BM25), str(BM25), "--name", "a", "--name", "b") == ["a", "b"]


# -- one flag, one meaning ------------------------------------------------------------------

def _reverse_ranks(src: Path, dst: Path) -> Path:
    """The same run with its rank column reversed within each query (scores unchanged)."""
    rows = [line.split() for line in src.read_text().splitlines() if line.strip()]
    per_query: dict[str, int] = {}
    for q, *_ in rows:
        per_query[q] = per_query.get(q, 0) + 1
    dst.write_text("".join(f"{q} Q0 {d} {per_query[q] + 1 - int(r)} {s} {t}\n"
                           for q, _, d, r, s, t in rows))
    return dst


def test_compare_order_rank_ranks_by_the_rank_column(tmp_path: Path) -> None:
    reversed_run = _reverse_ranks(BM25, tmp_path / "reversed.run")
    by_rank: dict[str, float] = {}
    for order in ("score", "rank"):
        code, out, err = cli("compare", str(QRELS), str(reversed_run), str(DENSE), "-m",
                             "nDCG@10", "--order", order, "--format", "json",
                             "--resamples", "200")
        assert code == 0, err
        row = json.loads(out)["rows"][0]
        by_rank[order] = row["result"]["mean_b"]
        code, out, _ = cli("measure", str(QRELS), str(reversed_run), "-m", "nDCG@10",
                           "--order", order, "--format", "json")
        assert means(out)["bm25"]["nDCG@10"] == pytest.approx(by_rank[order], abs=1e-12)
    assert by_rank["score"] != pytest.approx(by_rank["rank"])


@pytest.mark.parametrize("command", [["measure", str(QRELS)], ["compare", str(QRELS)],
                                     ["fuse"]])
def test_every_command_that_reads_runs_has_the_run_flags(command: list[str]) -> None:
    result = runner.invoke(app, [*command[:1], "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for flag in ("--order", "--dedupe", "--allow-extra-columns"):
        assert flag in result.stdout, (command, flag)
    if command[0] != "fuse":
        for flag in ("--topics", "--rel-level", "--name"):
            assert flag in result.stdout, (command, flag)


def test_compare_accepts_a_trec_eval_set() -> None:
    code, out, err = cli("compare", str(QRELS), str(BM25), str(DENSE), "-m", "official",
                         "--format", "json", "--resamples", "200")
    assert code == 0, err
    doc = json.loads(out)
    assert "AP" in doc["measures"] and "P@10" in doc["measures"]
    assert {r["measure"] for r in doc["rows"]} == set(doc["measures"])


def test_msmarco_run(tmp_path: Path) -> None:
    rows = [line.split() for line in BM25.read_text().splitlines() if line.strip()]
    run = tmp_path / "run.tsv"
    run.write_text("".join(f"{q}\t{d}\t{r}\n" for q, _, d, r, _, _ in rows))
    code, out, err = cli("measure", str(QRELS), str(run), "-m", "AP", "--format", "csv")
    assert code == 0, err
    assert out.splitlines()[1].startswith("run,all,AP,0.2899")


def test_a_narrow_terminal_wraps_rows_instead_of_dropping_columns() -> None:
    import io

    from rich.console import Console
    from rich.table import Table

    from rankproof.report.console import print_table

    table = Table(title="means")
    table.add_column("run")
    measures = [f"measure-{i}" for i in range(8)]
    for m in measures:
        table.add_column(m, justify="right")
    table.add_row("a-long-run-name", *[f"0.{i}234" for i in range(8)])
    buf = io.StringIO()
    console = Console(file=buf, width=50, force_terminal=True, color_system=None)
    print_table(console, table)
    text = buf.getvalue()
    assert "…" not in text
    assert all(len(line) <= 50 for line in text.splitlines())
    for i, m in enumerate(measures):
        assert m in text and f"0.{i}234" in text
    assert text.count("a-long-run-name") > 1  # the first column repeats in each block


@pytest.mark.parametrize("fmt", ["trec", "jsonl", "msmarco"])
def test_fuse_writes_any_run_format_that_measure_reads_back(tmp_path: Path, fmt: str) -> None:
    suffix = {"trec": "run", "jsonl": "jsonl", "msmarco": "tsv"}[fmt]
    out = tmp_path / f"fused.{suffix}"
    code, _, err = cli("fuse", str(BM25), str(DENSE), "-o", str(out), "--format", fmt)
    assert code == 0, err
    code, printed, _ = cli("fuse", str(BM25), str(DENSE), "-o", "-", "--format", fmt)
    assert code == 0 and printed == out.read_text()
    assert _names(str(out)) == (["rankproof-fusion"] if fmt == "trec" else ["fused"])


def test_names_from_files_are_printed_verbatim_in_tables() -> None:
    """A run name is data, not Rich markup: ``[bold]`` prints as written in every table."""
    for command in (["measure", str(QRELS), str(BM25), str(DENSE), "-m", "AP"],
                    ["compare", str(QRELS), str(BM25), str(DENSE), "-m", "AP",
                     "--resamples", "200"]):
        code, out, err = cli(*command, "--name", "[bold]base[/bold]", "--name", "[/x] new")
        assert code == 0, err
        assert "[bold]base[/bold]" in out and "[/x] new" in out


# -- outputs never replace inputs; a bad destination is bad input ---------------------------

@pytest.mark.parametrize("command", ["measure", "fuse"])
def test_an_output_never_replaces_an_input(command: str, tmp_path: Path) -> None:
    run = tmp_path / "bm25.run"
    run.write_bytes(BM25.read_bytes())
    args = ([command, str(QRELS), str(run)] if command == "measure"
            else [command, str(run), str(DENSE)])
    code, _, err = cli(*args, "-o", str(run))
    assert code == 2 and "would replace the input" in err
    assert run.read_bytes() == BM25.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bm25.run"]  # no temporary left


def test_a_gate_output_never_replaces_its_report_or_checks(tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: floor\n    metric: nDCG@10\n    op: '>='\n"
                      "    threshold: 0.0\n")
    before = checks.read_bytes()
    code, _, err = cli("gate", str(checks), "--report", str(tmp_path / "r.json"),
                       "--junit", str(tmp_path / "ok.xml"), "--markdown", str(checks))
    assert code == 2 and "would replace the input" in err
    assert checks.read_bytes() == before and not (tmp_path / "ok.xml").exists()


def test_an_unwritable_destination_is_bad_input_not_a_crash(tmp_path: Path) -> None:
    code, _, err = cli("measure", str(QRELS), str(BM25), "-o", str(tmp_path))
    assert code == 2 and "cannot write here: is a directory" in err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli("measure", str(QRELS), str(BM25), "-o", str(blocker / "out.json"))
    assert code == 2 and "cannot write here" in err and "internal error" not in err


def test_the_same_run_twice_needs_names() -> None:
    code, _, err = cli("compare", str(QRELS), str(BM25), str(BM25), "-m", "AP")
    assert code == 2 and "is given twice" in err
    code, out, err = cli("compare", str(QRELS), str(BM25), str(BM25), "-m", "AP",
                         "--name", "a", "--name", "b", "--resamples", "200", "--format", "md")
    assert code == 0, err
    assert "| AP | b \\[1,2\\] | 0.2899 | 0.2899 | +0.0000 |" in out
