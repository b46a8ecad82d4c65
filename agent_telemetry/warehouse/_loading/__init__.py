"""Loading: log files in, rows in the sink table out (``Warehouse.load``, ``preview``).

In: the inputs (``_reading``), limits and a DuckDB connection. Out: each file's rows,
judged (``_judging``) and stored whole or not at all in the sink's shape (``_sink``), and
a ``LoadReport`` of what was loaded and skipped. ``load`` runs each file's load, ``fast``
reads and judges a plain JSON-lines file in SQL, ``progress`` draws the bar.
"""
