-- 0009: reviewers' corrections (`papersift serve`). Append-only: a correction is never
-- updated or deleted; a later one with a higher version supersedes it. The item views
-- (tasks, methods, benchmarks, gains) apply them, so every query, export and the report
-- show corrected data, and each item says where it came from (origin).
--
-- A correction names its item by paper, type and a key computed from the item's content
-- (its normalised name; a gain's normalised metric and value), never by run or
-- extraction, so it survives re-extraction with another prompt, schema or model. When the
-- latest extraction no longer contains the item, the correction is listed in
-- correction_conflicts instead of being dropped.

CREATE TABLE corrections (
    correction_id  VARCHAR PRIMARY KEY,
    created        TIMESTAMP NOT NULL,
    paper_id       VARCHAR NOT NULL,
    item_type      VARCHAR NOT NULL,   -- task / method / benchmark / gain; paper (a paper marked reviewed)
    item_key       VARCHAR NOT NULL,   -- item_key(name) or gain_key(metric, value); 'added:<id>' for an added item; '' for a paper
    version        INTEGER NOT NULL,   -- the item's review version this correction makes: 1, 2, ...
    action         VARCHAR NOT NULL,   -- accept / reject / restore / edit / add / reviewed
    field          VARCHAR,            -- edit: the field it changes (name, value, unit, metric, baseline, dataset, introduced)
    before         VARCHAR,            -- edit: the value shown before, as JSON
    after          VARCHAR,            -- edit: the new value as JSON (null: cleared); add: the item as a JSON object
    reviewer       VARCHAR,
    note           VARCHAR,            -- reject: the reason
    extraction_id  VARCHAR             -- the extraction the reviewer was looking at
);

-- The identity of an item: case-folded, inner whitespace collapsed.
CREATE MACRO item_key(name) AS lower(trim(regexp_replace(coalesce(name, ''), '\s+', ' ', 'g')));
CREATE MACRO gain_key(metric, value) AS
    item_key(metric) || '|' || coalesce(CAST(value AS VARCHAR), '');

-- Every item of each paper's latest extraction, as the model gave it, with its key.
CREATE VIEW model_items AS
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
FROM extraction_gains t JOIN latest_extractions l USING (extraction_id);

-- Each item's latest accept / reject / restore.
CREATE VIEW correction_status AS
SELECT paper_id, item_type, item_key, action AS status, version, reviewer, note, created
FROM corrections
WHERE action IN ('accept', 'reject', 'restore')
QUALIFY row_number() OVER (PARTITION BY paper_id, item_type, item_key
                           ORDER BY version DESC, created DESC) = 1;

-- Each item's edited fields, the latest edit of each field winning; set_X says X was edited.
CREATE VIEW correction_edits AS
WITH latest AS (
    SELECT * FROM corrections WHERE action = 'edit'
    QUALIFY row_number() OVER (PARTITION BY paper_id, item_type, item_key, field
                               ORDER BY version DESC, created DESC) = 1
)
SELECT paper_id, item_type, item_key,
       bool_or(field = 'name') AS set_name,
       any_value(json_extract_string(after, '$')) FILTER (WHERE field = 'name') AS name,
       bool_or(field = 'metric') AS set_metric,
       any_value(json_extract_string(after, '$')) FILTER (WHERE field = 'metric') AS metric,
       bool_or(field = 'value') AS set_value,
       any_value(TRY_CAST(json_extract_string(after, '$') AS DOUBLE)) FILTER (WHERE field = 'value') AS value,
       bool_or(field = 'value_in_evidence') AS set_value_in_evidence,
       any_value(TRY_CAST(json_extract_string(after, '$') AS BOOLEAN)) FILTER (WHERE field = 'value_in_evidence') AS value_in_evidence,
       bool_or(field = 'unit') AS set_unit,
       any_value(json_extract_string(after, '$')) FILTER (WHERE field = 'unit') AS unit,
       bool_or(field = 'baseline') AS set_baseline,
       any_value(json_extract_string(after, '$')) FILTER (WHERE field = 'baseline') AS baseline,
       bool_or(field = 'dataset') AS set_dataset,
       any_value(json_extract_string(after, '$')) FILTER (WHERE field = 'dataset') AS dataset,
       bool_or(field = 'introduced') AS set_introduced,
       any_value(TRY_CAST(json_extract_string(after, '$') AS BOOLEAN)) FILTER (WHERE field = 'introduced') AS introduced
FROM latest
GROUP BY paper_id, item_type, item_key;

-- Items reviewers added: one row per add correction, with the paper's latest extraction
-- id (so joins on extraction_id, as in paper_summary and the report, find them).
CREATE VIEW added_items AS
SELECT c.paper_id, l.extraction_id, c.item_type, c.item_key, c.correction_id,
       10000 + row_number() OVER (PARTITION BY c.paper_id, c.item_type
                                  ORDER BY c.created, c.correction_id) AS idx,
       c.after AS item
FROM corrections c LEFT JOIN latest_extractions l USING (paper_id)
WHERE c.action = 'add';

-- Corrections whose item the latest extraction no longer contains: shown, never dropped.
CREATE VIEW correction_conflicts AS
SELECT c.*
FROM corrections c
WHERE c.action IN ('accept', 'reject', 'restore', 'edit')
  AND c.paper_id IN (SELECT paper_id FROM latest_extractions)
  AND NOT EXISTS (SELECT 1 FROM model_items m
                  WHERE m.paper_id = c.paper_id AND m.item_type = c.item_type
                    AND m.item_key = c.item_key);

-- The item views, corrected. Extra columns at the end: item_key, origin
-- ('model' / 'corrected' / 'added') and review ('accept' when a reviewer accepted it).
CREATE VIEW corrected_tasks AS
WITH items AS (
    SELECT t.*, item_key(t.name) AS item_key, FALSE AS is_added
    FROM extraction_tasks t JOIN latest_extractions l USING (extraction_id)
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, a.idx,
           json_extract_string(a.item, '$.name') AS name,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           'exact' AS alignment, 1.0 AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = 'task'
)
SELECT i.* EXCLUDE (is_added) REPLACE (CASE WHEN e.set_name THEN e.name ELSE i.name END AS name),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       s.status AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'task' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'task' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE VIEW corrected_methods AS
WITH items AS (
    SELECT t.*, item_key(t.name) AS item_key, FALSE AS is_added
    FROM extraction_methods t JOIN latest_extractions l USING (extraction_id)
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, a.idx,
           json_extract_string(a.item, '$.name') AS name,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           'exact' AS alignment, 1.0 AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = 'method'
)
SELECT i.* EXCLUDE (is_added) REPLACE (CASE WHEN e.set_name THEN e.name ELSE i.name END AS name),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       s.status AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'method' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'method' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE VIEW corrected_benchmarks AS
WITH items AS (
    SELECT t.*, item_key(t.name) AS item_key, FALSE AS is_added
    FROM extraction_benchmarks t JOIN latest_extractions l USING (extraction_id)
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, a.idx,
           json_extract_string(a.item, '$.name') AS name,
           TRY_CAST(json_extract_string(a.item, '$.introduced') AS BOOLEAN) AS introduced,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           'exact' AS alignment, 1.0 AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = 'benchmark'
)
SELECT i.* EXCLUDE (is_added) REPLACE (
           CASE WHEN e.set_name THEN e.name ELSE i.name END AS name,
           CASE WHEN e.set_introduced THEN e.introduced ELSE i.introduced END AS introduced),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       s.status AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'benchmark' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'benchmark' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE VIEW corrected_gains AS
WITH items AS (
    SELECT t.*, gain_key(t.metric, t.value) AS item_key, FALSE AS is_added
    FROM extraction_gains t JOIN latest_extractions l USING (extraction_id)
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, a.idx,
           json_extract_string(a.item, '$.metric') AS metric,
           TRY_CAST(json_extract_string(a.item, '$.value') AS DOUBLE) AS value,
           json_extract_string(a.item, '$.unit') AS unit,
           json_extract_string(a.item, '$.baseline') AS baseline,
           json_extract_string(a.item, '$.dataset') AS dataset,
           TRY_CAST(json_extract_string(a.item, '$.value_in_evidence') AS BOOLEAN)
               AS value_in_evidence,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           'exact' AS alignment, 1.0 AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = 'gain'
)
SELECT i.* EXCLUDE (is_added) REPLACE (
           CASE WHEN e.set_metric THEN e.metric ELSE i.metric END AS metric,
           CASE WHEN e.set_value THEN e.value ELSE i.value END AS value,
           CASE WHEN e.set_unit THEN e.unit ELSE i.unit END AS unit,
           CASE WHEN e.set_baseline THEN e.baseline ELSE i.baseline END AS baseline,
           CASE WHEN e.set_dataset THEN e.dataset ELSE i.dataset END AS dataset,
           CASE WHEN e.set_value_in_evidence THEN e.value_in_evidence
                ELSE i.value_in_evidence END AS value_in_evidence),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       s.status AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'gain' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'gain' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

-- The item views: the corrected items, with their canonical entity (0008) looked up by the
-- corrected name, so every query, export and the report see both.
CREATE OR REPLACE VIEW tasks AS
SELECT t.*, e.entity_id, coalesce(e.canonical, t.name) AS canonical
FROM corrected_tasks t
LEFT JOIN entity_lookup e ON e.kind = 'task' AND e.name = t.name;

CREATE OR REPLACE VIEW methods AS
SELECT t.*, e.entity_id, coalesce(e.canonical, t.name) AS canonical
FROM corrected_methods t
LEFT JOIN entity_lookup e ON e.kind = 'method' AND e.name = t.name;

CREATE OR REPLACE VIEW benchmarks AS
SELECT t.*, e.entity_id, coalesce(e.canonical, t.name) AS canonical
FROM corrected_benchmarks t
LEFT JOIN entity_lookup e ON e.kind = 'benchmark' AND e.name = t.name;

CREATE OR REPLACE VIEW gains AS
SELECT
    t.*,
    m.entity_id AS metric_entity_id,
    coalesce(m.canonical, t.metric) AS canonical_metric,
    m.direction AS metric_direction,
    m.metric_kind,
    d.entity_id AS dataset_entity_id,
    coalesce(d.canonical, t.dataset) AS canonical_dataset
FROM corrected_gains t
LEFT JOIN entity_lookup m ON m.kind = 'metric' AND m.name = t.metric
LEFT JOIN entity_lookup d ON d.kind = 'benchmark' AND d.name = t.dataset;
