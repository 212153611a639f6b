-- Metrics of claimed gains that the vocabulary does not know (no direction or kind yet):
-- kept under their own names; add them to an alias file (PAPERSIFT_ALIASES) to classify.
SELECT canonical_metric AS metric, count(*) AS claims, count(DISTINCT paper_id) AS papers,
       string_agg(DISTINCT metric, '; ' ORDER BY metric) AS spellings
FROM gains
WHERE metric_direction IS NULL
GROUP BY ALL
ORDER BY claims DESC, metric;
