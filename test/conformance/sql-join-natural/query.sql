-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT * FROM (SELECT k, v FROM events WHERE v < 10) AS s NATURAL LEFT JOIN (SELECT k, v * 10 AS w FROM events WHERE v >= 10) AS l
