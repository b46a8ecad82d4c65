"""A view of views, with the views it reads written into it: what a dry run can check
before those views exist (a first deployment) or while they are about to change."""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp

from agent_telemetry.views._render import DIALECT, ViewBuildError, ViewDefinition


def inlined_query(view: ViewDefinition, views: Sequence[ViewDefinition]) -> str:
    """``view``'s query with each view it reads (``view.reads``) replaced by that view's
    generated query, as a subquery under the same alias; a view that reads no view is
    returned as it is. The result reads only what those views read (the sink)."""
    if not view.reads:
        return view.query
    by_path = {(v.project, v.dataset, v.name): v for v in views}
    wanted = {(view.project, view.dataset, name) for name in view.reads}
    missing = sorted(
        name for (_, _, name) in wanted if (view.project, view.dataset, name) not in by_path
    )
    if missing:
        raise ViewBuildError(f"{view.name}: reads {', '.join(missing)}, which is not generated")

    def inline(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and (node.catalog, node.db, node.name) in wanted:
            read = by_path[node.catalog, node.db, node.name]
            query = sqlglot.parse_one(inlined_query(read, views), dialect=DIALECT)
            return exp.Subquery(this=query, alias=node.args.get("alias"))
        return node

    tree = sqlglot.parse_one(view.query, dialect=DIALECT).transform(inline)
    return tree.sql(dialect=DIALECT, pretty=True) + "\n"
