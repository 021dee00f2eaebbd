-- compare the final table: Flink's join and aggregation interleave the inputs as their buffers arrive
SELECT k FROM events WHERE v < 4 UNION ALL SELECT k FROM events WHERE v > 20 UNION SELECT k FROM events WHERE v = 12 INTERSECT SELECT k FROM events WHERE v = 8
