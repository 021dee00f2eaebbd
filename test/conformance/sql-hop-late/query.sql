SELECT k, window_start, window_end, SUM(v), COUNT(*)
FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '20' SECOND, INTERVAL '40' SECOND))
GROUP BY k, window_start, window_end
