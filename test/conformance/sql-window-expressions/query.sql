SELECT UPPER(k) AS key, window_start, window_end, window_time, SUM(v) * 2, MAX(v) - MIN(v), CAST(AVG(CAST(v AS DOUBLE)) AS DECIMAL(10, 3)),
  COUNT(*) + 1, CAST(window_start AS STRING)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND))
GROUP BY UPPER(k), window_start, window_end, window_time
