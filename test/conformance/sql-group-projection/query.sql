SELECT k, c * 10 AS tens, s > 8 AS big FROM (SELECT k, COUNT(*) AS c, SUM(v) AS s FROM events GROUP BY k) WHERE k <> 'c'
