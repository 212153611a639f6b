-- 0014: the optional field prior_methods (`papersift run --with prior_methods`): the
-- earlier methods or models a paper compares against, as named in its abstract and found
-- there by code. Its views (prior_methods, corrected_prior_methods) are generated from the
-- field registry (warehouse/views.py); a run without the field leaves the table empty.
CREATE TABLE extraction_prior_methods (
    extraction_id  VARCHAR NOT NULL,
    paper_id       VARCHAR NOT NULL,
    idx            INTEGER NOT NULL,
    name           VARCHAR NOT NULL,           -- as the abstract writes it
    evidence       VARCHAR NOT NULL,           -- the sentence that names it
    char_start     INTEGER,
    char_end       INTEGER,
    alignment      VARCHAR NOT NULL,
    align_score    DOUBLE,
    mention_start  INTEGER,                    -- the name itself
    mention_end    INTEGER
);
