SELECT s.k, s.v, l.v
FROM (SELECT k, v, CAST(ts AS TIMESTAMP(3)) AS t FROM events WHERE v < 10) AS s,
     (SELECT k, v, CAST(ts AS TIMESTAMP(3)) AS t FROM events WHERE v >= 10) AS l
WHERE s.k = l.k AND l.t BETWEEN s.t AND s.t + INTERVAL '5' SECOND
