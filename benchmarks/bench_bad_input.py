"""Bad input costs no more than good input: ``rankproof measure`` on a clean 10-million-line
run against the same run with one duplicate (qid, docid) row, or one malformed line, in
the middle.

Usage::

    .venv/bin/python benchmarks/bench_bad_input.py                  # 1,000,000 x 10
    .venv/bin/python benchmarks/bench_bad_input.py --topics 100000  # a quick look

Generates (once, outside the repository, `gen_million.py`) the one-relevant qrels and run
A, then writes two copies of A beside it: one with the line in the middle of the file
repeated right after itself (same topic, same document: a duplicate pair), one with a
line of three fields put in the middle. Each of the three is measured in its own fresh
process (``rankproof measure QRELS RUN -m nDCG@10 --format csv``), and the wall time, CPU
time and peak resident memory of that child (`_common.timed_child`) are printed with
their ratio to the clean run's. The target (issue 23 item 5): each bad run is reported
(exit 2, naming the line) within 1.2x the clean run's time and memory.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:
    sys.path.append(sys.path.pop(0))

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from _common import start_launcher, timed_child  # noqa: E402
from gen_million import add_million_arguments, write_million  # noqa: E402


def _with_line(source: Path, target: Path, make: str) -> int:
    """Copy ``source`` to ``target`` with a bad line after the middle one; its line number."""
    if target.exists():
        return int(target.with_suffix(".line").read_text())
    data = source.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    start = data.rindex(b"\n", 0, cut - 1) + 1
    middle = data[start:cut]
    extra = middle if make == "duplicate" else b"q-bad Q0 broken\n"
    line = data.count(b"\n", 0, cut) + 1
    tmp = target.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        fh.write(data[:cut])
        fh.write(extra)
        fh.write(data[cut:])
    os.replace(tmp, target)
    target.with_suffix(".line").write_text(str(line))
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_million_arguments(ap, Path("bench-data"))
    ap.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = ap.parse_args()
    start_launcher()  # before any data is generated here (see _common.Launcher)
    paths = write_million(args.out_dir, args.topics, args.depth)
    exe = str(Path(sys.executable).with_name("rankproof"))
    rows: dict[str, dict[str, Any]] = {}
    runs = {"clean": (paths.a, None)}
    for kind in ("duplicate", "malformed"):
        target = paths.a.with_name(f"{paths.a.stem}-{kind}.trec")
        runs[kind] = (target, _with_line(paths.a, target, kind))
    for kind, (run, line) in runs.items():
        _, err, usage = timed_child([exe, "measure", str(paths.qrels), str(run),
                                     "-m", "nDCG@10", "--format", "csv"])
        message = err.decode("utf-8", "replace").strip().splitlines()[-1:] if err else []
        expected = 0 if line is None else 2
        if usage["returncode"] != expected or (line is not None
                                               and f"line {line}" not in " ".join(message)):
            raise RuntimeError(f"{kind}: exit {usage['returncode']}, {message}")
        rows[kind] = {"wall_s": usage["wall_s"], "cpu_s": usage["cpu_s"],
                      "peak_mib": usage["peak_mib"], "line": line,
                      "message": message[0] if message else ""}
    clean = rows["clean"]
    print(f"{'run':10s} {'wall s':>8s} {'CPU s':>8s} {'peak MiB':>9s} {'wall x':>7s} "
          f"{'CPU x':>7s} {'peak x':>7s}")
    for kind, r in rows.items():
        r["wall_ratio"] = r["wall_s"] / clean["wall_s"]
        r["cpu_ratio"] = r["cpu_s"] / clean["cpu_s"]
        r["peak_ratio"] = r["peak_mib"] / clean["peak_mib"]
        print(f"{kind:10s} {r['wall_s']:8.2f} {r['cpu_s']:8.2f} {r['peak_mib']:9.0f} "
              f"{r['wall_ratio']:7.2f} {r['cpu_ratio']:7.2f} {r['peak_ratio']:7.2f}")
    for kind in ("duplicate", "malformed"):
        print(f"{kind}: {rows[kind]['message']}")
    print("target: each bad run within 1.2x the clean run's time and peak memory")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
