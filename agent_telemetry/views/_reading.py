"""How a value written as text is read as a number: shared by the JSON layout's views and
the one judgement (``warehouse/_judge.py``), so both accept exactly the same strings."""

# A JSON number's exact text (RFC 8259): no spaces, '+', hex, separators or leading zeros,
# all of which BigQuery's SAFE_CAST would read. Group 1: fraction; group 2: exponent.
JSON_NUMBER = r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"
