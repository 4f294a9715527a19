"""``rankproof report`` end to end: every format from one call, refusals that leave nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.harness._golden import golden_report
from tests.report._browser import assert_offline
from typer.testing import CliRunner

from rankproof.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["report", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def eval_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("eval") / "eval.json"
    path.write_text(golden_report(2000).model_dump_json(), encoding="utf-8")
    return path


def test_all_three_formats_from_one_call(eval_json: Path, tmp_path: Path) -> None:
    html, md, tex = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.tex"
    code, _, err = invoke(str(eval_json), "--html", str(html), "--md", str(md),
                          "--latex", str(tex))
    assert code == 0, err
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert md.read_text(encoding="utf-8").startswith("# ")
    assert "\\toprule" in tex.read_text(encoding="utf-8")
    sources = json.loads((tmp_path / "r.sources.json").read_text(encoding="utf-8"))
    digest = "sha256:" + hashlib.sha256(eval_json.read_bytes()).hexdigest()
    assert digest in json.dumps(sources)
    assert sources["command"][:3] == ["rankproof", "report", str(eval_json)]
    assert "--latex" in sources["command"]


def test_markdown_goes_to_standard_output_by_default(eval_json: Path) -> None:
    code, out, _ = invoke(str(eval_json))
    assert code == 0
    assert out.startswith("# eval: golden")
    assert len(out) <= 65_536 + 1


def test_the_html_is_offline(eval_json: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert invoke(str(eval_json), "--html", str(out))[0] == 0
    assert_offline(out.read_text(encoding="utf-8"))


def _unchanged(path: Path, before: bytes) -> bool:
    return path.read_bytes() == before


@pytest.mark.parametrize("doc,message", [
    ({"kind": "rankproof.wat", "schema_version": 1}, "unknown kind"),
    ({"kind": "rankproof.comparison", "schema_version": 99}, "newer than this rankproof"),
    ({"kind": "rankproof.eval", "schema_version": "2"}, "schema_version"),
    ({"hello": "world"}, "not a rankproof JSON document"),
    ([1, 2, 3], "not a rankproof JSON document"),
])
def test_a_document_it_cannot_render_is_refused_and_nothing_is_written(
        tmp_path: Path, doc: object, message: str) -> None:
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    outs = [tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.tex"]
    code, _, err = invoke(str(src), "--html", str(outs[0]), "--md", str(outs[1]),
                          "--latex", str(outs[2]))
    assert code == 2
    assert message in err and "in.json" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json"]


def test_a_malformed_document_of_a_known_kind_is_bad_input(tmp_path: Path) -> None:
    src = tmp_path / "gate.json"
    doc = json.loads((FIXTURES / "gate.json").read_text(encoding="utf-8"))
    doc["checks"][0]["outcome"] = None
    del doc["checks"][0]["id"]
    src.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = invoke(str(src), "--html", str(tmp_path / "r.html"))
    assert code == 2, err
    assert "gate.json" in err and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("flag", ["--html", "--md", "--latex"])
def test_an_output_onto_the_input_is_refused(eval_json: Path, tmp_path: Path,
                                              flag: str) -> None:
    src = tmp_path / "in.json"
    src.write_bytes(eval_json.read_bytes())
    before = src.read_bytes()
    code, _, err = invoke(str(src), flag, str(src), "--force")
    assert code == 2
    assert "replace the input" in err
    assert _unchanged(src, before)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json"]


def test_the_latex_sidecar_onto_the_input_is_refused(eval_json: Path, tmp_path: Path) -> None:
    """``table.tex`` writes ``table.sources.json``: that path is an output too."""
    src = tmp_path / "table.sources.json"
    src.write_bytes(eval_json.read_bytes())
    code, _, err = invoke(str(src), "--latex", str(tmp_path / "table.tex"))
    assert code == 2 and "replace the input" in err
    assert not (tmp_path / "table.tex").exists()


def test_a_missing_evidence_sidecar_is_a_caveat_not_a_failure(eval_json: Path,
                                                              tmp_path: Path) -> None:
    doc = json.loads(eval_json.read_text(encoding="utf-8"))
    doc["evidence"] = {"sidecar": "gone.evidence.json", "sha256": "sha256:" + "0" * 64,
                       "ids": 5, "k": 10}
    src = tmp_path / "eval.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "r.html"
    code, _, err = invoke(str(src), "--html", str(out))
    assert code == 0, err
    assert "gone.evidence.json" in out.read_text(encoding="utf-8")


def test_run_results_and_baselines_render_too(eval_json: Path, tmp_path: Path) -> None:
    """Every JSON rankproof writes: a saved baseline (and the run result inside it)."""
    folder = tmp_path / "baselines"
    saved = runner.invoke(app, ["baseline", "save", str(eval_json), "-n", "main", "--stage",
                                "fusion", "--baseline-dir", str(folder)])
    assert saved.exit_code == 0, saved.stderr
    baseline = folder / "main.json"
    run = tmp_path / "run.json"
    run.write_text(json.dumps(json.loads(baseline.read_text())["run"]), encoding="utf-8")
    for src, title in ((baseline, "# baseline main, run: fusion"), (run, "# run: fusion")):
        code, out, err = invoke(str(src), "--md", "-", "--html", str(tmp_path / "x.html"),
                                "--force")
        assert code == 0, err
        assert out.startswith(title)
        report = golden_report(2000)
        fusion = report.stage("fusion")
        assert f"| nDCG@10 | {fusion.means['nDCG@10']:.4f} |" in out


def test_dash_o_writes_the_format_its_suffix_or_dash_f_names(tmp_path: Path) -> None:
    cmp = str(FIXTURES / "cmp.json")
    for flag, name in (("--html", "a.html"), ("--md", "a.md"), ("--latex", "a.tex")):
        code, _, err = invoke(cmp, flag, str(tmp_path / name))
        assert code == 0, err
        code, _, err = invoke(cmp, "-o", str(tmp_path / f"o-{name}"))
        assert code == 0, err
        assert (tmp_path / f"o-{name}").read_bytes() == (tmp_path / name).read_bytes(), name
    code, _, err = invoke(cmp, "-o", str(tmp_path / "table.txt"), "-f", "latex")
    assert code == 0, err
    assert (tmp_path / "table.txt").read_bytes() == (tmp_path / "a.tex").read_bytes()
    code, out, _ = invoke(cmp, "-o", "-")
    assert code == 0 and out == (tmp_path / "a.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("args", "says"), [
    (["-o", "x.txt"], "cannot tell the format of x.txt"),
    (["-f", "html"], "give -o PATH"),
    (["-o", "x.html", "-f", "pdf"], "must be html, md or latex"),
    (["-o", "x.html", "--html", "y.html"], "-o and --html both ask for html"),
])
def test_dash_o_refusals_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       args: list[str], says: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(str(FIXTURES / "cmp.json"), *args)
    assert code == 2 and says in err
    assert list(tmp_path.iterdir()) == []


def test_compare_dash_f_md_is_report_dash_md_of_the_file_it_wrote(tmp_path: Path) -> None:
    toy = Path(__file__).resolve().parents[2] / "examples" / "toy"
    out = tmp_path / "cmp.json"
    md = runner.invoke(app, ["compare", str(toy / "qrels.txt"), str(toy / "bm25.run"),
                             str(toy / "dense.run"), "--resamples", "500", "-f", "md",
                             "-o", str(out)])
    assert md.exit_code == 0, md.output
    code, _, err = invoke(str(out), "--md", str(tmp_path / "r.md"))
    assert code == 0, err
    assert md.stdout == (tmp_path / "r.md").read_text(encoding="utf-8")
