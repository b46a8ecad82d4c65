"""The catalogue as one JSON Schema (draft 2020-12): what a line of any language may be.

Generated from the same field specs as the views (``FieldSpec``: closed sets, bounds,
precision grid, required), never from a second description. A line validates exactly
when ``check-logs --strict-types`` finds nothing wrong with its form (docs/design.md,
"The catalogue as a JSON Schema"), with one exception JSON cannot express: ``5.0``
against ``5`` (JSON Schema's ``integer`` accepts an integral double; check-logs counts
it under ``--strict-types``). What the emitter reports in the envelope itself (values
it dropped, keys it counted as unknown) is a line it writes: the schema accepts it, and
``check-logs`` counts it as the service's bug the emitter caught.

A key holding ``null`` is absent to the views and to check-logs, so the schema allows
``null`` wherever an absent key is allowed.
"""

from __future__ import annotations

import json
from typing import Any

from agent_telemetry.schema import EventSpec, FieldSpec
from agent_telemetry.schema.envelope import SEVERITY, UNKNOWN_FLAG

DRAFT = "https://json-schema.org/draft/2020-12/schema"
# The form of this document; raised when its shape changes (not when the catalogue does:
# the catalogue's own changes are the lock's and each event's schema_version).
FORMAT_VERSION = 1
# The emitter's time: RFC 3339 UTC, microseconds, Z. The pattern keeps what ``format``
# lets through and check-logs does not (a leap second, year 0, other digits than ASCII);
# ``format: date-time`` refuses a day that does not exist (2026-02-30).
TIME_PATTERN = (
    r"^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}Z$"
)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null: a key holding null reads as absent."""
    return {"anyOf": [schema, {"type": "null"}]}


def field_schema(field: FieldSpec) -> dict[str, Any]:
    """One field's values: a closed set's members, a bounded integer on its precision's
    grid (one band per decade, each a ``multipleOf`` its step), or a boolean."""
    out: dict[str, Any] = {"description": field.description}
    if field.kind == "enum":
        out["enum"] = list(field.members)
    elif field.kind == "bool":
        out["type"] = "boolean"
    else:
        out.update(type="integer", minimum=field.ge, maximum=field.le)
        bands = []
        for band in field.grid:
            one: dict[str, Any] = {"type": "integer", "minimum": band.low, "maximum": band.high}
            if band.step > 1:
                one["multipleOf"] = band.step
            bands.append(one)
        if bands:
            out["x-precision"] = field.precision
            out["anyOf"] = bands
    return out


def envelope_schemas(spec: EventSpec) -> dict[str, dict[str, Any]]:
    """The envelope's keys besides ``event`` and ``schema_version``, as one event's line
    may hold them (one place: the envelope of issue 36 changes only here)."""
    return {
        "severity": {
            "description": "Always the emitter's severity (Cloud Logging lifts it).",
            "const": SEVERITY,
        },
        "time": {
            "description": "When the event happened: RFC 3339 UTC with microseconds and Z.",
            "type": "string",
            "format": "date-time",
            "pattern": TIME_PATTERN,
        },
        "invalid_fields": _nullable(
            {
                "description": "Fields whose values the emitter rejected and dropped.",
                "type": "array",
                "items": {"enum": list(spec.field_names)},
                "minItems": 1,
                "uniqueItems": True,
            }
        ),
        "unknown_fields": _nullable(
            {
                "description": "1 when the call passed keys the event does not define.",
                "type": "integer",
                "const": UNKNOWN_FLAG,
            }
        ),
    }


def event_schema(spec: EventSpec) -> dict[str, Any]:
    """One event version's line: its envelope, its fields, no other key holding a value."""
    properties: dict[str, Any] = {
        "event": {"const": spec.name},
        "schema_version": {"const": spec.schema_version},
    }
    envelope = envelope_schemas(spec)
    properties.update({k: v for k, v in envelope.items() if k in ("severity", "time")})
    required = ["event", "schema_version", "severity", "time"]
    dropped_or_present = []
    for field in spec.fields:
        schema = field_schema(field)
        properties[field.name] = schema if field.required else _nullable(schema)
        if field.required:
            # Present, or dropped by the emitter and named in invalid_fields.
            named = {"type": "array", "contains": {"const": field.name}}
            dropped_or_present.append(
                {
                    "anyOf": [
                        {"required": [field.name]},
                        {"required": ["invalid_fields"], "properties": {"invalid_fields": named}},
                    ]
                }
            )
    properties.update({k: v for k, v in envelope.items() if k not in properties})
    out: dict[str, Any] = {
        "title": f"{spec.name} (schema_version {spec.schema_version})",
        "description": spec.description,
        "type": "object",
        "required": required,
        "properties": properties,
        # A key no field or envelope key names may only hold null (read as absent).
        "additionalProperties": {"type": "null"},
    }
    if dropped_or_present:
        out["allOf"] = dropped_or_present
    return out


def def_name(spec: EventSpec) -> str:
    return f"{spec.name}.v{spec.schema_version}"


def catalogue_schema(specs: tuple[EventSpec, ...], module: str) -> dict[str, Any]:
    """The catalogue's document: a line is one of its event versions (each discriminated
    by the constants ``event`` and ``schema_version``)."""
    return {
        "$schema": DRAFT,
        "$id": f"urn:agent-telemetry:catalogue:{module}",
        "title": f"Telemetry lines of the catalogue {module}",
        "description": (
            "One JSON object per line, as the agent-telemetry emitter writes it. Generated "
            "by agent-telemetry from the catalogue's models; do not edit."
        ),
        "x-agent-telemetry": {
            "format": FORMAT_VERSION,
            "catalogue": module,
            "events": {
                s.name: [v.schema_version for v in specs if v.name == s.name] for s in specs
            },
        },
        "type": "object",
        "anyOf": [{"$ref": f"#/$defs/{def_name(s)}"} for s in specs],
        "$defs": {def_name(s): event_schema(s) for s in specs},
    }


def render(specs: tuple[EventSpec, ...], module: str) -> str:
    """The document as committed: two-space JSON, keys in generation order, a newline."""
    # Model text (docstrings, descriptions) is outside text: ASCII only, so no control,
    # bidi or line separator reaches a terminal raw, and `##[` (a runner command anywhere
    # on a line) as `#\u0023[`, which decodes to the same string.
    text = json.dumps(catalogue_schema(specs, module), indent=2, ensure_ascii=True)
    return text.replace("##[", "#\\u0023[") + "\n"
