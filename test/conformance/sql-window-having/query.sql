SELECT k, window_start, window_end, SUM(v) AS total
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND))
GROUP BY k, window_start, window_end
HAVING SUM(v) > 10 OR COUNT(*) > 1
