SELECT MIN(s) AS lo, MAX(s) AS hi, AVG(s) AS mean, COUNT(DISTINCT s) AS kinds, COUNT(*) AS n FROM (
  SELECT k, SUM(v) AS s FROM events GROUP BY k
)
