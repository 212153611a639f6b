-- Why abstracts or inputs failed, most common reasons first.
SELECT stage, reason, count(*) AS failures, any_value(detail) AS example
FROM failures
GROUP BY stage, reason
ORDER BY failures DESC;
