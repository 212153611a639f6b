-- Benchmarks used per canonical task, most papers first.
SELECT task, benchmark, papers, task_id, benchmark_id
FROM task_benchmarks
ORDER BY papers DESC, task, benchmark
LIMIT 100;
