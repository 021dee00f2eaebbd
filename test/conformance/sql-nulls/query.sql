SELECT k, NULLIF(v, 5), COALESCE(NULLIF(v, 5), -1), NULLIF(v, 5) + 1, NULLIF(v, 5) IS NULL, NULLIF(k, 'a') || 'x',
  CONCAT_WS('-', k, NULLIF(k, 'a'), 'z'), CASE WHEN NULLIF(v, 5) > 4 THEN 'big' WHEN v > 2 THEN 'small' END,
  NULLIF(v, 5) > 4 IS NOT NULL, UPPER(NULLIF(k, 'hello'))
FROM events
