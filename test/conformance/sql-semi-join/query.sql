SELECT k, v FROM events WHERE v < 10 AND k IN (SELECT k FROM events WHERE v >= 10)
