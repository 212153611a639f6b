-- 0013: the declarations of user fields (`papersift run --fields`), one row per field,
-- the latest run's declaration kept: what the wide paper table, the report, `serve` and
-- its corrections, and search read to know a run's own fields (their grounding, values
-- and cue words), without the user's Python file. Fields stored by runs before this
-- migration are listed from their items, with an unknown grounding.
CREATE TABLE custom_fields (
    name VARCHAR PRIMARY KEY,
    grounding VARCHAR,
    position INTEGER,   -- its place in the fields file
    declaration JSON,   -- schemas.fields.CustomField.as_data()
    declared TIMESTAMP
);

INSERT INTO custom_fields
SELECT DISTINCT field, NULL, NULL, NULL, NULL FROM custom_items;

-- Reviewers' corrections of user-field items (`papersift serve`), as of built-in items
-- (0009, 0011): an item's type is 'custom-NAME', its key item_key(value); an edit
-- changes its 'value', and its 'grounding' row (the edited value looked up again in the
-- abstract, by the field's declaration) replaces its location whole and holds the value
-- as normalised (a name as the abstract writes it, a choice's declared spelling). corrected_custom has every item of each
-- paper's latest extraction and every added one, rejected ones left out, with item_key,
-- origin and review; the view `custom` (and so every custom_NAME view) shows it with
-- its own columns, unchanged.
CREATE VIEW corrected_custom AS
WITH edits AS (
    SELECT paper_id, item_type, item_key,
           bool_or(field = 'value') AS set_value,
           any_value(json_extract_string(after, '$')) FILTER (WHERE field = 'value') AS value,
           any_value(after) FILTER (WHERE field = 'grounding') AS grounding
    FROM (SELECT * FROM corrections
          WHERE action = 'edit' AND starts_with(item_type, 'custom-')
          QUALIFY row_number() OVER (PARTITION BY paper_id, item_type, item_key, field
                                     ORDER BY version DESC, created DESC) = 1)
    GROUP BY paper_id, item_type, item_key
),
items AS (
    SELECT t.*, item_key(t.value) AS item_key, FALSE AS is_added
    FROM custom_items t JOIN latest_extractions l USING (extraction_id)
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, substr(a.item_type, 8) AS field,
           CAST(a.idx AS INTEGER) AS idx,
           json_extract_string(a.item, '$.value') AS value,
           json_extract_string(a.item, '$.unit') AS unit,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           coalesce(json_extract_string(a.item, '$.alignment'), 'exact') AS alignment,
           coalesce(TRY_CAST(json_extract_string(a.item, '$.align_score') AS DOUBLE), 1.0)
               AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE starts_with(a.item_type, 'custom-')
)
SELECT i.* EXCLUDE (is_added) REPLACE (
           CASE WHEN json_exists(e.grounding, '$.value') THEN json_extract_string(e.grounding, '$.value')
                WHEN e.set_value THEN e.value ELSE i.value END AS value,
           CASE WHEN json_exists(e.grounding, '$.alignment') THEN json_extract_string(e.grounding, '$.alignment')
                ELSE i.alignment END AS alignment,
           CASE WHEN json_exists(e.grounding, '$.align_score') THEN TRY_CAST(json_extract_string(e.grounding, '$.align_score') AS DOUBLE)
                ELSE i.align_score END AS align_score,
           CASE WHEN json_exists(e.grounding, '$.mention_start') THEN TRY_CAST(json_extract_string(e.grounding, '$.mention_start') AS INTEGER)
                ELSE i.mention_start END AS mention_start,
           CASE WHEN json_exists(e.grounding, '$.mention_end') THEN TRY_CAST(json_extract_string(e.grounding, '$.mention_end') AS INTEGER)
                ELSE i.mention_end END AS mention_end,
           CASE WHEN json_exists(e.grounding, '$.char_start') THEN TRY_CAST(json_extract_string(e.grounding, '$.char_start') AS INTEGER)
                ELSE i.char_start END AS char_start,
           CASE WHEN json_exists(e.grounding, '$.char_end') THEN TRY_CAST(json_extract_string(e.grounding, '$.char_end') AS INTEGER)
                ELSE i.char_end END AS char_end,
           CASE WHEN json_exists(e.grounding, '$.evidence') THEN json_extract_string(e.grounding, '$.evidence')
                ELSE i.evidence END AS evidence,
           CASE WHEN json_exists(e.grounding, '$.unit') THEN json_extract_string(e.grounding, '$.unit')
                ELSE i.unit END AS unit),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       CASE WHEN s.status = 'accept' THEN 'accept' END AS review
FROM items i
LEFT JOIN edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'custom-' || i.field
      AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'custom-' || i.field
      AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE OR REPLACE VIEW custom AS
SELECT extraction_id, paper_id, field, idx, value, unit, evidence, char_start, char_end,
       alignment, align_score, mention_start, mention_end
FROM corrected_custom;

-- Every item of each paper's latest extraction, as the model gave it (0009), user
-- fields' items too: a correction of one whose item is gone is listed as a conflict.
CREATE OR REPLACE VIEW model_items AS
SELECT t.paper_id, t.extraction_id, 'task' AS item_type, t.idx, item_key(t.name) AS item_key,
       t.name AS label
FROM extraction_tasks t JOIN latest_extractions l USING (extraction_id)
UNION ALL
SELECT t.paper_id, t.extraction_id, 'method', t.idx, item_key(t.name), t.name
FROM extraction_methods t JOIN latest_extractions l USING (extraction_id)
UNION ALL
SELECT t.paper_id, t.extraction_id, 'benchmark', t.idx, item_key(t.name), t.name
FROM extraction_benchmarks t JOIN latest_extractions l USING (extraction_id)
UNION ALL
SELECT t.paper_id, t.extraction_id, 'gain', t.idx, gain_key(t.metric, t.value),
       t.metric || coalesce(' ' || CAST(t.value AS VARCHAR), '')
FROM extraction_gains t JOIN latest_extractions l USING (extraction_id)
UNION ALL
SELECT t.paper_id, t.extraction_id, 'custom-' || t.field, t.idx, item_key(t.value), t.value
FROM custom_items t JOIN latest_extractions l USING (extraction_id);
