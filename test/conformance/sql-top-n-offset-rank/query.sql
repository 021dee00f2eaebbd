SELECT k, v, rn FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM events
) WHERE rn > 1 AND rn <= 2
