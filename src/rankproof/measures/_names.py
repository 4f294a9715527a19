"""Every name a user may type for a measure, and what to say when one is wrong.

Two jobs, both about *names* (nothing here computes a value):

* **trec_eval 10's measure table** (`TREC_EVAL_MEASURES`, in trec_eval's print
  order, with how each one prints) and its nicknames (`TREC_EVAL_NICKNAMES`:
  ``official``, ``all_trec``, ``set``, ``all_prefs``, ``prefs``,
  ``qrels_jg``). These are facts about trec_eval, kept whole: what rankproof
  implements of them is *computed* from the measures registry
  (`trec_implemented`), never written down, so a measure that lands in the
  registry stops being reported missing without an edit here.
* **the error path of the parser**: `unknown_measure_message` turns an
  unparseable name into a message that says either "trec_eval's 'gm_bpref'
  is not implemented in rankproof yet" (a real trec_eval measure) or
  "did you mean 'nDCG@10'?" (the closest registered names, by `difflib`).

It also splits comma lists (`split_measure_list`): ``nDCG@10,RR@10`` is two
measures, while trec_eval's ``P.5,10`` and ``utility.2,-1,0,0`` stay one
spelling each.

Only the registry's public listing (`families`, `find_family`) is read here,
so the parser can call into this module from its error branch without a
cycle.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from rankproof.measures._families import families, find_family
from rankproof.measures._sets import TREC_JUDGMENT_SETS

TrecStyle = Literal["header", "count", "float", "cutoffs", "fractions", "params", "pairs",
                    "string"]
"""How trec_eval prints a measure:

``header``: a per-run line (``runid``, ``num_q``); ``count``: an integer per
topic, summed over topics; ``float``: one ``%6.4f`` value; ``cutoffs``: one
value per integer cutoff, printed ``name_k`` (``P_5``); ``fractions``: one
value per real cutoff, printed ``name_%3.2f`` (``iprec_at_recall_0.10``);
``params`` / ``pairs``: one value, printed ``name`` or, with parameters,
``name_<parameters as typed>`` (``utility_2,-1,0,0``, ``ndcg_1=3,2=9``);
``string``: a per-topic string (``relstring``)."""

RelFormat = Literal["qrels", "prefs", "qrels_jg"]


@dataclass(frozen=True)
class TrecEvalMeasure:
    """One row of trec_eval 10's measure table."""

    name: str
    style: TrecStyle
    defaults: tuple[float, ...] = ()
    """Default cutoffs (``cutoffs``/``fractions``), or a string measure's default length."""
    per_topic: bool = True
    """trec_eval prints a per-topic line with ``-q`` (gm_map, gm_bpref: only ``all``)."""
    summary: bool = True
    """trec_eval prints an ``all`` line (relstring: per topic only)."""
    rel_format: RelFormat = "qrels"
    """The ``-R`` judgment format the measure needs."""


_CUTS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_PREFS = ("prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
          "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
          "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")

TREC_EVAL_MEASURES: tuple[TrecEvalMeasure, ...] = (
    TrecEvalMeasure("runid", "header"),
    TrecEvalMeasure("num_q", "header"),
    TrecEvalMeasure("num_ret", "count"),
    TrecEvalMeasure("num_rel", "count"),
    TrecEvalMeasure("num_rel_ret", "count"),
    TrecEvalMeasure("map", "float"),
    TrecEvalMeasure("gm_map", "float", per_topic=False),
    TrecEvalMeasure("Rprec", "float"),
    TrecEvalMeasure("bpref", "float"),
    TrecEvalMeasure("recip_rank", "float"),
    TrecEvalMeasure("iprec_at_recall", "fractions", _RECALL_LEVELS),
    TrecEvalMeasure("P", "cutoffs", _CUTS),
    TrecEvalMeasure("relstring", "string", (10.0,), summary=False),
    TrecEvalMeasure("recall", "cutoffs", _CUTS),
    TrecEvalMeasure("infAP", "float"),
    TrecEvalMeasure("gm_bpref", "float", per_topic=False),
    TrecEvalMeasure("Rprec_mult", "fractions", _MULTS),
    TrecEvalMeasure("utility", "params"),
    TrecEvalMeasure("11pt_avg", "params"),
    TrecEvalMeasure("binG", "float"),
    TrecEvalMeasure("G", "pairs"),
    TrecEvalMeasure("ndcg", "pairs"),
    TrecEvalMeasure("ndcg_rel", "pairs"),
    TrecEvalMeasure("Rndcg", "pairs"),
    TrecEvalMeasure("ndcg_cut", "cutoffs", _CUTS),
    TrecEvalMeasure("map_cut", "cutoffs", _CUTS),
    TrecEvalMeasure("relative_P", "cutoffs", _CUTS),
    TrecEvalMeasure("success", "cutoffs", (1.0, 5.0, 10.0)),
    TrecEvalMeasure("set_P", "float"),
    TrecEvalMeasure("set_relative_P", "float"),
    TrecEvalMeasure("set_recall", "float"),
    TrecEvalMeasure("set_map", "float"),
    TrecEvalMeasure("set_F", "params"),
    TrecEvalMeasure("num_nonrel_judged_ret", "count"),
    TrecEvalMeasure("prefs_num_prefs_poss", "count", rel_format="prefs"),
    TrecEvalMeasure("prefs_num_prefs_ful", "count", rel_format="prefs"),
    TrecEvalMeasure("prefs_num_prefs_ful_ret", "count", rel_format="prefs"),
    *(TrecEvalMeasure(n, "float", rel_format="prefs") for n in _PREFS),
    TrecEvalMeasure("map_avgjg", "float", rel_format="qrels_jg"),
    TrecEvalMeasure("P_avgjg", "cutoffs", _CUTS, rel_format="qrels_jg"),
    TrecEvalMeasure("Rprec_mult_avgjg", "fractions", _MULTS, rel_format="qrels_jg"),
    TrecEvalMeasure("yaap", "float"),
    TrecEvalMeasure("rbp", "pairs"),
    TrecEvalMeasure("rbp_resid", "pairs"),
    TrecEvalMeasure("unj", "cutoffs", (5.0, 10.0, 20.0)),
)
"""trec_eval 10's measure table, in its print order (measures.c; the expected
outputs of its test suite show the order and the print style of each)."""

_BY_NAME: Mapping[str, TrecEvalMeasure] = MappingProxyType(
    {m.name: m for m in TREC_EVAL_MEASURES})

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
             "bpref", "recip_rank", "iprec_at_recall", "P")
TREC_EVAL_NICKNAMES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "official": _OFFICIAL,
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "all_trec": (*_OFFICIAL, "relstring", "recall", "infAP", "gm_bpref", "utility", "11pt_avg",
                 "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut",
                 "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P",
                 "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj"),
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                  "prefs_num_prefs_ful_ret", *_PREFS),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
              "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
})
"""trec_eval 10's ``-m`` nicknames -> the measures each marks (any order: trec_eval
prints in table order)."""


def trec_eval_measure(name: str) -> TrecEvalMeasure | None:
    """The row of trec_eval's table called exactly ``name`` (trec_eval is case-sensitive)."""
    return _BY_NAME.get(name)


def trec_eval_base(spelling: str) -> str | None:
    """The trec_eval measure a spelling refers to, or None.

    ``gm_bpref`` → ``gm_bpref``; ``relstring.20`` and ``iprec_at_recall_0.10``
    → their family (``relstring``, ``iprec_at_recall``); ``nDCG@10`` → None.
    The longest table name that the spelling is, or starts with followed by
    ``.`` or ``_`` and a parameter, wins (``Rprec_mult_avgjg_0.20`` →
    ``Rprec_mult_avgjg``, not ``Rprec``).
    """
    text = spelling.strip()
    if text in _BY_NAME:
        return text
    best: str | None = None
    for name in _BY_NAME:
        if len(text) > len(name) + 1 and text.startswith(name) and text[len(name)] in "._":
            rest = text[len(name) + 1:]
            if rest and (rest[0].isdigit() or rest[0] in ".-+") and (
                    best is None or len(name) > len(best)):
                best = name
    return best


def _registry_trec_names() -> dict[str, str]:
    """trec_eval name -> rankproof family, for every registered family that says it has one."""
    out: dict[str, str] = {}
    for fam in families():
        for attr in ("trec_name", "trec_cut_name", "trec_param_name"):
            value = getattr(fam, attr, None)
            if isinstance(value, str):
                out.setdefault(value, fam.name)
    return out


def trec_implemented(name: str) -> bool:
    """Whether rankproof implements trec_eval measure ``name``, as the registry reports it.

    ``runid`` and ``num_q`` are per-run lines every trec_eval output can
    print; ``relstring`` is a per-topic string, not a `Measure` (`STRING_MEASURES`:
    ``rankproof.measures.relstrings`` computes it). Every other name is
    implemented when a registered family gives it as its trec_eval name (plain,
    with a cutoff, or with a parameter), or takes it as an alias.
    """
    if name in ("runid", "num_q") or name in STRING_MEASURES:
        return True
    return name in _registry_trec_names() or _alias_is_trec(name)


def _alias_is_trec(name: str) -> bool:
    # An alias that happens to equal a trec_eval name stands for it only when the
    # family has no other trec_eval name (``recall`` is R's trec_cut_name already).
    fam = find_family(name)
    return fam is not None and name.lower() in (a.lower() for a in fam.aliases)


def trec_missing(names: Sequence[str]) -> tuple[str, ...]:
    """The trec_eval measures among ``names`` that rankproof does not implement yet (in order).

    A nickname (``all_trec``) stands for its members.
    """
    out: list[str] = []
    for name in names:
        members = TREC_EVAL_NICKNAMES.get(name, (name,))
        for member in members:
            if member in _BY_NAME and not trec_implemented(member) and member not in out:
                out.append(member)
    return tuple(out)


STRING_MEASURES: tuple[str, ...] = ("relstring",)
"""trec_eval measures whose value is a string, not a number: implemented (`relstrings`,
``rankproof trec_eval``, ``rankproof measure --format trec -q``) but not `Measure` values."""


def string_measure_message(name: str) -> str:
    """What the parser says for ``relstring``: it exists, and it is not a number."""
    return (f"trec_eval's {name!r} is a per-topic string of labels, not a number, so it is "
            "not a Measure: `rankproof measure --format trec -q -m relstring` and `rankproof "
            "trec_eval` print it; rankproof.measures.relstrings computes it")


def not_implemented(spelling: str) -> str | None:
    """trec_eval's name when ``spelling`` names a trec_eval measure rankproof lacks, else None."""
    base = trec_eval_base(spelling)
    if base is None or trec_implemented(base):
        return None
    return base


def not_implemented_message(name: str) -> str:
    """The one sentence for a known trec_eval measure that rankproof does not compute yet."""
    row = _BY_NAME.get(name)
    if row is not None and row.rel_format != "qrels":
        return judgments_message(name, row.rel_format)
    return f"trec_eval's {name!r} is not implemented in rankproof yet"


def judgments_message(name: str, rel_format: str) -> str:
    """The refusal for a trec_eval measure or set that reads other judgments than qrels."""
    how = "-R prefs (or -R qrels_prefs)" if rel_format == "prefs" else f"-R {rel_format}"
    return (f"trec_eval's {name!r} reads trec_eval's {how} judgments, not qrels: compute it "
            f"with `rankproof trec_eval {how.split(' (')[0]} -m {name} JUDGMENTS RUN`")


def _candidates() -> dict[str, str]:
    """lower-case spelling -> the name to show: every family name and alias, every
    trec_eval name the registry implements, and trec_eval's set names."""
    out: dict[str, str] = {}
    for fam in families():
        out.setdefault(fam.name.lower(), fam.name)
        for alias in fam.aliases:
            out.setdefault(alias.lower(), alias)
    for name in _registry_trec_names():
        out.setdefault(name.lower(), name)
    for name in TREC_EVAL_NICKNAMES:
        if name in ("official", "all_trec"):
            out.setdefault(name, name)
    return out


def closest_names(word: str, n: int = 3) -> list[str]:
    """Up to ``n`` registered names closest to ``word`` (a cutoff ``@k`` is kept on each).

    Matching is case-insensitive over every family name, alias and
    implemented trec_eval name; ``nDGC@10`` → ``['nDCG@10', ...]``.
    """
    base, at, k = word.strip().partition("@")
    head = base.split("(", 1)[0]
    candidates = _candidates()
    close = difflib.get_close_matches(head.lower(), list(candidates), n=n * 2, cutoff=0.6)
    shown: list[str] = []
    for c in close:
        name = candidates[c] + (at + k if at else "")
        if name not in shown:
            shown.append(name)
    return shown[:n]


def unknown_measure_message(name: str, *, known: str | None = None) -> str:
    """The message for a measure name nothing in the registry matches.

    A trec_eval measure rankproof lacks says so (`not_implemented_message`);
    anything else is "unknown", followed by ``known`` (the list the caller
    shows) and the closest names when there are any.
    """
    missing = not_implemented(name)
    if missing is not None:
        return not_implemented_message(missing)
    if trec_eval_base(name) in STRING_MEASURES:
        return string_measure_message(str(trec_eval_base(name)))
    if name.strip() in TREC_JUDGMENT_SETS:
        return judgments_message(name.strip(),
                                 "prefs" if name.strip() == "all_prefs" else "qrels_jg")
    text = f"unknown measure {name!r}"
    if known:
        text += f"; {known}"
    close = closest_names(name)
    if close:
        text += f"; did you mean {' or '.join(map(repr, close))}?"
    return text


def cannot_parse_message(spec: str) -> str:
    """The message for a spelling the grammar cannot read at all (``ndcg_cutt.10``).

    A trec_eval measure rankproof lacks says so; otherwise the grammar's
    examples, and the names closest to the spelling's head (before ``.``,
    ``(`` or ``@``) when there are any.
    """
    missing = not_implemented(spec)
    if missing is not None:
        return not_implemented_message(missing)
    if trec_eval_base(spec) in STRING_MEASURES:
        return string_measure_message(str(trec_eval_base(spec)))
    text = (f"cannot parse measure {spec!r}; expected e.g. nDCG@10, P(rel=2)@5, AP, "
            "ndcg_cut.10")
    head = re.split(r"[.(@]", spec.strip(), maxsplit=1)[0]
    close = closest_names(head) if head else []
    if close:
        text += f"; did you mean {' or '.join(map(repr, close))}?"
    return text


def _top_level_commas(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _top_level_words(text: str) -> list[str]:
    """``text`` split on whitespace outside brackets (``{0: 0, 1: 1}`` stays whole)."""
    words: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch.isspace() and depth == 0:
            if current:
                words.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        words.append("".join(current))
    return words


def split_measure_text(text: str, parses: Callable[[str], bool]) -> list[str]:
    """The one list grammar of ``-m`` options, checks files and experiment files.

    Whitespace and commas separate measures (``"nDCG@10, RR@10 AP"`` is three),
    except inside brackets and inside trec_eval's own lists, which
    `split_measure_list` keeps whole (``P.5,10``). Named sets (``official``)
    are single words here and expand when parsed.
    """
    words = (word.strip(",") for word in _top_level_words(text))
    return [token for word in words if word
            for token in split_measure_list(word, parses) if token]


def split_measure_list(text: str, parses: Callable[[str], bool]) -> list[str]:
    """Split a comma list of measures, keeping trec_eval's own lists whole.

    ``nDCG@10,RR@10`` → ``['nDCG@10', 'RR@10']``; ``P.5,10`` stays one
    spelling (``10`` alone is not a measure), as do ``utility.2,-1,0,0`` and
    ``nDCG(gains={0:0,1:1})@10`` (commas inside brackets never split). A
    piece that is not a measure on its own joins the piece before it;
    ``parses(piece)`` says whether a piece is a measure spelling.
    """
    pieces = _top_level_commas(text)
    if len(pieces) == 1:
        return [text.strip()]
    if parses(text.strip()):  # the whole text is one spelling (a trec_eval list)
        return [text.strip()]
    groups: list[str] = []
    for piece in pieces:
        if groups and (not piece.strip() or not parses(piece.strip())):
            groups[-1] += "," + piece
        else:
            groups.append(piece)
    out: list[str] = []
    for group in (g.strip() for g in groups):
        head, _, rest = group.partition(",")
        if rest and not parses(group) and parses(head.strip()):
            # ``nDCG@10,XX@10``: the bad piece is named on its own, not glued to a good one.
            out.append(head.strip())
            out.extend(split_measure_list(rest, parses))
        else:
            out.append(group)
    return out
