-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT s.k, COUNT(*) AS pairs, SUM(l.v - s.v) AS gaps, MAX(l.v) AS top
FROM (SELECT k, v FROM events WHERE v < 10) AS s
INNER JOIN (SELECT k, v FROM events WHERE v >= 10) AS l ON s.k = l.k
GROUP BY s.k
