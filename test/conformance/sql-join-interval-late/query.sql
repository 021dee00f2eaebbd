-- compare the final table
SELECT s.k, s.v, l.v
FROM (SELECT k, v, ts FROM events WHERE v < 10) AS s, (SELECT k, v, ts FROM events WHERE v >= 10) AS l
WHERE s.k = l.k AND l.ts > s.ts AND l.ts < s.ts + INTERVAL '5' SECOND
