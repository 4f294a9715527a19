"""`read_model`: JSON/YAML files validated by a pydantic model, every failure one error."""

from __future__ import annotations

import gzip

import pytest
from pydantic import BaseModel, ConfigDict

from rankproof import ConfigError, InputError
from rankproof.data import read_model
from rankproof.data._files import MAX_YAML_NODES


class Report(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int
    name: str
    values: list[float] = []


def test_json_and_yaml_read(write) -> None:
    doc = read_model(write("r.json", '{"schema_version": 2, "name": "bm25"}'), Report)
    assert doc == Report(schema_version=2, name="bm25")
    yml = read_model(write("r.yaml", "schema_version: 2\nname: bm25\nvalues: [1, 2.5]\n"),
                     Report)
    assert yml.values == [1.0, 2.5]
    zipped = read_model(write("r.json.gz", gzip.compress(b'\xef\xbb\xbf{"schema_version": 1, '
                                                         b'"name": "x"}')), Report)
    assert zipped.name == "x"


def test_missing_and_unreadable(tmp_path) -> None:
    with pytest.raises(InputError, match="report not found") as err:
        read_model(tmp_path / "nope.json", Report, what="report")
    assert err.value.path == str(tmp_path / "nope.json")
    with pytest.raises(InputError, match="cannot read the report: is a directory"):
        read_model(tmp_path, Report, what="report")


@pytest.mark.parametrize(("name", "content", "message", "line"), [
    ("r.json", '{"schema_version": 2,\n "name": }', "invalid JSON: Expecting value", 2),
    ("r.json", b'{"name": "\xff"}', r"invalid UTF-8 \(invalid start byte\)", 1),
    ("r.json", '{"name": "a",\n "name": "b", "schema_version": 1}', "duplicate key 'name'",
     None),
    ("r.yaml", "name: a\nname: b\nschema_version: 1\n", "duplicate key 'name'", 2),
    ("r.yml", "name: [a\nschema_version: 1\n", "invalid YAML", 2),
])
def test_syntax_problems_name_the_file_and_line(name, content, message, line, write) -> None:
    path = write(name, content)
    with pytest.raises(InputError, match=f"cannot read the baseline: {message}") as err:
        read_model(path, Report, what="baseline")
    assert err.value.path == str(path)
    if line is not None:
        assert err.value.line == line


def test_validation_names_the_first_problem(write) -> None:
    path = write("r.json", '{"schema_version": "two", "name": 3, "extra": 1}')
    with pytest.raises(InputError, match=r"not a rankproof eval report \(3 problems; first: "
                                         r"schema_version: Input should be a valid integer"):
        read_model(path, Report, what="report", kind="rankproof eval report")
    with pytest.raises(InputError, match=r"not a valid report \(1 problem; first: \(top "
                                         r"level\): Input should be"):
        read_model(write("l.json", "[1, 2]"), Report, what="report")


def test_config_errors_for_config_files(write, tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"checks\.yaml: checks file not found"):
        read_model(tmp_path / "checks.yaml", Report, what="checks file", error=ConfigError)
    path = write("c.yaml", "name: a\n\nname: b\n")
    with pytest.raises(ConfigError, match=r"c\.yaml, line 3: cannot read the checks file: "
                                          "duplicate key 'name'"):
        read_model(path, Report, what="checks file", error=ConfigError)


def test_yaml_alias_bomb_is_refused(write) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    lines.append("name: boom\nschema_version: 1")
    path = write("bomb.yaml", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"expands to more than {MAX_YAML_NODES:,} nodes"):
        read_model(path, Report)
    # Aliases themselves are fine when they stay small.
    ok = write("ok.yaml", "base: &b [1.5, 2]\nname: n\nschema_version: 1\nvalues: *b\n")
    with pytest.raises(InputError, match="base: Extra inputs are not permitted"):
        read_model(ok, Report)
