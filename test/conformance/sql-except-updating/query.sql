-- compare the final table: Flink's join and aggregation interleave the inputs as their buffers arrive
SELECT k, COUNT(*) AS n FROM events GROUP BY k EXCEPT SELECT k, v FROM events
