SELECT k, v, window_start, window_end, window_time
FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '25' SECOND, INTERVAL '50' SECOND))
