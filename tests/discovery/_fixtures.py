"""A four-item catalogue and three cases (one abstention) for plumbing tests through bm25."""

from __future__ import annotations

from rankproof.discovery import Catalog, CatalogItem, DiscoveryCase

CATALOG = Catalog((
    CatalogItem("csv-loader", "CSV loader", "Load comma separated files into tables", ("csv",)),
    CatalogItem("pdf-render", "PDF renderer", "Render reports as PDF documents", ("pdf",)),
    CatalogItem("sql-runner", "SQL runner", "Run SQL queries against the warehouse", ("sql",)),
    CatalogItem("mailer", "Mailer", "Send email notifications to a team", ("email",)),
))
PLUMB = [DiscoveryCase("load a csv file into a table", "csv-loader"),
         DiscoveryCase("run sql queries on the warehouse", ("sql-runner",)),
         DiscoveryCase("book a flight to Lisbon")]
