-- Proposed methods grouped by the task their paper tackles.
SELECT
    t.name AS task,
    count(DISTINCT m.paper_id) AS papers,
    string_agg(DISTINCT m.name, '; ' ORDER BY m.name) AS methods
FROM tasks t
JOIN methods m USING (paper_id)
GROUP BY t.name
ORDER BY papers DESC, task
LIMIT 50;
