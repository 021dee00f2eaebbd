SELECT k, v * 2 AS doubled, v + 1, v - 20 AS below, ts FROM events WHERE v > 4 AND k <> 'c'
