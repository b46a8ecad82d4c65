"""``agent-telemetry report``: the charts of a log, from the same views the CLI reads.

Each chart is one SQL query over the generated views (``CHARTS`` in ``charts``); its rows
go to two renderers: a terminal table (``report LOGS``) and an SVG chart drawn by
matplotlib (the ``[report]`` extra) inside one self-contained, offline HTML page
(``report LOGS --html OUT``). Anyone can rerun a chart's query with
``agent-telemetry query``; the page prints it under each chart.
"""

from agent_telemetry.report.charts import CHARTS, Chart, ChartData, chart_data

__all__ = ["CHARTS", "Chart", "ChartData", "chart_data"]
