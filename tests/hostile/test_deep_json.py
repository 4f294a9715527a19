"""Every JSON rankproof reads back goes through the one bounded reader (issue 22, item 7).

A cached stage record, a target checkpoint's manifest and shard rows, and a
discovery calibration file used to be read with ``json.loads`` directly, so a
deeply nested file crashed with ``RecursionError`` (exit 3, "a bug in
rankproof"). Now each is an `InputError` naming the file (or, for a cache, a
miss), like every other file rankproof reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rankproof import InputError
from rankproof._limits import MAX_NESTING_DEPTH
from rankproof.data import parse_document

DEEP = "[" * 200_000 + "]" * 200_000
TOO_DEEP = "[" * (MAX_NESTING_DEPTH + 2) + "]" * (MAX_NESTING_DEPTH + 2)


@pytest.mark.parametrize("text", [DEEP, TOO_DEEP])
def test_parse_document_refuses_deep_nesting_naming_the_source(text: str) -> None:
    reply = r"reply\.json(, field .*)?: cannot read the reply: "
    with pytest.raises(InputError, match=reply) as got:
        parse_document(text, "reply.json", what="reply")
    assert got.value.path == "reply.json"


def test_parse_document_bounds_bytes_keys_and_yaml() -> None:
    with pytest.raises(InputError, match="not UTF-8"):
        parse_document(b'{"a": "\xff"}', "x")
    with pytest.raises(InputError, match="duplicate key"):
        parse_document('{"a": 1, "a": 2}', "x")
    with pytest.raises(InputError, match="x, line 1"):
        parse_document("{nope", "x")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    with pytest.raises(InputError, match="x"):
        parse_document(bomb, "x", yaml=True)
    assert parse_document('{"a": [1, 2]}', "x") == {"a": [1, 2]}


def test_a_deep_cached_stage_record_is_a_miss(tmp_path: Path) -> None:
    from rankproof.pipeline._cache import STAGE_FILE, read_record

    (tmp_path / STAGE_FILE).write_text(DEEP)
    assert read_record(tmp_path) is None


def test_a_deep_checkpoint_manifest_is_refused_naming_it(tmp_path: Path) -> None:
    from rankproof.targets._checkpoint import MANIFEST, Checkpoint

    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / MANIFEST).write_text(DEEP)
    with pytest.raises(InputError, match=r"manifest\.json: cannot read the checkpoint manifest"):
        Checkpoint.open(folder, {"run": "r"}, shard_size=5, cases=10, resume=True)


def test_a_deep_calibration_file_is_refused_naming_it(tmp_path: Path) -> None:
    from rankproof.discovery import MinScoreCalibration

    path = tmp_path / "calibration.json"
    path.write_text(DEEP)
    with pytest.raises(InputError, match=r"calibration\.json: cannot read the calibration"):
        MinScoreCalibration.load(path)
