"""DuckDB's side of the views: the generated BigQuery SQL in, DuckDB views on the sink out.

In: the committed BigQuery view SQL and the sink's columns (``_sink``). Out: each view
transpiled by sqlglot to run on the local table (``transpile``), with its
one-row-per-entry ranking run only when the sink holds copies (``dedupe``). It reads no
log file.
"""
