SELECT k, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rownum FROM events
) WHERE rownum <= 1
