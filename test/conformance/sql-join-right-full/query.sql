-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT s.k, s.v, l.k, l.v
FROM (SELECT CASE WHEN k = 'x' THEN CAST(NULL AS STRING) ELSE k END AS k, v FROM events WHERE v < 10) AS s
FULL JOIN (SELECT CASE WHEN k = 'x' THEN CAST(NULL AS STRING) ELSE k END AS k, v FROM events WHERE v >= 10) AS l ON s.k = l.k
