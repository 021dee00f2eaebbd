-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT s.k, s.total, l.v
FROM (SELECT k, SUM(v) AS total FROM events WHERE v < 10 GROUP BY k) AS s
JOIN (SELECT k, v FROM events WHERE v >= 10) AS l ON s.k = l.k AND l.v > s.total
