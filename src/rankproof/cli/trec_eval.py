"""``rankproof trec_eval``: trec_eval 10's command line, output and exit codes.

A drop-in for the binary: ``rankproof trec_eval [trec_eval's flags] QRELS RUN``
reads trec_eval's options exactly as its ``getopt_long`` does (glued values
``-M100 -l2 -mP.5``, clusters ``-qc``, long options and their unique
prefixes, options after the file names) and prints what trec_eval prints,
byte for byte. This command alone follows trec_eval's rules rather than
rankproof's (a stated exception, see docs/trec_eval.md):

* topics: every qrels topic is evaluated; without ``-c`` a qrels topic the run
  lacks stops the evaluation with exit status 4, as trec_eval 10 does (``-c``
  scores it 0); run topics absent from the qrels are ignored;
* exit codes: 0 ok, 1 usage or measure errors, 2 input errors, 4 a topic that
  cannot be evaluated, 7 no topic to evaluate; error text goes to standard
  error as ``trec_eval: …``.

``-R prefs``, ``-R qrels_prefs`` and ``-R qrels_jg`` read trec_eval's other
judgment formats (`rankproof.data.read_prefs` and friends) for the preference
and judgment-group measures (`rankproof.measures.prefs_values`, `jg_values`);
a measure that cannot read the ``-R`` judgments stops with exit 4, as in
trec_eval.

What rankproof cannot compute yet is refused, never dropped: a measure
rankproof does not implement exits non-zero naming it, and nothing is printed.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer

from rankproof._errors import RankproofError
from rankproof._version import __version__
from rankproof.cli._app import EXIT_INTERNAL, app, report_internal_error

if TYPE_CHECKING:
    from rankproof.data import Run
    from rankproof.measures import PerQuery, TrecSelection
    from rankproof.report.trec import ZScores

USAGE = """Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_qrels' prints all qrels measures, '-m official' is default)
"""

HELP = """rankproof trec_eval [-h] [-v] [-q] [-m measure[.params]]* [-c] [-n] [-l <num>]
   [-D <num>] [-N <num>] [-M <num>] [-R rel_format] [-T results_format]
   [-Z zscores_file] rel_info_file results_file

rankproof's drop-in for trec_eval 10: the same options, the same output byte
for byte, the same exit codes. results_file may be '-' (standard input).

 -h, --help                       this help
 -v, --version                    print the version (on standard error)
 -q, --query_eval_wanted          per-topic values as well as the summary
 -m, --measure name[.params]      a measure, a list of cutoffs/parameters
                                  (-m P.5,10  -m ndcg.1=3,2=9) or a nickname:
                                  official (default), all_trec, set
 -c, --complete_rel_info_wanted   score qrels topics missing from the run 0
                                  (without -c such a topic stops with exit 4)
 -l, --level_for_rel <num>        minimum label counted as relevant (default 1)
 -n, --nosummary                  no summary ('all') lines
 -M, --Max_retrieved_per_topic    evaluate only the first <num> documents
 -J, --Judged_docs_only           drop unjudged documents before evaluating
 -Z, --Zscore <file>              print Z scores against 'qid measure mean sd'
 -R, --Rel_info_format <fmt>      qrels (default), prefs, qrels_prefs (preference
                                  measures: -m all_prefs), qrels_jg (judgment
                                  groups: -m qrels_jg)
 -T, --Results_format <fmt>       trec_results
 -D, --Debug_level <num>[.qid]    0 only; '.qid' evaluates that topic alone
 -N, --Number_docs_in_coll <num>  collection size (utility's d term)

Measures rankproof does not implement yet are refused by name (exit 1),
never left out. See docs/trec_eval.md.
"""

EXIT_USAGE, EXIT_INPUT_TE, EXIT_TOPIC, EXIT_NO_QUERIES = 1, 2, 4, 7

# getopt_long("hvqm:cl:nD:JN:M:R:T:oZ:"): option letter -> takes a value.
_SHORT = {"h": False, "v": False, "q": False, "m": True, "c": False, "l": True, "n": False,
          "D": True, "J": False, "N": True, "M": True, "R": True, "T": True, "o": False,
          "Z": True}
_LONG = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m",
         "complete_rel_info_wanted": "c", "level_for_rel": "l", "nosummary": "n",
         "Debug_level": "D", "Judged_docs_only": "J", "Number_docs_in_coll": "N",
         "Max_retrieved_per_topic": "M", "Rel_info_format": "R", "Results_format": "T",
         "Output_old_results_format": "o", "Zscore": "Z"}
_LONG_TAKES = {"Output_old_results_format"}  # declared with an argument in trec_eval's table


class TrecEvalExit(Exception):
    """Stop with trec_eval's exit ``code`` after printing ``message`` on standard error
    (and ``output`` on standard output first: what trec_eval printed before it stopped)."""

    def __init__(self, code: int, message: str, output: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.output = output


@dataclass
class TrecEvalArgs:
    """trec_eval's options, as its ``main`` sets them."""

    files: list[str] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)
    query: bool = False
    complete: bool = False
    summary: bool = True
    rel_level: int = 1
    judged_only: bool = False
    max_retrieved: int | None = None
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    debug_level: int = 0
    debug_query: str | None = None
    num_docs: int = 0
    help: bool = False
    version: bool = False


def _atol(text: str) -> int:
    digits = ""
    for i, ch in enumerate(text.lstrip()):
        if ch.isdigit() or (i == 0 and ch in "+-"):
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return 0


def _usage(problem: str) -> TrecEvalExit:
    return TrecEvalExit(EXIT_USAGE, f"trec_eval: {problem}\n{USAGE}" if problem else USAGE)


def _long_option(arg: str, argv: Sequence[str], i: int) -> tuple[str, str | None, int]:
    name, eq, value = arg[2:].partition("=")
    if name in _LONG:
        full = name
    else:
        matches = [n for n in _LONG if n.startswith(name)]
        if len(matches) != 1:
            what = "ambiguous" if matches else "unrecognized"
            raise _usage(f"{what} option '--{name}'")
        full = matches[0]
    letter = _LONG[full]
    takes = _SHORT[letter] or full in _LONG_TAKES
    if not takes:
        if eq:
            raise _usage(f"option '--{full}' doesn't allow an argument")
        return letter, None, i
    if eq:
        return letter, value, i
    if i + 1 >= len(argv):
        raise _usage(f"option '--{full}' requires an argument")
    return letter, argv[i + 1], i + 1


def parse_argv(argv: Sequence[str]) -> TrecEvalArgs:
    """Read trec_eval's command line (GNU ``getopt_long``: options may follow the files).

    Raises `TrecEvalExit` (status 1, the usage text) for an unknown option, a
    missing value or the wrong number of file names.
    """
    opts: list[tuple[str, str | None]] = []
    files: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            files.extend(argv[i + 1:])
            break
        if arg.startswith("--"):
            letter, value, i = _long_option(arg, argv, i)
            opts.append((letter, value))
        elif arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                ch = arg[j]
                if ch not in _SHORT:
                    raise _usage(f"invalid option -- '{ch}'")
                if _SHORT[ch]:
                    if j + 1 < len(arg):
                        opts.append((ch, arg[j + 1:]))
                    elif i + 1 < len(argv):
                        i += 1
                        opts.append((ch, argv[i]))
                    else:
                        raise _usage(f"option requires an argument -- '{ch}'")
                    break
                opts.append((ch, None))
                j += 1
        else:
            files.append(arg)
        i += 1
    args = TrecEvalArgs(files=files)
    for letter, value in opts:
        _apply(args, letter, value or "")
    return args


def _apply(args: TrecEvalArgs, letter: str, value: str) -> None:
    if letter == "h":
        args.help = True
    elif letter == "v":
        args.version = True
    elif letter == "q":
        args.query = True
    elif letter == "m":
        args.measures.append(value)
    elif letter == "c":
        args.complete = True
    elif letter == "l":
        args.rel_level = _atol(value)
    elif letter == "n":
        args.summary = False
    elif letter == "D":
        level, _, qid = value.partition(".")
        args.debug_level, args.debug_query = _atol(level), qid or None
    elif letter == "J":
        args.judged_only = True
    elif letter == "M":
        args.max_retrieved = _atol(value)
    elif letter == "R":
        args.rel_format = value
    elif letter == "T":
        args.results_format = value
    elif letter == "Z":
        args.zscores = value
    elif letter == "N":
        args.num_docs = _atol(value)
    # "o" (obsolete in trec_eval too) is accepted and changes nothing.


REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")
"""The ``-R`` formats this command reads (all of trec_eval 10's)."""


@app.command(
    name="trec_eval",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                      "allow_interspersed_args": False},
    add_help_option=False,
    help="trec_eval 10's command line, output and exit codes (a drop-in for the binary).",
)
def trec_eval(ctx: typer.Context) -> None:
    """trec_eval 10's command line, output and exit codes (``rankproof trec_eval -h``)."""
    raise typer.Exit(main(list(ctx.args)))


def main(argv: Sequence[str]) -> int:
    """Run trec_eval's command line ``argv`` (without the program name); the exit status."""
    try:
        text = _run(argv)
    except TrecEvalExit as stop:
        if stop.output:
            _out(stop.output)
        _err(stop.message)
        return stop.code
    except RankproofError as exc:
        path = getattr(exc, "path", None)
        _err(f"trec_eval: {exc}" + (f"\ntrec_eval: Quit in file '{path}'" if path else ""))
        return EXIT_INPUT_TE
    except Exception as exc:  # a bug in rankproof, not in the input
        report_internal_error(exc)
        return EXIT_INTERNAL
    _out(text)
    return 0


def _out(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass


def _err(message: str) -> None:
    sys.stderr.write(message if message.endswith("\n") else message + "\n")
    sys.stderr.flush()


def _run(argv: Sequence[str]) -> str:
    import numpy as np

    from rankproof.data import load_qrels, load_run
    from rankproof.measures import (
        TrecMeasureError,
        evaluate,
        parse,
        relstrings,
        select_trec_eval,
        trec_eval_collection_size,
        trec_eval_iprec_nan,
        trec_eval_leftovers,
        trec_eval_run,
        trec_eval_stand_in,
    )
    from rankproof.report.trec import read_zscores, trec_eval_lines

    args = parse_argv(argv)
    if args.version:
        return _version()
    if args.help:
        return HELP
    if len(args.files) != 2:
        raise _usage("")
    try:
        selection = select_trec_eval(args.measures)
    except TrecMeasureError as exc:
        raise TrecEvalExit(EXIT_USAGE if exc.kind == "illegal" else EXIT_INPUT_TE,
                           str(exc) + _hint(exc.measure)) from None
    if args.rel_format not in REL_FORMATS:
        raise TrecEvalExit(EXIT_INPUT_TE, f"trec_eval: Illegal rel_format '{args.rel_format}'")
    _check_rel_format(args.rel_format, selection)
    if args.results_format != "trec_results":
        raise TrecEvalExit(EXIT_INPUT_TE, "trec_eval: Illegal retrieval results format "
                           f"'{args.results_format}'")
    if args.debug_level:
        raise TrecEvalExit(EXIT_USAGE, f"rankproof trec_eval: -D {args.debug_level} (trec_eval's "
                           "debug output) is not implemented in rankproof yet")
    if selection.missing:
        fams = selection.missing_families
        raise TrecEvalExit(EXIT_USAGE, (
            f"rankproof trec_eval: trec_eval measure{'s' * (len(fams) > 1)} "
            f"{', '.join(fams)} {'are' if len(fams) > 1 else 'is'} not implemented in rankproof "
            f"yet ({len(selection.missing)} of the {len(selection.columns)} lines asked for); "
            "nothing was printed rather than an output missing lines"))

    if args.rel_format != "qrels":
        return _run_other(args, selection)
    qrels_path, run_path = args.files
    qrels = load_qrels(qrels_path, format="trec")
    run = load_run(run_path, format="trec", extra_columns="ignore")
    zscores = read_zscores(args.zscores) if args.zscores is not None else None

    lacking = _lacking(args, qrels.topics, run, selection, stop=False)
    stop = None if args.complete or not lacking else min(lacking, key=str.encode)
    if lacking and args.complete:
        run = trec_eval_stand_in(run, lacking)
    kept = trec_eval_run(run, qrels, max_retrieved=args.max_retrieved,
                         judged_only=args.judged_only)
    measures = selection.measures or (parse("num_ret"),)
    counts = (parse("num_ret"), parse("num_rel"))
    target = kept if kept is not None else _placeholder(run, qrels.topics)
    pq = evaluate(qrels, target, tuple(dict.fromkeys(measures + counts)),
                  rel_level=args.rel_level, topics="complete-allow-disjoint")
    pq = trec_eval_iprec_nan(pq, selection, counts)
    if args.num_docs:
        pq = trec_eval_collection_size(pq, selection, args.num_docs)
    if lacking and args.complete:
        pq = trec_eval_leftovers(pq, selection, lacking)
    if args.debug_query is not None:
        pq = _only(pq, args.debug_query)
    if stop is not None:  # trec_eval printed the topics before the one it stops at
        pq = _before(pq, stop)
    for warning in pq.warnings:
        _err(f"rankproof trec_eval: warning: {warning}")
    strings = None
    if args.query and any(c.style == "string" for c in selection.columns):
        length = next(c.length for c in selection.columns if c.style == "string")
        strings = dict(relstrings(kept, qrels, length))
        strings.update(dict.fromkeys(lacking if args.complete else (), ""))
    summary_values = None
    if args.complete:  # m_num_rel.c: under -c the summary counts the whole qrels
        summary_values = {"num_rel": float(np.count_nonzero(qrels.rels > 0))}
    text = "".join(line + "\n" for line in trec_eval_lines(
        pq, selection, per_query=args.query, summary=args.summary and stop is None,
        relstrings=strings, zscores=zscores, summary_values=summary_values))
    if stop is not None:
        raise TrecEvalExit(EXIT_TOPIC, _lacking_message(args, lacking, stop), output=text)
    return text


def _lacking(args: TrecEvalArgs, qrels_topics: list[str], run: Run,
             selection: TrecSelection, *, stop: bool = True) -> list[str]:
    """The judged topics the run lacks (allowed only with ``-c``), as trec_eval 10 checks.

    With ``stop`` (the ``-R`` formats other than qrels) a lacking topic without
    ``-c`` raises at once; the qrels path prints the topics before it first.
    """
    present = set(run.topics) & set(qrels_topics)
    if args.debug_query is not None and args.debug_query not in qrels_topics:
        raise TrecEvalExit(EXIT_NO_QUERIES,
                           "trec_eval: No queries with both results and relevance info")
    lacking = [q for q in qrels_topics if q not in present
               and (args.debug_query is None or q == args.debug_query)]
    if lacking and not args.complete and stop:
        raise TrecEvalExit(EXIT_TOPIC, _lacking_message(
            args, lacking, min(lacking, key=str.encode)))
    if not qrels_topics:
        raise TrecEvalExit(EXIT_NO_QUERIES,
                           "trec_eval: No queries with both results and relevance info")
    return lacking


def _lacking_message(args: TrecEvalArgs, lacking: list[str], first: str) -> str:
    """trec_eval's words for the topic it stops at (trec_eval.c), then rankproof's."""
    more = f" (and {len(lacking) - 1} more)" if len(lacking) > 1 else ""
    return (f"trec_eval: result qid '{first}' not found in qrels\n"
            f"rankproof trec_eval: qrels topic '{first}' has no results in '{args.files[1]}'"
            f"{more}; trec_eval 10 stops here (exit 4) after the topics before it: pass -c "
            "to score such topics")


# -R FORMAT -> the judgments its measures read (rankproof.measures.rel_format_of).
_READS = {"qrels": "qrels", "prefs": "prefs", "qrels_prefs": "prefs", "qrels_jg": "qrels_jg"}


def _check_rel_format(rel_format: str, selection: TrecSelection) -> None:
    """Every selected measure must read the ``-R`` judgments (trec_eval cannot
    calculate a qrels measure from preferences, nor the reverse)."""
    from rankproof.measures import rel_format_of

    wanted = _READS[rel_format]
    for c in selection.columns:
        reads = rel_format_of(c)
        if reads not in ("any", wanted):
            how = "-R prefs or -R qrels_prefs" if reads == "prefs" else f"-R {reads}"
            raise TrecEvalExit(EXIT_TOPIC, (
                f"trec_eval: Can't calculate measure '{c.family}'\n"
                f"rankproof trec_eval: '{c.family}' reads {how} judgments, not -R {rel_format}"
                f"{' (the default)' if rel_format == 'qrels' else ''}"))


def _run_other(args: TrecEvalArgs, selection: TrecSelection) -> str:
    """``-R prefs``, ``-R qrels_prefs`` and ``-R qrels_jg``: trec_eval's other judgments."""
    from rankproof.data import load_run, read_prefs, read_qrels_jg, read_qrels_prefs
    from rankproof.measures import jg_values, prefs_values
    from rankproof.report.trec import read_zscores, trec_eval_lines

    qrels_path, run_path = args.files
    zscores = read_zscores(args.zscores) if args.zscores is not None else None
    if args.rel_format == "qrels_jg":
        groups = read_qrels_jg(qrels_path)
        run = load_run(run_path, format="trec", extra_columns="ignore")
        _lacking(args, groups.qids, run, selection)
        pq = jg_values(groups, run, selection.measures, rel_level=args.rel_level,
                       max_retrieved=args.max_retrieved, judged_only=args.judged_only)
        if args.debug_query is not None:
            pq = _only(pq, args.debug_query)
        return "".join(line + "\n" for line in trec_eval_lines(
            pq, selection, per_query=args.query, summary=args.summary, zscores=zscores))
    prefs = (read_prefs if args.rel_format == "prefs" else read_qrels_prefs)(qrels_path)
    run = load_run(run_path, format="trec", extra_columns="ignore")
    _lacking(args, prefs.qids, run, selection)
    topics = [q for q in prefs.qids if args.debug_query in (None, q)]
    values = prefs_values(prefs, run, topics, max_retrieved=args.max_retrieved)
    return "".join(line + "\n" for line in _prefs_lines(
        values, selection, run.tag or run.name, per_query=args.query, summary=args.summary,
        zscores=zscores))


def _prefs_lines(values: dict[str, dict[str, float]], selection: TrecSelection, runid: str, *,
                 per_query: bool, summary: bool, zscores: ZScores | None) -> list[str]:
    """trec_eval's lines for the preference measures (``report.trec.trec_eval_lines``
    prints measures the engine computes; these come from `prefs_values`)."""
    qids = sorted(values, key=str.encode)
    cols = [c for c in selection.columns if c.style != "header"]
    numbers = {c.name: [values[q][c.name] if zscores is None
                        else zscores.convert(q, c.name, values[q][c.name]) for q in qids]
               for c in cols}

    def show(name: str, style: str, qid: str, value: float) -> str:
        if zscores is not None:
            return f"Z{name:<22}\t{qid}\t{value:6.4f}"
        return f"{name:<22}\t{qid}\t{int(value) if style == 'count' else f'{value:6.4f}'}"

    out = [show(c.name, c.style, q, numbers[c.name][i])
           for i, q in enumerate(qids) for c in cols] if per_query else []
    if not summary:
        return out
    for c in selection.columns:
        if c.name == "runid":
            out.append(f"{'runid':<22}\tall\t{runid}")
        elif c.name == "num_q":
            out.append(f"Z{'num_q':<22}\tall\t{float(len(qids)):6.4f}" if zscores is not None
                       else f"{'num_q':<22}\tall\t{len(qids)}")
        elif c.style != "header":
            col = numbers[c.name]
            total = sum(col) if c.style == "count" else (  # trec_eval adds in topic order
                sum(col) / len(col) if col else math.nan)
            out.append(show(c.name, c.style, "all", total))
    return out


def _version() -> str:
    _err(f"trec_eval version 10.0 (rankproof {__version__} trec_eval)")
    return ""


def _hint(spec: str) -> str:
    """Point a rankproof spelling (``nDCG@10``) typed at the drop-in to ``rankproof measure``."""
    from rankproof.measures import parse_many

    try:
        parse_many(spec)
    except ValueError:
        return ""
    return (f"\n(rankproof trec_eval takes trec_eval's measure names; {spec!r} is rankproof's "
            "spelling: use rankproof measure -m for it)")


def _placeholder(run: Run, qrels_topics: list[str]) -> Run:
    """A one-row run on a topic the qrels lack: every qrels topic then has nothing
    retrieved (-M 0, or -J removing every document), as trec_eval evaluates it."""
    from rankproof.data import Run

    qid = "rankproof-no-topic"
    while qid in qrels_topics:
        qid += "-"
    return Run.from_columns([qid], ["none"], [0.0], name=run.name, tag=run.tag)


def _before(pq: PerQuery, qid: str) -> PerQuery:
    """``pq``'s topics sorting (byte-wise, trec_eval's qrels order) before ``qid``."""
    import dataclasses

    rows = [i for i, q in enumerate(pq.qids) if q.encode() < qid.encode()]
    return dataclasses.replace(pq, qids=tuple(pq.qids[i] for i in rows), values=pq.values[rows])


def _only(pq: PerQuery, qid: str) -> PerQuery:
    """``pq`` restricted to topic ``qid`` (trec_eval ``-D 0.qid``)."""
    import dataclasses

    rows = [i for i, q in enumerate(pq.qids) if q == qid]
    return dataclasses.replace(pq, qids=(qid,), values=pq.values[rows])
