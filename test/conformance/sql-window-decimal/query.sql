SELECT k, window_start, SUM(CAST(v AS DECIMAL(10, 2)) / 4), AVG(CAST(v AS DECIMAL(10, 2))), MIN(CAST(v AS DECIMAL(10, 1)) * 1.5), SUM(v * 0.1)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND))
GROUP BY k, window_start, window_end
