SELECT k, SUBSTRING(k, 0, 2), SUBSTRING(k, -3), SUBSTRING(k, 20), LPAD(k, 2, 'ab'), RPAD(k, 14, 'ab'), LPAD(k, 0, 'x'),
  TRIM(LEADING 'x' FROM k), TRIM(TRAILING 'x' FROM k), TRIM(k), LOCATE('l', k), SPLIT_INDEX(k, 'x', 2), REPLACE(k, '', '-'),
  CONCAT_WS(',', k, CAST(NULL AS STRING), k), CHAR_LENGTH(REPEAT(k, 3))
FROM events
