"""Loading: log files in, rows in the sink table out (``Warehouse.load``, ``preview``).

In: the inputs (``_reading``), limits and a DuckDB connection. Out: each file's rows,
judged (``_judging``) and stored whole or not at all in the sink's shape (``_sink``), and
a ``LoadReport`` of what was loaded and skipped (``report``). ``load`` runs each file's
load; ``fast`` reads and judges a plain JSON-lines file in SQL; the rows wait in
``staging`` until the file is read whole, are counted against the entries of earlier
files (``entries``) and stored (``store``: added, or adopted as the empty table);
``progress`` draws the bar.
"""
