"""agent-telemetry: anonymous, closed-set telemetry for rate-limited AI-agent pipelines.

Public surface, by what a user imports:

- ``agent_telemetry.schema``: the event models, bucket helpers and the rules they obey;
- ``agent_telemetry.emit``: the emitter services call, and a capture helper for tests;
- ``agent_telemetry.views``: generated BigQuery SQL, the sink schema, the data dictionary;
- ``agent_telemetry.warehouse``: the local DuckDB warehouse (``preview``, ``check-logs``);
- ``agent_telemetry.deploy``: plan, approve and apply the views in BigQuery;
- ``agent_telemetry.check``: the CI check (definition rules, schema lock, compatibility, views).

``schema`` and ``emit`` need only a plain install; the rest need the ``[cli]`` extra, and
``deploy`` also ``[bigquery]`` (docs/install.md).
"""

__version__ = "0.1.0"
