-- compare the final table: Flink orders a join's changes as its two inputs' buffers arrive
SELECT e.k, e.v FROM events AS e WHERE e.v < 10 AND NOT EXISTS (SELECT * FROM events AS b WHERE b.k = e.k AND b.v > 10)
