SELECT s.k, s.v, l.v
FROM (SELECT k, v, ts FROM events WHERE v < 10) AS s
JOIN (SELECT k, v, ts FROM events WHERE v >= 10) AS l ON s.k = l.k AND l.ts >= s.ts
