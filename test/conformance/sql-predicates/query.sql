SELECT k, v, k LIKE 'h%', k NOT LIKE '%_d', v IN (3, 7, 9), v NOT IN (0, 5), v BETWEEN 3 AND 7, v NOT BETWEEN 5 AND 9,
  (v > 4 AND NULLIF(v, 7) > 4), (v > 4 OR NULLIF(v, 3) > 4)
FROM events WHERE k LIKE '%l%' OR v BETWEEN 5 AND 9 OR k IN ('a', 'zz')
