-- Items whose evidence quote could not be found in the abstract: treat them as unverified.
SELECT paper_id, 'task' AS field, name AS item, evidence FROM tasks WHERE alignment = 'none'
UNION ALL
SELECT paper_id, 'method', name, evidence FROM methods WHERE alignment = 'none'
UNION ALL
SELECT paper_id, 'benchmark', name, evidence FROM benchmarks WHERE alignment = 'none'
UNION ALL
SELECT paper_id, 'gain', metric, evidence FROM gains
WHERE alignment = 'none' OR value_in_evidence = false
ORDER BY paper_id, field;
