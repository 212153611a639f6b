-- Leaderboards worth reading: each canonical benchmark and metric on which two or more
-- papers state a number, with how many papers, how many results, and the best absolute
-- score (direction-aware when the metric's direction is known).
SELECT
    benchmark,
    metric,
    any_value(direction) AS direction,
    count(DISTINCT paper_id) AS papers,
    count(*) AS results,
    CASE WHEN any_value(direction) = 'lower' THEN min(score) ELSE max(score) END AS best_score,
    any_value(benchmark_id) AS benchmark_id
FROM leaderboard
GROUP BY benchmark, metric
HAVING count(DISTINCT paper_id) >= 2
ORDER BY papers DESC, results DESC, benchmark, metric
LIMIT 50;
