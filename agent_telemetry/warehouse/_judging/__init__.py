"""Judging: a telemetry record in, its values as the views read them out. One judgement.

In: a classified record (``_reading.records.Telemetry``) or a line of a plain JSON-lines
file. Out: each value read or refused (NULL in the sink, a violation in ``check-logs``),
the coercions it took, the entry's time and insert id, and which copy of an entry counts.
It imports only the reading room. There is one set of rules in four forms; each form
applies the same rules, and where a SQL form cannot apply one exactly it hands the line
to the Python form:

- Python, ``python``: the rules themselves. Integers (a JSON integer, an integral
  number, a string holding one), booleans (``true``/``false`` and their strings), closed
  sets and ``event`` (a JSON string only), ``invalid_fields`` (an array, its strings),
  timestamps (``time_of``: RFC 3339, and BigQuery's read-back form for a ``timestamp``),
  the insert id; coercions are counted. It judges every line of the slow paths and every
  line a SQL form hands over.
- SQL, ``sql``: what every SQL judge shares: the ``python`` kind of a handed-over line,
  what DuckDB's parser takes and orjson refuses (``NaN``, ``Infinity``, trailing
  commas), the record's own keys, and the timestamp rule in SQL (the emitter's exact
  ``time``, a ``Z`` timestamp with 0 to 9 digits; anything else goes to Python).
- Typed SQL, ``typed``: the fast judge of the load (``_loading.fast``) and of
  ``check-logs`` (``_checking.fast``): one regular expression (the gate) sends to Python
  every line where DuckDB's typed reading could differ from ``python``, and DuckDB reads
  the rest straight into the sink's types; what a record is, keys written twice or
  unknown and nesting follow ``_reading.records``' rules.
- Copies, ``copies``: which copy of a log entry counts (same insertId and timestamp):
  the ranking the views keep one row by (the generated ``QUALIFY``, run locally through
  ``_duckdb_views.dedupe``), in Python, for ``check-logs``.

The tests that hold the forms equal:

- tests/warehouse/test_two_paths.py: the load's typed SQL and Python judges give the
  same table and counts over hostile lines (tests/warehouse/two_paths_corpus.py);
- tests/warehouse/test_typed_gate.py: the gate routes each odd line; both judges agree;
- tests/warehouse/test_checklogs_two_paths.py: ``check-logs`` gives the same report with
  its SQL path on and off;
- tests/warehouse/test_judgement.py: a value is valid in ``check-logs`` exactly when the
  view shows it, and a coercion exactly when it was not in the emitter's JSON type;
- tests/warehouse/test_differential.py: preview and ``check-logs`` against each other and
  against the corpus generator's truth, in every format (tests/warehouse/corpus.py);
- tests/warehouse/test_conflicting_copies.py (``test_python_and_duckdb_keep_the_same_copy``)
  and tests/warehouse/test_service_copies.py: Python's copy is the views' copy;
  tests/warehouse/test_duckdb_dedupe.py: the local guard answers as the ranking does.
"""
