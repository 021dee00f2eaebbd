-- compare the final table: Flink interleaves the union's two inputs as their buffers arrive
SELECT k, SUM(n) AS total, COUNT(*) AS parts FROM (
  SELECT k, COUNT(*) AS n FROM events GROUP BY k
  UNION ALL
  SELECT k, v FROM events WHERE v > 5
) GROUP BY k
