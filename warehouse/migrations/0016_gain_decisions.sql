-- 0016 (issue 26, stop 36): every grounded gain gets one calibrated decision, as method
-- candidates do (0012): is the number a result the paper reports? `extractions.decisions`
-- now also holds {"gain_weights": the content hash of the gain decision's weights,
-- "gains": [{name (the value as written), start, end, score, outcome, features}]};
-- outcome 'kept' (stored in extraction_gains), 'flagged' or 'refused' (noted in
-- `rejected`). Extractions written before this migration have no "gains" key.
CREATE OR REPLACE VIEW gain_decisions AS
SELECT e.paper_id, e.extraction_id,
       json_extract_string(e.decisions, '$.gain_weights') AS weights,
       json_extract_string(d.value, '$.name') AS name,
       CAST(json_extract(d.value, '$.start') AS INTEGER) AS char_start,
       CAST(json_extract(d.value, '$.end') AS INTEGER) AS char_end,
       CAST(json_extract(d.value, '$.score') AS DOUBLE) AS score,
       json_extract_string(d.value, '$.outcome') AS outcome,
       CAST(json_extract(d.value, '$.features') AS VARCHAR[]) AS features
FROM latest_extractions e,
json_each(e.decisions, '$.gains') AS d
WHERE e.decisions IS NOT NULL;
