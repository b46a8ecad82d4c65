"""agent-telemetry: anonymous, closed-set telemetry for rate-limited AI-agent pipelines.

Public surface, by what a user imports:

- ``agent_telemetry.schema``: the event models, bucket helpers and the rules they obey;
- ``agent_telemetry.emit``: the emitter services call, and a capture helper for tests;
- ``agent_telemetry.views``: generated BigQuery SQL and the local DuckDB warehouse;
- ``agent_telemetry.check``: the CI check (definition rules, schema lock, compatibility, views).
"""

__version__ = "0.1.0"
