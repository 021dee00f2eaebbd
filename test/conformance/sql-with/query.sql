WITH positive AS (SELECT k, v, ts FROM events WHERE v > 0),
  windowed AS (
    SELECT k, window_start, SUM(v) AS total
    FROM TABLE(TUMBLE(TABLE positive, DESCRIPTOR(ts), INTERVAL '10' SECOND))
    GROUP BY k, window_start, window_end
  )
SELECT k, total, rn FROM (
  SELECT k, total, ROW_NUMBER() OVER (PARTITION BY k ORDER BY total DESC) AS rn FROM windowed
) WHERE rn <= 2
