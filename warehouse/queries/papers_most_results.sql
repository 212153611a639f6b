-- The papers that state the most results: claimed gains with a number, by title, with
-- how many of them are grounded in the abstract and the benchmarks they are on.
SELECT
    (SELECT min(s.title) FROM sources s WHERE s.paper_id = g.paper_id) AS title,
    count(*) AS results,
    count(*) FILTER (WHERE g.alignment <> 'none') AS grounded,
    string_agg(DISTINCT g.dataset, '; ' ORDER BY g.dataset) AS on_benchmarks,
    g.paper_id
FROM gains g
WHERE g.value IS NOT NULL
GROUP BY g.paper_id
ORDER BY results DESC, title
LIMIT 25;
