SELECT x.k, x.v, y.v, z.v
FROM (SELECT k, v FROM events WHERE v < 10) AS x,
     (SELECT k, v FROM events WHERE v >= 10 AND v < 20) AS y,
     (SELECT k, v FROM events WHERE v >= 20) AS z
WHERE x.k = y.k AND y.k = z.k
