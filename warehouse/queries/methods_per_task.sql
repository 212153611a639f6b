-- Proposed methods grouped by the canonical task their paper tackles.
SELECT
    t.canonical AS task,
    count(DISTINCT m.paper_id) AS papers,
    string_agg(DISTINCT m.canonical, '; ' ORDER BY m.canonical) AS methods
FROM tasks t
JOIN methods m USING (paper_id)
GROUP BY coalesce(t.entity_id, 'name:' || t.name), t.canonical
ORDER BY papers DESC, task
LIMIT 50;
