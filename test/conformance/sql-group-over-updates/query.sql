SELECT c, COUNT(*) AS keys, SUM(total) AS totals FROM (
  SELECT k, COUNT(*) AS c, SUM(v) AS total FROM events GROUP BY k
) GROUP BY c
