-- compare the final table
SELECT s.k, s.v, l.k, l.v
FROM (SELECT NULLIF(k, 'n') AS k, v, ts FROM events WHERE v < 10) AS s
FULL JOIN (SELECT NULLIF(k, 'n') AS k, v, ts FROM events WHERE v >= 10) AS l
  ON s.k = l.k AND l.ts BETWEEN s.ts - INTERVAL '1' SECOND AND s.ts + INTERVAL '2' SECOND
