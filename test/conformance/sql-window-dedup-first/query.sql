SELECT window_start, window_end, k, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts) AS rownum
  FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rownum = 1
