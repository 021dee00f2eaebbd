-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT s.k, s.total, l.k, l.v
FROM (SELECT k, SUM(v) AS total FROM events WHERE v < 10 GROUP BY k) AS s
FULL JOIN (SELECT k, v FROM events WHERE v >= 10) AS l ON s.k = l.k AND l.v > 3 * s.total
