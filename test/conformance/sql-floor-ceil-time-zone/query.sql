SET 'table.local-time-zone' = 'Asia/Tokyo';
SELECT k, DATE_FORMAT(FLOOR(ts TO DAY), 'yyyy-MM-dd HH:mm:ss') AS fd, DATE_FORMAT(CEIL(ts TO DAY), 'yyyy-MM-dd HH:mm:ss') AS cd, DATE_FORMAT(FLOOR(ts TO MONTH), 'yyyy-MM-dd HH:mm:ss') AS fm, DATE_FORMAT(CEIL(ts TO MONTH), 'yyyy-MM-dd HH:mm:ss') AS cm, DATE_FORMAT(FLOOR(ts TO HOUR), 'yyyy-MM-dd HH:mm:ss') AS fh FROM events
