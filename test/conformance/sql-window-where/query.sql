SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND))
WHERE v > 5 AND k LIKE '_'
GROUP BY k, window_start, window_end
