SELECT v, ABS(v - 6), MOD(v, 4), v / 4, CAST(v AS DOUBLE) / 4, ROUND(CAST(v AS DOUBLE) / 7, 2), FLOOR(CAST(v AS DOUBLE) / 4),
  CEIL(CAST(v AS DOUBLE) / 4), POWER(v, 2), SQRT(CAST(v AS DOUBLE)), SIGN(v - 5), -v, v % 5
FROM events
