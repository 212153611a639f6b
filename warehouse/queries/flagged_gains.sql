-- Numbers the gain decision was not sure enough to present as results: grounded in the
-- abstract, scored between the weights' flag and keep thresholds, kept aside for a person
-- to accept (a correction adds one). `name` is the value as written, `char_start` where
-- the abstract states it. Highest score first; `papersift explain PAPER` says why.
SELECT
    (SELECT min(s.title) FROM sources s WHERE s.paper_id = d.paper_id) AS title,
    d.name AS value,
    d.char_start,
    round(d.score, 2) AS score,
    array_to_string(d.features, ', ') AS features,
    d.paper_id
FROM gain_decisions d
WHERE d.outcome = 'flagged'
ORDER BY d.score DESC, title;
