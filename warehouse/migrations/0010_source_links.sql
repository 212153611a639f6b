-- 0010: what a record says about its paper beyond the abstract. `url` is the record's
-- link (url, openreview_url, pdf_url, link...); `extra` keeps its other plain fields
-- (a conference file's primary_area, keywords, status...) as JSON. paper_summary (the
-- wide papers table of exports) names each paper by title, the file's own id and link.
ALTER TABLE sources ADD COLUMN url VARCHAR;
ALTER TABLE sources ADD COLUMN extra JSON;

CREATE OR REPLACE VIEW paper_summary AS
SELECT
    p.paper_id,
    (SELECT min(s.title) FROM sources s WHERE s.paper_id = p.paper_id) AS title,
    (SELECT min(s.source_id) FROM sources s WHERE s.paper_id = p.paper_id) AS source_id,
    (SELECT min(s.url) FROM sources s WHERE s.paper_id = p.paper_id) AS url,
    (SELECT string_agg(DISTINCT s.collection, '; ' ORDER BY s.collection) FROM sources s WHERE s.paper_id = p.paper_id) AS collections,
    (SELECT string_agg(s.file || '#' || s.position, '; ' ORDER BY s.file, s.position) FROM sources s WHERE s.paper_id = p.paper_id) AS occurrences,
    (SELECT min(s.venue) FROM sources s WHERE s.paper_id = p.paper_id) AS venue,
    (SELECT min(s.year) FROM sources s WHERE s.paper_id = p.paper_id) AS year,
    p.chars,
    l.extraction_id,
    l.model,
    (SELECT string_agg(c.type, '; ' ORDER BY c.idx) FROM contribution_types c WHERE c.extraction_id = l.extraction_id) AS contribution_types,
    (SELECT string_agg(t.name, '; ' ORDER BY t.idx) FROM tasks t WHERE t.extraction_id = l.extraction_id) AS tasks,
    (SELECT string_agg(m.name, '; ' ORDER BY m.idx) FROM methods m WHERE m.extraction_id = l.extraction_id) AS methods,
    (SELECT string_agg(b.name || CASE WHEN b.introduced THEN ' (new)' ELSE '' END, '; ' ORDER BY b.idx) FROM benchmarks b WHERE b.extraction_id = l.extraction_id) AS benchmarks,
    (SELECT string_agg(
        g.metric
        || coalesce(' ' || CAST(g.value AS VARCHAR), '')
        || coalesce(' ' || g.unit, '')
        || coalesce(' vs ' || g.baseline, '')
        || coalesce(' on ' || g.dataset, ''),
        '; ' ORDER BY g.idx) FROM gains g WHERE g.extraction_id = l.extraction_id) AS claimed_gains,
    l.items,
    l.items_ungrounded,
    l.lenient,
    p.text
FROM papers p
LEFT JOIN latest_extractions l USING (paper_id);
