"""The views every built-in field gets, written from its declaration (schemas.fields).

Tables stay in the numbered migrations; the per-field views are generated here: each
field's item view (``tasks``, ``gains``...), the corrected view of a correctable field
(``corrected_tasks``...), ``correction_edits`` (one pair of columns per editable column),
``model_items`` and the wide ``paper_summary``. :func:`refresh_views` (called by
``db.migrate``) re-creates them when their SQL changed or a migration was applied; the
older migrations' definitions stay for history, the ones here are the current ones.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import duckdb

from papersift.schemas.fields import (
    BUILTIN_FIELDS,
    CUSTOM_ITEM_PREFIX,
    CUSTOM_TABLE,
    EVIDENCE_COLUMNS,
    FieldSpec,
)

LATEST = "JOIN latest_extractions l USING (extraction_id)"
# The edited columns of migration 0011's correction_edits, in its order; any other
# editable column a field declares is added after them.
_FIRST_EDITS = ("name", "metric", "value", "value_in_evidence", "unit", "baseline",
                "dataset", "introduced")


def _cast(sql: str, expression: str, strict: bool = False) -> str:
    """A JSON string read as a column of this type (TRY_CAST unless ``strict``)."""
    if sql == "VARCHAR":
        return expression
    return f"{'CAST' if strict else 'TRY_CAST'}({expression} AS {sql})"


def item_key(spec: FieldSpec, alias: str = "t") -> str:
    """The SQL of an item's correction key: its first key column case-folded, the
    others as written (a gain: ``gain_key(metric, value)``)."""
    first, *rest = spec.key
    if [first, *rest] == ["metric", "value"]:
        return f"gain_key({alias}.metric, {alias}.value)"
    return f"item_key({alias}.{first})" + "".join(
        f" || '|' || coalesce(CAST({alias}.{column} AS VARCHAR), '')" for column in rest)


def _label(spec: FieldSpec, parts: tuple[tuple[str, str], ...], alias: str) -> str:
    """The item written as its label and then its parts (see FieldSpec.summary_parts)."""
    text = f"{alias}.{spec.label}"
    for before, column in parts:
        if spec.column(column).sql == "BOOLEAN":
            text += f" || CASE WHEN {alias}.{column} THEN '{before}' ELSE '' END"
        else:
            text += f" || coalesce('{before}' || CAST({alias}.{column} AS VARCHAR), '')"
    return text


def edit_columns() -> tuple[str, ...]:
    """Every column a correction may set, over all fields (correction_edits' columns)."""
    found = list(_FIRST_EDITS)
    for spec in BUILTIN_FIELDS:
        found += [c for c in (*spec.editable, *spec.derived) if c not in found]
    return tuple(found)


def _edit_type(column: str) -> str:
    for spec in BUILTIN_FIELDS:
        if column in (*spec.editable, *spec.derived):
            return spec.column(column).sql
    return "VARCHAR"


def correction_edits() -> str:
    after = "json_extract_string(after, '$')"
    columns = "".join(
        f"       bool_or(field = '{c}') AS set_{c},\n"
        f"       any_value({_cast(_edit_type(c), after)}) "
        f"FILTER (WHERE field = '{c}') AS {c},\n" for c in edit_columns())
    return f"""CREATE OR REPLACE VIEW correction_edits AS
WITH latest AS (
    SELECT * FROM corrections WHERE action = 'edit'
    QUALIFY row_number() OVER (PARTITION BY paper_id, item_type, item_key, field
                               ORDER BY version DESC, created DESC) = 1
)
SELECT paper_id, item_type, item_key,
{columns}       any_value(after) FILTER (WHERE field = 'grounding') AS grounding
FROM latest
GROUP BY paper_id, item_type, item_key"""


def _added_column(name: str, sql: str) -> str:
    """A column of an added item, read from the correction's JSON."""
    read = f"json_extract_string(a.item, '$.{name}')"
    if name == "alignment":
        return f"coalesce({read}, 'exact') AS alignment"
    if name == "align_score":
        return f"coalesce(TRY_CAST({read} AS DOUBLE), 1.0) AS align_score"
    if sql == "INTEGER":
        return f"CAST(json_extract(a.item, '$.{name}') AS INTEGER) AS {name}"
    return f"{_cast(sql, read)} AS {name}"


def _grounding(name: str) -> str:
    return f"json_extract_string(e.grounding, '$.{name}')"


def corrected_view(spec: FieldSpec) -> str:
    """The field's items of each paper's latest extraction and the ones reviewers added,
    with their corrections applied, rejected ones left out; then item_key, origin and
    review."""
    added = [(name, spec.column(name).sql) for name in (*spec.editable, *spec.derived)]
    added += [(c.name, c.sql) for c in spec.appended]
    added += list(EVIDENCE_COLUMNS)
    reads = "".join(f"           {_added_column(name, sql)},\n" for name, sql in added)
    edited = [f"CASE WHEN e.set_{c} THEN e.{c} ELSE i.{c} END AS {c}"
              for c in (*spec.editable, *spec.derived)]
    relocated = [
        f"CASE WHEN json_exists(e.grounding, '$.{name}') THEN "
        f"{_cast(sql, _grounding(name))} ELSE i.{name} END AS {name}"
        for name, sql in (*EVIDENCE_COLUMNS, *((c.name, c.sql) for c in spec.appended))]
    replaced = ",\n           ".join(edited + relocated)
    kind = spec.item
    return f"""CREATE OR REPLACE VIEW {spec.corrected_view} AS
WITH items AS (
    SELECT t.*, {item_key(spec)} AS item_key, FALSE AS is_added
    FROM {spec.table} t {LATEST}
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, a.idx,
{reads}           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = '{kind}'
)
SELECT i.* EXCLUDE (is_added) REPLACE (
           {replaced}),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       CASE WHEN s.status = 'accept' THEN 'accept' END AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = '{kind}' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = '{kind}' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject'"""


def item_view(spec: FieldSpec) -> str:
    """The field's view: its (corrected) items of each paper's latest extraction, with
    the canonical entity of each column the field looks up."""
    source = f"{spec.corrected_view} t" if spec.correctable else f"{spec.table} t {LATEST}"
    columns, joins = ["t.*"], []
    for number, entity in enumerate(spec.entities):
        alias = f"e{number}"
        names = entity.names
        columns += [f"{alias}.entity_id AS {names[0]}",
                    f"coalesce({alias}.canonical, t.{entity.column}) AS {names[1]}"]
        columns += [f"{alias}.{column} AS {name}" for column, name in entity.extra]
        joins.append(f"LEFT JOIN entity_lookup {alias} ON {alias}.kind = '{entity.kind}' "
                     f"AND {alias}.name = t.{entity.column}")
    lines = "\n".join(joins)
    return (f"CREATE OR REPLACE VIEW {spec.view} AS\nSELECT {', '.join(columns)}\n"
            f"FROM {source}" + (f"\n{lines}" if lines else ""))


def model_items() -> str:
    """Every correctable item of each paper's latest extraction, as the model gave it,
    with its key and label; a correction whose item is gone is a conflict."""
    parts = [
        f"SELECT t.paper_id, t.extraction_id, '{spec.item}' AS item_type, t.idx, "
        f"{item_key(spec)} AS item_key,\n       "
        f"{_label(spec, tuple((' ', c) for c in spec.key if c != spec.label), 't')} "
        f"AS label\nFROM {spec.table} t {LATEST}"
        for spec in BUILTIN_FIELDS if spec.correctable]
    parts.append(f"SELECT t.paper_id, t.extraction_id, '{CUSTOM_ITEM_PREFIX}' || t.field, "
                 f"t.idx, item_key(t.value), t.value\nFROM {CUSTOM_TABLE} t {LATEST}")
    return "CREATE OR REPLACE VIEW model_items AS\n" + "\nUNION ALL\n".join(parts)


def summary_column(spec: FieldSpec, extraction: str = "l.extraction_id") -> str:
    """The field's column of the wide paper table: its items joined with '; '."""
    return (f"(SELECT string_agg({_label(spec, spec.summary_parts, 'i')}, '; ' ORDER BY "
            f"i.idx) FROM {spec.view} i WHERE i.extraction_id = {extraction}) AS {spec.name}")


def _sources(expression: str, name: str) -> str:
    return f"(SELECT {expression} FROM sources s WHERE s.paper_id = p.paper_id) AS {name}"


def paper_summary() -> str:
    """One row per paper: where it was read, its latest extraction's model, a column per
    default field in the summary, the counts, and the abstract."""
    fields = [summary_column(spec) for spec in BUILTIN_FIELDS
              if spec.in_summary and not spec.optional]
    columns = [
        "p.paper_id", _sources("min(s.title)", "title"),
        _sources("min(s.source_id)", "source_id"), _sources("min(s.url)", "url"),
        _sources("string_agg(DISTINCT s.collection, '; ' ORDER BY s.collection)",
                 "collections"),
        _sources("string_agg(s.file || '#' || s.position, '; ' ORDER BY s.file, "
                 "s.position)", "occurrences"),
        _sources("min(s.venue)", "venue"), _sources("min(s.year)", "year"),
        "p.chars", "l.extraction_id", "l.model", *fields,
        "l.items", "l.items_ungrounded", "l.lenient", "p.text"]
    return ("CREATE OR REPLACE VIEW paper_summary AS\nSELECT\n    "
            + ",\n    ".join(columns)
            + "\nFROM papers p\nLEFT JOIN latest_extractions l USING (paper_id)")


def view_statements() -> list[str]:
    """Every generated view, each after the views it reads."""
    statements = [correction_edits()]
    statements += [corrected_view(spec) for spec in BUILTIN_FIELDS if spec.correctable]
    statements += [item_view(spec) for spec in BUILTIN_FIELDS]
    statements += [model_items(), paper_summary()]
    return statements


def generated_names() -> set[str]:
    """The names of the generated views."""
    names = {"correction_edits", "model_items", "paper_summary"}
    for spec in BUILTIN_FIELDS:
        names |= {spec.view} | ({spec.corrected_view} if spec.correctable else set())
    return names


def views_hash() -> str:
    return hashlib.sha256(";\n".join(view_statements()).encode()).hexdigest()[:16]


def refresh_views(con: duckdb.DuckDBPyConnection, force: bool = False) -> bool:
    """Create the generated views when their SQL differs from what the database holds
    (or ``force``: a migration was applied); returns whether it did. One transaction."""
    con.execute("CREATE TABLE IF NOT EXISTS _generated_views "
                "(hash VARCHAR NOT NULL, applied TIMESTAMP NOT NULL)")
    wanted = views_hash()
    row = con.execute("SELECT hash FROM _generated_views").fetchone()
    if row is not None and row[0] == wanted and not force:
        return False
    con.execute("BEGIN TRANSACTION")
    try:
        for statement in view_statements():
            con.execute(statement)
        con.execute("DELETE FROM _generated_views")
        con.execute("INSERT INTO _generated_views VALUES (?, ?)",
                    [wanted, datetime.now(UTC).replace(tzinfo=None)])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return True


def stored_fields(con: duckdb.DuckDBPyConnection) -> tuple[FieldSpec, ...]:
    """The built-in fields this warehouse's readers show: every default field, and each
    optional one a run enabled (its params say so) or whose table holds items."""
    found = []
    for spec in BUILTIN_FIELDS:
        if spec.optional:
            row = con.execute(
                f"SELECT EXISTS (SELECT 1 FROM {spec.table}) OR EXISTS (SELECT 1 FROM runs "
                "WHERE json_contains(json_extract(params, '$.with'), to_json(?::VARCHAR)))",
                [spec.name]).fetchone()
            if not (row and row[0]):
                continue
        found.append(spec)
    return tuple(found)
