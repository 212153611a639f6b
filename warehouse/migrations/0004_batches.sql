-- 0004: OpenAI Batch API submissions. A batch is recorded as soon as the provider accepts
-- it, so a run killed while polling finds it again and resumes instead of paying twice.
-- Nothing secret is stored: the endpoint is its cache identity (a URL), never a key.

CREATE TABLE batches (
    batch_id          VARCHAR PRIMARY KEY,     -- the provider's id (batch_...)
    run_id            VARCHAR NOT NULL,        -- the run that submitted it
    endpoint          VARCHAR NOT NULL,
    model             VARCHAR NOT NULL,
    mode              VARCHAR,
    prompt_version    VARCHAR,
    schema_version    VARCHAR,
    input_file_id     VARCHAR NOT NULL,
    output_file_id    VARCHAR,
    error_file_id     VARCHAR,
    status            VARCHAR NOT NULL,        -- the provider's: validating / in_progress / finalizing /
                                               -- completed / failed / expired / cancelling / cancelled
    request_count     INTEGER NOT NULL,
    completed_count   INTEGER,                 -- the provider's request_counts, last seen
    failed_count      INTEGER,
    submitted         TIMESTAMP NOT NULL,
    finished          TIMESTAMP,               -- when papersift saw it end
    collected         TIMESTAMP,               -- when its results were stored; NULL: still to do
    collected_run_id  VARCHAR,                 -- the run that stored them
    detail            VARCHAR                  -- the provider's errors, when it failed
);

CREATE TABLE batch_requests (                  -- which paper and cache key each line asks for
    batch_id   VARCHAR NOT NULL,
    custom_id  VARCHAR NOT NULL,               -- the line's custom_id (= the paper id)
    paper_id   VARCHAR NOT NULL,
    cache_key  VARCHAR NOT NULL,
    PRIMARY KEY (batch_id, custom_id)
);
