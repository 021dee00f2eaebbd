-- compare the final table: Flink's anti join interleaves its inputs as their buffers arrive
SELECT k, v FROM events WHERE v < 10 AND k NOT IN (SELECT NULLIF(k, 'b') FROM events WHERE v >= 10 AND v < 20)
