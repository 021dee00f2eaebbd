SELECT UPPER(k), LOWER(k), CHAR_LENGTH(k), SUBSTRING(k FROM 2 FOR 3), SUBSTRING(k, 3), CONCAT(k, '-', CAST(v AS STRING)),
  k || '!', TRIM(BOTH 'x' FROM k), REPLACE(k, 'l', 'L'), LPAD(k, 6, '*'), RPAD(k, 4, '*'), INITCAP(k), REVERSE(k), POSITION('l' IN k),
  LTRIM(CONCAT('  ', k)), SPLIT_INDEX(k, '_', 1), REPEAT(k, 2)
FROM events
