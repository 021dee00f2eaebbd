-- compare the final table: Flink's anti join interleaves its inputs as their buffers arrive
SELECT k, v FROM events WHERE v < 10 AND NULLIF(k, 'c') NOT IN (SELECT k FROM events WHERE v >= 10)
