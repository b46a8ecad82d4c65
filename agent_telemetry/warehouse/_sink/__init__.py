"""The sink: the DuckDB table the load fills and the views read, typed from one schema.

In: the BigQuery sink schema (``agent_telemetry.views``' table fields, or a schema the
caller passes) and the judgement's value kinds. Out: DuckDB's type of each field and the
table's ``CREATE`` (``duckdb_types``), its columns (``table``: ``timestamp``,
``jsonPayload``, ``insertId``) and the statements that fill it from judged rows. The
loading and duckdb_views rooms both build on it; it imports only the judging room.
"""
