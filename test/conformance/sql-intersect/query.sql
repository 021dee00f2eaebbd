-- compare the final table: Flink's join and aggregation interleave the inputs as their buffers arrive
SELECT NULLIF(k, 'c') AS k, MOD(v, 4) AS m FROM events WHERE v < 10 INTERSECT SELECT NULLIF(k, 'c'), MOD(v, 4) FROM events WHERE v > 10
