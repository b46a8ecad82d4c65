"""The committed views through the analyzer, and the catalog an analyst's query runs in."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agent_telemetry.analyze._analyzer import Analysis, Analyzer
from agent_telemetry.analyze._catalog import CatalogTree, Specs, add_source, source_path
from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.views import LANE_VIEW


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


def analyze_views(
    config: DeploymentConfig, layout: Layout, sql_dir: Path, specs: Specs = None
) -> list[ViewAnalysis]:
    """Analyze every committed view of ``layout`` whole (column list, OPTIONS, query) against
    the table it reads, typed from the models of ``specs`` (the project's catalogue).

    ``lane_health`` reads the event views, not the sink: it is analyzed after the others,
    against the sink and every view accepted before it, each typed by the analyzer's own
    output columns (what BigQuery would expose once they are created first)."""
    paths = committed_view_files(sql_dir, layout)
    texts = tuple(path.read_text(encoding="utf-8") for path in paths)
    source = source_path(config, layout)
    found = {
        p: ViewAnalysis(p, t, _analyze(layout, source, specs, t))
        for p, t in zip(paths, texts, strict=True)
        if p.stem != LANE_VIEW
    }
    readers = [(p, t) for p, t in zip(paths, texts, strict=True) if p.stem == LANE_VIEW]
    if readers:
        analyzer = Analyzer(query_catalog(config, layout, list(found.values()), specs))
        found.update({p: ViewAnalysis(p, t, analyzer.analyze(t)) for p, t in readers})
    return [found[p] for p in paths]


@lru_cache(maxsize=8)
def _source_analyzer(layout: Layout, source: tuple[str, str, str], specs: Specs) -> Analyzer:
    """One analyzer per source table, kept for the process (the runtime closes at exit)."""
    tree = CatalogTree()
    add_source(tree, source, layout, specs)
    return Analyzer(tree)


@lru_cache(maxsize=256)
def _analyze(layout: Layout, source: tuple[str, str, str], specs: Specs, text: str) -> Analysis:
    """Remembered per process: the same SQL against the same table gets the same verdict
    (``telemetry_quality`` alone takes over a second to analyze)."""
    return _source_analyzer(layout, source, specs).analyze(text)


def query_catalog(
    config: DeploymentConfig, layout: Layout, views: list[ViewAnalysis], specs: Specs = None
) -> CatalogTree:
    """The source table of ``layout`` and every accepted view, as a table typed by the
    analyzer's own output columns (exactly what BigQuery would expose)."""
    tree = CatalogTree()
    for view in views:
        analysis = view.analysis
        if analysis.accepted and analysis.name_path:
            typed = zip(analysis.columns, analysis.column_types, strict=True)
            tree.add(analysis.name_path, [(c.name, t) for c, t in typed])
    add_source(tree, source_path(config, layout), layout, specs)
    return tree
