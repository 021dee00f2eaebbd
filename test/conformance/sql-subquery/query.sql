SELECT key, doubled FROM (SELECT UPPER(k) AS key, v * 2 AS doubled FROM events WHERE v > 3) WHERE doubled > 12
