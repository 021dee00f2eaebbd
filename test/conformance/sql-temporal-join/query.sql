CREATE VIEW rates AS SELECT k, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM events WHERE v >= 100
) WHERE rn = 1;
SELECT o.k, o.v, r.v AS rate, o.ts
FROM (SELECT * FROM events WHERE v < 100) AS o
JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k
