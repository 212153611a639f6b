-- 0012 (issue 26): every method candidate gets one calibrated decision instead of a
-- chain of vetoes. `extractions.decisions` holds them as JSON: {"weights": the content
-- hash of the weights file, "methods": [{name, start, end, score, outcome, features}]},
-- outcome 'kept' (stored in extraction_methods), 'flagged' (grounded but not sure enough
-- to present as fact: kept aside here for a person to accept) or 'refused'. NULL for
-- extractions written before this migration.
ALTER TABLE extractions ADD COLUMN decisions JSON;

-- A view that selects e.* is bound to the columns it saw: rebuild it.
CREATE OR REPLACE VIEW latest_extractions AS
SELECT e.*
FROM extractions e
JOIN (
    SELECT paper_id, extraction_id
    FROM run_papers
    WHERE extraction_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY recorded DESC, run_id DESC) = 1
) latest USING (paper_id, extraction_id);

-- One row per decision of the latest extraction of each paper; `papersift explain`
-- and the flagged list read it.
CREATE OR REPLACE VIEW method_decisions AS
SELECT e.paper_id, e.extraction_id,
       json_extract_string(e.decisions, '$.weights') AS weights,
       json_extract_string(d.value, '$.name') AS name,
       CAST(json_extract(d.value, '$.start') AS INTEGER) AS char_start,
       CAST(json_extract(d.value, '$.end') AS INTEGER) AS char_end,
       CAST(json_extract(d.value, '$.score') AS DOUBLE) AS score,
       json_extract_string(d.value, '$.outcome') AS outcome,
       CAST(json_extract(d.value, '$.features') AS VARCHAR[]) AS features
FROM latest_extractions e,
json_each(e.decisions, '$.methods') AS d
WHERE e.decisions IS NOT NULL;
