"""The results history: every rankproof result kept in a real database.

* `open_store(url)` opens (creating or migrating) a store: SQLite by default
  (``.rankproof/history.db``), PostgreSQL by URL, ``$RANKPROOF_HISTORY`` between the two.
  A database from a newer rankproof, a corrupt file or a foreign database is an
  `rankproof.InputError` naming it.
* `HistoryStore.add(document, label)` keeps a document (content-addressed, append-only);
  `HistoryStore.results` lists them with filters; `HistoryStore.get` finds one by id,
  prefix or ``latest@BRANCH``.
* `trend(store, measure)` — one point per result in commit order, each step tested
  against the previous point with `rankproof.comparison.compare_pairs` and corrected
  across the trend; `since(store, qid, measure)` — the first result after which a query's
  value dropped and stayed down; `compare_results` — a paired comparison of two results.

Rendering lives in `rankproof.report` and the CLI; serving in `rankproof.web`.
"""

from rankproof.history._extract import KINDS, kind_of, result_id
from rankproof.history._schema import SCHEMA_VERSION
from rankproof.history._store import (
    DEFAULT_PATH,
    ENV,
    HistoryStore,
    ResultInfo,
    open_store,
    read_json_file,
    resolve_url,
)
from rankproof.history._transfer import (
    export_records,
    export_table,
    import_records,
    read_records,
    store_records,
)
from rankproof.history._trend import (
    Since,
    Trend,
    TrendPoint,
    compare_results,
    since,
    trend,
)

__all__ = [
    "DEFAULT_PATH",
    "ENV",
    "KINDS",
    "SCHEMA_VERSION",
    "HistoryStore",
    "ResultInfo",
    "Since",
    "Trend",
    "TrendPoint",
    "compare_results",
    "export_records",
    "export_table",
    "import_records",
    "kind_of",
    "open_store",
    "read_json_file",
    "read_records",
    "resolve_url",
    "result_id",
    "since",
    "store_records",
    "trend",
]
