SELECT L.k, L.v, R.v, L.window_end
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) L
JOIN TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k AND L.v < R.v
