-- Papers whose latest extraction claims no number at all (or that have no extraction yet).
SELECT
    p.paper_id,
    s.contribution_types,
    s.tasks,
    left(p.text, 120) AS opening
FROM papers p
JOIN paper_summary s USING (paper_id)
WHERE NOT EXISTS (SELECT 1 FROM gains g WHERE g.paper_id = p.paper_id AND g.value IS NOT NULL)
ORDER BY p.paper_id;
