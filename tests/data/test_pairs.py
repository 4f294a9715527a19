"""The fingerprint join (`match_pairs`, `string_index`, `byte_order`) equals the exact
join, also when fingerprints collide, and for unicode and long ids."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import rankproof.data._pairs as pairs
from rankproof.data import Qrels, Run, match_pairs, string_index
from rankproof.measures import evaluate

ALPHABET = ["a", "b", "Z", "0", "9", "é", "ß", "\u00ff", "漢", "\U0001f600", "-", "_"]


def _exact(lg: list[int], left: list[str], rg: list[int],
           right: list[str]) -> list[tuple[int, int]]:
    where = {(g, s): j for j, (g, s) in enumerate(zip(rg, right, strict=True))}
    return [(i, where[(g, s)]) for i, (g, s) in enumerate(zip(lg, left, strict=True))
            if (g, s) in where]


def _ids(rng: np.random.Generator, n: int, longest: int) -> list[str]:
    return ["".join(rng.choice(ALPHABET, int(rng.integers(1, longest + 1)))) for _ in range(n)]


def _case(seed: int, longest: int) -> tuple[list[int], list[str], list[int], list[str]]:
    rng = np.random.default_rng(seed)
    pool = _ids(rng, 60, longest)
    pool += [p + "x" * 9 for p in pool[:10]] + [p[:1] for p in pool[:5]]  # prefixes, > 8 B
    groups = int(rng.integers(1, 6))
    right = sorted({(int(rng.integers(0, groups)), str(rng.choice(pool))) for _ in range(80)})
    n_left = 300
    lg = [int(g) for g in rng.integers(-1, groups + 1, n_left)]
    left = [str(rng.choice(pool)) for _ in range(n_left)]
    return lg, left, [g for g, _ in right], [s for _, s in right]


def _as_pairs(found: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None
              ) -> list[tuple[int, int]]:
    assert found is not None
    return list(zip(found[0].tolist(), found[1].tolist(), strict=True))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("longest", [3, 8, 20])
def test_match_pairs_equals_the_exact_join(seed: int, longest: int) -> None:
    lg, left, rg, right = _case(seed, longest)
    got = match_pairs(np.array(lg), pa.array(left), np.array(rg), pa.array(right))
    assert _as_pairs(got) == _exact(lg, left, rg, right)


@pytest.mark.parametrize("seed", range(6))
def test_the_search_path_equals_the_exact_join(seed: int, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    monkeypatch.setattr(pairs, "_BISECT_MAX", 0)  # every group "large": the mixed-key search
    lg, left, rg, right = _case(seed, 20)
    got = match_pairs(np.array(lg), pa.array(left), np.array(rg), pa.array(right))
    assert _as_pairs(got) == _exact(lg, left, rg, right)


def test_long_strings_that_share_a_fingerprint_are_told_apart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every string longer than 8 bytes hashes alike: only the byte comparison decides."""
    real = pairs.string_hashes

    def colliding(values: pa.Array) -> npt.NDArray[np.uint64]:
        h = real(values)
        lengths = pc.binary_length(values).to_numpy(zero_copy_only=False)
        h[lengths > 8] = np.uint64(7)
        return h

    monkeypatch.setattr(pairs, "string_hashes", colliding)
    right = ["doc-000000001", "short", "doc-000000002"]
    left = ["doc-000000002", "doc-000000003", "short", "doc-000000001", "\x07"]
    # Two right strings of one group collide: the join defers (None) to the exact path.
    zero = np.zeros(5, dtype=np.int64)
    assert match_pairs(zero, pa.array(left), zero[:3], pa.array(right)) is None
    # In different groups they do not collide; a left string of the same fingerprint but
    # other bytes ("doc-000000003", and "\x07" whose word is 7) is no match.
    got = match_pairs(np.array([1, 0, 0, 0, 0]), pa.array(left), np.array([0, 0, 1]),
                      pa.array(right))
    assert _as_pairs(got) == [(0, 2), (2, 1), (3, 0)]


def test_a_constant_hash_changes_no_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every fingerprint equal, `evaluate` takes the exact Arrow path: same values."""
    rng = np.random.default_rng(3)
    docs = [f"d{i}é" * int(rng.integers(1, 4)) for i in range(40)]
    qrels = Qrels.from_dict({f"q{t}": {str(d): int(rng.integers(0, 3))
                                       for d in rng.choice(docs, 8, replace=False)}
                             for t in range(6)})
    run = Run.from_dict({f"q{t}": {str(d): float(s) for s, d in
                                   enumerate(rng.choice(docs, 15, replace=False))}
                         for t in range(7)})
    measures = ["nDCG@10", "AP", "RR", "R@5", "P@3"]
    expected = evaluate(qrels, run, measures).values
    monkeypatch.setattr(pairs, "string_hashes",
                        lambda values: np.zeros(len(values), dtype=np.uint64))
    zero = np.zeros(3, dtype=np.int64)
    assert match_pairs(zero, pa.array(["a", "b", "c"]), zero[:2], pa.array(["a", "b"])) is None
    np.testing.assert_array_equal(evaluate(qrels, run, measures).values, expected)


@pytest.mark.parametrize("seed", range(5))
def test_string_index_equals_index_in(seed: int) -> None:
    rng = np.random.default_rng(seed)
    vocab = pa.array(sorted(set(_ids(rng, 200, 14))))
    values = pa.array(_ids(rng, 500, 14))
    expected = pc.fill_null(pc.index_in(values, value_set=vocab), -1).to_numpy()
    np.testing.assert_array_equal(string_index(values, vocab), expected)


@pytest.mark.parametrize("longest", [4, 8, 30, 60])
def test_byte_order_is_arrows_sort(longest: int) -> None:
    rng = np.random.default_rng(longest)
    words = _ids(rng, 400, longest)
    values = pa.array(sorted(set(words + [w[:1] for w in words] + [w + "a" for w in words])))
    shuffled = values.take(pa.array(rng.permutation(len(values))))
    np.testing.assert_array_equal(pairs.byte_order(shuffled),
                                  pc.sort_indices(shuffled).to_numpy())


def test_string_hashes_do_not_depend_on_the_other_strings() -> None:
    alone = pairs.string_hashes(pa.array(["abc", "0123456789abcdef0"]))
    beside_long = pairs.string_hashes(pa.array(["abc", "x" * 100, "0123456789abcdef0"]))
    assert alone[0] == beside_long[0] and alone[1] == beside_long[2]
