-- 0002: evaluation results, one row per `papersift eval` of a run against a gold file.

CREATE TABLE evals (
    eval_id         VARCHAR NOT NULL,
    created         TIMESTAMP NOT NULL,
    run_id          VARCHAR NOT NULL,
    gold_file       VARCHAR NOT NULL,
    gold_sha256     VARCHAR NOT NULL,       -- the gold file's content hash: same hash, comparable
    gold_papers     INTEGER NOT NULL,
    model           VARCHAR,
    prompt_version  VARCHAR,
    schema_version  VARCHAR,
    metrics         JSON NOT NULL           -- every figure, as `papersift eval --format json` prints
);
