SELECT s.k, s.v AS small, l.v AS big, l.ts
FROM (SELECT k, v, ts FROM events WHERE v < 10) AS s
JOIN (SELECT k, v, ts FROM events WHERE v >= 10) AS l ON s.k = l.k
