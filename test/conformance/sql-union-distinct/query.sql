-- compare the final table: Flink's join and aggregation interleave the inputs as their buffers arrive
SELECT k, v FROM events WHERE v < 10 UNION SELECT k, CAST(MOD(v, 5) AS INT) FROM events WHERE v > 10
