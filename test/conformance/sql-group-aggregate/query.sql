SELECT k, COUNT(*) AS c, SUM(v) AS s FROM events GROUP BY k
