"""Readers that once kept their own list of fields take it from the registry
(schemas/fields.py): corrections, the review pages, search, the report's colours and the
workbook; no file keeps a copy of a list the registry holds."""

from __future__ import annotations

import re
from pathlib import Path

from papersift.extract.interface import cli_discover
from papersift.report.colours import field_colours, field_css
from papersift.schemas.fields import BUILTIN_FIELDS, correctable_fields, search_fields
from papersift.warehouse import corrections

ROOT = Path(__file__).resolve().parents[1]


def test_corrections_follow_the_registry() -> None:
    assert tuple(spec.item for spec in correctable_fields()) == corrections.ITEM_TYPES
    for spec in correctable_fields():
        assert corrections.relation(spec.item) == spec.view
        assert tuple(corrections.editable(spec.item)) == spec.editable
        assert corrections.required(spec.item) == spec.label


def test_search_filters_and_shown_fields_follow_the_registry() -> None:
    assert (*(spec.name for spec in search_fields()), "area") == cli_discover.FIELDS


def test_every_field_has_its_colours_in_the_generated_css() -> None:
    css = field_css()
    for spec in BUILTIN_FIELDS:
        assert f"--{spec.item}: {spec.colour[0]};" in css
        assert f".hl-{spec.item} " in css
    assert field_colours() == {spec.item: spec.colour[0] for spec in BUILTIN_FIELDS}


def test_no_asset_or_module_keeps_its_own_list_of_fields() -> None:
    """The lists the registry replaced stay gone: a colour per field in the report's
    assets, the item types of corrections and the review page's add form."""
    css = (ROOT / "report" / "assets" / "report.css").read_text(encoding="utf-8")
    js = (ROOT / "report" / "assets" / "report.js").read_text(encoding="utf-8")
    review_js = (ROOT / "extract" / "interface" / "serve" / "static" / "review.js").read_text(
        encoding="utf-8")
    card = (ROOT / "extract" / "interface" / "serve" / "templates" / "card.html.j2"
            ).read_text(encoding="utf-8")
    for spec in BUILTIN_FIELDS:
        assert not re.search(rf"\.(hl|f)-{spec.item}\b|--{spec.item}:", css), spec.item
        assert f'{spec.item}: "#' not in js, spec.item
        assert f'"{spec.item}"' not in review_js, spec.item
        assert f'<option value="{spec.item}">' not in card, spec.item
    source = (ROOT / "warehouse" / "corrections.py").read_text(encoding="utf-8")
    assert '"task", "method"' not in source
