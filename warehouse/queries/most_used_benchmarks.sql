-- The benchmarks and datasets named most often, with how many papers introduce them.
SELECT
    name,
    count(DISTINCT paper_id) AS papers,
    count(DISTINCT paper_id) FILTER (WHERE introduced) AS introduced_by,
    count(*) FILTER (WHERE alignment = 'none') AS ungrounded_mentions
FROM benchmarks
GROUP BY name
ORDER BY papers DESC, name
LIMIT 25;
