-- Claimed quantitative gains grouped by canonical metric and unit, with the range of values.
SELECT
    canonical_metric AS metric,
    any_value(metric_direction) AS direction,
    any_value(metric_kind) AS metric_kind,
    unit,
    count(*) AS claims,
    count(DISTINCT paper_id) AS papers,
    min(value) AS min_value,
    median(value) AS median_value,
    max(value) AS max_value,
    count(*) FILTER (WHERE alignment = 'none' OR value_in_evidence = false) AS flagged,
    string_agg(DISTINCT metric, '; ' ORDER BY metric) AS spellings
FROM gains
WHERE value IS NOT NULL
GROUP BY coalesce(metric_entity_id, 'name:' || lower(metric)), canonical_metric, unit
ORDER BY claims DESC, metric
LIMIT 50;
