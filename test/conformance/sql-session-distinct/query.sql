SELECT k, window_start, window_end, COUNT(DISTINCT v), SUM(v) FILTER (WHERE v > 1), MIN(v)
FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '8' SECOND))
GROUP BY k, window_start, window_end
