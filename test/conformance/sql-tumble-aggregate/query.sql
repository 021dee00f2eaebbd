SELECT k, window_start, window_end, COUNT(*) AS c, SUM(v) AS s, MIN(v), MAX(v), AVG(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND))
GROUP BY k, window_start, window_end
