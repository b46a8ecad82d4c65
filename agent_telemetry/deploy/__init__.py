"""BigQuery deployment of the generated views: plan, approve, apply.

The only package that imports ``google.cloud`` (the ``[bigquery]`` extra). Each name
loads its module on first use, so importing the package (as the ``views`` command group
does to mount ``plan``, ``approve`` and ``apply``) needs no google-cloud-bigquery; the
modules that talk to BigQuery raise ``BigQueryError`` naming the extra when it is missing.

- ``BigQueryWarehouse.connect(...)``: the google-cloud-bigquery client behind one
  narrow interface;
- ``make_plan(warehouse, config) -> DeploymentPlan``: deployed vs generated, every view
  dry-run;
- ``approve(plan, by) -> Approval``, ``write_approval``, ``read_approval``: the reviewed
  record, bound to the plan's hash;
- ``apply_plan(warehouse, config, approval) -> ApplyResult``: writes exactly what was
  approved, or refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_telemetry._lazy import lazy_getattr

if TYPE_CHECKING:
    from agent_telemetry.deploy._apply import apply_plan
    from agent_telemetry.deploy._approval import (
        Approval,
        ApprovalError,
        approve,
        read_approval,
        write_approval,
    )
    from agent_telemetry.deploy._client import BigQueryWarehouse
    from agent_telemetry.deploy._decide import ApplyResult
    from agent_telemetry.deploy._plan import DeploymentPlan, PlanError
    from agent_telemetry.deploy._read import make_plan
    from agent_telemetry.deploy._types import BigQueryError

_LAZY = {
    "ApplyResult": "_decide",
    "apply_plan": "_apply",
    "Approval": "_approval",
    "ApprovalError": "_approval",
    "approve": "_approval",
    "read_approval": "_approval",
    "write_approval": "_approval",
    "BigQueryWarehouse": "_client",
    "DeploymentPlan": "_plan",
    "PlanError": "_plan",
    "make_plan": "_read",
    "BigQueryError": "_types",
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "ApplyResult",
    "Approval",
    "ApprovalError",
    "BigQueryError",
    "BigQueryWarehouse",
    "DeploymentPlan",
    "PlanError",
    "apply_plan",
    "approve",
    "make_plan",
    "read_approval",
    "write_approval",
]
