"""LaTeX fragments: each fixture's fragment compiles with pdflatex and only booktabs, names
full of LaTeX specials compile and print as written, and the ``.sources.json`` sidecar names
the exact bytes the table came from."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rankproof._version import __version__
from rankproof.report.document import read
from rankproof.report.latex import (
    MAX_TABLE_ROWS,
    SOURCES_KIND,
    latex_sources,
    render_latex,
    tex_text,
)
from rankproof.report.view import Table, View
from rankproof.report.views import build

FIXTURES = Path(__file__).parent / "fixtures"
KINDS = ("cmp", "gate", "rag", "measure", "discovery", "eval")
HOSTILE = "a\\b{c}$d&e#f^g_h%i~j<k>l|m\"n'o`p--q\x1b[31m Δé中"
WRAPPER = (r"\documentclass{article}" "\n" r"\usepackage{booktabs}" "\n"
           r"\begin{document}" "\n" r"\input{fragment}" "\n" r"\end{document}" "\n")

needs_pdflatex = pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="pdflatex not installed (make test installs texlive-latex-recommended)")


def view_of(path: Path) -> View:
    return build(read(path))


def compile_fragment(fragment: str, where: Path) -> Path:
    """Typeset ``fragment`` inside a minimal article; the PDF, or a failure quoting the log."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "fragment.tex").write_text(fragment, encoding="utf-8")
    (where / "main.tex").write_text(WRAPPER, encoding="utf-8")
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
         "main.tex"], cwd=where, capture_output=True, text=True, timeout=300, check=False)
    log = (where / "main.log").read_text(encoding="utf-8", errors="replace") \
        if (where / "main.log").exists() else result.stdout
    errors = [line for line in log.splitlines() if line.startswith("!")]
    assert result.returncode == 0 and not errors, "\n".join(errors) or result.stdout[-2000:]
    pdf = where / "main.pdf"
    assert pdf.stat().st_size > 0
    return pdf


def pdf_text(pdf: Path) -> str | None:
    """The PDF's text by ``pdftotext`` when it is installed (None otherwise)."""
    if shutil.which("pdftotext") is None:
        return None
    out = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout


def hostile_view() -> View:
    view = view_of(FIXTURES / "cmp.json")
    verdicts = tuple(dataclasses.replace(v, candidate=HOSTILE + v.candidate[:4])
                     for v in view.verdicts)
    return dataclasses.replace(view, verdicts=verdicts)


@needs_pdflatex
@pytest.mark.parametrize("kind", KINDS)
def test_every_fixture_compiles(kind: str, tmp_path: Path) -> None:
    view = view_of(FIXTURES / f"{kind}.json")
    fragment = render_latex(view)
    assert fragment == render_latex(view_of(FIXTURES / f"{kind}.json"))
    assert r"\documentclass" not in fragment and r"\begin{document}" not in fragment
    assert fragment.count(r"\begin{tabular}") == fragment.count(r"\end{tabular}") >= 1
    assert fragment.count(r"\toprule") == fragment.count(r"\bottomrule") >= 1
    assert f"% input digest: {view.digest}" in fragment
    assert f"% source: {kind}.json ({view.kind}, schema_version {view.schema_version})" \
        in fragment
    compile_fragment(fragment, tmp_path)


def test_verdict_rows_carry_marks_and_their_own_interval() -> None:
    view = view_of(FIXTURES / "cmp.json")
    fragment = render_latex(view, style="long")
    body = fragment.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    rows = [line for line in body.splitlines() if line.endswith(r"\\")]
    assert len(rows) == len(view.verdicts) == 10
    for v, line in zip(view.verdicts, rows, strict=True):
        cells = line.removesuffix(r" \\").split(" & ")
        assert len(cells) == 9
        assert v.ci_low is not None and v.ci_high is not None and v.ci_level is not None
        assert cells[5] == f"${v.ci_low:+.4f}$" and cells[6] == f"${v.ci_high:+.4f}$"
        assert cells[7] == f"{v.ci_level * 100:.4g}\\%"
        mark = {"better": r"^{\dagger}", "worse": r"^{\ddagger}"}.get(v.verdict, "")
        assert cells[4] == f"${v.difference:+.4f}{mark}$"
    assert fragment.count(r"^{\dagger}") == 8 + 1  # eight better rows and the note
    assert "holm" in fragment and r"$\alpha = 0.05$" in fragment
    gate = render_latex(view_of(FIXTURES / "gate.json"), style="long")
    assert r"$-0.0582^{\ddagger}$ & $-0.1138$ & $-0.0025$ & 95\% & 0.0408 \\" in gate


@pytest.mark.parametrize(("raw", "expected"), [
    ("BM25_k1=0.9", r"BM25\_k1=0.9"),
    ("50% & #1", r"50\% \& \#1"),
    ("{x}^~", r"\{x\}\textasciicircum{}\textasciitilde{}"),
    ("a\\b", r"a\textbackslash{}b"),
    ("$5", r"{\upshape\char36}5"),
    ("<|>", r"\textless{}\textbar{}\textgreater{}"),
    ("a--b---c", "a-{}-b-{}-{}-c"),
    ("x\x1b[1m\ny", r"x\textbackslash{}x1b[1m\textbackslash{}ny"),
    ("café Δ 中", r"caf{\'{e}} $\Delta$ [U+4E2D]"),
    ("x" * 300, "x" * 199 + r"\dots{}"),
])
def test_tex_text(raw: str, expected: str) -> None:
    assert tex_text(raw) == expected


@needs_pdflatex
def test_hostile_names_compile_and_print_as_written(tmp_path: Path) -> None:
    view = hostile_view()
    fragment = render_latex(view, style="long")
    escaped = tex_text(HOSTILE)
    assert escaped in fragment
    body = fragment.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    for line in body.splitlines():
        if line.endswith(r"\\"):
            system = line.split(" & ")[1]
            assert system.startswith(escaped)
            assert not re.search(r"(?<!\\)[#%&_]", system)
            assert "\x1b" not in system and "中" not in system
    pdf = compile_fragment(fragment, tmp_path)
    text = pdf_text(pdf)
    if text is not None:
        # Characters that print as themselves in the default fonts, read back from the PDF.
        assert "$d&e#f" in text and "%i" in text and "x1b[31m" in text


@needs_pdflatex
def test_a_long_table_is_cut_with_a_note(tmp_path: Path) -> None:
    view = view_of(FIXTURES / "measure.json")
    long = Table(key="pq", title="per-query", columns=("qid", "nDCG@10 & more"),
                 rows=tuple((f"q_{i}", f"{i / 100:.4f}") for i in range(100)),
                 numeric=(False, True))
    fragment = render_latex(dataclasses.replace(view, tables=(*view.tables, long)))
    section = fragment.split("% table: per-query", 1)[1]
    assert section.count(r"q\_") == MAX_TABLE_ROWS
    assert f"{100 - MAX_TABLE_ROWS:,} more rows: see the HTML or JSON report." in section
    assert r"nDCG@10 \& more" in section
    compile_fragment(fragment, tmp_path)


def test_sources_name_the_input_bytes() -> None:
    path = FIXTURES / "cmp.json"
    view = view_of(path)
    command = ["rankproof", "report", str(path), "--latex", "table.tex"]
    sources = latex_sources(view, command=command, output="table.tex")
    assert sources == {
        "kind": SOURCES_KIND, "schema_version": 1,
        "input": {"path": str(path), "sha256": "sha256:" + hashlib.sha256(
            path.read_bytes()).hexdigest(), "kind": "rankproof.comparison", "schema_version": 3},
        "command": command, "rankproof_version": __version__, "output": "table.tex",
    }
    assert json.loads(json.dumps(sources)) == sources
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", sources["input"]["sha256"])
