SELECT counts.k, counts.c, counts.starttime
FROM (
  SELECT k, COUNT(*) AS c, window_start AS starttime, window_end AS endtime
  FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
  GROUP BY k, window_start, window_end
) AS counts
JOIN (
  SELECT MAX(per_key.c) AS most, per_key.starttime, per_key.endtime
  FROM (
    SELECT COUNT(*) AS c, window_start AS starttime, window_end AS endtime
    FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
    GROUP BY k, window_start, window_end
  ) AS per_key
  GROUP BY per_key.starttime, per_key.endtime
) AS best
ON counts.starttime = best.starttime AND counts.endtime = best.endtime AND counts.c >= best.most
