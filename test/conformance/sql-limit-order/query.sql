SELECT k, v, ts FROM events ORDER BY ts LIMIT 3
