SELECT CASE WHEN v < 10 THEN 'small' ELSE 'large' END AS size, window_start, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY CASE WHEN v < 10 THEN 'small' ELSE 'large' END, window_start, window_end
