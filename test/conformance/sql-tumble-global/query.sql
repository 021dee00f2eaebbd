SELECT window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '100' SECOND(3)))
GROUP BY window_start, window_end
