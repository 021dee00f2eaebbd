SELECT k, v FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rownum FROM events
) WHERE rownum = 1
