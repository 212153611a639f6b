"""Each field's colours as CSS, from the field registry (schemas.fields: FieldSpec.colour):
the report and the review pages put these rules before report.css, which styles the
classes (``hl-ITEM`` highlights, ``f-ITEM`` items, headings and tags) without naming
any field."""

from __future__ import annotations

from papersift.schemas.fields import BUILTIN_FIELDS


def field_colours() -> dict[str, str]:
    """Each built-in item type's line colour (the charts' bars)."""
    return {spec.item: spec.colour[0] for spec in BUILTIN_FIELDS}


def field_css() -> str:
    """The CSS variables and rules of every built-in field's colours."""
    variables = " ".join(f"--{spec.item}: {spec.colour[0]}; --{spec.item}-bg: {spec.colour[1]};"
                         for spec in BUILTIN_FIELDS)
    rules = []
    for item in (spec.item for spec in BUILTIN_FIELDS):
        rules += [
            f".hl-{item} {{ background: var(--{item}-bg); "
            f"box-shadow: inset 0 -2px 0 var(--{item}); }}",
            f".item.f-{item} {{ border-color: var(--{item}); }}",
            f"h4.f-{item} {{ color: var(--{item}); }}",
            f".field.f-{item} {{ background: var(--{item}); }}"]
    return f":root {{ {variables} }}\n" + "\n".join(rules) + "\n"
