SELECT starttime, endtime, MAX(c) AS most, SUM(c) AS total, COUNT(*) AS keys
FROM (
  SELECT k, window_start AS starttime, window_end AS endtime, COUNT(*) AS c
  FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
  GROUP BY k, window_start, window_end
)
GROUP BY starttime, endtime
