SELECT k, window_start, window_end, SUM(v), COUNT(*), MAX(v), AVG(CAST(v AS DOUBLE))
FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end
