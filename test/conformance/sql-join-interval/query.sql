-- compare the final table
SELECT s.k, s.v, l.v, l.ts
FROM (SELECT k, v, ts FROM events WHERE v < 10) AS s
JOIN (SELECT k, v, ts FROM events WHERE v >= 10) AS l
  ON s.k = l.k AND l.ts BETWEEN s.ts - INTERVAL '1' SECOND AND s.ts + INTERVAL '2' SECOND
