SELECT window_start, window_end, AVG(CAST(v AS DOUBLE)), MAX(v), COUNT(DISTINCT k)
FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '50' SECOND, INTERVAL '100' SECOND(3)))
GROUP BY window_start, window_end
