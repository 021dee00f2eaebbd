SELECT k, window_start, window_end, SUM(v), COUNT(*)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND))
GROUP BY k, window_start, window_end
