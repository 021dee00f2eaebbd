SELECT key, quadrupled FROM (SELECT key, doubled * 2 AS quadrupled FROM (SELECT UPPER(k) AS key, v * 2 AS doubled FROM events WHERE v > 4) WHERE doubled < 40) WHERE quadrupled > 30
