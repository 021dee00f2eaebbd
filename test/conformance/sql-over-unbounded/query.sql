SELECT k, v, ts,
  SUM(v) OVER (PARTITION BY k ORDER BY ts) AS running_total,
  COUNT(*) OVER (PARTITION BY k ORDER BY ts) AS n,
  v * 100 / MAX(v) OVER (PARTITION BY k ORDER BY ts) AS percent_of_max
FROM events WHERE v > 0
