-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT s.k, s.v, l.v
FROM (SELECT k, v FROM events WHERE v < 10) AS s
LEFT OUTER JOIN (SELECT k, v FROM events WHERE v >= 10) AS l ON s.k = l.k AND l.v > 2 * s.v
