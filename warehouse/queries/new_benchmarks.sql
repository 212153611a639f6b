-- Benchmarks a paper of the collection introduces, and the other papers that use them.
SELECT benchmark, introduced_by, later_papers, array_to_string(used_by, '; ') AS used_by,
       benchmark_id
FROM new_benchmark_uptake
ORDER BY later_papers DESC, benchmark;
