"""Reading: log files in, classified records out. The first stage; imports no other room.

In: the paths a run names (files, a pipe, ``-``). Out: each input once (``inputs``),
opened once and read once as UTF-8 bytes (``source``: gunzip, byte-order marks, JSON
lines or one JSON array, ``LoadError`` for what it cannot read), split into records
without decoding (``structure``) and each record classified once (``records``): blank,
plain text, truncated, other JSON, hostile, or telemetry with its shape. The load and
``check-logs`` read through these same modules, so a line is telemetry for both or for
neither.
"""
