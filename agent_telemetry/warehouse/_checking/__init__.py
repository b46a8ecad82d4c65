"""Checking: log files in, a ``check-logs`` report out, without loading anything.

In: the inputs, read (``_reading``) and judged (``_judging``) as the load reads and
judges them, through the load's SQL path for large plain files (``_loading.fast``). Out:
per event the valid and invalid lines, violations by field and rule (never a value),
coverage, duplicates and conflicting copies (``check_logs``), the combinations of values
fewer than k lines share (``rare``), and how the report prints (``render``). The SQL
path (``fast``) runs, file by file, the statements of ``checked_table`` (which lines are
clean, and what they count), after ``keys_ahead`` has found the entry keys more than one
line holds.
"""
