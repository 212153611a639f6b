-- The benchmarks and datasets named most often, counted by canonical entity (all the
-- spellings of one benchmark together), with how many papers introduce them.
SELECT
    canonical AS benchmark,
    count(DISTINCT paper_id) AS papers,
    count(DISTINCT paper_id) FILTER (WHERE introduced) AS introduced_by,
    count(*) FILTER (WHERE alignment = 'none') AS ungrounded_mentions,
    string_agg(DISTINCT name, '; ' ORDER BY name) AS spellings,
    any_value(entity_id) AS entity_id
FROM benchmarks
GROUP BY coalesce(entity_id, 'name:' || name), canonical
ORDER BY papers DESC, benchmark
LIMIT 25;
