SELECT k, window_start, window_end, SUM(v), COUNT(*)
FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '25' SECOND, INTERVAL '50' SECOND))
GROUP BY k, window_start, window_end
