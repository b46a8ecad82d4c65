"""Defence in depth: every value is checked once more against its field's closed set or
bounds (the ``FieldSpec``) before a line is written.

The definition rules refuse validators, serializers and hooked enums, but a model can
still reach the emitter without them (built around the class hook, patched after
definition). So neither path trusts what the model's validator returned: an enum value
must be one of the field's members, and the line gets the member's own exact ``str``
(a ``str`` subclass with a lying ``__eq__`` or ``__str__`` is never written); an int must
be an exact ``int`` within ``ge..le`` (``True`` is an int to ``isinstance``, never here),
rounded to the field's precision when it has one; a bool exactly ``True`` or ``False``.
Anything else is dropped and named in ``invalid_fields`` like any invalid value.

The per-field tables are built once per model (``domains``), so the check is a dict
lookup and a comparison or two per field.
"""

from __future__ import annotations

from typing import Any

from agent_telemetry.schema.capacity import round_significant
from agent_telemetry.schema.spec import EventSpec

# name -> the field's domain: a dict of its members (each mapped to itself, the exact
# str written), an (lo, hi, digits) tuple (digits 0: no precision), or None for a bool.
Domain = dict[str, str] | tuple[int, int, int] | None
Domains = dict[str, Domain]


def domains(spec: EventSpec) -> Domains:
    """Each field's closed set or bounds, as the check reads them."""
    out: Domains = {}
    for field in spec.fields:
        if field.kind == "enum":
            out[field.name] = {str(m): str(m) for m in field.members}
        elif field.kind == "int" and field.ge is not None and field.le is not None:
            out[field.name] = (field.ge, field.le, field.precision or 0)
        elif field.kind == "bool":
            out[field.name] = None
        else:
            out[field.name] = (1, 0, 0)  # an unbounded int: nothing is inside
    return out


def inside(domain: Domain, value: Any) -> Any:
    """The value to write (an enum member's own str), or raise ``LookupError`` when the
    value is outside the domain. Values that are None are the caller's to skip."""
    if type(domain) is dict:
        try:
            return domain[value]
        except Exception:  # not a member, or unhashable / a raising __hash__ or __eq__
            raise LookupError from None
    if type(domain) is tuple:
        if type(value) is int and domain[0] <= value <= domain[1]:
            return round_significant(value, domain[2]) if domain[2] else value
        raise LookupError
    if value is True or value is False:
        return value
    raise LookupError


def recheck(values: dict[str, Any], table: Domains) -> list[str]:
    """Check ``values`` (field -> validated value) in place: each value outside its
    field's domain is removed and its name returned; enum values become the member's
    exact str. Names the table does not know are removed too (never written)."""
    outside: list[str] = []
    for name, value in values.items():
        if value is None:
            continue
        try:
            values[name] = inside(table[name], value)
        except LookupError:
            outside.append(name)
    for name in outside:
        del values[name]
    return outside
