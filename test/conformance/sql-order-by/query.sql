SELECT k, v, ts FROM events WHERE v > 1 ORDER BY ts, v DESC, k
