-- 0003: from schema v2 on, the model drafts names and numbers and code grounds them.
-- What the draft proposed but the abstract does not contain is dropped, and said here.

ALTER TABLE extractions ADD COLUMN items_rejected INTEGER DEFAULT 0;
ALTER TABLE extractions ADD COLUMN rejected VARCHAR[];

-- Views that select e.* are bound to the columns they saw: rebuild the one that does.
CREATE OR REPLACE VIEW latest_extractions AS
SELECT e.*
FROM extractions e
JOIN (
    SELECT paper_id, extraction_id
    FROM run_papers
    WHERE extraction_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY recorded DESC, run_id DESC) = 1
) latest USING (paper_id, extraction_id);
