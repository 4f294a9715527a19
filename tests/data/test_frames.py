"""pandas and pyarrow interop, both directions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from rankproof import InputError
from rankproof.data import (
    Qrels,
    Run,
    qrels_from_arrow,
    qrels_from_pandas,
    run_from_arrow,
    run_from_pandas,
)

SCORES = {"q1": {"d1": 3.5, "d2": 0.1 + 0.2}, "q2": {"d1": -1.0}}
LABELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2, "d3": -1}}


# -- round trips --------------------------------------------------------------------


def test_run_pandas_round_trip() -> None:
    run = Run.from_columns(["q1", "q1", "q2"], ["a", "b", "a"], [2.0, 1.0, 0.5], [1, 2, 1])
    df = run.to_pandas()
    assert list(df.columns) == ["qid", "docid", "score", "rank"]
    back = run_from_pandas(df, name="x")
    assert back.to_arrow().equals(run.to_arrow())
    assert back.name == "x"


def test_run_arrow_round_trip() -> None:
    run = Run.from_dict(SCORES)
    back = run_from_arrow(run.to_arrow())
    assert back.to_arrow().equals(run.to_arrow())
    assert back.ranks is None


def test_qrels_round_trips() -> None:
    qrels = Qrels.from_dict(LABELS)
    assert qrels_from_pandas(qrels.to_pandas()).digest == qrels.digest
    assert qrels_from_arrow(qrels.to_arrow()).digest == qrels.digest


def test_record_batch_and_chunked_tables() -> None:
    run = Run.from_dict(SCORES)
    table = run.to_arrow()
    batch = table.to_batches()[0]
    assert run_from_arrow(batch).to_dict() == SCORES
    chunked = pa.concat_tables([table.slice(0, 1), table.slice(1)])
    assert chunked.column("qid").num_chunks == 2
    assert run_from_arrow(chunked).to_dict() == SCORES


# -- column spellings -----------------------------------------------------------------


def test_ir_measures_columns() -> None:
    run_df = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2, 1]})
    assert run_from_pandas(run_df).to_dict() == {"q1": {"a": 2.0, "b": 1.0}}
    qrels_df = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [2],
                             "iteration": ["0"]})
    assert qrels_from_pandas(qrels_df).to_dict() == {"q1": {"a": 2}}


def test_beir_columns() -> None:
    df = pd.DataFrame({"query-id": ["q1"], "corpus-id": ["a"], "score": [1]})
    assert qrels_from_pandas(df).to_dict() == {"q1": {"a": 1}}
    assert run_from_pandas(df).to_dict() == {"q1": {"a": 1.0}}


def test_explicit_columns() -> None:
    table = pa.table({"topic": ["q1"], "doc": ["a"], "sim": [0.5], "label": [1]})
    run = run_from_arrow(table, columns={"qid": "topic", "docid": "doc", "score": "sim"})
    assert run.to_dict() == {"q1": {"a": 0.5}}
    qrels = qrels_from_arrow(table, columns={"qid": "topic", "docid": "doc", "rel": "label"})
    assert qrels.to_dict() == {"q1": {"a": 1}}


def test_other_columns_are_ignored() -> None:
    df = pd.DataFrame({"qid": ["q1"], "docid": ["a"], "score": [1.0], "text": ["hello"]})
    assert run_from_pandas(df).to_dict() == {"q1": {"a": 1.0}}


def test_integer_and_categorical_ids() -> None:
    df = pd.DataFrame({"qid": pd.Categorical([301, 301, 302]), "docid": [7, 8, 7],
                       "score": [1.0, 0.5, 0.2]})
    assert run_from_pandas(df).to_dict() == {"301": {"7": 1.0, "8": 0.5}, "302": {"7": 0.2}}
    df = pd.DataFrame({"qid": pd.Categorical(["b", "a"]), "docid": ["x", "y"], "rel": [1, 0]})
    assert qrels_from_pandas(df).to_dict() == {"a": {"y": 0}, "b": {"x": 1}}


def test_pandas_string_dtypes() -> None:
    df = pd.DataFrame({"qid": pd.array(["q1"], dtype="string"),
                       "docid": pd.array(["a"], dtype="string[pyarrow]"), "score": [1.0]})
    assert run_from_pandas(df).to_dict() == {"q1": {"a": 1.0}}


def test_whole_float_labels_and_nullable_ints() -> None:
    df = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "b"], "rel": [1.0, 2.0]})
    assert qrels_from_pandas(df).to_dict() == {"q1": {"a": 1, "b": 2}}
    df = pd.DataFrame({"qid": ["q1"], "docid": ["a"], "rel": pd.array([3], dtype="Int64")})
    assert qrels_from_pandas(df).to_dict() == {"q1": {"a": 3}}


# -- errors --------------------------------------------------------------------------


def test_no_matching_column_lists_what_was_found() -> None:
    df = pd.DataFrame({"topic": ["q1"], "doc": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match=r"no qid column.*\['topic', 'doc', 'score'\]") as err:
        run_from_pandas(df)
    assert err.value.field == "qid"
    with pytest.raises(InputError, match="no rel column"):
        qrels_from_arrow(pa.table({"qid": ["q"], "docid": ["d"], "label": [1]}))


def test_index_levels_are_mentioned() -> None:
    df = pd.DataFrame({"qid": ["q1"], "docid": ["a"], "score": [1.0]}).set_index("qid")
    with pytest.raises(InputError, match=r"index levels \['qid'\]"):
        run_from_pandas(df)


def test_ambiguous_columns() -> None:
    table = pa.table({"qid": ["q"], "query_id": ["q"], "docid": ["d"], "score": [1.0]})
    with pytest.raises(InputError, match="could all be the qid"):
        run_from_arrow(table)
    table = pa.table({"qid": ["q"], "docid": ["d"], "rel": [1], "relevance": [1]})
    with pytest.raises(InputError, match="could all be the rel"):
        qrels_from_arrow(table)


def test_rel_preferred_over_beir_score() -> None:
    table = pa.table({"qid": ["q"], "docid": ["d"], "rel": [1], "score": [0.3]})
    assert qrels_from_arrow(table).to_dict() == {"q": {"d": 1}}


def test_explicit_column_missing() -> None:
    with pytest.raises(InputError, match=r"'topic' .*not found") as err:
        run_from_arrow(pa.table({"qid": ["q"], "docid": ["d"], "score": [1.0]}),
                       columns={"qid": "topic"})
    assert err.value.field == "topic"


def test_missing_id_names_column_and_row() -> None:
    df = pd.DataFrame({"qid": ["q1", None, "q2"], "docid": ["a", "b", "c"], "score": 1.0})
    with pytest.raises(InputError, match="missing value in column 'qid' at row 1") as err:
        run_from_pandas(df)
    assert err.value.field == "qid"


def test_float_ids_are_refused_with_a_hint() -> None:
    df = pd.DataFrame({"qid": [301.0, np.nan], "docid": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match=r"missing value|float id column"):
        run_from_pandas(df)
    df = pd.DataFrame({"qid": [301.0, 302.0], "docid": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="float id column") as err:
        run_from_pandas(df)
    assert err.value.field == "qid"


def test_mixed_type_id_column() -> None:
    df = pd.DataFrame({"qid": ["q1", 2], "docid": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="column 'qid' cannot be read") as err:
        run_from_pandas(df)
    assert err.value.field == "qid"


def test_non_numeric_score_column() -> None:
    df = pd.DataFrame({"qid": ["q1"], "docid": ["a"], "score": ["high"]})
    with pytest.raises(InputError, match="must be numeric") as err:
        run_from_pandas(df)
    assert err.value.field == "score"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_score(bad) -> None:
    table = pa.table({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [1.0, bad]})
    with pytest.raises(InputError, match="row 1") as err:
        run_from_arrow(table)
    assert err.value.field == "score"
    df = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [1.0, bad]})
    with pytest.raises(InputError, match="row 1"):
        run_from_pandas(df)


@pytest.mark.parametrize("bad", [1.5, np.nan])
def test_non_integer_relevance(bad) -> None:
    df = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "b"], "rel": [1.0, bad]})
    with pytest.raises(InputError, match="row 1") as err:
        qrels_from_pandas(df)
    assert err.value.field == "rel"


def test_boolean_relevance_is_refused() -> None:
    with pytest.raises(InputError, match="must be numeric"):
        qrels_from_arrow(pa.table({"qid": ["q"], "docid": ["d"], "rel": [True]}))


def test_non_integer_rank() -> None:
    table = pa.table({"qid": ["q"], "docid": ["d"], "score": [1.0], "rank": [1.5]})
    with pytest.raises(InputError, match="rank must be an integer") as err:
        run_from_arrow(table)
    assert err.value.field == "rank"


def test_duplicates_and_dedupe() -> None:
    df = pd.DataFrame({"qid": ["q", "q", "q"], "docid": ["a", "b", "a"], "score": [1, 5, 9]})
    with pytest.raises(InputError, match=r"duplicate \(qid, docid\) pair \(q, a\)"):
        run_from_pandas(df)
    run = run_from_pandas(df, dedupe="max")
    assert run.to_dict() == {"q": {"a": 9.0, "b": 5.0}}
    assert (run.dedupe, run.n_dropped_duplicates) == ("max", 1)
    qrels = qrels_from_pandas(df.rename(columns={"score": "rel"}), dedupe="first")
    assert qrels.to_dict() == {"q": {"a": 1, "b": 5}}


def test_empty_frame() -> None:
    with pytest.raises(InputError, match="no rows"):
        run_from_arrow(pa.table({"qid": pa.array([], pa.string()),
                                 "docid": pa.array([], pa.string()),
                                 "score": pa.array([], pa.float64())}))


def test_wrong_input_type() -> None:
    with pytest.raises(TypeError, match="pandas DataFrame"):
        run_from_pandas({"qid": ["q"]})
    with pytest.raises(TypeError, match="pyarrow Table"):
        run_from_arrow(42)
