-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT k, s.k, l.k, s.v, l.w FROM (SELECT k, v FROM events WHERE v < 4) AS s FULL JOIN (SELECT k, v AS w FROM events WHERE v >= 10) AS l USING (k)
