-- Every automatic merge decision with its reason and score, and every user decision.
SELECT kind, a_key, b_key, verdict, stage, score, detail, 'automatic' AS made_by, created
FROM entity_decisions
UNION ALL
SELECT kind, a_key, b_key, verdict, 'user', NULL, note, 'user #' || seq, created
FROM entity_user_decisions
ORDER BY made_by, kind, stage, a_key;
