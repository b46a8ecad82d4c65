"""The committed views through the analyzer, and the catalog an analyst's query runs in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_telemetry.analyze._analyzer import Analysis, Analyzer
from agent_telemetry.analyze._catalog import CatalogTree, add_source, source_catalog
from agent_telemetry.config import DeploymentConfig, Layout


@dataclass(frozen=True, slots=True)
class ViewAnalysis:
    """One committed view file (``<sql_dir>/<layout>/<view>.sql``) and the verdict on it."""

    path: Path
    sql: str
    analysis: Analysis

    @property
    def view(self) -> str:
        return self.path.stem


def committed_view_files(sql_dir: Path, layout: Layout) -> list[Path]:
    return sorted((sql_dir / layout).glob("*.sql"))


def analyze_views(config: DeploymentConfig, layout: Layout, sql_dir: Path) -> list[ViewAnalysis]:
    """Analyze every committed view of ``layout`` whole (column list, OPTIONS, query) against
    the table it reads, typed from the models."""
    found = []
    with Analyzer(source_catalog(config, layout)) as analyzer:
        for path in committed_view_files(sql_dir, layout):
            sql = path.read_text(encoding="utf-8")
            found.append(ViewAnalysis(path, sql, analyzer.analyze(sql)))
    return found


def query_catalog(
    config: DeploymentConfig, layout: Layout, views: list[ViewAnalysis]
) -> CatalogTree:
    """The source table of ``layout`` and every accepted view, as a table typed by the
    analyzer's own output columns (exactly what BigQuery would expose)."""
    tree = CatalogTree()
    for view in views:
        analysis = view.analysis
        if analysis.accepted and analysis.name_path:
            columns = [
                (c.name, t) for c, t in zip(analysis.columns, analysis.column_types, strict=True)
            ]
            tree.add(analysis.name_path, columns)
    add_source(tree, config, layout)
    return tree
