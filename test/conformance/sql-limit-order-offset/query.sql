-- compare the final table: Flink updates a rank as -U and +U where Sluice retracts and inserts
SELECT k, v FROM events ORDER BY v DESC LIMIT 3 OFFSET 1
