-- The papers that say they release code (or data, models, benchmarks), by title, with the
-- address the abstract gives and the sentence that says so; code releases first.
SELECT
    (SELECT min(s.title) FROM sources s WHERE s.paper_id = a.paper_id) AS title,
    string_agg(DISTINCT a.kind, '; ' ORDER BY a.kind) AS releases,
    string_agg(DISTINCT a.url, ' ' ORDER BY a.url) AS urls,
    any_value(a.evidence) AS evidence,
    a.paper_id
FROM artifacts a
GROUP BY a.paper_id
ORDER BY NOT list_contains(list(a.kind), 'code'), title;
