-- 0003: from schema v2 on, the model drafts names and numbers and code grounds them.
-- What the draft proposed but the abstract does not contain is dropped, and said here.

ALTER TABLE extractions ADD COLUMN items_rejected INTEGER DEFAULT 0;
ALTER TABLE extractions ADD COLUMN rejected VARCHAR[];

-- Where the item itself (the name, the number, the task phrase) sits in the abstract;
-- char_start/char_end remain the evidence sentence's span.
ALTER TABLE extraction_tasks ADD COLUMN mention_start INTEGER;
ALTER TABLE extraction_tasks ADD COLUMN mention_end INTEGER;
ALTER TABLE extraction_methods ADD COLUMN mention_start INTEGER;
ALTER TABLE extraction_methods ADD COLUMN mention_end INTEGER;
ALTER TABLE extraction_benchmarks ADD COLUMN mention_start INTEGER;
ALTER TABLE extraction_benchmarks ADD COLUMN mention_end INTEGER;
ALTER TABLE extraction_gains ADD COLUMN mention_start INTEGER;
ALTER TABLE extraction_gains ADD COLUMN mention_end INTEGER;

-- Views that select e.* or t.* are bound to the columns they saw: rebuild them.
CREATE OR REPLACE VIEW latest_extractions AS
SELECT e.*
FROM extractions e
JOIN (
    SELECT paper_id, extraction_id
    FROM run_papers
    WHERE extraction_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY recorded DESC, run_id DESC) = 1
) latest USING (paper_id, extraction_id);

CREATE OR REPLACE VIEW tasks AS
SELECT t.* FROM extraction_tasks t JOIN latest_extractions l USING (extraction_id);
CREATE OR REPLACE VIEW methods AS
SELECT t.* FROM extraction_methods t JOIN latest_extractions l USING (extraction_id);
CREATE OR REPLACE VIEW benchmarks AS
SELECT t.* FROM extraction_benchmarks t JOIN latest_extractions l USING (extraction_id);
CREATE OR REPLACE VIEW gains AS
SELECT t.* FROM extraction_gains t JOIN latest_extractions l USING (extraction_id);
