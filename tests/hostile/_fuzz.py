"""Shared pieces of the hostile-input fuzz suite (``tests/hostile/test_fuzz_*.py``).

Every fuzz test states one property: whatever bytes or structure a reader is
fed, the only exceptions that escape are `rankproof.RankproofError`
subclasses (a typed refusal naming the input), and a refusal writes nothing.
A `TypeError`, `RecursionError`, `MemoryError`, `UnicodeDecodeError`, a
pyarrow or YAML exception escaping is a bug in rankproof (the CLI would
print a traceback and exit 3), and Hypothesis shrinks it to a reproducer.

Inputs are *mutated real files* (seeds from ``../shared/data``, ``examples/``
and the bundled golden corpus, cut to their first lines so that a mutation
lands somewhere interesting) and *generated structures* (JSON values of every
type, deep nesting, huge integers, duplicate keys, control characters).

Budgets: `fuzz_settings` scales every test's ``max_examples`` by the loaded
Hypothesis profile. The default run is derandomized (the same examples on
every CI run, so the gate is not flaky) and sized so the whole suite takes
about two minutes on two cores; ``--hypothesis-profile=long`` (registered in
``tests/conftest.py``) runs ten times as many examples with fresh randomness,
to look for new crashes rather than to guard against regressions.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

from rankproof import RankproofError

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
LONG_PROFILE = "long"
LONG_FACTOR = 10
#: A refusal quotes a few values of at most ``_limits.MAX_SHOWN_CHARS`` (200) each, plus
#: a path, a line and a field: a message longer than this embeds an unbounded value.
MAX_MESSAGE_CHARS = 1500

T = TypeVar("T")


def fuzz_settings(examples: int) -> settings:
    """Settings for one fuzz test: ``examples`` by default, ten times that under ``long``.

    Applied per test (never via `settings.load_profile`), so the other test
    folders' Hypothesis settings are untouched by this suite.
    """
    long = settings.get_current_profile_name() == LONG_PROFILE
    return settings(
        max_examples=examples * (LONG_FACTOR if long else 1),
        deadline=None,
        derandomize=not long,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
    )


def seed_lines(path: Path, n: int = 12) -> bytes:
    """The first ``n`` lines of a real file (gunzipped), as bytes."""
    with open(path, "rb") as fh:
        opener = gzip.open if fh.read(2) == b"\x1f\x8b" else open
    out = []
    with opener(path, "rb") as fh:
        for _ in range(n):
            line = fh.readline()
            if not line:
                break
            out.append(line)
    return b"".join(out)


def shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        raise RuntimeError(f"fuzz seed {path} not found; ../shared/data must sit beside the repo")
    return path


# -- byte-level mutations ------------------------------------------------------

#: Tokens an attacker (or a broken tool) puts into text files.
NASTY: tuple[bytes, ...] = (
    b"\x00", b"\x1b[31m", b"\x1b]8;;http://x\x1b\\", b"\x7f", b"\xff", b"\xfe\xff", b"\xc3",
    b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x1f\x8b", b"\r", b"\r\n", b"\n", b"\t", b"  ", b" ",
    b"\x0b", b"\x0c", b"\xc2\x85", b"\xe2\x80\xa8", b"#", b"-", b"./", b"../", b"/",
    b"[/x]", b"[link=http://x]click[/link]", b"[bold]", "٣".encode(), "１".encode(), b"1_0",
    b"9" * 400, b"9" * 5000, b"-" + b"9" * 30, b"1e309", b"-1e309", b"1e-400", b"nan", b"inf",
    b"-inf", b"NaN", b"Infinity", b"0x10", b"+1", b"-0", b"1.", b".5", b"true", b"null",
    b"{", b"}", b"[", b"]", b'"', b"\\", b":", b",", b'"\\ud800"', b'"\\u0000"',
    b"[" * 3000, b"{\"a\":" * 3000, b"- " * 300, b"&a ", b"*a", b"<<: *a",
    b"!!python/object:os.system",
    b"!!binary", b"---", b"...", b"%YAML 1.1\n", b"? ", b"|", b">", b"'", b'""', b'"a""b',
    "é".encode(), "\u202e".encode(), "\U0001f600".encode(), "ǅ".encode(), "ß".encode(),
)


@st.composite
def mutated(draw: st.DrawFn, seed: bytes, max_mutations: int = 4) -> bytes:
    """``seed`` with up to ``max_mutations`` byte-, token- and line-level changes."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, max_mutations))):
        kind = draw(st.sampled_from(
            ("flip", "delete", "insert_bytes", "insert_token", "truncate", "dup_line",
             "swap_lines", "swap_columns", "drop_column", "replace_field")))
        pos = draw(st.integers(0, len(data)))
        if kind == "flip" and data:
            i = min(pos, len(data) - 1)
            data[i] ^= draw(st.integers(1, 255))
        elif kind == "delete":
            data[pos:pos + draw(st.integers(1, 16))] = b""
        elif kind == "insert_bytes":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=12))
        elif kind == "insert_token":
            data[pos:pos] = draw(st.sampled_from(NASTY))
        elif kind == "truncate":
            del data[pos:]
        else:
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            if kind == "dup_line":
                lines.insert(draw(st.integers(0, len(lines))), lines[i])
            elif kind == "swap_lines":
                j = draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
            else:
                sep = b"\t" if b"\t" in lines[i] else b" "
                cols = lines[i].split(sep)
                if len(cols) >= 2:
                    a = draw(st.integers(0, len(cols) - 1))
                    b = draw(st.integers(0, len(cols) - 1))
                    if kind == "swap_columns":
                        cols[a], cols[b] = cols[b], cols[a]
                    elif kind == "drop_column":
                        del cols[a]
                    else:
                        cols[a] = draw(st.sampled_from(NASTY))
                lines[i] = sep.join(cols)
            data = bytearray(b"\n".join(lines))
    return bytes(data)


@st.composite
def maybe_gzipped(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` as is, gzip-compressed, or compressed and then damaged (cut or flipped)."""
    # Half plain, so that most inputs reach the parsers behind the decompression.
    how = draw(st.sampled_from(("plain",) * 4 + ("gzip", "cut", "flip", "concat")))
    if how == "plain":
        return data
    packed = gzip.compress(data, mtime=0)
    if how == "gzip":
        return packed
    if how == "concat":  # two members, or a member followed by garbage
        return packed + draw(st.sampled_from((packed, b"\x00\x00", b"junk", packed[:12])))
    pos = draw(st.integers(2, len(packed) - 1))
    if how == "cut":
        return packed[:pos]
    damaged = bytearray(packed)
    damaged[pos] ^= draw(st.integers(1, 255))
    return bytes(damaged)


def file_bytes(seeds: Sequence[bytes], max_mutations: int = 4) -> st.SearchStrategy[bytes]:
    """Mutated (and sometimes gzip-compressed or damaged) versions of ``seeds``."""
    return (st.sampled_from(list(seeds))
            .flatmap(lambda s: mutated(s, max_mutations))
            .flatmap(maybe_gzipped))


# -- JSON structures -----------------------------------------------------------

JSON_SCALARS = (st.none() | st.booleans()
                | st.integers(-(10**30), 10**30)
                | st.sampled_from([0, -1, 2**63, -(2**63) - 1, 10**400, 1.5, -0.0, 1e308])
                | st.floats(allow_nan=False, allow_infinity=False)
                | st.text(max_size=12)
                | st.sampled_from(["", "[/x]", "\x1b[2J", "nan", "1_0", "٣", "a" * 300, "ids",
                                   "../x", "\x00", "\ud800"]))
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=10,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value[:20]):  # long lists: mutate near the start
            out.extend(_paths(v, (*prefix, i)))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        copy[head] = _replace(value[head], rest, new)
        return copy
    copy_list = list(value)
    copy_list[head] = _replace(value[head], rest, new)
    return copy_list


def _delete(value: Any, path: tuple[Any, ...]) -> Any:
    parent = _get(value, path[:-1])
    if isinstance(parent, dict):
        new_parent: Any = {k: v for k, v in parent.items() if k != path[-1]}
    else:
        new_parent = [v for i, v in enumerate(parent) if i != path[-1]]
    return _replace(value, path[:-1], new_parent)


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


_DEEP = "\x00deep:"


def nested(depth: int) -> str:
    """A placeholder for ``depth`` levels of nested arrays and objects; `dumps` writes it
    out as text (``json.dumps`` itself would hit the recursion limit)."""
    return f"{_DEEP}{depth}"


def _deep_text(depth: int) -> bytes:
    opens = b"".join(b'{"k":' if i % 2 else b"[" for i in range(depth))
    closes = b"".join(b"}" if i % 2 else b"]" for i in reversed(range(depth)))
    return opens + b"1" + closes


@st.composite
def mutated_json(draw: st.DrawFn, doc: Any, max_mutations: int = 3) -> Any:
    """``doc`` with values replaced by other JSON types, keys deleted or added, deep nesting."""
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(("retype", "retype", "delete", "add_key", "deep", "huge")))
        if kind == "retype":
            doc = _replace(doc, path, draw(JSON_VALUES))
        elif kind == "delete" and path:
            doc = _delete(doc, path)
        elif kind == "add_key":
            target = _get(doc, path)
            if isinstance(target, dict):
                doc = _replace(doc, path, {**target, draw(st.text(max_size=8)): draw(JSON_VALUES)})
        elif kind == "deep":
            doc = _replace(doc, path, nested(draw(st.sampled_from((10, 63, 65, 200, 5000)))))
        elif kind == "huge":
            doc = _replace(doc, path, draw(st.sampled_from((10**50, 10**5000, -(10**400)))))
    return doc


def dumps(value: Any, *, indent: int | None = None) -> bytes:
    """JSON text of ``value``; lone surrogates are written as ``\\ud800`` escapes, as any
    producer may, and integers of thousands of digits are written out in full."""
    import sys

    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        text = json.dumps(value, indent=indent, ensure_ascii=True).encode("ascii")
    finally:
        sys.set_int_max_str_digits(limit)
    marker = json.dumps(_DEEP).encode("ascii")[:-1]  # '"\\u0000deep:' without the close quote
    while marker in text:
        start = text.index(marker)
        end = text.index(b'"', start + len(marker))
        text = text[:start] + _deep_text(int(text[start + len(marker):end])) + text[end + 1:]
    return text


@st.composite
def json_text(draw: st.DrawFn, doc: Any) -> bytes:
    """A structurally mutated ``doc`` as JSON, sometimes with a duplicated key or a
    byte-level mutation on top."""
    value = draw(mutated_json(doc))
    text = dumps(value, indent=draw(st.sampled_from((None, 1))))
    how = draw(st.sampled_from(("as_is", "as_is", "dup_key", "bytes")))
    if how == "dup_key" and text.startswith(b"{") and len(text) > 2:
        # The same key twice: the reader must refuse it, not keep the last one.
        first_key = text.split(b":", 1)[0][1:].strip()
        if first_key.startswith(b'"'):
            text = b"{" + first_key + b": 0, " + text[1:]
    elif how == "bytes":
        text = draw(mutated(text, 2))
    return text


def jsonl_text(rows: Sequence[Any]) -> st.SearchStrategy[bytes]:
    """JSON Lines from ``rows`` with one to three rows structurally mutated (a row's JSON
    kept on one line), and sometimes a byte-level mutation on top."""
    def build(draw: st.DrawFn) -> bytes:
        out = [dumps(r) for r in rows]
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, len(out) - 1))
            out[i] = draw(json_text(rows[i])).replace(b"\n", b" ")
        data = b"\n".join(out) + b"\n"
        if draw(st.booleans()):
            data = draw(mutated(data, 2))
        return data
    return st.composite(build)()


# -- the property --------------------------------------------------------------

def refused_or_read(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T | RankproofError:
    """``fn(*args)``: its result, or the `RankproofError` it raised (any other exception
    escapes and fails the test)."""
    try:
        outcome = fn(*args, **kwargs)
    except RankproofError as exc:
        event(f"refused: {type(exc).__name__}")  # --hypothesis-show-statistics
        message = str(exc)
        assert message, f"{type(exc).__name__} with an empty message"
        assert len(message) <= MAX_MESSAGE_CHARS, \
            f"an unbounded message ({len(message)} characters): {message[:300]}…"
        return exc
    event("read")
    return outcome


_CONTROLS = {chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]} - {"\n", "\t"}


def assert_no_controls(output: str) -> None:
    """Text from inputs reaches the terminal escaped: no ESC, BEL, CR or other control
    character a hostile file could use to rewrite the screen or plant a hyperlink."""
    found = sorted({repr(ch) for ch in output if ch in _CONTROLS})
    assert not found, f"control characters {', '.join(found)} in the output: {output[-500:]!r}"


def snapshot(root: Path) -> str:
    """A hash of every entry under ``root`` (names, kinds, contents): "nothing was written"."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            h.update(os.fsencode(path.relative_to(root)) + b"\0")
            if path.is_file() and not path.is_symlink():
                h.update(path.read_bytes())
            h.update(b"\1")
    return h.hexdigest()
