-- The most frequent tasks, benchmarks and methods in each area (top 3 of each).
WITH named AS (
    SELECT pa.area_id, 'task' AS field, lower(t.name) AS name, pa.paper_id
    FROM paper_areas pa JOIN tasks t USING (paper_id)
    UNION ALL
    SELECT pa.area_id, 'benchmark', b.name, pa.paper_id FROM paper_areas pa JOIN benchmarks b USING (paper_id)
    UNION ALL
    SELECT pa.area_id, 'method', m.name, pa.paper_id FROM paper_areas pa JOIN methods m USING (paper_id)
), counted AS (
    SELECT area_id, field, name, count(DISTINCT paper_id) AS papers
    FROM named GROUP BY area_id, field, name
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY area_id, field ORDER BY papers DESC, name) AS rank
    FROM counted
)
SELECT a.area_id, a.label, r.field, r.name, r.papers
FROM ranked r JOIN areas a USING (area_id)
WHERE r.rank <= 3 ORDER BY a.size DESC, a.area_id, r.field, r.rank
