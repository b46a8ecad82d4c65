"""BigQuery deployment of the generated views: plan, approve, apply.

The only package that imports ``google.cloud`` (the ``[bigquery]`` extra), and only
inside ``BigQueryWarehouse``, when a client is made.

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

from agent_telemetry.deploy._apply import ApplyResult, apply_plan
from agent_telemetry.deploy._approval import (
    Approval,
    ApprovalError,
    approve,
    read_approval,
    write_approval,
)
from agent_telemetry.deploy._client import BigQueryWarehouse
from agent_telemetry.deploy._plan import DeploymentPlan, PlanError, make_plan
from agent_telemetry.deploy._types import BigQueryError

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
