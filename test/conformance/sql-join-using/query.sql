SELECT * FROM (SELECT k, v FROM events WHERE v < 10) AS s JOIN (SELECT k, v * 10 AS w FROM events WHERE v >= 10) AS l USING (k)
