SELECT k, MAX(v) FROM events GROUP BY k
