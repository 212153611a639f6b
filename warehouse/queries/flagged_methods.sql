-- Names the method decision was not sure enough to present as fact: grounded in the
-- abstract, scored between the weights' flag and keep thresholds, kept aside for a
-- person to accept (a correction adds one). Highest score first; `papersift explain
-- PAPER` says why.
SELECT
    (SELECT min(s.title) FROM sources s WHERE s.paper_id = d.paper_id) AS title,
    d.name,
    round(d.score, 2) AS score,
    array_to_string(d.features, ', ') AS features,
    d.paper_id
FROM method_decisions d
WHERE d.outcome = 'flagged'
ORDER BY d.score DESC, title;
