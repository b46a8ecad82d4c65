"""Every view of a deployment, in the order they are created: the event views, then
``telemetry_quality``, then ``lane_health``, which reads event views (deploy and the
local warehouse create views in this order, so a view comes after those it reads)."""

from __future__ import annotations

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec, version_catalogue
from agent_telemetry.views._describe import QUALITY_VIEW, view_plans
from agent_telemetry.views._lanes import LANE_VIEW, lane_health_view
from agent_telemetry.views._render import ViewBuildError, ViewDefinition, event_view, quality_view


def generate_views(
    config: DeploymentConfig,
    layout: Layout | None = None,
    specs: tuple[EventSpec, ...] | None = None,
) -> tuple[ViewDefinition, ...]:
    """One view per event version, then ``telemetry_quality``, then ``lane_health`` (when
    the catalogue has the events it reads), for ``layout`` (default: the config's), in an
    order where a view comes after the views it reads. ``specs`` defaults to every
    registered version (``version_catalogue()``); version 1 of an event is the view named
    after it, version N is ``<event>_v<N>``."""
    chosen: Layout = config.source.layout if layout is None else layout
    specs = version_catalogue() if specs is None else specs
    plans = view_plans(specs)
    lanes = lane_health_view(config, chosen, specs)
    names = [p.view_name for p in plans] + [QUALITY_VIEW] + ([LANE_VIEW] if lanes else [])
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise ViewBuildError(f"several views would be named {', '.join(clashes)}")
    views = [event_view(config, chosen, plan, specs) for plan in plans]
    views.append(quality_view(config, chosen, specs))
    if lanes is not None:
        views.append(lanes)
    return tuple(views)
