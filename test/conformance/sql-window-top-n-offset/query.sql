SELECT window_start, window_end, k, total, rownum FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rownum
  FROM (
    SELECT window_start, window_end, k, SUM(v) AS total
    FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end, k
  )
) WHERE rownum BETWEEN 2 AND 3
