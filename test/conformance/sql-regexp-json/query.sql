SELECT k, REGEXP(k, '^[a-z]+$'), REGEXP_EXTRACT(k, '([A-Za-z]+)_([A-Za-z]+)', 2), REGEXP_REPLACE(k, '[aeiou]', '*'),
  JSON_VALUE(CONCAT('{"name":"', k, '","n":', CAST(v AS STRING), ',"inner":{"x":[1,2,3]}}'), '$.name'),
  JSON_VALUE(CONCAT('{"n":', CAST(v AS STRING), '}'), '$.n'), JSON_VALUE('{"a":{"b":[10,20]}}', '$.a.b[1]'), JSON_VALUE('not json', '$.a')
FROM events
