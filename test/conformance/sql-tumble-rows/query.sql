SELECT k, v, window_start, window_end, window_time
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND))
