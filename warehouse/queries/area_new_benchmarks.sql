-- Benchmarks introduced by papers of each area.
SELECT a.area_id, a.label, b.name AS benchmark, count(*) AS papers
FROM benchmarks b JOIN paper_areas pa USING (paper_id) JOIN areas a USING (area_id)
WHERE b.introduced GROUP BY ALL ORDER BY a.area_id, papers DESC, benchmark
