-- 0015 (issue 26, stop 29): what code stored that the model's answer did not give, and
-- why: a benchmark the abstract's words call a dataset, a known dataset it names, one a
-- proposal verb presents, one the title names, a result number the model left out. One
-- line per item ("benchmark 'MMLU': a known dataset ..."); methods have their decisions
-- (0012). NULL for extractions written before this migration.
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS added VARCHAR[];

-- A view that selects e.* is bound to the columns it saw: rebuild it.
CREATE OR REPLACE VIEW latest_extractions AS
SELECT e.*
FROM extractions e
JOIN (
    SELECT paper_id, extraction_id
    FROM run_papers
    WHERE extraction_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY recorded DESC, run_id DESC) = 1
) latest USING (paper_id, extraction_id);
