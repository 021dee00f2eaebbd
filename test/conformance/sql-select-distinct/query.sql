SELECT DISTINCT k, v / 10 AS tens FROM events WHERE v > 0
