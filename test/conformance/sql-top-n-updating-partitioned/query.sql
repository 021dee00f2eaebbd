-- compare the final table: the retractions' order follows the updates'
SELECT g, k, total FROM (
  SELECT g, k, total, ROW_NUMBER() OVER (PARTITION BY g ORDER BY total DESC, k) AS rn
  FROM (SELECT MOD(v, 2) AS g, k, SUM(v) AS total FROM events GROUP BY MOD(v, 2), k)
) WHERE rn <= 1
