SELECT k, window_start, COUNT(*), COUNT(NULLIF(v, 0)), SUM(NULLIF(v, 0)), AVG(NULLIF(v, 0)), MIN(NULLIF(v, 0)), MAX(NULLIF(v, 0))
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY k, window_start, window_end
