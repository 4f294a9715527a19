"""A gate verdict as JUnit XML (the Ant/Jenkins dialect every CI system reads).

One ``<testsuite>`` per gate, one ``<testcase>`` per check, named by the
check id (stable across runs, so CI can track a check's history):

* a passing check is a bare testcase;
* a failing **blocking** check carries ``<failure message=… type=…>`` with
  the full numbers in its text;
* a failing **warn-level** check is a *passing* testcase whose
  ``<system-out>`` starts with ``WARN:`` and gives the same message.

Why not ``<skipped>`` for warnings: "skipped" tells a reader the check did
not run, which is false — it ran and found something worth a look — and
several CI dashboards hide skipped tests. Why not ``<failure>``: every CI
system counts a failure as a failed build or an "unstable" one, which is
exactly what ``level: warn`` promises not to do. The suite's ``properties``
also count the warnings, so they are visible without opening each case.

The output validates against the Jenkins/Ant JUnit schema (a subset of
``junit-10.xsd``; see ``tests/gate/junit.xsd``).
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from rankproof.gate import CheckResult, GateVerdict
from rankproof.report.gate import cells

# Characters XML 1.0 cannot carry at all, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _details(c: CheckResult) -> str:
    f = cells(c)
    lines = [c.message, f"metric: {f['metric']}", f"value: {f['value']}",
             *([f"baseline: {f['baseline']}"] if c.kind == "vs_baseline" else []),
             f"rule: {f['rule']}",
             f"coverage: {f['coverage']}", f"level: {c.level}"]
    if c.kind == "vs_baseline":
        lines += [f"difference [interval] (level): {f['delta']}", f"p: {f['p']}",
                  f"wins/ties/losses: {c.wins}/{c.ties}/{c.losses}",
                  f"test: {c.test}, resamples {c.resamples}, seed {c.seed}"]
    return "\n".join(lines)


def verdict_junit(v: GateVerdict, *, suite: str | None = None,
                  timestamp: datetime | None = None) -> str:
    """The verdict as a JUnit XML document (UTF-8 text with an XML declaration)."""
    name = suite or f"rankproof.gate.{v.run}"
    failures = len(v.failures)
    stamp = (timestamp or datetime.now(UTC)).replace(tzinfo=None).isoformat(timespec="seconds")
    root = ET.Element("testsuites", {"name": "rankproof gate", "tests": str(len(v.checks)),
                                     "failures": str(failures), "errors": "0", "time": "0"})
    ts = ET.SubElement(root, "testsuite", {
        "name": _clean(name), "tests": str(len(v.checks)), "failures": str(failures),
        "errors": "0", "skipped": "0", "time": "0", "timestamp": stamp,
        "hostname": _clean(socket.gethostname() or "localhost")})
    props = ET.SubElement(ts, "properties")
    for key, value in (("run", v.run), ("baseline", v.baseline or ""),
                       ("checks", v.source or ""), ("passed", str(v.passed).lower()),
                       ("warnings", str(len(v.warnings))), ("seed", str(v.seed)),
                       ("resamples", str(v.resamples)), ("correction", v.correction)):
        ET.SubElement(props, "property", {"name": f"rankproof.{key}", "value": _clean(value)})
    for c in v.checks:
        case = ET.SubElement(ts, "testcase", {"name": _clean(c.id), "classname": _clean(name),
                                              "time": "0"})
        if c.outcome == "FAIL":
            failure = ET.SubElement(case, "failure", {
                "message": _clean(c.message),
                "type": "rankproof.regression" if c.kind == "vs_baseline"
                else f"rankproof.{c.kind}"})
            failure.text = _clean(_details(c))
        elif c.outcome == "WARN":
            out = ET.SubElement(case, "system-out")
            out.text = _clean("WARN: " + _details(c))
    if v.notes:
        out = ET.SubElement(ts, "system-out")
        out.text = _clean("\n".join(v.notes))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
