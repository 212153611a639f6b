-- Claimed results on a canonical benchmark, one row each: paper, its method, the value
-- (absolute scores, improvements and efficiency figures in separate columns), baseline
-- and evidence with offsets. `papersift query leaderboard --benchmark NAME` narrows it
-- to one benchmark (any of its spellings); best absolute score first per metric.
-- params: benchmark
SELECT benchmark, metric, direction, method, score, improvement, efficiency, unit,
       result_kind, baseline, paper_id, title, evidence, mention_start, mention_end,
       benchmark_id, metric_id
FROM leaderboard
WHERE $benchmark IS NULL
   OR benchmark_id IN (SELECT entity_id FROM entity_lookup WHERE kind = 'benchmark'
                       AND (name_key = $benchmark_key OR lower(canonical) = lower($benchmark)
                            OR entity_id = $benchmark))
   OR lower(benchmark) = lower($benchmark)
ORDER BY benchmark, metric, score IS NULL,
         CASE WHEN direction = 'lower' THEN score ELSE -score END, improvement DESC, paper_id;
