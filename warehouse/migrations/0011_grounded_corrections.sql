-- 0011 (issue 28): a corrected value is grounded again, like a model's. When a reviewer
-- edits an item's name (or a gain's metric, baseline or dataset), `papersift serve`
-- looks the new value up in the abstract and stores, with the edit, one more edit row
-- (field 'grounding', after: a JSON object) holding what it found: alignment,
-- align_score, the mention and evidence offsets, the evidence, and a gain's
-- metric/baseline/dataset alignment. A value the abstract lacks is stored flagged
-- (alignment 'none', offsets NULL), never with the model's old offsets and 'exact'. The
-- latest grounding row of an item wins whole. An added item carries its own alignment
-- (its name may differ from its selection).
-- The views below apply it; `review` is 'accept' or NULL as documented (an undone
-- reject, 'restore', showed as a review and hid the item from the flagged filter).
-- The leaderboard leaves out a corrected claim whose value or attributes are ungrounded.

CREATE OR REPLACE VIEW correction_edits AS
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
       any_value(TRY_CAST(json_extract_string(after, '$') AS BOOLEAN)) FILTER (WHERE field = 'introduced') AS introduced,
       any_value(after) FILTER (WHERE field = 'grounding') AS grounding
FROM latest
GROUP BY paper_id, item_type, item_key;

CREATE OR REPLACE VIEW corrected_tasks AS
WITH items AS (
    SELECT t.*, item_key(t.name) AS item_key, FALSE AS is_added
    FROM extraction_tasks t JOIN latest_extractions l USING (extraction_id)
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, a.idx,
           json_extract_string(a.item, '$.name') AS name,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           coalesce(json_extract_string(a.item, '$.alignment'), 'exact') AS alignment,
           coalesce(TRY_CAST(json_extract_string(a.item, '$.align_score') AS DOUBLE), 1.0)
               AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = 'task'
)
SELECT i.* EXCLUDE (is_added) REPLACE (
           CASE WHEN e.set_name THEN e.name ELSE i.name END AS name,
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
                ELSE i.evidence END AS evidence),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       CASE WHEN s.status = 'accept' THEN 'accept' END AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'task' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'task' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE OR REPLACE VIEW corrected_methods AS
WITH items AS (
    SELECT t.*, item_key(t.name) AS item_key, FALSE AS is_added
    FROM extraction_methods t JOIN latest_extractions l USING (extraction_id)
    UNION ALL BY NAME
    SELECT a.extraction_id, a.paper_id, a.idx,
           json_extract_string(a.item, '$.name') AS name,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           coalesce(json_extract_string(a.item, '$.alignment'), 'exact') AS alignment,
           coalesce(TRY_CAST(json_extract_string(a.item, '$.align_score') AS DOUBLE), 1.0)
               AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = 'method'
)
SELECT i.* EXCLUDE (is_added) REPLACE (
           CASE WHEN e.set_name THEN e.name ELSE i.name END AS name,
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
                ELSE i.evidence END AS evidence),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       CASE WHEN s.status = 'accept' THEN 'accept' END AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'method' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'method' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE OR REPLACE VIEW corrected_benchmarks AS
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
           coalesce(json_extract_string(a.item, '$.alignment'), 'exact') AS alignment,
           coalesce(TRY_CAST(json_extract_string(a.item, '$.align_score') AS DOUBLE), 1.0)
               AS align_score,
           CAST(json_extract(a.item, '$.mention_start') AS INTEGER) AS mention_start,
           CAST(json_extract(a.item, '$.mention_end') AS INTEGER) AS mention_end,
           a.item_key, TRUE AS is_added
    FROM added_items a WHERE a.item_type = 'benchmark'
)
SELECT i.* EXCLUDE (is_added) REPLACE (
           CASE WHEN e.set_name THEN e.name ELSE i.name END AS name,
           CASE WHEN e.set_introduced THEN e.introduced ELSE i.introduced END AS introduced,
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
                ELSE i.evidence END AS evidence),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       CASE WHEN s.status = 'accept' THEN 'accept' END AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'benchmark' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'benchmark' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE OR REPLACE VIEW corrected_gains AS
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
           json_extract_string(a.item, '$.metric_alignment') AS metric_alignment,
           json_extract_string(a.item, '$.baseline_alignment') AS baseline_alignment,
           json_extract_string(a.item, '$.dataset_alignment') AS dataset_alignment,
           json_extract_string(a.item, '$.evidence') AS evidence,
           CAST(json_extract(a.item, '$.char_start') AS INTEGER) AS char_start,
           CAST(json_extract(a.item, '$.char_end') AS INTEGER) AS char_end,
           coalesce(json_extract_string(a.item, '$.alignment'), 'exact') AS alignment,
           coalesce(TRY_CAST(json_extract_string(a.item, '$.align_score') AS DOUBLE), 1.0)
               AS align_score,
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
                ELSE i.value_in_evidence END AS value_in_evidence,
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
           CASE WHEN json_exists(e.grounding, '$.metric_alignment') THEN json_extract_string(e.grounding, '$.metric_alignment')
                ELSE i.metric_alignment END AS metric_alignment,
           CASE WHEN json_exists(e.grounding, '$.baseline_alignment') THEN json_extract_string(e.grounding, '$.baseline_alignment')
                ELSE i.baseline_alignment END AS baseline_alignment,
           CASE WHEN json_exists(e.grounding, '$.dataset_alignment') THEN json_extract_string(e.grounding, '$.dataset_alignment')
                ELSE i.dataset_alignment END AS dataset_alignment),
       CASE WHEN i.is_added THEN 'added' WHEN e.item_key IS NOT NULL THEN 'corrected'
            ELSE 'model' END AS origin,
       CASE WHEN s.status = 'accept' THEN 'accept' END AS review
FROM items i
LEFT JOIN correction_edits e
       ON e.paper_id = i.paper_id AND e.item_type = 'gain' AND e.item_key = i.item_key
LEFT JOIN correction_status s
       ON s.paper_id = i.paper_id AND s.item_type = 'gain' AND s.item_key = i.item_key
WHERE s.status IS DISTINCT FROM 'reject';

CREATE OR REPLACE VIEW leaderboard AS
SELECT
    g.dataset_entity_id AS benchmark_id,
    g.canonical_dataset AS benchmark,
    g.metric_entity_id AS metric_id,
    g.canonical_metric AS metric,
    g.metric_direction AS direction,
    g.paper_id,
    (SELECT min(s.title) FROM sources s WHERE s.paper_id = g.paper_id) AS title,
    (SELECT string_agg(DISTINCT m.canonical, '; ' ORDER BY m.canonical) FROM methods m
     WHERE m.extraction_id = g.extraction_id) AS method,
    CASE WHEN g.kind = 'score' THEN g.value END AS score,
    CASE WHEN g.kind IN ('improvement', 'comparison') THEN g.value END AS improvement,
    CASE WHEN g.kind = 'efficiency' THEN g.value END AS efficiency,
    g.unit,
    g.kind AS result_kind,
    g.baseline,
    g.evidence,
    g.mention_start,
    g.mention_end,
    g.char_start,
    g.char_end,
    g.alignment,
    g.value_in_evidence
FROM gains g
WHERE g.dataset IS NOT NULL AND g.value IS NOT NULL
  AND (g.origin = 'model' OR (g.alignment IS DISTINCT FROM 'none'
       AND 'none' NOT IN (coalesce(g.metric_alignment, ''), coalesce(g.baseline_alignment, ''),
                          coalesce(g.dataset_alignment, ''))));
