SELECT k, window_start, window_end, SUM(v), COUNT(*)
FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '20' SECOND, INTERVAL '60' SECOND))
GROUP BY k, window_start, window_end
