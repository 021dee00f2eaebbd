-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT s.k, COUNT(*) AS pairs, MAX(l.big) AS best
FROM (SELECT k, v FROM events WHERE v < 10) AS s
LEFT JOIN (SELECT k, MAX(v) AS big FROM events WHERE v >= 10 GROUP BY k) AS l ON s.k = l.k
GROUP BY s.k
