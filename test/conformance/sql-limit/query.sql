SELECT k, v FROM events WHERE v > 1 LIMIT 3
