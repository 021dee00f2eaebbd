SELECT *
FROM (SELECT k, CAST(v AS INT) AS m FROM events WHERE v < 10) AS s
JOIN (SELECT k, v - 10 AS m FROM events WHERE v >= 10) AS l ON s.m = l.m
