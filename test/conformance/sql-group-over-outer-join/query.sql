-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT s.k, COUNT(*) AS pairs, COUNT(l.v) AS matched, MAX(l.v) AS best
FROM (SELECT k, v FROM events WHERE v < 10) AS s
LEFT JOIN (SELECT k, v FROM events WHERE v >= 10) AS l ON s.k = l.k
GROUP BY s.k
