-- compare the final table: the retractions' order follows the updates'
SELECT k, n, rn FROM (
  SELECT k, n, ROW_NUMBER() OVER (ORDER BY n DESC, k) AS rn FROM (SELECT k, COUNT(*) AS n FROM events GROUP BY k)
) WHERE rn <= 2
