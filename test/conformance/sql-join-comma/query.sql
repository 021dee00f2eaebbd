SELECT s.k, s.v, l.v, l.v - s.v AS gap
FROM (SELECT k, v FROM events WHERE v < 10) AS s, (SELECT k, v FROM events WHERE v >= 10) AS l
WHERE s.k = l.k AND l.v - s.v > 5 AND l.v <> 21
