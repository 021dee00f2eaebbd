-- compare the final table: Flink's join and aggregation interleave the inputs as their buffers arrive
SELECT k FROM events WHERE v < 10 EXCEPT SELECT k FROM events WHERE v > 20
