SELECT k, window_start, window_end, SUM(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND, INTERVAL '20' SECOND))
GROUP BY k, window_start, window_end
