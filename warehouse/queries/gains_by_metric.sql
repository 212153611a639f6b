-- Claimed quantitative gains grouped by metric and unit, with the range of values.
SELECT
    lower(metric) AS metric,
    unit,
    count(*) AS claims,
    count(DISTINCT paper_id) AS papers,
    min(value) AS min_value,
    median(value) AS median_value,
    max(value) AS max_value,
    count(*) FILTER (WHERE alignment = 'none' OR value_in_evidence = false) AS flagged
FROM gains
WHERE value IS NOT NULL
GROUP BY 1, 2
ORDER BY claims DESC, metric
LIMIT 50;
