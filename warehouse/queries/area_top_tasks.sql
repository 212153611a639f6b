-- The most frequent tasks, benchmarks and methods in each area (top 3 of each).
WITH named AS (
    SELECT pa.area_id, 'task' AS field, lower(t.name) AS name FROM paper_areas pa JOIN tasks t USING (paper_id)
    UNION ALL
    SELECT pa.area_id, 'benchmark', b.name FROM paper_areas pa JOIN benchmarks b USING (paper_id)
    UNION ALL
    SELECT pa.area_id, 'method', m.name FROM paper_areas pa JOIN methods m USING (paper_id)
), counted AS (
    SELECT area_id, field, name, count(*) AS papers,
           row_number() OVER (PARTITION BY area_id, field ORDER BY count(*) DESC, name) AS rank
    FROM named GROUP BY ALL
)
SELECT a.area_id, a.label, c.field, c.name, c.papers
FROM counted c JOIN areas a USING (area_id)
WHERE c.rank <= 3 ORDER BY a.size DESC, a.area_id, c.field, c.rank
