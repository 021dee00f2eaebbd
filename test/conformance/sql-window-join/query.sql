SELECT L.k, L.v, R.v, L.window_start, L.window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) WHERE v < 5) L
JOIN (SELECT * FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) WHERE v >= 5) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k
