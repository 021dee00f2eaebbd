SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS total
FROM (
  SELECT k, v * 2 AS v, window_start, window_end
  FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  WHERE v > 1
)
GROUP BY k, window_start, window_end
