SELECT k, v FROM events WHERE v > 1 ORDER BY ts, v DESC
